"""The example evaluation suite (examples/stsb_retrieval) end to end at demo scale, as docs/extending.md has a user
run it without installing it: its folder on the path, its YAML (config key suites.modules) passed with
--configfile, and its comparison built: SimCSE's and SDA's runs, their STS and retrieval evaluations (the plugin's
jobs, given --module) and the table, whose retrieval cells are the statistics of the runs' records. Training cut
to a few steps (tests/workflow_runs.DEMO_TRAIN)."""
import json
import math
import statistics
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scipy.stats import t as student_t

from tests.workflow_runs import DEMO_TRAIN, snakemake

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "stsb_retrieval"
SEEDS = (1, 2, 3)

pytestmark = pytest.mark.slow


def test_the_example_suites_comparison_builds_and_its_cells_are_its_records(tmp_path):
    results = tmp_path / "results"
    override = tmp_path / "override.yaml"
    override.write_text(yaml.safe_dump({"results": str(results), "scales": {"demo": {"train": dict(DEMO_TRAIN)}}}))
    target = f"{results}/tables/compare/stsb_retrieval.md"
    run = snakemake(target, "--configfile", str(EXAMPLE / "stsb_retrieval.yaml"), str(override), "--cores", "2",
                    pythonpath=[EXAMPLE])
    assert run.returncode == 0, run.stderr[-4000:]
    table = pd.read_csv(results / "tables/compare/stsb_retrieval.csv")
    assert list(dict.fromkeys(table.row)) == ["SimCSE", "SDA (punctuation insertion)"]
    t2 = student_t.ppf(0.975, len(SEEDS) - 1)
    for method in ("simcse", "sda_pi"):
        records = [json.loads((results / f"eval/demo/shared/tiny-bert/{method}/seed{s}/stsb_retrieval.json")
                              .read_text()) for s in SEEDS]
        assert {r["suite"] for r in records} == {"stsb_retrieval"} and {r["n_queries"] for r in records} == {80}
        for key in ("mrr", "recall_at_1"):
            values = [r[key] for r in records]
            cell = table[(table.method == method) & (table.metric == f"stsb_retrieval.{key}")].iloc[0]
            assert cell["mean"] == pytest.approx(statistics.fmean(values), abs=1e-4)
            assert cell["ci_half_width"] == pytest.approx(t2 * statistics.stdev(values) / math.sqrt(3), abs=1e-4)
    page = (results / "tables/compare/stsb_retrieval.md").read_text()
    assert "| STS-B retrieval MRR | STS-B retrieval R@1 |" in page
    assert "added by the configuration" not in page           # it adds columns, no rows: no † note
