"""Every evaluation's results also in MTEB's format, so that they travel: beside `<name>.json` (the suite's own
record, unchanged), the folder `<name>.mteb/<model>/<revision>/` laid out as MTEB's results repository and its
`ResultCache` lay results out (`results/<model>/<revision>/<task>.json`):

- one `<task>.json` per task, a `TaskResult` as mteb 2.x writes it: task_name, dataset_revision, mteb_version,
  evaluation_time, date and `scores` {split: [{main_score, hf_subset, languages, <metrics>}]}, scores as
  fractions (MTEB's scale: 0.8203, where sentaug's records say 82.03);
- `model_meta.json`, a `ModelMeta`: name, revision, embed_dim, n_parameters, max_tokens, training_datasets,
  adapted_from, framework, similarity function (`sentaug.models.identity`).

A task keeps MTEB's name only where it is MTEB's task on MTEB's data by MTEB's protocol: STS12-16 and STS-B,
whose test sets (counted pairs) and main score (Spearman of the cosine over all pairs: SimCSE's "all" setting) are
MTEB's. Any other task, or those on other data (the demo's, a subset), is named `sentaug-<suite>-<task>[-<data>]`:
MTEB's tools read the file, its leaderboard knows no such task. SICK-R is the SentEval test split (4,927 pairs),
not MTEB's SICK-R (all 9,927): `sentaug-sts-SICKRelatedness`. `mteb_version` is null (mteb did not run) and
`dataset_revision` the digest of the data read (`sentaug.io.folder_digest`), not a hub dataset's
commit; `evaluated_with` (a key mteb ignores) says which protocol and sentaug version produced the numbers.
"""
from __future__ import annotations

import datetime
import json
import os
import shutil
import tempfile
from pathlib import Path

# MTEB's STS tasks that are SentEval's: MTEB name, the test pairs of its test split (so that a subset or other
# data keeps sentaug's own name), MTEB's dataset.
MTEB_STS = {"STS12": ("STS12", 3108, "mteb/sts12-sts"), "STS13": ("STS13", 1500, "mteb/sts13-sts"),
            "STS14": ("STS14", 3750, "mteb/sts14-sts"), "STS15": ("STS15", 3000, "mteb/sts15-sts"),
            "STS16": ("STS16", 1186, "mteb/sts16-sts"),
            "STSBenchmark": ("STSBenchmark", 1379, "mteb/stsbenchmark-sts")}
PROTOCOLS = {
    "sts": "SimCSE's SentEval protocol: Spearman of the cosine over every test pair (STS12-16 'all' setting)",
    "cnsd": "Chinese STS-B (CNSD) test: Spearman of the cosine",
    "transfer": "SentEval transfer: logistic regression on frozen embeddings, test accuracy",
    "clustering": "K-means on frozen embeddings, Hungarian accuracy (mean over seeds)",
    "intent": "few-shot intent classification, linear layer on frozen embeddings, test accuracy",
    "glue": "GLUE fine-tuning of the whole model, dev score",
    "cola": "CoLA probe: logistic regression on frozen embeddings, dev accuracy",
}
TYPES = {"sts": "STS", "cnsd": "STS", "transfer": "Classification", "clustering": "Clustering",
         "intent": "Classification", "glue": "Classification", "cola": "Classification"}
LANGUAGES = {"cnsd": ["zho-Hans"]}


def _entry(main: float, subset: str = "default", languages=("eng-Latn",), **metrics) -> dict:
    return {"main_score": main, "hf_subset": subset, "languages": list(languages), **metrics}


def _pct(value) -> float:
    return round(float(value) / 100, 6)


