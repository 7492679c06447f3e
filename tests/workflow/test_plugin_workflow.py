"""The example plugin (examples/negation) end to end at demo scale, as docs/extending.md has a user run it: the
package installed with pip (into a folder of its own, put on the Snakemake run's path: its entry point registers
`negation`), its YAML passed with --configfile, and its comparison built, with the plugin's caches, the runs that
read them, their evaluations and the table. Cut to what a comparison needs to be checked: SDA's main method beside
SimCSE and the plugin's, the STS column, training cut to a few steps (tests/workflow_runs.DEMO_TRAIN); a dry run
shows the rest of the example (all five papers, four suites, the leaderboards) resolves. Then an edited plugin
reruns its caches and runs, and nothing else."""
import json
import math
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scipy.stats import t as student_t

from tests.workflow_runs import DEMO_TRAIN, job_counts, snakemake

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "negation"
CONFIG = EXAMPLE / "negation.yaml"
METHODS = {"simcse": "SimCSE", "sda_pi": "SDA (punctuation insertion)",
           "simcse_negation": "SimCSE + negation negatives †"}
SEEDS = (1, 2, 3)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(results, the installed plugin's folder, the Snakemake arguments of the comparison)."""
    tmp = tmp_path_factory.mktemp("plugin_workflow")
    source = tmp / "negation"                 # a copy: pip leaves build files beside the source it installs
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                    "--quiet", "--target", str(site), str(source)], check=True)
    results = tmp / "results"
    override = tmp / "override.yaml"
    override.write_text(yaml.safe_dump({"results": str(results), "scales": {"demo": {"train": dict(DEMO_TRAIN)}},
                                        "comparisons": {"negation": {"papers": ["sda"], "columns": ["sts.avg"]}}}))
    args = (f"{results}/tables/compare/negation.md", "--configfile", str(CONFIG), str(override))
    run = snakemake(*args, "--cores", "2", pythonpath=[site])
    assert run.returncode == 0, run.stderr[-4000:]
    return results, site, args


def test_the_comparisons_cells_are_the_statistics_of_the_run_files(built):
    results, _, _ = built
    table = pd.read_csv(results / "tables/compare/negation.csv")
    assert list(dict.fromkeys(table.row)) == list(METHODS.values())
    sts = {m: {s: json.loads((results / f"eval/demo/shared/tiny-bert/{m}/seed{s}/sts.json").read_text())["avg"]
               for s in SEEDS} for m in METHODS}
    t2 = student_t.ppf(0.975, len(SEEDS) - 1)
    for method, label in METHODS.items():
        cell = table[(table.method == method) & (table.metric == "sts.avg")].iloc[0]
        values = list(sts[method].values())
        assert cell["values"] == " ".join(f"{v:.4f}" for v in values)
        assert cell["mean"] == pytest.approx(statistics.fmean(values), abs=1e-4)
        assert cell["ci_half_width"] == pytest.approx(t2 * statistics.stdev(values) / math.sqrt(3), abs=1e-4)
        seconds = [json.loads((results / f"runs/demo/shared/tiny-bert/{method}/seed{s}/train_summary.json")
                              .read_text())["train_seconds"] for s in SEEDS]
        time = table[(table.method == method) & (table.metric == "train.train_seconds")].iloc[0]
        assert (time["median"], time["min"], time["max"]) == pytest.approx(
            (statistics.median(seconds), min(seconds), max(seconds)), abs=1e-4)
        if method == "simcse":
            assert pd.isna(cell["diff"])
            continue
        diffs = [sts[method][s] - sts["simcse"][s] for s in SEEDS]      # paired by seed
        assert cell["diff"] == pytest.approx(statistics.fmean(diffs), abs=1e-4)
        assert cell["diff_ci_half_width"] == pytest.approx(t2 * statistics.stdev(diffs) / math.sqrt(3), abs=1e-4)
        mine = f"{cell['mean']:.2f} ± {cell['ci_half_width']:.2f}<br>Δ {cell['diff']:+.2f} ± " \
               f"{cell['diff_ci_half_width']:.2f}"
        assert f"| {label} | {mine}" in (results / "tables/compare/negation.md").read_text()


