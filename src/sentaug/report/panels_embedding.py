"""Panel kinds of the representation figures (VaSCL Figs. 2-4, AugCSE Figs. 2-7), registered into
`sentaug.report.figures.PANEL_KINDS`; each kind's reader (PANEL_RECORDS) turns the result files behind a
point into the records that are written to the figure's CSV and drawn.

Kinds (keys of a panel in papers/<paper>.yaml; every kind takes `backbone`, a paper backbone resolved to the
scale's stand-in, and `seeds: {<scale>: N}`, the first N seeds at that scale):

  result_curve        x: {label, values}, y: {label, metric}, series: [{label, method | pretrained: <pooler>}].
                      The metric is a path into a result JSON in which `{x}` stands for the x value, e.g.
                      `analysis.stackoverflow.top_k.{x}.purity` (VaSCL Fig. 2a).
  nli_distances       show: distances | ratio, series as above. Histograms of each premise's distance to its
                      entailed and to its contradicting hypothesis, or of their ratio (VaSCL Fig. 2b), from the
                      analysis suite's `nli` part.
  augmentation_sweep  x: {label, values, set: <augmentation set>}; series: [{label, method, set: {...},
                      setting: <key path>, augmentations: {x: augmentation}}] (the method variant trained with
                      that augmentation at each x); baselines: [{label, method | pretrained}]; y: {label,
                      metric | metrics: [...] (their mean)} or y: {label, cosine: {x: augmentation}} (the mean
                      cosine between each sentence and that augmentation of it, under each model; VaSCL Figs.
                      3-4). An x is kept at a scale only if its augmentations are in the set's list there.
  projection          model: {pretrained: <pooler>} | {method}, augmentations: [...] | <set>, projection: pca |
                      tsne, sample: N. One scatter of the `sentaug project` output (AugCSE Figs. 2-4).
  training_curve      y: {label, part}, series: [{label, method}]: a loss part of train_log.jsonl over the steps
                      (AugCSE Fig. 5: discriminator_accuracy).
  augmentation_table  augmentations: <set>, features: {backbone, pooler}, columns: [{label, feature} |
                      {label, method, setting, metric}], paper: {augmentation: [value per column]}: one row per
                      augmentation (AugCSE Fig. 6); features are read from the augmentation analysis of the
                      pre-trained `features` model, the rest from each augmentation's method variant.
  correlation         of: {figure, panel}: Pearson correlations between the columns of an augmentation_table
                      across its augmentations (AugCSE Fig. 7); the paper's from its table's reported values.
"""
from __future__ import annotations

import math
import statistics

import numpy as np

from ..io import read_json
from .figures import PANEL_KINDS, PANEL_RECORDS, canonical_method, metric_file, pretrained_metric_file

# ---------------------------------------------------------------------------------------------- reading


def _seeds(wf, panel: dict) -> list[int]:
    n = (panel.get("seeds") or {}).get(wf.scale)
    return list(wf.seeds[:n] if n else wf.seeds)


def _seed_note(wf, panel: dict) -> str | None:
    seeds = _seeds(wf, panel)
    if len(seeds) < len(wf.seeds):
        return f"At {wf.scale} scale {panel.get('title', 'a panel')} uses seed(s) {', '.join(map(str, seeds))}."
    return None


def _walk(data: dict, path: list[str], file: str):
    """The value at `path`; None where the analysis recorded the part as skipped."""
    node = data
    for key in path:
        if not isinstance(node, dict) or key not in node:
            if isinstance(node, dict) and "skipped" in node:
                return None
            raise KeyError(f"{file}: no '{'.'.join(path)}' (missing '{key}')")
        node = node[key]
    return None if node is None else float(node)


def _summary(values: list[float]) -> tuple[float | None, float | None, int]:
    finite = [v for v in values if v is not None and not math.isnan(v)]
    if not finite:
        return None, None, 0
    return statistics.fmean(finite), (statistics.stdev(finite) if len(finite) > 1 else None), len(finite)


def read_value(point: dict) -> list[dict]:
    """One record: the mean (over `paths`) of each file, then mean and sample sd over the files (seeds)."""
    per_file = []
    for f in point["files"]:
        data = read_json(f)
        vals = [_walk(data, path, f) for path in point["paths"]]
        per_file.append(None if any(v is None for v in vals) else statistics.fmean(vals))
    mean, sd, n = _summary(per_file)
    return [{"series": point["series"], "x": point["x"], "metric": point["metric"], "method": point["method"],
             "mean": mean, "sd": sd, "n": n, "paper": point.get("paper"), "baseline": bool(point.get("baseline"))}]