def task_scores(record: dict, suite: str) -> list[dict]:
    """The tasks of a suite's record: per task {name, mteb (MTEB's name or None), dataset, scores {split: [...]}}.
    A suite without task scores (analysis, nli: distances and probes of papers' figures) has none."""
    lang = LANGUAGES.get(suite, ["eng-Latn"])
    out = []
    if suite == "sts":
        from .sts import TASKS

        pairs = record.get("n_pairs") or {}
        for task in TASKS:
            if task not in record:
                continue
            detail = ((record.get("details") or {}).get(task) or {}).get("all") or {}
            metrics = {"cosine_spearman": _pct(record[task]), "spearman": _pct(record[task])}
            if "pearson" in detail:
                metrics |= {"cosine_pearson": _pct(detail["pearson"]), "pearson": _pct(detail["pearson"])}
            scores = {"test": [_entry(_pct(record[task]), languages=lang, **metrics)]}
            mteb, n, dataset = MTEB_STS.get(task, (None, None, None))
            if mteb is None or pairs.get(task) != n or record.get("lowercase"):
                dev = record.get(f"{task}_dev")
                if dev is not None:
                    scores["validation"] = [_entry(_pct(dev), languages=lang, cosine_spearman=_pct(dev))]
                mteb = None
            out.append({"name": task, "mteb": mteb, "dataset": dataset, "scores": scores,
                        "pairs": pairs.get(task)})
    elif suite == "cnsd":
        scores = {"test": [_entry(_pct(record["CNSD"]), languages=lang, cosine_spearman=_pct(record["CNSD"]))]}
        if record.get("CNSD_dev") is not None:
            scores["validation"] = [_entry(_pct(record["CNSD_dev"]), languages=lang,
                                           cosine_spearman=_pct(record["CNSD_dev"]))]
        out.append({"name": "CNSD", "mteb": None, "dataset": None, "scores": scores})
    elif suite == "transfer":
        from ..data.transfer import TASKS

        out += [{"name": t, "mteb": None, "dataset": None,
                 "scores": {"test": [_entry(_pct(record[t]), languages=lang, accuracy=_pct(record[t]))]}}
                for t in TASKS if isinstance(record.get(t), (int, float))]
    elif suite == "clustering":
        from ..data.clustering import DATASETS

        out += [{"name": d, "mteb": None, "dataset": None,
                 "scores": {"test": [_entry(_pct(record[d]), languages=lang, accuracy=_pct(record[d]))]}}
                for d in DATASETS if isinstance(record.get(d), (int, float))]
    elif suite == "intent":
        from ..data.intent import DATASETS

        for d in DATASETS:
            shots = [k for k in record.get("ks") or [] if isinstance(record.get(f"{d}_{k}shot"), (int, float))]
            if shots:
                out.append({"name": d, "mteb": None, "dataset": None, "scores": {"test": [
                    _entry(_pct(record[f"{d}_{k}shot"]), f"{k}-shot", lang, accuracy=_pct(record[f"{d}_{k}shot"]),
                           accuracy_sd=_pct(record.get(f"{d}_{k}shot_sd", 0.0))) for k in shots]}})
    elif suite == "glue":
        from ..data.glue import TASKS

        out += [{"name": t, "mteb": None, "dataset": None, "scores": {"validation": [
                    _entry(_pct(record[t]["score"]), languages=lang, score=_pct(record[t]["score"]),
                           score_cards=_pct(record[t]["score_cards"]))]}}
                for t in TASKS if isinstance(record.get(t), dict) and "score" in record[t]]
    elif suite == "cola":
        if "accuracy" in record:
            out.append({"name": "CoLA", "mteb": None, "dataset": None, "scores": {"validation": [
                _entry(_pct(record["accuracy"]), languages=lang, accuracy=_pct(record["accuracy"]))]}})
    return out


def _data_revision(data: str | None, suite: str) -> str:
    """The digest of the suite's data folders under `data` (sentaug's, not a hub dataset's commit)."""
    from ..io import folder_digest
    from .suites import folders

    if not data or not Path(data).is_dir():
        return "unknown"
    digests = [f"{f}:{folder_digest(Path(data) / f)['sha256']}" for f in folders(suite)
               if (Path(data) / f).is_dir()]
    import hashlib

    return "sentaug-data:" + hashlib.sha256("\n".join(digests).encode()).hexdigest()[:12] if digests else "unknown"


def _suffix(record: dict) -> str:
    """What sets the data apart from the official sets, in a task's name: the scale's data (demo), lower-cased."""
    data = str(record.get("data") or "")
    parts = [p for p in ("demo",) if f"/{p}" in data or data.endswith(p) or record.get("scale") == p]
    if record.get("lowercase"):
        parts.append("lowercase")
    return "".join(f"-{p}" for p in parts)


def model_meta(identity: dict, suite: str) -> dict:
    """MTEB's ModelMeta of a model identity (`sentaug.models.identity.model_identity`), as mteb writes it."""
    from .. import __version__

    name = identity["name"] if "/" in identity["name"] else f"hub/{identity['name']}"
    frameworks = ["PyTorch"] + (["Sentence Transformers"] if identity["sentence_transformers"] else [])
    spec = identity.get("spec") or {}
    return {"name": name, "revision": identity["revision"], "release_date": None,
            "languages": LANGUAGES.get(suite, ["eng-Latn"]), "n_parameters": identity["n_parameters"],
            "memory_usage_mb": round(identity["n_parameters"] * 4 / 2**20, 1) if identity["n_parameters"] else None,
            "max_tokens": identity["max_tokens"], "embed_dim": identity["embed_dim"], "license": None,
            "open_weights": True, "public_training_code": None,
            "public_training_data": None, "framework": frameworks, "reference": None,
            "similarity_fn_name": "cosine", "use_instructions": False,
            "training_datasets": identity["training_data"], "adapted_from": identity["base_model"],
            "superseded_by": None, "modalities": ["text"], "model_type": ["dense"], "loader": None,
            "citation": None, "contacts": None,
            "experiment_kwargs": {"sentaug": __version__, **({"method": spec["method"], "scale": spec["scale"],
                                                              "seed": spec["seed"]} if spec else {})}}


