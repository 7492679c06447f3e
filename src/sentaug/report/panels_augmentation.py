"""Panel kinds that compare augmentations (VaSCL Figs. 3-4, AugCSE Figs. 6-7), merged into
`sentaug.report.figures.PANEL_KINDS` like those of `sentaug.report.panels_embedding`, whose readers and
keys (`backbone`, `seeds`) they share.

Kinds (keys of a panel in papers/<paper>.yaml):

  augmentation_sweep  x: {label, values, set: <augmentation set>}; series: [{label, method, set: {...},
                      setting: <key path>, augmentations: {x: augmentation}}] (the method variant trained with
                      that augmentation at each x); baselines: [{label, method | pretrained}]; y: {label,
                      metric | metrics: [...] (their mean)} or y: {label, cosine: {x: augmentation}} (the mean
                      cosine between each sentence and that augmentation of it, under each model; VaSCL Figs.
                      3-4). An x is kept at a scale only if its augmentations are in the set's list there.
  augmentation_table  augmentations: <set>, features: {backbone, pooler}, columns: [{label, feature} |
                      {label, method, setting, metric}], paper: {augmentation: [value per column]}: one row per
                      augmentation (AugCSE Fig. 6); features are read from the augmentation analysis of the
                      pre-trained `features` model, the rest from each augmentation's method variant.
  correlation         of: {figure, panel}: Pearson correlations between the columns of an augmentation_table
                      across its augmentations (AugCSE Fig. 7); the paper's from its table's reported values.
"""
from __future__ import annotations

import numpy as np

from .panels_embedding import (PANEL, draw_lines, eval_files, model_name, panel_augmentations, panel_seeds,
                               read_value, seed_note, value_point)
from .sources import canonical_method, metric_file

# ---------------------------------------------------------------------------------------------- augmentation_sweep


def _analysis_files(wf, paper: str, bb: str, series: dict, method: str, set_name: str, seeds) -> list[tuple]:
    if "pretrained" in series:
        f = wf.paths.pretrained_augmentation_analysis(set_name, bb, series["pretrained"])
        return [(f, f)]
    return [(f, f) for f in (wf.paths.run_augmentation_analysis(set_name, paper, bb, method, s) for s in seeds)]


def _kept_x(wf, panel: dict) -> tuple[list, str | None]:
    """The x values whose augmentations are all in the scale's list of the panel's set (and a note if some
    are left out)."""
    allowed = set(wf.paths.augmentation_set(panel["x"]["set"]))
    maps = [s["augmentations"] for s in panel["series"] if "augmentations" in s]
    maps += [panel["y"]["cosine"]] if "cosine" in panel["y"] else []
    xs = panel["x"]["values"]
    kept = [x for x in xs if all(m[x] in allowed for m in maps)]
    if not kept:
        raise ValueError(f"panel '{panel.get('title')}': no x value has all its augmentations in set "
                         f"'{panel['x']['set']}' at scale '{wf.scale}'")
    note = None
    if len(kept) < len(xs):
        note = (f"At {wf.scale} scale {PANEL} keeps x = {', '.join(map(str, kept))} "
                f"(of {', '.join(map(str, xs))}).")
    return kept, note


def augmentation_sweep_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.specs.stand_in(panel["backbone"]), panel_seeds(wf, panel)
    kept, note = _kept_x(wf, panel)
    notes = " ".join(n for n in (note, seed_note(wf, panel)) if n) or None
    y = panel["y"]
    cosine = "cosine" in y
    metrics = list(y.get("metrics") or ([y["metric"]] if "metric" in y else []))
    label = y["label"] if cosine else "+".join(metrics)
    points = []

    def add(series: dict, x, method: str, baseline: bool, at_x):
        if cosine:
            aug = y["cosine"][at_x]
            files = _analysis_files(wf, paper, bb, series, method, panel["x"]["set"], seeds)
            paths = [["augmentations", f"{aug}/seed{wf.seeds[0]}", "cosine", "mean"]]
        else:
            files = eval_files(wf, paper, bb, series, method, metrics[0], seeds)
            if len({m.split(".", 1)[0] for m in metrics}) > 1:
                raise ValueError(f"panel '{panel.get('title')}': y.metrics must come from one result file")
            paths = [m.split(".")[1:] for m in metrics]
        model = model_name(series) if "pretrained" in series else method
        points.append(value_point(series["label"], x, label, model, files, paths, baseline=baseline, note=notes,
                                  paper=None if baseline else (series.get("paper") or {}).get(x)))

    for series in panel["series"]:
        for x in kept:
            overrides = {**series.get("set", {}), series["setting"]: series["augmentations"][x]}
            add(series, x, canonical_method(wf.config, series["method"], overrides), False, x)
    for base in panel.get("baselines", []):
        method = None if "pretrained" in base else canonical_method(wf.config, base["method"], base.get("set", {}))
        if cosine:    # the same model, measured on each x's augmentation
            for x in kept:
                add(base, x, method, True, x)
        else:
            add(base, None, method, True, None)
    return points


