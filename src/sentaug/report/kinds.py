"""Kinds of paper table: which result files a row reads, and how a cell is read from one of them.

A table in papers/<paper>.yaml names its `kind`; a kind is two functions:

    inputs(workflow, paper, row) -> [result file, ...]     (one per seed for trained runs)
                                    or {column position: [result file, ...]} when the columns read
                                    different files
    value(result, column, row)  -> float                   (one cell from one result file)

A kind also says what its cells were computed with, for the caption: `backbones(table)`, the paper backbones
whose stand-ins it reads (by default the ones its rows or blocks name), and `uses_corpus`, whether the training
corpus bears on it (data statistics counted from the evaluation files bear on neither).

The report averages a cell over the row's files (mean ± sd over seeds). Adding a kind of table is one entry
in KINDS. A downstream suite's name (transfer, clustering, intent, glue, analysis) is a kind too: its rows
are trained runs (`method:`) or pre-trained backbones (`pretrained: <pooler>`), its cells keys of the
suite's JSON.

A row's entry for one seed may also be a mapping {name: file} when its cells come from several results (the
`metrics` kind: STS and transfer side by side); `value` then receives {name: parsed JSON}. A run folder
stands for its train_summary.json (`train.<key>`). The row handed to `inputs` carries the table's `columns`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..config import iter_rows
from ..evaluate.suites import names as suite_names


def row_backbones(table: dict) -> set[str]:
    """The paper backbones a table's rows (or blocks) name."""
    return {row["backbone"] for row in iter_rows(table) if "backbone" in row}


def no_backbone(table: dict) -> set[str]:
    return set()


@dataclass(frozen=True)
class TableKind:
    inputs: Callable
    value: Callable
    cells: Callable | None = None
    backbones: Callable[[dict], set[str]] = row_backbones
    uses_corpus: bool = True

    def row_cells(self, result: dict, columns: list[str], row: dict) -> dict:
        if self.cells is not None:
            return self.cells(result, columns, row)
        return {c: self.value(result, c, row) for c in columns}


def json_key(result: dict, column: str, row: dict) -> float:
    """A cell is the result JSON's value under the column's name (task name, `avg`, ...)."""
    if column not in result:
        raise KeyError(f"result has no key '{column}' (has: {', '.join(sorted(result))})")
    return result[column]


def _share_inputs(wf, paper: str, row: dict):
    augs = row["augmentation"]
    if isinstance(augs, list):
        return {j: [wf.paths.cache_stats(a, s) for s in wf.seeds] for j, a in enumerate(augs)}
    return [wf.paths.cache_stats(augs, s) for s in wf.seeds]


def _sts_inputs(wf, paper: str, row: dict) -> list[str]:
    if "pretrained" in row:
        return [wf.paths.pretrained_eval(wf.specs.stand_in(row["backbone"]), row["pretrained"])]
    return [wf.row_sts_eval(paper, row, s) for s in wf.seeds]


# -- GLUE (sentaug evaluate glue: {TASK: {score, score_cards}, avg, details}) ------------------------------
# A column is a task of `sentaug.evaluate.glue.TASKS` (or a paper's name for one), or `avg`. The metric is the
# kind's: `glue` reads `score` (GLUE's own convention, CLEAR Table 1), `glue_cards` reads `score_cards` (CARDS
# Table 6). `MNLI-m` is MNLI's matched accuracy whatever the convention (CLEAR Table 3's column).
GLUE_COLUMN_TASKS = {"STS": "STS-B", "SST": "SST-2", "MNLI-m": "MNLI"}


def glue_cell(result: dict, column: str, metric: str) -> float | None:
    """One task column of a GLUE result; None when the task was not run (not in the result)."""
    task = GLUE_COLUMN_TASKS.get(column, column)
    if task not in result:
        return None
    if column == "MNLI-m":
        return result["details"]["MNLI"]["accuracy_matched"]
    return result[task][metric]


def _glue_kind(metric: str) -> TableKind:
    def inputs(wf, paper: str, row: dict) -> list[str]:
        bb = wf.specs.stand_in(row["backbone"])
        if "pretrained" in row:
            return [wf.evaluations.pretrained_glue_eval(bb, row["pretrained"], row.get("glue"))]
        return [wf.evaluations.run_glue_eval(paper, bb, row["method"], s, row.get("glue")) for s in wf.seeds]

    def cells(result: dict, columns: list[str], row: dict) -> dict:
        out = {c: glue_cell(result, c, metric) for c in columns if c != "avg"}
        if "avg" in columns:    # the mean of this table's task columns that were run (all at paper scale)
            present = [v for v in out.values() if v is not None]
            out["avg"] = sum(present) / len(present) if present else None
        return out

    return TableKind(inputs, lambda result, column, row: cells(result, [column], row)[column], cells)


def _suite_kind(suite: str) -> TableKind:
    def inputs(wf, paper: str, row: dict) -> list[str]:
        bb = wf.specs.stand_in(row["backbone"])
        if "pretrained" in row:
            return [wf.paths.pretrained_suite_eval(bb, suite, row["pretrained"])]
        return [wf.paths.run_eval(paper, bb, row["method"], s, suite) for s in wf.seeds]

    return TableKind(inputs, json_key)


def _get(result, path: str):
    """The value at a dotted key path; in a list, a segment names the element (its `name`, as objectives are
    named in method declarations) or gives its index."""
    node = result
    for seg in path.split("."):
        if isinstance(node, list):
            node = next((x for i, x in enumerate(node) if (isinstance(x, dict) and x.get("name") == seg)
                         or seg == str(i)), KeyError)
        else:
            node = node.get(seg, KeyError) if isinstance(node, dict) else KeyError
        if node is KeyError:
            raise KeyError(f"result has no key '{path}' (at '{seg}')")
    return node


