"""Kinds of paper table: which result files a row reads, and how a cell is read from one of them.

A table in papers/<paper>.yaml names its `kind`; a kind is two functions:

    inputs(workflow, paper, row) -> [result file, ...]     (one per seed for trained runs)
    value(result, column, row)  -> float                   (one cell from one result file)

The report averages a cell over the row's files (mean ± sd over seeds). Adding a kind of table is one entry
in KINDS. A downstream suite's name (transfer, clustering, intent, glue, analysis) is a kind too: its rows
are trained runs (`method:`) or pre-trained backbones (`pretrained: <pooler>`), its cells keys of the
suite's JSON.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class TableKind:
    inputs: Callable
    value: Callable


def json_key(result: dict, column: str, row: dict) -> float:
    """A cell is the result JSON's value under the column's name (task name, `avg`, ...)."""
    if column not in result:
        raise KeyError(f"result has no key '{column}' (has: {', '.join(sorted(result))})")
    return result[column]


def _sts_inputs(wf, paper: str, row: dict) -> list[str]:
    if "pretrained" in row:
        return [wf.pretrained_eval(wf.stand_in(row["backbone"]), row["pretrained"])]
    return [wf.row_sts_eval(paper, row, s) for s in wf.seeds]


def _suite_kind(suite: str) -> TableKind:
    def inputs(wf, paper: str, row: dict) -> list[str]:
        bb = wf.stand_in(row["backbone"])
        if "pretrained" in row:
            return [wf.pretrained_suite_eval(bb, suite, row["pretrained"])]
        return [wf.run_eval(paper, bb, row["method"], s, suite) for s in wf.seeds]

    return TableKind(inputs, json_key)


KINDS: dict[str, TableKind] = {
    # STS test sets (and STS-B dev): sentaug evaluate sts
    "sts": TableKind(_sts_inputs, json_key),
    # SDA Table 3: share of corpus lines an augmentation changed (the cache's stats JSON, per seed)
    "augmentation_share": TableKind(
        lambda wf, paper, row: [wf.cache_stats(row["augmentation"], s) for s in wf.seeds],
        lambda result, column, row: result["share_changed"]),
    # CARDS Table 1: % of switched words per effect/direction (sentaug.augment.cards.tokenization_effects)
    "tokenization_effects": TableKind(
        lambda wf, paper, row: [wf.tokenization_effects_file()],
        lambda result, column, row: result["percent"][row["effect"]]),
    **{suite: _suite_kind(suite) for suite in ("transfer", "clustering", "intent", "glue", "analysis")},
    # SDA Table 2: pairs per split of each STS task (`sentaug data-stats sts`); a row is a split
    "data_stats_sts": TableKind(
        lambda wf, paper, row: [wf.data_stats_file("sts")],
        lambda result, column, row: result[column][row["split"]]),
    # VaSCL Table 4: N, mean words, classes, imbalance of each clustering set (`sentaug data-stats clustering`)
    "data_stats_clustering": TableKind(
        lambda wf, paper, row: [wf.data_stats_file("clustering")],
        lambda result, column, row: result[row["dataset"]][column]),
}


def table_kind(name: str) -> TableKind:
    if name not in KINDS:
        raise ValueError(f"unknown table kind '{name}' (known: {', '.join(sorted(KINDS))})")
    return KINDS[name]
