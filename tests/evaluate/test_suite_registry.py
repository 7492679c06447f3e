"""Evaluation suites as registered classes (sentaug.evaluate.suites): the command line is made from the registry,
and a suite from outside the package (the example plugin, examples/stsb_retrieval) becomes a command, a suite of
`evaluate()`, an evaluation the workflow resolves (its data, flags, code and result file, a comparison's column)
and a workload the bill prices, without a line of sentaug edited. A registered plugin is taken out of the registry
after each test: the other tests (docs/cli.md's) see the built-in suites only."""
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sentaug.evaluate import suites
from sentaug.plugins import PluginError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "stsb_retrieval"
MODULE = "sentaug_stsb_retrieval.suite"
BUILT_IN = ["sts", "cnsd", "transfer", "clustering", "intent", "glue", "analysis", "nli", "cola"]


@pytest.fixture()
def registry(monkeypatch):
    """The registry as it stands, restored after the test (with the plugin modules it imported forgotten)."""
    monkeypatch.setattr(suites, "_REGISTRY", dict(suites.registered()))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    yield suites
    for name in [m for m in sys.modules if m.startswith("sentaug_stsb_retrieval")]:
        del sys.modules[name]


@pytest.fixture()
def plugin(registry):
    registry.load_modules([MODULE])
    return registry.get("stsb_retrieval")


def test_the_command_line_is_made_from_the_built_in_suites():
    from sentaug.cli import build_parser

    assert suites.names() == BUILT_IN
    evaluate = _commands(build_parser()).choices["evaluate"]
    commands = _commands(evaluate)
    assert list(commands.choices) == [*BUILT_IN, "suites", "mteb"]
    helps = {action.dest: action.help for action in commands._choices_actions}
    for name, suite in suites.registered().items():
        assert helps[name] == suite.help
        parser = commands.choices[name]
        assert parser.get_default("func").__name__ == f"cmd_evaluate_{name}"
        own = {o for flag in suite.flags for o in flag.names}
        assert own <= set(parser._option_string_actions), name
        assert ("--tasks" in parser._option_string_actions) == suite.tasks


def _commands(parser):
    """A parser's subcommands (argparse's action holding them)."""
    import argparse

    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_a_suite_registered_twice_or_without_run_is_refused_naming_it(registry):
    class Again(suites.Suite):
        def run(self, a):
            pass

    with pytest.raises(PluginError, match=r"evaluation suite 'sts' is registered twice: by "
                                          r"sentaug\.evaluate\.builtin\.STS \(sentaug\) and by .*Again"):
        suites.register("sts")(Again)
    with pytest.raises(PluginError, match="evaluation suite 'idle' .* has no run"):
        suites.register("idle")(type("Idle", (suites.Suite,), {}))
    with pytest.raises(PluginError, match="'suites' .*: the name of a command"):
        suites.register("suites")(Again)
    with pytest.raises(ValueError, match=r"unknown evaluation suite 'stss' \(did you mean 'sts'\?\)"):
        suites.get("stss")


def _demo_stsb_test(data: Path) -> list[tuple[str, str, float]]:
    """STS-B test's (s1, s2, score), read here from the file as it is laid out (tab-separated, score 5th)."""
    with open(data / "sts/STSBenchmark/sts-test.csv", encoding="utf-8") as f:
        return [(row[5], row[6], float(row[4])) for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]


class BagOfWords:
    """An encoder of counted words over a fixed vocabulary: embeddings any reader can recompute."""

    def __init__(self, sentences):
        self.vocabulary = {w: i for i, w in enumerate(sorted({w for s in sentences for w in s.split()}))}

    def vector(self, sentence):
        v = np.zeros(len(self.vocabulary))
        for w in sentence.split():
            v[self.vocabulary[w]] += 1
        return v

    def encode(self, sentences):
        return np.stack([self.vector(s) for s in sentences])


def test_the_example_suite_from_python_scores_what_its_definition_says(plugin, tmp_path):
    """evaluate(encoder, ["stsb_retrieval"]) on the bundled STS-B test split, against MRR and recall@1 counted
    here, pair by pair, from the same bag-of-words vectors."""
    from sentaug.cli import main
    from sentaug.evaluate import evaluate

    assert main(["download", "senteval", "--origin", "demo", "--out", str(tmp_path / "data")]) == 0
    pairs = _demo_stsb_test(tmp_path / "data")
    encoder = BagOfWords([s for a, b, _ in pairs for s in (a, b)])
    candidates = list(dict.fromkeys(b for _, b, _ in pairs))
    ranks = []
    for a, b, score in pairs:
        if score < 4.0:
            continue
        cos = {c: float(encoder.vector(a) @ encoder.vector(c) / np.linalg.norm(encoder.vector(a))
                        / np.linalg.norm(encoder.vector(c))) for c in candidates}
        ranks.append(sum(1 for c in candidates if cos[c] >= cos[b] - 1e-9))
    res = evaluate(encoder, ["stsb_retrieval"], data=str(tmp_path / "data"), results_dir=tmp_path / "results",
                   name="bow")["stsb_retrieval"]
    assert res["n_queries"] == len(ranks) > 10 and res["n_candidates"] == len(candidates)
    assert res["mrr"] == pytest.approx(100 * np.mean([1 / r for r in ranks]), abs=1e-3)
    assert res["recall_at_1"] == pytest.approx(100 * np.mean([r == 1 for r in ranks]), abs=1e-3)
    # filed beside the built-in suites' results of the model
    assert json.loads((tmp_path / "results/bow/stsb_retrieval.json").read_text())["mrr"] == res["mrr"]