def mteb_folder(result_file: str | Path) -> Path:
    """Where the MTEB files of a result file go: `<name>.mteb/` beside `<name>.json`."""
    result_file = Path(result_file)
    return result_file.with_name(result_file.name.removesuffix(".json") + ".mteb")


def write_mteb_results(result_file: str | Path, model_folder: str | Path, suite: str,
                       local_name: str | None = None) -> Path | None:
    """The MTEB files of the suite's record `result_file` of the model in `model_folder` (module docstring),
    written whole into `<name>.mteb/` (replacing an earlier one); None for a suite without task scores."""
    from ..models.identity import model_identity

    record = json.loads(Path(result_file).read_text(encoding="utf-8"))
    tasks = task_scores(record, suite)
    if not tasks:
        return None
    identity = model_identity(model_folder, local_name)
    meta = model_meta(identity, suite)
    from .. import __version__

    data_revision = _data_revision(record.get("data"), suite)
    date = datetime.datetime.fromtimestamp(Path(result_file).stat().st_mtime, datetime.timezone.utc)
    suffix = _suffix(record)
    target = mteb_folder(result_file)
    stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        folder = stage / meta["name"].replace("/", "__") / meta["revision"].replace(":", "-")
        folder.mkdir(parents=True)
        (folder / "model_meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        for task in tasks:
            name = task["mteb"] or f"sentaug-{suite}-{task['name']}{suffix}"
            result = {"dataset_revision": data_revision, "task_name": name, "mteb_version": None,
                      "scores": task["scores"], "evaluation_time": record.get("seconds"),
                      "kg_co2_emissions": None, "date": date.isoformat(),
                      "evaluated_with": {"sentaug": __version__, "protocol": PROTOCOLS[suite],
                                         "suite": suite, "record": Path(result_file).name,
                                         "pooler": record.get("pooler"), "normalize": record.get("normalize"),
                                         "type": TYPES[suite], "mteb_dataset": task.get("dataset"),
                                         "pairs": task.get("pairs")}}
            (folder / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(stage, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return target


# The metric each kind of task reports in a model card's table.
METRICS = {"STS": "cosine_spearman", "Classification": "accuracy", "Clustering": "accuracy"}


def card_scores(record: dict, suite: str, label: str | None = None) -> list[dict]:
    """A suite's record as a model card's score rows (x100, as sentaug's records give them;
    `sentaug.train.model_card`), under `label` (the record's file name: sts, sts.avg, sts_lowercase)."""
    rows = []
    for task in task_scores(record, suite):
        for split, entries in task["scores"].items():
            for entry in entries:
                metric = METRICS.get(TYPES[suite], "main_score")
                value = entry.get(metric, entry["main_score"])
                rows.append({"evaluation": label or suite,
                             "task": task["name"], "split": split, "subset": entry["hf_subset"],
                             "metric": metric if metric in entry else "score", "value": round(value * 100, 2),
                             "type": TYPES[suite], "mteb": task["mteb"], "note": f"pooler {record.get('pooler')}"})
    return rows


def suite_of(record: dict, file: str | Path = "") -> str | None:
    """The suite a result record is of: its `suite`, else told by its keys (STS's tasks, CNSD, GLUE's config)."""
    if record.get("suite"):
        return record["suite"]
    if "STS12" in record or "STSBenchmark" in record:
        return "sts"
    if "CNSD" in record:
        return "cnsd"
    if "config" in record and "avg_cards" in record:
        return "glue"
    return None


def export(result_file: str | Path, model_folder: str | Path | None = None, suite: str | None = None,
           local_name: str | None = None) -> Path | None:
    """The MTEB files of a result file (and, for a trained run, its scores in the run's model card): what every
    `sentaug evaluate` does after writing its record, and `sentaug mteb` does for records written before."""
    from ..train.model_card import add_scores

    try:
        record = json.loads(Path(result_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    suite = suite or suite_of(record, result_file)
    model_folder = Path(model_folder or record.get("model") or "")
    if suite not in TYPES or not (model_folder / "config.json").is_file():
        return None
    written = write_mteb_results(result_file, model_folder, suite, local_name)
    add_scores(model_folder, card_scores(record, suite, Path(result_file).name.removesuffix(".json")))
    return written
