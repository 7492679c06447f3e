"""Results that travel: every evaluation also writes MTEB's result files (a TaskResult per task, the model's
ModelMeta) beside its own record, and a trained run's model card gains its scores. Checked with mteb's own result
classes where mteb is installed (mteb 2.x: `mteb.results.TaskResult`, `mteb.models.ModelMeta`), and always
against the fields and types of its documented format (so that CI without mteb still checks them)."""
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from sentaug.evaluate.mteb_results import export, mteb_folder, task_scores, write_mteb_results
from sentaug.train.model_card import write_card

# What mteb 2.x requires of a TaskResult file and a ModelMeta (mteb/results/task_result.py: TaskResult's fields
# and _validate_scores_dict; mteb/models/model_meta.py: the fields without defaults, `name` as owner/name).
TASK_RESULT = {"dataset_revision": str, "task_name": str, "mteb_version": (str, type(None)), "scores": dict,
               "evaluation_time": (float, int, type(None))}
MODEL_META = {"name": str, "revision": (str, type(None)), "release_date": (str, type(None)),
              "languages": (list, type(None)), "n_parameters": (int, type(None)),
              "memory_usage_mb": (float, type(None)), "max_tokens": (int, float, type(None)),
              "embed_dim": (int, type(None)), "license": (str, type(None)), "open_weights": (bool, type(None)),
              "public_training_code": (str, type(None)), "public_training_data": (str, bool, type(None)),
              "framework": list, "similarity_fn_name": (str, type(None)), "use_instructions": (bool, type(None)),
              "training_datasets": (list, type(None))}


def check_format(folder: Path) -> dict:
    """Every file of an MTEB model-revision folder against the documented format: {task name: TaskResult dict}."""
    meta = json.loads((folder / "model_meta.json").read_text())
    for key, kind in MODEL_META.items():
        assert key in meta and isinstance(meta[key], kind), key
    assert "/" in meta["name"] and folder.parent.name == meta["name"].replace("/", "__")
    results = {}
    for path in sorted(folder.glob("*.json")):
        if path.name == "model_meta.json":
            continue
        result = json.loads(path.read_text())
        for key, kind in TASK_RESULT.items():
            assert key in result and isinstance(result[key], kind), (path.name, key)
        assert path.stem == result["task_name"]
        for split, entries in result["scores"].items():
            for entry in entries:
                assert isinstance(entry["main_score"], float) and 0 <= abs(entry["main_score"]) <= 1
                assert isinstance(entry["hf_subset"], str) and isinstance(entry["languages"], list)
        results[result["task_name"]] = result
    return results


def check_with_mteb(folder: Path) -> dict | None:
    """The folder loaded by mteb's own classes: {task: main score}; None where mteb is not installed (then
    `test_mteb_itself_loads_them` is skipped and says so)."""
    try:
        import mteb
    except ImportError:
        return None
    from mteb.models import ModelMeta
    from mteb.results import TaskResult

    meta = ModelMeta.model_validate_json_resolved((folder / "model_meta.json").read_text())
    assert meta.name.replace("/", "__") == folder.parent.name and meta.revision.replace(":", "-") == folder.name
    scores = {}
    for path in sorted(folder.glob("*.json")):
        if path.name != "model_meta.json":
            result = TaskResult.from_disk(path)
            if not result.task_name.startswith("sentaug-"):       # MTEB's own task: its splits and subsets
                result = result.validate_and_filter_scores(mteb.get_task(result.task_name))
            scores[result.task_name] = result.get_score()
    return scores


@pytest.fixture()
def run(tmp_path, tiny_mlm):
    """A trained run's folder as the trainer leaves it (a tiny model, its summary and card)."""
    folder = tmp_path / "runs/demo/shared/tiny-bert/sda_pi/seed1"
    shutil.copytree(tiny_mlm, folder)
    summary = {"spec": {"method": "sda_pi", "backbone": "tiny-bert", "paper_backbone": "bert-base-uncased",
                        "corpus": "demo_corpus", "scale": "demo", "seed": 1, "batch_size": 32, "eval_pooler": "avg",
                        "positive": {"source": "cache", "augmentation": "sda_pi", "op": "punctuation_insertion"},
                        "negatives": {"source": "in_batch"}, "objectives": []},
               "steps": 40, "best_step": 20, "best_stsb_dev": 29.6812, "train_seconds": 18.3, "device": "cpu",
               "backbone_source": {"name": "tiny-bert", "source": "random", "arch": "bert", "seed": 0}}
    (folder / "train_summary.json").write_text(json.dumps(summary))
    write_card(folder, summary)
    return folder


def official_sts_record(model: Path, data: Path) -> dict:
    """An STS record on the official test sets (their pair counts), as `sentaug evaluate sts` writes it."""
    scores = {"STS12": 72.37, "STS13": 80.6, "STS14": 75.59, "STS15": 85.39, "STS16": 78.99, "STSBenchmark": 82.03,
              "SICKRelatedness": 77.58}
    pairs = {"STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186, "STSBenchmark": 1379,
             "SICKRelatedness": 4927}
    return {"model": str(model), "pooler": "avg", "normalize": True, "data": str(data), "scale": None,
            "lowercase": False, **scores, "avg": 78.94, "STSBenchmark_dev": 86.9, "SICKRelatedness_dev": 81.0,
            "n_pairs": pairs, "seconds": 12.5,
            "details": {t: {"all": {"spearman": v, "pearson": v - 1}} for t, v in scores.items()}}