def draw_augmentation_sweep(ax, panel: dict, records: list[dict], meta: dict) -> None:
    draw_lines(ax, records, panel["x"]["label"], panel["y"]["label"])


# ---------------------------------------------------------------------------------------------- augmentation_table


def augmentation_table_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.specs.stand_in(panel["backbone"]), panel_seeds(wf, panel)
    augs, note = panel_augmentations(wf, panel)
    notes = " ".join(n for n in (note, seed_note(wf, panel)) if n) or None
    feat = panel.get("features") or {}
    reported = panel.get("paper") or {}
    points = []
    for aug in augs:
        for j, col in enumerate(panel["columns"]):
            paper_row = reported.get(aug)
            value = paper_row[j] if paper_row and paper_row[j] is not None else None
            paper_y = None if value is None else value * col.get("paper_scale", 1)
            if "feature" in col:
                f = wf.paths.pretrained_augmentation_analysis(panel["augmentations"],
                                                              wf.specs.stand_in(feat["backbone"]), feat["pooler"])
                path = ["augmentations", f"{aug}/seed{wf.seeds[0]}", *col["feature"].split(".")]
                points.append(value_point(col["label"], aug, col["feature"], f"pretrained:{feat['pooler']}",
                                          [(f, f)], [path], paper=paper_y, note=notes))
            else:
                method = canonical_method(wf.config, col["method"], {col["setting"]: aug})
                files = [metric_file(wf, paper, bb, method, s, col["metric"]) for s in seeds]
                points.append(value_point(col["label"], aug, col["metric"], method, files,
                                          [col["metric"].split(".")[1:]], paper=paper_y, note=notes))
    return points


def draw_augmentation_table(ax, panel: dict, records: list[dict], meta: dict) -> None:
    rows = list(dict.fromkeys(r["x"] for r in records))
    cols = [c["label"] for c in panel["columns"]]
    cell = {(r["x"], r["series"]): r for r in records}
    shade = np.full((len(rows), len(cols)), np.nan)
    for j, c in enumerate(cols):        # colour by rank within a column, as the paper's heat-map table
        vals = np.array([np.nan if cell[(a, c)]["mean"] is None else cell[(a, c)]["mean"] for a in rows])
        ok = ~np.isnan(vals)
        if ok.sum() > 1:
            ranks = vals[ok].argsort().argsort()
            shade[ok, j] = ranks / (ok.sum() - 1)
    ax.imshow(np.ma.masked_invalid(shade), cmap="RdYlGn", aspect="auto", vmin=0, vmax=1, alpha=0.6)
    for i, a in enumerate(rows):
        for j, c in enumerate(cols):
            r = cell[(a, c)]
            ours = "n/a" if r["mean"] is None else f"{r['mean']:.3g}"
            paper = "" if r["paper"] is None or r["paper"] != r["paper"] else f"\n({r['paper']:.3g})"
            ax.text(j, i, ours + paper, ha="center", va="center", fontsize=5)
    ax.set_xticks(range(len(cols)), cols, fontsize=6, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows, fontsize=6)


# ---------------------------------------------------------------------------------------------- correlation


