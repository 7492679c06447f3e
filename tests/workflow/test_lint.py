"""`snakemake --lint` finds nothing (the Snakemake workflow catalog's "standardized usage"): rules use no
variables from outside in their shell commands, environment variables are not read unasserted, and the rule
files hold rules only (functions live in rules/common.smk or the package). Also with a user's configuration that
declares a comparison (examples/negation, its plugin named in augment.modules), which brings rule `compare`."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "negation"


@pytest.mark.parametrize("with_example", [False, True], ids=["config.yaml", "with the example's configuration"])
def test_the_workflow_lints_clean(with_example, tmp_path):
    args, env = [], dict(os.environ)
    if with_example:
        (tmp_path / "modules.yaml").write_text("augment: {modules: [sentaug_negation.negation]}\n")
        args = ["--configfile", str(EXAMPLE / "negation.yaml"), str(tmp_path / "modules.yaml")]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(EXAMPLE), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint", *args], cwd=ROOT, capture_output=True,
                          text=True, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Lints for" not in out, out[-3000:]
    assert "Congratulations, your workflow is in a good condition!" in out