def _value_point(series: str, x, metric: str, method: str, files_targets, paths, **extra) -> dict:
    """A point read by `read_value`; `targets` only where they are not the files themselves (a point's JSON
    travels on the figure job's command line, whose arguments are limited to 128 KiB each)."""
    files, targets = zip(*files_targets)
    point = {"series": series, "x": x, "metric": metric, "method": method, "files": list(files), "paths": paths,
             **{k: v for k, v in extra.items() if v is not None}}
    if list(targets) != list(files):
        point["targets"] = list(targets)
    return point


def _model(series: dict) -> str:
    return f"pretrained:{series['pretrained']}" if "pretrained" in series else series["method"]


def _eval_files(wf, paper: str, bb: str, series: dict, method: str, metric: str, seeds) -> list[tuple]:
    if "pretrained" in series:
        return [pretrained_metric_file(wf, bb, series["pretrained"], metric)]
    return [metric_file(wf, paper, bb, method, s, metric) for s in seeds]


def _analysis_files(wf, paper: str, bb: str, series: dict, method: str, set_name: str, seeds) -> list[tuple]:
    if "pretrained" in series:
        f = wf.pretrained_augmentation_analysis(set_name, bb, series["pretrained"])
        return [(f, f)]
    return [(f, f) for f in (wf.run_augmentation_analysis(set_name, paper, bb, method, s) for s in seeds)]


# ---------------------------------------------------------------------------------------------- result_curve


def result_curve_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.stand_in(panel["backbone"]), _seeds(wf, panel)
    points = []
    for series in panel["series"]:
        for x in panel["x"]["values"]:
            metric = panel["y"]["metric"].replace("{x}", str(x))
            files = _eval_files(wf, paper, bb, series, series.get("method"), metric, seeds)
            points.append(_value_point(series["label"], x, panel["y"]["metric"], _model(series), files,
                                       [metric.split(".")[1:]], note=_seed_note(wf, panel),
                                       paper=(series.get("paper") or {}).get(x)))
    return points


def _draw_lines(ax, records: list[dict], xlabel: str, ylabel: str, log_x: bool = False) -> None:
    for i, series in enumerate(dict.fromkeys(r["series"] for r in records)):
        pts = [r for r in records if r["series"] == series and r["mean"] is not None]
        base = any(r["baseline"] for r in pts)
        if base and all(r["x"] is None for r in pts):
            ax.axhline(pts[0]["mean"], linestyle="--", color=f"C{i}", label=f"{series} (ours)")
            continue
        pts.sort(key=lambda r: r["x"])
        ax.errorbar([r["x"] for r in pts], [r["mean"] for r in pts], yerr=[r["sd"] or 0 for r in pts],
                    fmt="--o" if base else "-o", color=f"C{i}", capsize=3, markersize=4, label=f"{series} (ours)")
        reported = [(r["x"], r["paper"]) for r in pts if r["paper"] is not None]
        if reported:
            ax.plot(*zip(*reported), "x", color=f"C{i}", markersize=9, label=f"{series} (paper)")
    if log_x:
        ax.set_xscale("log")
    values = sorted({r["x"] for r in records if r["x"] is not None})
    if values:
        ax.set_xticks(values, [f"{v:g}" for v in values])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def draw_result_curve(ax, panel: dict, records: list[dict]) -> None:
    _draw_lines(ax, records, panel["x"]["label"], panel["y"]["label"], panel["x"].get("log", False))


# ---------------------------------------------------------------------------------------------- nli_distances

HISTOGRAM_BINS = 30
RATIO_MAX = 3.0


def nli_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.stand_in(panel["backbone"]), _seeds(wf, panel)
    points = []
    for series in panel["series"]:
        files = _eval_files(wf, paper, bb, series, series.get("method"), "analysis.nli", seeds)
        files, targets = zip(*files)
        points.append({"series": series["label"], "x": None, "metric": panel["show"], "method": _model(series),
                       "files": list(files), "targets": list(targets), "note": _seed_note(wf, panel)})
    return points


