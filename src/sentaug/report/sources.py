"""Where the numbers of a figure, a metrics table or the leaderboard come from: the run a method variant names
(`canonical_method`), and the file holding a metric of a trained run or of a pre-trained backbone, with the
Snakemake target that makes it (`metric_file`, `pretrained_metric_file`).

Metrics are `<result>.<key>`: `sts.avg`, `sts.STSBenchmark_dev` (sentaug evaluate sts), `<suite>.<key>`
for a downstream suite's JSON (`transfer.avg`, `clustering.avg`, ...), `train.<key>` for a run's
train_summary.json (`train.train_seconds`).
"""
from __future__ import annotations

from .. import config as sc

RESULT_FILES = {"train": "train_summary.json"}


def metric_file(wf, paper: str, backbone: str, method: str, seed: int, metric: str) -> tuple[str, str]:
    """(file to read, Snakemake target that makes it) for `metric` of a trained run."""
    result = metric.split(".", 1)[0]
    if result in RESULT_FILES:                       # a file inside the run folder (a directory output)
        run = wf.paths.run_dir(paper, backbone, method, seed)
        return f"{run}/{RESULT_FILES[result]}", run
    path = wf.paths.run_eval(paper, backbone, method, seed, result)
    return path, path


def pretrained_metric_file(wf, backbone: str, pooler: str, metric: str) -> tuple[str, str]:
    result = metric.split(".", 1)[0]
    if result == "sts":
        path = wf.paths.pretrained_eval(backbone, pooler)
    elif result in RESULT_FILES:
        raise ValueError(f"metric '{metric}': a pre-trained backbone has no training run")
    else:
        path = wf.paths.pretrained_suite_eval(backbone, result, pooler)
    return path, path


def metric_value(result: dict, metric: str) -> float:
    key = metric.split(".", 1)[1]
    if key not in result:
        raise KeyError(f"metric '{metric}': result has no key '{key}' (has: {', '.join(sorted(result))})")
    return float(result[key])


def canonical_method(config: dict, method: str, overrides: dict, defaults: dict | None = None) -> str:
    """The run name for `method` with `overrides`; settings equal to the declared ones are dropped so that the
    point reuses the declared method's run. `defaults` gives the value a setting has when the method does not
    declare it (e.g. {"positive.proportion": 1.0})."""
    declared = sc.method_config(config, method)
    changed = {}
    for path, value in overrides.items():
        try:
            same = sc.get_setting(declared, path) == value
        except sc.ConfigError:
            same = path in (defaults or {}) and defaults[path] == value
        if not same:
            changed[path] = value
    return sc.variant_name(method, changed)
