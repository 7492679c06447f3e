"""Panel kinds of the representation figures (VaSCL Fig. 2, AugCSE Figs. 2-5), merged into
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
  projection          model: {pretrained: <pooler>} | {method[, recipe]}, augmentations: [...] | <set>, projection:
                      pca | tsne, sample: N. One scatter of the `sentaug project` output (AugCSE Figs. 2-4); `recipe`:
                      a quoted paper's model trained with its recipe (`simcse`), as a table row's.
  training_curve      y: {label, part}, series: [{label, method}]: a loss part of train_log.jsonl over the steps
                      (AugCSE Fig. 5: discriminator_accuracy).
"""
from __future__ import annotations

import math
import statistics

import numpy as np

from ..intermediates import read_result
from .sources import metric_file, pretrained_metric_file

# In a panel's note, where the panel's name goes: the caption names every panel that shares the note once.
PANEL = "{panel}"

# ---------------------------------------------------------------------------------------------- reading


def panel_seeds(wf, panel: dict) -> list[int]:
    n = (panel.get("seeds") or {}).get(wf.scale)
    return list(wf.seeds[:n] if n else wf.seeds)


def seed_note(wf, panel: dict) -> str | None:
    seeds = panel_seeds(wf, panel)
    if len(seeds) < len(wf.seeds):
        return f"At {wf.scale} scale {PANEL} uses seed(s) {', '.join(map(str, seeds))}."
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
        data = read_result(f)
        vals = [_walk(data, path, f) for path in point["paths"]]
        per_file.append(None if any(v is None for v in vals) else statistics.fmean(vals))
    mean, sd, n = _summary(per_file)
    return [{"series": point["series"], "x": point["x"], "metric": point["metric"], "method": point["method"],
             "mean": mean, "sd": sd, "n": n, "paper": point.get("paper"), "baseline": bool(point.get("baseline"))}]


def value_point(series: str, x, metric: str, method: str, files_targets, paths, **extra) -> dict:
    """A point read by `read_value`; `targets` only where they are not the files themselves (a point's JSON
    travels on the figure job's command line, whose arguments are limited to 128 KiB each)."""
    files, targets = zip(*files_targets)
    point = {"series": series, "x": x, "metric": metric, "method": method, "files": list(files), "paths": paths,
             **{k: v for k, v in extra.items() if v is not None}}
    if list(targets) != list(files):
        point["targets"] = list(targets)
    return point


def model_name(series: dict) -> str:
    return f"pretrained:{series['pretrained']}" if "pretrained" in series else series["method"]


def eval_files(wf, paper: str, bb: str, series: dict, method: str, metric: str, seeds) -> list[tuple]:
    if "pretrained" in series:
        return [pretrained_metric_file(wf, bb, series["pretrained"], metric)]
    return [metric_file(wf, paper, bb, method, s, metric) for s in seeds]


def panel_augmentations(wf, panel: dict, subject: str = PANEL) -> tuple[list[str], str | None]:
    """The panel's augmentations at this scale, and a note naming `subject` (the panel itself by default)
    when the scale's set keeps fewer than the declared one."""
    augs = panel["augmentations"]
    if not isinstance(augs, str):
        return list(augs), None
    kept, full = wf.paths.augmentation_set(augs), wf.config["augmentation_sets"][augs]["augmentations"]
    note = None
    if len(kept) < len(full):
        # the verb agrees with the count, so the subject may be one panel, several or "the projections"
        note = (f"At {wf.scale} scale {len(kept)} of the {len(full)} augmentations are in {subject}: "
                f"{', '.join(kept)}.")
    return kept, note


# ---------------------------------------------------------------------------------------------- result_curve


def result_curve_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.specs.stand_in(panel["backbone"]), panel_seeds(wf, panel)
    points = []
    for series in panel["series"]:
        for x in panel["x"]["values"]:
            metric = panel["y"]["metric"].replace("{x}", str(x))
            files = eval_files(wf, paper, bb, series, series.get("method"), metric, seeds)
            points.append(value_point(series["label"], x, panel["y"]["metric"], model_name(series), files,
                                      [metric.split(".")[1:]], note=seed_note(wf, panel),
                                      paper=(series.get("paper") or {}).get(x)))
    return points


def draw_lines(ax, records: list[dict], xlabel: str, ylabel: str, log_x: bool = False) -> None:
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