def _row_backbone(wf, row: dict) -> str:
    return wf.specs.stand_in(row["backbone"])


# -- metrics: each column a `<result>.<key path>` of a run (or a pre-trained backbone) ------------------------
def _metrics_inputs(wf, paper: str, row: dict) -> list:
    from .sources import RESULT_FILES, pretrained_metric_file

    bb = _row_backbone(wf, row)
    results = list(dict.fromkeys(c.split(".", 1)[0] for c in row["columns"]))
    if "pretrained" in row:
        return [{r: pretrained_metric_file(wf, bb, row["pretrained"], f"{r}.x")[0] for r in results}]
    return [{r: wf.paths.run_dir(paper, bb, row["method"], s) if r in RESULT_FILES
             else wf.paths.run_eval(paper, bb, row["method"], s, r) for r in results} for s in wf.seeds]


def _metrics_value(result: dict, column: str, row: dict) -> float:
    name, key = column.split(".", 1)
    return _get(result[name], key)


# -- AugCSE Table 15: isomorphism distances of NLI triplet samples (sentaug evaluate nli) --------------------
def _isomorphism_value(result: dict, column: str, row: dict) -> float:
    return _get(result, f"isomorphism.{row['set']}.{column}.{row['metric']}")


# -- tables that are configuration (sentaug.report.describe) --------------------------------------------------
def _membership_inputs(wf, paper: str, row: dict) -> list:
    """AugCSE Table 3: the columns are methods; a cell is 1 when the row's augmentation is in its set."""
    bb = _row_backbone(wf, row)
    return [{m: wf.paths.describe_file(paper, bb, m, "spec") for m in row["columns"]}]


def _membership_value(result: dict, column: str, row: dict) -> float:
    return float(row["augmentation"] in (result[column]["spec"].get("augmented_view") or []))


def _hyperparameter_inputs(wf, paper: str, row: dict) -> list:
    """AugCSE Tables 10-11: the columns are paper backbones; a cell is a key of that backbone's resolved spec."""
    return [{b: wf.paths.describe_file(paper, wf.specs.stand_in(b), row["method"], "spec") for b in row["columns"]}]


def _hyperparameter_value(result: dict, column: str, row: dict) -> float:
    return float(_get(result[column]["spec"], row["key"]))


KINDS: dict[str, TableKind] = {
    # STS test sets (and STS-B dev): sentaug evaluate sts
    "sts": TableKind(_sts_inputs, json_key),
    # SDA Table 3: share of corpus lines an augmentation changed (the cache's stats JSON, per seed); a row may
    # name one augmentation per column (SDA Table 3: the paper's algorithm, the authors' released code)
    "augmentation_share": TableKind(_share_inputs, lambda result, column, row: result["share_changed"],
                                    backbones=no_backbone),
    # CARDS Table 1: % of switched words per effect/direction (sentaug.augment.tokenization_effects)
    "tokenization_effects": TableKind(
        lambda wf, paper, row: [wf.paths.tokenization_effects_file()],
        lambda result, column, row: result["percent"][row["effect"]],
        backbones=lambda table: {"roberta-base"}),
    # the other suites: one result per model (STS and GLUE read theirs as above and below)
    **{suite: _suite_kind(suite) for suite in suite_names() if suite not in ("sts", "glue")},
    # GLUE dev after fine-tuning (CLEAR Tables 1 and 3: GLUE's metrics; CARDS Table 6: its own)
    "glue": _glue_kind("score"),
    "glue_cards": _glue_kind("score_cards"),
    # SDA Table 2: pairs per split of each STS task (`sentaug data-stats sts`); a row is a split
    "data_stats_sts": TableKind(
        lambda wf, paper, row: [wf.paths.data_stats_file("sts")],
        lambda result, column, row: result[column][row["split"]],
        backbones=no_backbone, uses_corpus=False),
    # VaSCL Table 4: N, mean words, classes, imbalance of each clustering set (`sentaug data-stats clustering`)
    "data_stats_clustering": TableKind(
        lambda wf, paper, row: [wf.paths.data_stats_file("clustering")],
        lambda result, column, row: result[row["dataset"]][column],
        backbones=no_backbone, uses_corpus=False),
    # cells from several results of a row's run: columns `<result>.<key>` (sts.avg, transfer.avg, cola.accuracy,
    # nli.anli.accuracy, train.best_stsb_dev), as figure metrics are named
    "metrics": TableKind(_metrics_inputs, _metrics_value),
    # AugCSE Table 15: rows name a triplet set (nli / anli) and a metric (cond_hm, svg, gromov_hausdorff)
    "nli_isomorphism": TableKind(_suite_kind("nli").inputs, _isomorphism_value),
    # AugCSE Table 3: augmentation (row) x method's augmentation set (column), 1 = member
    "augmentation_sets": TableKind(_membership_inputs, _membership_value),
    # AugCSE Tables 10-11: spec key (row) x paper backbone (column) of the row's method
    "hyperparameters": TableKind(_hyperparameter_inputs, _hyperparameter_value,
                                 backbones=lambda table: set(table["columns"])),
    # AugCSE Table 13: parameters (millions) in training / at inference of the row's method and backbone
    "model_size": TableKind(
        lambda wf, paper, row: [wf.paths.describe_file(paper, _row_backbone(wf, row), row["method"], "model_size")],
        lambda result, column, row: result[column] / 1e6),
}


def table_kind(name: str) -> TableKind:
    if name not in KINDS:
        raise ValueError(f"unknown table kind '{name}' (known: {', '.join(sorted(KINDS))})")
    return KINDS[name]
