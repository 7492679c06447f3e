"""Comparisons (config key `comparisons`, usually in the user's own file passed with --configfile): the user's
methods beside SimCSE and the five papers' main methods, on equal terms (one backbone, the scale's corpus and steps,
the same seeds and suites), each cell's mean with its 95 % interval and the paired difference to SimCSE. A
comparison is a board (`sentaug.report.leaderboard`) whose rows the user picks:

    comparisons:
      negation:
        rows:                             # optional: none compares the board's methods on columns of your own [{label: "SimCSE + negated hard negatives", method: simcse_negation}]
        backbone: bert-base-uncased       # a paper backbone; its scale's stand-in trains (default: the board's first)
        papers: [sda, cards]              # whose main methods stand beside (default: all five)
        columns: [sts.avg]                # metrics of the leaderboard's columns (default: all of them), or
                                          # {label, metric: <suite>.<key>} of any suite (a plugin's too)
        seeds: {demo: [1, 2, 3]}          # per scale (default: the leaderboard's)

A paper's main method is the leaderboard's row naming that paper (`paper:`), with the gain the paper reports; the
baseline is the leaderboard's. The runs are the leaderboard's (shared with the tables below paper scale), so a
method on both trains once. Target: results/tables/compare/<name>.{tex,csv,md}.
"""
from __future__ import annotations

import json
from pathlib import Path

from .. import config as sc
from .leaderboard import (added_key, caption, check_rows, check_seeds, leaderboard_path, leaderboard_records,
                          write_board)


def comparison_spec(config: dict, board: dict | None, name: str) -> dict:
    """The board spec of comparison `name` from the leaderboard's (`board`: `load_leaderboard`): its baseline row,
    the main methods of the papers named, then the comparison's own rows, marked as added; checked."""
    where = f"comparisons.{name}"
    if board is None:
        raise sc.ConfigError(f"config key '{where}': a comparison takes its baseline, the papers' main methods and its columns "
                             f"from the leaderboard, and there is none ({leaderboard_path(config)})")
    declared = config["comparisons"][name]
    mains = {row["paper"]: row for row in board["rows"] if row.get("paper")}
    papers = declared.get("papers", list(mains))
    unknown = [p for p in papers if p not in mains]
    if unknown:
        raise sc.ConfigError(f"config key '{where}.papers': '{unknown[0]}' has no main method on the leaderboard (papers: "
                             f"{', '.join(mains)})")
    backbone = declared.get("backbone", board["backbones"][0])
    if backbone not in config["backbones"]:
        raise sc.ConfigError(f"config key '{where}.backbone': unknown backbone '{backbone}'")
    by_metric = {column["metric"]: column for column in board["columns"]}
    columns = [_column(by_metric, column, f"{where}.columns") for column in declared.get("columns", list(by_metric))]
    seeds = {**board["seeds"], **(declared.get("seeds") or {})}
    check_seeds(config, seeds, f"config key '{where}.seeds.{{scale}}'")
    own = [{**row, "label": row["label"] + sc.ADDED_MARK, "added": True} for row in declared.get("rows", [])]
    check_rows(config, own, f"config key '{where}.rows'")
    baseline = next(row for row in board["rows"] if row["method"] == board["baseline"])
    rows = [baseline, *(mains[p] for p in papers), *own]
    labels = [row["label"] for row in rows]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise sc.ConfigError(f"config key '{where}.rows': label '{repeated[0]}' names two rows")
    return {"title": declared.get("title", f"Comparison '{name}': the configuration's methods beside SimCSE and "
                                           f"the papers' main methods"),
            "backbones": [backbone], "baseline": board["baseline"], "confidence": board.get("confidence", 0.95),
            "seeds": seeds, "columns": columns, "rows": rows}


def _column(by_metric: dict, column, where: str) -> dict:
    """A comparison's column: a leaderboard metric by name, or one of its own, `{label, metric: <suite>.<key>}`
    (a suite of the user's: sentaug.evaluate.suites)."""
    if isinstance(column, dict):
        suite, dot, key = column["metric"].partition(".")
        if not dot or not key:
            raise sc.ConfigError(f"config key '{where}': metric '{column['metric']}' is not <suite>.<key>")
        return {"label": column["label"], "metric": column["metric"]}
    if column not in by_metric:
        raise sc.ConfigError(f"config key '{where}': '{column}' is not a leaderboard column "
                             f"({', '.join(by_metric)}); a column of your own is {{label, metric: <suite>.<key>}}")
    return by_metric[column]


def render_comparison(name: str, inputs: str, out: str, scale: str) -> None:
    """CLI entry: `inputs` is {"spec": comparison_spec, "rows": Workflow.comparison_points(name), "meta": {...}};
    writes `out` (.tex) with a .csv and .md beside it."""
    given = json.loads(inputs)
    spec = given["spec"]
    backbone = spec["backbones"][0]
    records = leaderboard_records(spec, given["rows"], scale, backbone)
    text = caption(spec, scale, given.get("meta", {}), backbone,
                   added_key(spec["rows"], f"comparisons.{name}.rows"))      # none where it adds no rows
    write_board(spec, records, text, backbone, Path(out), f"tab:compare-{name}")