def test_the_workflow_resolves_the_example_suite_from_its_yaml(plugin, cfg):
    """What the example's YAML adds (config key suites.modules, a comparison with the suite's columns), as
    --configfile merges it: the job's data, flags and code, its result's name, and the bill's workload."""
    import yaml

    from sentaug.workflow import Workflow
    from sentaug.workflow import evaluations as ev
    from sentaug.pricing.cost import suite_size

    own = yaml.safe_load((EXAMPLE / "stsb_retrieval.yaml").read_text())
    wf = Workflow({**cfg, **own, "scale": "demo"}, results="R")
    assert wf.evaluations.suite_data("stsb_retrieval") == ["R/data/demo/sts"]
    assert wf.evaluations.suite_args("stsb_retrieval") == f"--module {MODULE}"         # its job imports the plugin first
    assert wf.evaluations.suite_code("stsb_retrieval") == str(EXAMPLE / "sentaug_stsb_retrieval/suite.py")
    assert wf.evaluations.suite_code("sts") == "evaluate/sts.py" and wf.evaluations.suite_args("sts") == ""
    assert ev.run_evaluation("stsb_retrieval") == ev.Evaluation("stsb_retrieval")
    assert re.fullmatch(ev.RUN_EVALUATION, "stsb_retrieval") and re.fullmatch(ev.RUN_EVALUATION, "sts.avg")
    assert ev.pretrained_evaluation("stsb_retrieval/avg") == ev.Evaluation("stsb_retrieval", "avg")
    spec = wf.comparisons["stsb_retrieval"]
    assert [c["metric"] for c in spec["columns"]] == ["sts.avg", "stsb_retrieval.mrr", "stsb_retrieval.recall_at_1"]
    assert [r["method"] for r in spec["rows"]] == ["simcse", "sda_pi"]
    cells = wf.comparison_points("stsb_retrieval")[0]["cells"]
    assert cells["stsb_retrieval.mrr"]["files"] == [f"R/eval/demo/shared/tiny-bert/simcse/seed{s}/stsb_retrieval.json"
                                                    for s in (1, 2, 3)]
    assert suite_size("stsb_retrieval") == (1634, [])


def test_the_command_line_runs_a_suite_its_module_flag_names(tmp_path):
    """`sentaug evaluate stsb_retrieval --module M` in a process of its own (the plugin on PYTHONPATH, not
    installed), as the workflow's job runs it; without --out its record goes to <results-dir>/<model>/."""
    from sentaug.cli import main

    config = json.loads(json.dumps(__import__("yaml").safe_load((ROOT / "config.yaml").read_text())["backbones"]
                                   ["tiny-bert"]))
    assert main(["backbone", "tiny-bert", "--spec", json.dumps(config), "--out", str(tmp_path / "tiny-bert")]) == 0
    env = {"PYTHONPATH": f"{EXAMPLE}:{ROOT / 'src'}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "SENTAUG_DATA": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "sentaug.cli", "evaluate", "stsb_retrieval", "--module", MODULE,
                           "--model", str(tmp_path / "tiny-bert"), "--pooler", "avg", "--origin", "demo", "--top",
                           "5", "--results-dir", str(tmp_path / "results")],
                          cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.loads((tmp_path / "results/tiny-bert/stsb_retrieval.json").read_text())
    assert (record["suite"], record["n_queries"], record["pooler"]) == ("stsb_retrieval", 5, "avg")
    assert 0 < record["mrr"] <= 100 and record["recall_at_1"] in {0.0, 20.0, 40.0, 60.0, 80.0, 100.0}
    assert (tmp_path / "data/demo/sts/STSBenchmark").is_dir()        # the suite's folder, fetched (bundled data)
    # without its module the suite is no command, and the error lists those there are
    proc = subprocess.run([sys.executable, "-m", "sentaug.cli", "evaluate", "stsb_retrieval", "--model", "x"],
                          cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 2 and "unknown suite 'stsb_retrieval'; valid: sts, cnsd" in proc.stderr