def test_the_plugins_cache_holds_negations_and_its_runs_trained_on_the_changed_lines(built):
    results, _, _ = built
    contracted = {"isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "can't": "can",
                  "cannot": "can", "couldn't": "could", "won't": "will", "wouldn't": "would", "shouldn't": "should",
                  "mustn't": "must"}
    for seed in SEEDS:
        cache = pd.read_parquet(results / f"augment/demo_corpus/negation/seed{seed}.parquet")
        stats = json.loads((results / f"augment/demo_corpus/negation/seed{seed}.json").read_text())
        changed = cache[cache.changed]
        assert stats["n_changed"] == len(changed) > 0 and stats["family"] == "example: negation"
        for original, augmented in zip(changed.original, changed.augmented):
            before, after = original.split(" "), augmented.split(" ")
            # one "not" in or out, or one contraction written out: the sentence's negation, nothing else
            if len(after) == len(before) + 1:
                i = next(i for i, (a, b) in enumerate(zip(before + [""], after)) if a != b)
                assert after[i] == "not" and after[:i] + after[i + 1:] == before, (original, augmented)
            elif len(after) == len(before) - 1:
                i = next(i for i, (a, b) in enumerate(zip(before, after + [""])) if a != b)
                assert before[i].lower() == "not" and before[:i] + before[i + 1:] == after, (original, augmented)
            else:
                diff = [(a, b) for a, b in zip(before, after) if a != b]
                assert len(diff) == 1 and contracted[diff[0][0].lower()] == diff[0][1], (original, augmented)
        # `changed_only: true`: the run's pairs are the lines the cache changed, with the same seed
        summary = json.loads((results / f"runs/demo/shared/tiny-bert/simcse_negation/seed{seed}/train_summary.json")
                             .read_text())
        assert summary["n_train_pairs"] == stats["n_changed"]
        assert summary["spec"]["negatives"] == {"source": "cache", "augmentation": "negation", "changed_only": True,
                                                "settings": {"op": "negation"}}


def test_the_whole_example_resolves_with_the_five_papers_the_leaderboard_row_and_the_census(built):
    results, site, _ = built
    run = snakemake(f"{results}/tables/compare/negation.md", f"{results}/tables/leaderboard-bert-base-uncased.md",
                    f"{results}/tables/sda/table4.tex", f"{results}/tables/augmentations.tex", "-n",
                    "--configfile", str(CONFIG), "--config", f"results={results}", pythonpath=[site])
    assert run.returncode == 0, run.stderr[-3000:]
    planned = run.stdout
    for method in ("cards", "vascl", "augcse", "clear_del_span_reorder", "sda_pi_retrieval"):
        assert f"train {method} on tiny-bert, seed 3 (shared)" in planned
    for suite in ("transfer", "clustering", "intent"):      # the plugin's method on every suite of the board
        assert f"evaluate {suite}: simcse_negation on tiny-bert, seed 3" in planned
    assert "census cosine: negation, seed 1 (tiny-bert)" in planned     # censused like the built-in ones


def test_editing_the_plugin_reruns_its_caches_and_runs_and_nothing_else(built):
    results, site, args = built
    plugin = site / "sentaug_negation" / "negation.py"
    text = plugin.read_text()

    def planned() -> tuple[dict, str]:
        run = snakemake(*args, "-n", pythonpath=[site])
        assert run.returncode == 0, run.stderr[-3000:]
        return job_counts(run.stdout), run.stdout

    try:
        assert planned()[0] == {}
        plugin.write_text(text.replace('"""Negation:', '"""Negation, reworded:') + "# a comment\n")
        assert planned()[0] == {}                         # what it says changed, not what it does
        plugin.write_text(text.replace('["not"]', '["never"]'))
        counts, out = planned()
        assert counts == {"augment": 3, "train": 3, "evaluate_run": 3, "compare": 1}
        assert [out.count(f"augment demo_corpus: negation, seed {s}") for s in SEEDS] == [1, 1, 1]
        assert [out.count(f"train simcse_negation on tiny-bert, seed {s}") for s in SEEDS] == [1, 1, 1]
        assert "params have changed since last execution" in out.lower()
    finally:
        plugin.write_text(text)