def draw_result_curve(ax, panel: dict, records: list[dict], meta: dict) -> None:
    draw_lines(ax, records, panel["x"]["label"], panel["y"]["label"], panel["x"].get("log", False))


# ---------------------------------------------------------------------------------------------- nli_distances

HISTOGRAM_BINS = 30
RATIO_MAX = 3.0


def nli_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, seeds = wf.specs.stand_in(panel["backbone"]), panel_seeds(wf, panel)
    points = []
    for series in panel["series"]:
        files = eval_files(wf, paper, bb, series, series.get("method"), "analysis.nli", seeds)
        files, targets = zip(*files)
        points.append({"series": series["label"], "x": None, "metric": panel["show"], "method": model_name(series),
                       "files": list(files), "targets": list(targets), "note": seed_note(wf, panel)})
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
    show, runs = point["metric"], [read_result(f) for f in point["files"]]
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


def draw_nli(ax, panel: dict, records: list[dict], meta: dict) -> None:
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


# ---------------------------------------------------------------------------------------------- projection


def projection_points(wf, paper: str, panel: dict) -> list[dict]:
    bb, model = wf.specs.stand_in(panel["backbone"]), panel["model"]
    method, sample = panel.get("projection", "pca"), int(panel.get("sample", 200))
    if "pretrained" in model:
        f = wf.paths.pretrained_projection(panel["augmentations"], method, sample, bb, model["pretrained"])
    else:
        # a model of another paper's (SimCSE's: `recipe: simcse`) is that paper's recipe's run
        f = wf.paths.run_projection(panel["augmentations"], method, sample, model.get("recipe") or paper, bb,
                              model["method"], wf.seeds[0])
    note = None
    if panel["augmentations"] in (wf.config.get("augmentation_sets") or {}):
        note = panel_augmentations(wf, panel, subject="the projections")[1]
    return [{"series": panel.get("title", ""), "x": None, "metric": method, "method": model_name(model),
             "files": [f], "targets": [f], "note": note}]


def read_projection(point: dict) -> list[dict]:
    """One record per projected sentence: its label and coordinates, as `sentaug project` wrote them."""
    (f,) = point["files"]
    data = read_result(f)
    if not len(data["labels"]) == len(data["x"]) == len(data["y"]):
        raise ValueError(f"{f}: labels and coordinates differ in length")
    return [{"series": lab, "x": x, "y": y, "metric": point["metric"], "method": point["method"], "mean": None,
             "sd": None, "n": 1, "paper": None, "baseline": False}
            for lab, x, y in zip(data["labels"], data["x"], data["y"])]


def draw_projection(ax, panel: dict, records: list[dict], meta: dict) -> None:
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
    bb, seeds = wf.specs.stand_in(panel["backbone"]), panel_seeds(wf, panel)
    points = []
    for series in panel["series"]:
        runs = [wf.paths.run_dir(paper, bb, series["method"], s) for s in seeds]
        points.append({"series": series["label"], "x": None, "metric": panel["y"]["part"],
                       "method": series["method"], "files": [f"{r}/train_log.jsonl" for r in runs],
                       "targets": runs, "note": seed_note(wf, panel)})
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


def draw_training_curve(ax, panel: dict, records: list[dict], meta: dict) -> None:
    for i, series in enumerate(dict.fromkeys(r["series"] for r in records)):
        pts = sorted((r for r in records if r["series"] == series), key=lambda r: r["x"])
        x, m = np.array([r["x"] for r in pts]), np.array([r["mean"] for r in pts])
        sd = np.array([r["sd"] or 0.0 for r in pts])
        ax.plot(x, m, color=f"C{i}", label=series)
        ax.fill_between(x, m - sd, m + sd, color=f"C{i}", alpha=0.15, linewidth=0)
    ax.set_xlabel("training step")
    ax.set_ylabel(panel["y"]["label"])


# ---------------------------------------------------------------------------------------------- kinds

PANEL_KINDS = {
    "result_curve": (result_curve_points, draw_result_curve),
    "nli_distances": (nli_points, draw_nli),
    "projection": (projection_points, draw_projection),
    "training_curve": (training_curve_points, draw_training_curve),
}
PANEL_RECORDS = {"result_curve": read_value, "nli_distances": read_nli, "projection": read_projection,
                 "training_curve": read_curve}