def correlation_points(wf, paper: str, panel: dict) -> list[dict]:
    source = wf.papers[paper]["figures"][panel["of"]["figure"]]["panels"][panel["of"]["panel"]]
    table = augmentation_table_points(wf, paper, source)
    reported = source.get("paper") or {}
    paper_rows = [[np.nan if v is None else float(v) for v in row] for row in reported.values()]
    files = sorted({f for p in table for f in p["files"]})
    index = {f: i for i, f in enumerate(files)}
    cells = [{"series": p["series"], "x": p["x"], "files": [index[f] for f in p["files"]], "paths": p["paths"]}
             for p in table]     # files by position in the point's list: the JSON stays short
    targets = sorted({t for p in table for t in p.get("targets", p["files"])})
    point = {"series": "pearson", "x": None, "metric": "pearson", "method": "",
             "columns": [c["label"] for c in source["columns"]], "cells": cells, "paper_rows": paper_rows,
             "files": files, "note": next((p["note"] for p in table if p.get("note")), None)}
    return [point if targets == files else {**point, "targets": targets}]


def pearson_pairwise(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson r between every two columns over the rows where both are known (NaN: unknown), and the
    number of such rows; r is NaN with fewer than 3 rows or a constant column."""
    k = matrix.shape[1]
    r, n = np.full((k, k), np.nan), np.zeros((k, k), dtype=int)
    for i in range(k):
        for j in range(k):
            ok = ~np.isnan(matrix[:, i]) & ~np.isnan(matrix[:, j])
            n[i, j] = ok.sum()
            if n[i, j] >= 3 and matrix[ok, i].std() > 0 and matrix[ok, j].std() > 0:
                r[i, j] = np.corrcoef(matrix[ok, i], matrix[ok, j])[0, 1]
    return r, n


def read_correlation(point: dict) -> list[dict]:
    cols, files = point["columns"], point["files"]
    cell = {(c["x"], c["series"]): read_value({**c, "files": [files[i] for i in c["files"]], "metric": "",
                                               "method": ""})[0]["mean"] for c in point["cells"]}
    rows = list(dict.fromkeys(c["x"] for c in point["cells"]))
    ours = np.array([[np.nan if cell[(a, c)] is None else cell[(a, c)] for c in cols] for a in rows], dtype=float)
    r, n = pearson_pairwise(ours)
    r_paper = pearson_pairwise(np.array(point["paper_rows"], dtype=float))[0] if point["paper_rows"] else None
    out = []
    for i, a in enumerate(cols):
        for j, b in enumerate(cols):
            paper = None if r_paper is None or np.isnan(r_paper[i, j]) else round(float(r_paper[i, j]), 6)
            out.append({"series": a, "x": b, "metric": "pearson", "method": "", "n": int(n[i, j]), "sd": None,
                        "mean": None if np.isnan(r[i, j]) else float(r[i, j]), "paper": paper, "baseline": False})
    return out


def draw_correlation(ax, panel: dict, records: list[dict], meta: dict) -> None:
    cols = list(dict.fromkeys(r["series"] for r in records))
    cell = {(r["series"], r["x"]): r for r in records}
    grid = np.array([[np.nan if cell[(a, b)]["mean"] is None else cell[(a, b)]["mean"] for b in cols]
                     for a in cols])
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu_r", vmin=-1, vmax=1)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    for i, a in enumerate(cols):
        for j, b in enumerate(cols):
            r = cell[(a, b)]
            ours = "n/a" if r["mean"] is None else f"{r['mean']:.2f}"
            paper = "" if r["paper"] is None else f"\n({r['paper']:.2f})"
            ax.text(j, i, ours + paper, ha="center", va="center", fontsize=5)
    ax.set_xticks(range(len(cols)), cols, fontsize=6, rotation=30, ha="right")
    ax.set_yticks(range(len(cols)), cols, fontsize=6)


# ---------------------------------------------------------------------------------------------- kinds

PANEL_KINDS = {
    "augmentation_sweep": (augmentation_sweep_points, draw_augmentation_sweep),
    "augmentation_table": (augmentation_table_points, draw_augmentation_table),
    "correlation": (correlation_points, draw_correlation),
}
PANEL_RECORDS = {"augmentation_sweep": read_value, "augmentation_table": read_value, "correlation": read_correlation}