def test_sts_on_the_official_sets_keeps_mteb_task_names_and_sick_r_its_own(tmp_path, run):
    data = tmp_path / "data"
    (data / "sts").mkdir(parents=True)
    (data / "sts/a.txt").write_text("x")
    record_file = tmp_path / "eval/sts.json"
    record_file.parent.mkdir()
    record_file.write_text(json.dumps(official_sts_record(run, data)))
    before = record_file.read_bytes()
    target = write_mteb_results(record_file, run, "sts")
    assert target == mteb_folder(record_file) == tmp_path / "eval/sts.mteb"
    assert record_file.read_bytes() == before                   # the record itself is untouched
    (folder,) = (target / "sentaug__sda_pi-tiny-bert-demo-seed1").iterdir()
    results = check_format(folder)
    assert sorted(results) == ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark",
                               "sentaug-sts-SICKRelatedness"]    # SentEval's SICK-R test is not MTEB's SICK-R
    stsb = results["STSBenchmark"]
    assert stsb["scores"]["test"][0]["main_score"] == pytest.approx(0.8203)
    assert stsb["scores"]["test"][0]["cosine_pearson"] == pytest.approx(0.8103)
    assert stsb["dataset_revision"].startswith("sentaug-data:") and stsb["mteb_version"] is None
    assert "validation" not in stsb["scores"]                  # MTEB's STSBenchmark scores its test split
    meta = json.loads((folder / "model_meta.json").read_text())
    assert (meta["name"], meta["embed_dim"], meta["training_datasets"]) == (
        "sentaug/sda_pi-tiny-bert-demo-seed1", 32, ["demo_corpus"])
    assert meta["revision"].startswith("sha256:") and folder.name == meta["revision"].replace(":", "-")
    assert meta["n_parameters"] > 0 and meta["framework"] == ["PyTorch"]
    scores = check_with_mteb(folder)
    if scores is not None:
        assert scores["STSBenchmark"] == pytest.approx(0.8203) and scores["STS12"] == pytest.approx(0.7237)


def test_mteb_itself_loads_them(tmp_path, run):
    """The same files through mteb's TaskResult and ModelMeta (and each MTEB task's own splits and subsets)."""
    pytest.importorskip("mteb", reason="mteb is not installed: the files were checked against its format only")
    test_sts_on_the_official_sets_keeps_mteb_task_names_and_sick_r_its_own(tmp_path, run)


def test_other_data_and_other_suites_keep_sentaugs_names(run):
    demo = {**official_sts_record(run, "results/data/demo"), "scale": "demo",
            "n_pairs": {t: 80 for t in ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark",
                                        "SICKRelatedness")}}
    assert {t["mteb"] for t in task_scores(demo, "sts")} == {None}
    intent = {"suite": "intent", "ks": [5, 10], "SNIPS_5shot": 80.0, "SNIPS_5shot_sd": 1.0, "SNIPS_10shot": 85.0,
              "SNIPS_10shot_sd": 0.5}
    (snips,) = task_scores(intent, "intent")
    assert [e["hf_subset"] for e in snips["scores"]["test"]] == ["5-shot", "10-shot"]
    assert task_scores({"suite": "analysis"}, "analysis") == []     # distances, not task scores


def test_an_evaluation_writes_mteb_files_and_adds_its_scores_to_the_runs_card(tmp_path, run, monkeypatch):
    """`sentaug evaluate sts` on a trained run (the bundled demo data): its record, the MTEB files beside it, and
    its scores in the run's card, whose file and folder keep their times (Snakemake sees the run as built)."""
    from sentaug.cli import main

    monkeypatch.setenv("SENTAUG_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    card = run / "README.md"
    times = (os.stat(card).st_mtime_ns, os.stat(run).st_mtime_ns)
    out = tmp_path / "eval/sts.json"
    main(["evaluate", "sts", "--model", str(run), "--origin", "demo", "--out", str(out)])
    record = json.loads(out.read_text())
    (folder,) = (tmp_path / "eval/sts.mteb/sentaug__sda_pi-tiny-bert-demo-seed1").iterdir()
    results = check_format(folder)
    assert results["sentaug-sts-STS12-demo"]["scores"]["test"][0]["main_score"] == pytest.approx(
        record["STS12"] / 100, abs=1e-6)
    assert (os.stat(card).st_mtime_ns, os.stat(run).st_mtime_ns) == times
    front = yaml.safe_load(card.read_text().split("---")[1])
    rows = {(r["task"]["name"], r["dataset"]["name"], r["dataset"]["split"]): r["metrics"][0]["value"]
            for r in front["model-index"][0]["results"]}
    assert rows[("training", "STSBenchmark", "validation")] == 29.68
    assert rows[("sts", "STS12", "test")] == round(record["STS12"], 2)
    assert f"| sts | STS12 | test | cosine_spearman | {record['STS12']:.2f} |" in card.read_text()
    # again, and under another pooler: each evaluation's rows once, side by side
    main(["evaluate", "sts", "--model", str(run), "--origin", "demo", "--pooler", "cls_before_pooler",
          "--out", str(tmp_path / "eval/sts.cls_before_pooler.json")])
    export(out)                                                  # `sentaug evaluate mteb` on a record written before
    names = [r["task"]["name"] for r in yaml.safe_load(card.read_text().split("---")[1])["model-index"][0]["results"]]
    assert names.count("sts") == 9 and names.count("sts.cls_before_pooler") == 9 and names.count("training") == 1
    check_with_mteb(folder)