def nli_histograms(d_e: np.ndarray, d_c: np.ndarray, show: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{label: (bin centres, density)}. Distances: both labels on one grid from 0 to the largest distance;
    ratio d(p, e) / d(p, c) on [0, RATIO_MAX], larger ratios counted in the last bin."""
    if show == "distances":
        edges = np.linspace(0.0, max(float(d_e.max()), float(d_c.max()), 1e-9), HISTOGRAM_BINS + 1)
        data = {"entailment": d_e, "contradiction": d_c}
    elif show == "ratio":
        edges = np.linspace(0.0, RATIO_MAX, HISTOGRAM_BINS + 1)
        data = {"ratio": np.minimum(d_e / np.maximum(d_c, 1e-12), RATIO_MAX)}
    else:
        raise ValueError(f"nli_distances: show must be 'distances' or 'ratio', got '{show}'")
    centres = (edges[:-1] + edges[1:]) / 2
    return {label: (centres, np.histogram(v, bins=edges, density=True)[0]) for label, v in data.items()}


def read_nli(point: dict) -> list[dict]:
    """Per label and bin: the density, mean and sd over the files (seeds); then the summary statistics."""
    show, runs = point["metric"], [read_json(f) for f in point["files"]]
    for f, r in zip(point["files"], runs):
        if "nli" not in r:
            raise KeyError(f"{f}: no 'nli' part ({r.get('skipped', {}).get('nli', 'not computed')})")
    hists = [nli_histograms(np.asarray(r["nli"]["entailment"]), np.asarray(r["nli"]["contradiction"]), show)
             for r in runs]
    base = {"series": point["series"], "method": point["method"], "paper": None, "baseline": False}
    records = []
    for label in hists[0]:
        if len({tuple(h[label][0]) for h in hists}) > 1:   # seeds differ in range: keep the first seed's grid
            hists = [hists[0]]
        for j, centre in enumerate(hists[0][label][0]):
            mean, sd, n = _summary([float(h[label][1][j]) for h in hists])
            records.append({**base, "x": round(float(centre), 6), "metric": f"{show}.{label}.density",
                            "mean": mean, "sd": sd, "n": n})
    keys = ("mean_entailment", "mean_contradiction") if show == "distances" else ("share_entailment_closer",)
    for key in keys:
        mean, sd, n = _summary([float(r["nli"][key]) for r in runs])
        records.append({**base, "x": None, "metric": key, "mean": mean, "sd": sd, "n": n})
    return records


def draw_nli(ax, panel: dict, records: list[dict]) -> None:
    show = panel["show"]
    for i, series in enumerate(dict.fromkeys(r["series"] for r in records)):
        mine = [r for r in records if r["series"] == series]
        stats = {r["metric"]: r["mean"] for r in mine if r["x"] is None}
        labels = ("entailment", "contradiction") if show == "distances" else ("ratio",)
        for label, style in zip(labels, ("-", "--")):
            pts = [r for r in mine if r["metric"] == f"{show}.{label}.density"]
            text = (f"{series}, {label} (mean {stats['mean_' + label]:.3f})" if show == "distances" else
                    f"{series} (d(p,e) < d(p,c): {stats['share_entailment_closer']:.0%})")
            ax.step([r["x"] for r in pts], [r["mean"] for r in pts], style, where="mid", color=f"C{i}", label=text)
    if show == "ratio":
        ax.axvline(1.0, color="grey", linewidth=0.8)
        ax.set_xlabel("d(premise, entailment) / d(premise, contradiction)")
    else:
        ax.set_xlabel("distance to the hypothesis (Euclidean, unit vectors)")
    ax.set_ylabel("density")


# ---------------------------------------------------------------------------------------------- augmentation_sweep


def _kept_x(wf, panel: dict) -> tuple[list, str | None]:
    """The x values whose augmentations are all in the scale's list of the panel's set (and a note if some
    are left out)."""
    allowed = set(wf.augmentation_set(panel["x"]["set"]))
    maps = [s["augmentations"] for s in panel["series"] if "augmentations" in s]
    maps += [panel["y"]["cosine"]] if "cosine" in panel["y"] else []
    xs = panel["x"]["values"]
    kept = [x for x in xs if all(m[x] in allowed for m in maps)]
    if not kept:
        raise ValueError(f"panel '{panel.get('title')}': no x value has all its augmentations in set "
                         f"'{panel['x']['set']}' at scale '{wf.scale}'")
    note = None
    if len(kept) < len(xs):
        note = (f"At {wf.scale} scale {panel.get('title', 'a panel')} keeps x = {', '.join(map(str, kept))} "
                f"(of {', '.join(map(str, xs))}).")
    return kept, note


def augmentation_sweep_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.stand_in(panel["backbone"]), _seeds(wf, panel)
    kept, note = _kept_x(wf, panel)
    notes = " ".join(n for n in (note, _seed_note(wf, panel)) if n) or None
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
            files = _eval_files(wf, paper, bb, series, method, metrics[0], seeds)
            if len({m.split(".", 1)[0] for m in metrics}) > 1:
                raise ValueError(f"panel '{panel.get('title')}': y.metrics must come from one result file")
            paths = [m.split(".")[1:] for m in metrics]
        points.append(_value_point(series["label"], x, label, _model(series) if "pretrained" in series else method,
                                   files, paths, baseline=baseline, note=notes,
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


def draw_augmentation_sweep(ax, panel: dict, records: list[dict]) -> None:
    _draw_lines(ax, records, panel["x"]["label"], panel["y"]["label"])


# ---------------------------------------------------------------------------------------------- projection


def projection_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, model = wf.stand_in(panel["backbone"]), panel["model"]
    method, sample = panel.get("projection", "pca"), int(panel.get("sample", 200))
    if "pretrained" in model:
        f = wf.pretrained_projection(panel["augmentations"], method, sample, bb, model["pretrained"])
    else:
        f = wf.run_projection(panel["augmentations"], method, sample, paper, bb, model["method"], wf.seeds[0])
    note = None
    if panel["augmentations"] in (wf.config.get("augmentation_sets") or {}):
        note = _augmentations(wf, {**panel, "title": "the projections"})[1]
    return [{"series": panel.get("title", ""), "x": None, "metric": method, "method": _model(model),
             "files": [f], "targets": [f], "note": note}]


def read_projection(point: dict) -> list[dict]:
    """One record per projected sentence: its label and coordinates, as `sentaug project` wrote them."""
    (f,) = point["files"]
    data = read_json(f)
    if not len(data["labels"]) == len(data["x"]) == len(data["y"]):
        raise ValueError(f"{f}: labels and coordinates differ in length")
    return [{"series": lab, "x": x, "y": y, "metric": point["metric"], "method": point["method"], "mean": None,
             "sd": None, "n": 1, "paper": None, "baseline": False}
            for lab, x, y in zip(data["labels"], data["x"], data["y"])]


def draw_projection(ax, panel: dict, records: list[dict]) -> None:
    import matplotlib

    labels = list(dict.fromkeys(r["series"] for r in records))
    others = [lab for lab in labels if lab != "original"]
    if len(others) <= 10:
        colours = [matplotlib.colormaps["tab10"](j) for j in range(len(others))]
    elif len(others) <= 20:
        colours = [matplotlib.colormaps["tab20"](j) for j in range(len(others))]
    else:
        colours = [matplotlib.colormaps["gist_ncar"](j / len(others)) for j in range(len(others))]
    colour_of = {"original": "black", **dict(zip(others, colours))}
    for lab in ["original"] * ("original" in labels) + others:
        pts = [r for r in records if r["series"] == lab]
        colour = colour_of[lab]
        ax.scatter([r["x"] for r in pts], [r["y"] for r in pts], s=4, alpha=0.6, color=colour, label=lab,
                   linewidths=0)
    method = panel.get("projection", "pca")
    ax.set_xlabel("PC 1" if method == "pca" else "t-SNE 1")
    ax.set_ylabel("PC 2" if method == "pca" else "t-SNE 2")
    ax.legend(fontsize=5 if len(labels) > 10 else 7, markerscale=2.5, loc="upper left",
              bbox_to_anchor=(1.0, 1.0), frameon=False)


# ---------------------------------------------------------------------------------------------- training_curve


def training_curve_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.stand_in(panel["backbone"]), _seeds(wf, panel)
    points = []
    for series in panel["series"]:
        runs = [wf.run_dir(paper, bb, series["method"], s) for s in seeds]
        points.append({"series": series["label"], "x": None, "metric": panel["y"]["part"],
                       "method": series["method"], "files": [f"{r}/train_log.jsonl" for r in runs],
                       "targets": runs, "note": _seed_note(wf, panel)})
    return points


def read_curve(point: dict) -> list[dict]:
    """Per logged step: the part's value (a mean over the steps since the previous record), mean and sd over
    the seeds' logs."""
    import json

    part, by_step = point["metric"], {}
    for f in point["files"]:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                record = json.loads(line)
                if part in record.get("parts", {}):
                    by_step.setdefault(record["step"], []).append(float(record["parts"][part]))
    if not by_step:
        raise KeyError(f"{point['files'][0]}: no logged part '{part}'")
    out = []
    for step in sorted(by_step):
        mean, sd, n = _summary(by_step[step])
        out.append({"series": point["series"], "x": step, "metric": part, "method": point["method"], "mean": mean,
                    "sd": sd, "n": n, "paper": None, "baseline": False})
    return out


def draw_training_curve(ax, panel: dict, records: list[dict]) -> None:
    for i, series in enumerate(dict.fromkeys(r["series"] for r in records)):
        pts = sorted((r for r in records if r["series"] == series), key=lambda r: r["x"])
        x, m = np.array([r["x"] for r in pts]), np.array([r["mean"] for r in pts])
        sd = np.array([r["sd"] or 0.0 for r in pts])
        ax.plot(x, m, color=f"C{i}", label=series)
        ax.fill_between(x, m - sd, m + sd, color=f"C{i}", alpha=0.15, linewidth=0)
    ax.set_xlabel("training step")
    ax.set_ylabel(panel["y"]["label"])


# ---------------------------------------------------------------------------------------------- augmentation_table


def _augmentations(wf, panel: dict) -> tuple[list[str], str | None]:
    augs = panel["augmentations"]
    if not isinstance(augs, str):
        return list(augs), None
    kept, full = wf.augmentation_set(augs), wf.config["augmentation_sets"][augs]["augmentations"]
    note = None
    if len(kept) < len(full):
        note = (f"At {wf.scale} scale {panel.get('title', 'a panel')} covers {len(kept)} of the {len(full)} "
                f"augmentations: {', '.join(kept)}.")
    return kept, note


def augmentation_table_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.stand_in(panel["backbone"]), _seeds(wf, panel)
    augs, note = _augmentations(wf, panel)
    notes = " ".join(n for n in (note, _seed_note(wf, panel)) if n) or None
    feat = panel.get("features") or {}
    reported = panel.get("paper") or {}
    points = []
    for aug in augs:
        for j, col in enumerate(panel["columns"]):
            paper_row = reported.get(aug)
            value = paper_row[j] if paper_row and paper_row[j] is not None else None
            paper_y = None if value is None else value * col.get("paper_scale", 1)
            if "feature" in col:
                f = wf.pretrained_augmentation_analysis(panel["augmentations"], wf.stand_in(feat["backbone"]),
                                                        feat["pooler"])
                path = ["augmentations", f"{aug}/seed{wf.seeds[0]}", *col["feature"].split(".")]
                points.append(_value_point(col["label"], aug, col["feature"], f"pretrained:{feat['pooler']}",
                                           [(f, f)], [path], paper=paper_y, note=notes))
            else:
                method = canonical_method(wf.config, col["method"], {col["setting"]: aug})
                files = [metric_file(wf, paper, bb, method, s, col["metric"]) for s in seeds]
                points.append(_value_point(col["label"], aug, col["metric"], method, files,
                                           [col["metric"].split(".")[1:]], paper=paper_y, note=notes))
    return points


def draw_augmentation_table(ax, panel: dict, records: list[dict]) -> None:
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


def draw_correlation(ax, panel: dict, records: list[dict]) -> None:
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


# ---------------------------------------------------------------------------------------------- registration

PANEL_KINDS.update({
    "result_curve": (result_curve_points, draw_result_curve),
    "nli_distances": (nli_points, draw_nli),
    "augmentation_sweep": (augmentation_sweep_points, draw_augmentation_sweep),
    "projection": (projection_points, draw_projection),
    "training_curve": (training_curve_points, draw_training_curve),
    "augmentation_table": (augmentation_table_points, draw_augmentation_table),
    "correlation": (correlation_points, draw_correlation),
})
PANEL_RECORDS.update({"result_curve": read_value, "nli_distances": read_nli, "augmentation_sweep": read_value,
                      "projection": read_projection, "training_curve": read_curve, "augmentation_table": read_value,
                      "correlation": read_correlation})
