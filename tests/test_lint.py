"""`snakemake --lint` finds nothing (the Snakemake workflow catalog's "standardized usage"): rules use no
variables from outside in their shell commands, environment variables are not read unasserted, and the rule
files hold rules only (functions live in rules/common.smk or the package)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_workflow_lints_clean():
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=ROOT, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Lints for" not in out, out[-3000:]
    assert "Congratulations, your workflow is in a good condition!" in out
