"""Render a paper figure (declared in papers/<paper>.yaml, `figures:`) from result files: PDF + PNG + CSV.

A figure is a list of panels; a panel names its `kind` (PANEL_KINDS) and what feeds it. Resolution
(`figure_points`, run by the Snakefile through `sentaug.workflow`) turns each panel into points, each a
(series, x, metric) with the result files behind it (one per seed); rendering reads those files, writes
every point's mean, sd and n (and the paper's value where its text gives one) to the CSV and draws the
panels from that CSV's records, so the numbers in the picture are the numbers in the file.

Metrics are `<result>.<key>`: `sts.avg`, `sts.STSBenchmark_dev` (sentaug evaluate sts), `<suite>.<key>`
for a downstream suite's JSON (`transfer.avg`, `clustering.avg`, ...), `train.<key>` for a run's
train_summary.json (`train.train_seconds`).

Panel kinds:
    sweep  x: {label, setting: <method key path>, values: [...]}, y: {label, metric}, optional y2 (a second
           axis, e.g. wall time), series: [{label, method, set: {...}, paper: {x: y}}], optional baseline:
           {label, method} drawn as a dashed line. Each point is the run of the method variant with the setting
           at that value (`sentaug.config.variant_name`; a value equal to the declared one is the declared
           method's own run, shared with the tables).
    bars   y: {label, metric | metrics: [...]}, series: [{label, method | pretrained: <pooler>, paper: [...]}]:
           one bar per series (grouped per metric when there are several).
More kinds (projections, training curves, distributions, per-augmentation tables, correlations) live in
`sentaug.report.panels_embedding`. A kind whose records are not a metric's mean over seeds also gives
`PANEL_RECORDS[name]`, which turns a point into its CSV records.

Figure keys besides `caption`, `differs` and `panels`: `columns` (panels per row; default all in one row) and
`panel_size` ([width, height] in inches of one panel).
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from .. import config as sc
from ..io import atomic_path, read_json

RESULT_FILES = {"train": "train_summary.json"}


def metric_file(wf, paper: str, backbone: str, method: str, seed: int, metric: str) -> tuple[str, str]:
    """(file to read, Snakemake target that makes it) for `metric` of a trained run."""
    result = metric.split(".", 1)[0]
    if result in RESULT_FILES:                       # a file inside the run folder (a directory output)
        run = wf.run_dir(paper, backbone, method, seed)
        return f"{run}/{RESULT_FILES[result]}", run
    path = wf.run_eval(paper, backbone, method, seed, result)
    return path, path


def pretrained_metric_file(wf, backbone: str, pooler: str, metric: str) -> tuple[str, str]:
    result = metric.split(".", 1)[0]
    if result == "sts":
        path = wf.pretrained_eval(backbone, pooler)
    elif result in RESULT_FILES:
        raise ValueError(f"metric '{metric}': a pre-trained backbone has no training run")
    else:
        path = wf.pretrained_suite_eval(backbone, result, pooler)
    return path, path


def metric_value(result: dict, metric: str) -> float:
    key = metric.split(".", 1)[1]
    if key not in result:
        raise KeyError(f"metric '{metric}': result has no key '{key}' (has: {', '.join(sorted(result))})")
    return float(result[key])


def canonical_method(config: dict, method: str, overrides: dict) -> str:
    """The run name for `method` with `overrides`; settings equal to the declared ones are dropped so that the
    point reuses the declared method's run."""
    declared = sc.method_config(config, method)
    changed = {}
    for path, value in overrides.items():
        try:
            same = sc.get_setting(declared, path) == value
        except sc.ConfigError:
            same = False
        if not same:
            changed[path] = value
    return sc.variant_name(method, changed)


def _run_point(wf, paper: str, backbone: str, method: str, metric: str, labels: dict) -> dict:
    files, targets = zip(*(metric_file(wf, paper, backbone, method, s, metric) for s in wf.seeds))
    return {**labels, "metric": metric, "method": method, "files": list(files), "targets": list(targets)}


def _metrics(axis: dict) -> list[str]:
    return list(axis.get("metrics") or [axis["metric"]])


def sweep_points(wf, paper: str, panel: dict) -> list[dict]:
    bb = wf.stand_in(panel["backbone"])
    x = panel["x"]
    metrics = _metrics(panel["y"]) + (_metrics(panel["y2"]) if "y2" in panel else [])
    points = []
    for series in panel["series"]:
        for value in x["values"]:
            method = canonical_method(wf.config, series["method"], {**series.get("set", {}), x["setting"]: value})
            paper_y = (series.get("paper") or {}).get(value)
            for metric in metrics:
                points.append(_run_point(wf, paper, bb, method, metric, {
                    "series": series["label"], "x": value, "paper": paper_y if metric == metrics[0] else None}))
    if "baseline" in panel:
        for metric in metrics:
            points.append(_run_point(wf, paper, bb, panel["baseline"]["method"], metric, {
                "series": panel["baseline"]["label"], "x": None, "baseline": True, "paper": None}))
    return points


def bar_points(wf, paper: str, panel: dict) -> list[dict]:
    bb = wf.stand_in(panel["backbone"])
    points = []
    for series in panel["series"]:
        reported = series.get("paper") or [None] * len(_metrics(panel["y"]))
        for metric, paper_y in zip(_metrics(panel["y"]), reported):
            if "pretrained" in series:
                file, target = pretrained_metric_file(wf, bb, series["pretrained"], metric)
                points.append({"series": series["label"], "x": metric, "metric": metric, "paper": paper_y,
                               "method": f"pretrained:{series['pretrained']}", "files": [file], "targets": [target]})
            else:
                points.append(_run_point(wf, paper, bb, series["method"], metric, {
                    "series": series["label"], "x": metric, "paper": paper_y}))
    return points


def _draw_sweep(ax, panel: dict, records: list[dict]) -> None:
    y_metrics = _metrics(panel["y"])
    axes = [(ax, y_metrics, panel["y"]["label"], "-")]
    if "y2" in panel:
        axes.append((ax.twinx(), _metrics(panel["y2"]), panel["y2"]["label"], ":"))
    for target, metrics, label, style in axes:
        for i, series in enumerate(dict.fromkeys(r["series"] for r in records if not r.get("baseline"))):
            pts = sorted((r for r in records if r["series"] == series and r["metric"] in metrics
                          and not r.get("baseline")), key=lambda r: r["x"])
            colour = f"C{i}"
            target.errorbar([r["x"] for r in pts], [r["mean"] for r in pts],
                            yerr=[r["sd"] or 0 for r in pts], fmt=style + "o", color=colour, capsize=3,
                            label=f"{series} (ours)" + ("" if style == "-" else f", {label}"))
            reported = [(r["x"], r["paper"]) for r in pts if r["paper"] is not None]
            if reported:
                target.plot(*zip(*reported), "x", color=colour, markersize=9, label=f"{series} (paper)")
        for r in records:
            if r.get("baseline") and r["metric"] in metrics:
                target.axhline(r["mean"], linestyle="--" if style == "-" else ":", color="grey",
                               label=f"{r['series']} (ours)" + ("" if style == "-" else f", {label}"))
        target.set_ylabel(label)
    ax.set_xlabel(panel["x"]["label"])


def _draw_bars(ax, panel: dict, records: list[dict]) -> None:
    series = list(dict.fromkeys(r["series"] for r in records))
    metrics = list(dict.fromkeys(r["metric"] for r in records))
    width = 0.8 / len(series)
    for i, name in enumerate(series):
        rows = [next(r for r in records if r["series"] == name and r["metric"] == m) for m in metrics]
        xs = [j + i * width for j in range(len(metrics))]
        ax.bar(xs, [r["mean"] for r in rows], width, yerr=[r["sd"] or 0 for r in rows], capsize=3,
               label=f"{name} (ours)", color=f"C{i}")
        reported = [(x, r["paper"]) for x, r in zip(xs, rows) if r["paper"] is not None]
        if reported:
            ax.plot(*zip(*reported), "kx", markersize=8, label="paper" if i == 0 else None)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(metrics))], metrics)
    ax.set_ylabel(panel["y"]["label"])


PANEL_KINDS = {"sweep": (sweep_points, _draw_sweep), "bars": (bar_points, _draw_bars)}


def figure_points(wf, paper: str, figure: str) -> list[list[dict]]:
    """Every panel's points (with the result files behind each) of `paper`'s `figure`."""
    spec = wf.papers[paper]["figures"][figure]
    panels = []
    for panel in spec["panels"]:
        if panel["kind"] not in PANEL_KINDS:
            raise ValueError(f"papers/{paper}.yaml: figure {figure}: unknown panel kind '{panel['kind']}' "
                             f"(known: {', '.join(PANEL_KINDS)})")
        panels.append(PANEL_KINDS[panel["kind"]][0](wf, paper, panel))
    return panels


# Kinds whose CSV records are not a metric's mean over seeds: kind -> function(point) -> [record, ...].
PANEL_RECORDS: dict = {}


def summarise_points(panels: list[list[dict]], kinds: list[str] | None = None) -> list[dict]:
    """One record per point: mean and sample sd over its files (seeds), n, the paper's value (or the records
    PANEL_RECORDS makes of the point, for the panel's kind)."""
    records = []
    for i, points in enumerate(panels):
        for p in points:
            if kinds and kinds[i] in PANEL_RECORDS:
                records += [{"panel": i, **r} for r in PANEL_RECORDS[kinds[i]](p)]
                continue
            values = [metric_value(read_json(f), p["metric"]) for f in p["files"]]
            mean = statistics.fmean(values)
            sd = statistics.stdev(values) if len(values) > 1 else None
            records.append({"panel": i, "series": p["series"], "x": p["x"], "metric": p["metric"],
                            "method": p["method"], "mean": mean, "sd": sd, "n": len(values),
                            "paper": p.get("paper"), "baseline": bool(p.get("baseline"))})
    return records


def caption(paper: dict, figure: str, scale: str, meta: dict) -> str:
    spec = paper["figures"][figure]
    text = f"{paper.get('short', '')} {figure}: {spec['caption']} Ours: mean ± sd over {meta.get('seeds', '?')} seeds"
    text += "; x markers: the paper's values where its text gives them."
    if scale != "paper":
        stand_ins = ", ".join(f"{v} for {k}" for k, v in sorted(meta.get("stand_ins", {}).items()))
        text += (f" Built at scale '{scale}', below paper scale (stand-ins: {stand_ins}; corpus: "
                 f"{meta.get('corpus', '?')}): the direction of effects, not the paper's numbers.")
    if spec.get("differs"):
        text += f" Differs from the paper: {spec['differs']}"
    if meta.get("notes"):
        text += " " + " ".join(meta["notes"])
    return text


def render_figure(paper_file: str, figure: str, inputs: str, out: str, scale: str) -> None:
    """CLI entry: `inputs` is a JSON object {"panels": [[point, ...], ...], "meta": {...}}; writes `out`
    (.pdf) and a .png and .csv beside it, each atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    paper = sc.load_yaml(paper_file)
    if figure not in paper.get("figures", {}):
        raise ValueError(f"{paper_file}: no figure '{figure}'")
    spec = json.loads(inputs)
    declared = paper["figures"][figure]
    panels = declared["panels"]
    records = summarise_points(spec["panels"], [panel["kind"] for panel in panels])
    notes = list(dict.fromkeys(p["note"] for points in spec["panels"] for p in points if p.get("note")))
    meta = {**spec.get("meta", {}), **({"notes": notes} if notes else {})}
    ncols = min(int(declared.get("columns") or len(panels)), len(panels))
    nrows = -(-len(panels) // ncols)
    width, height = declared.get("panel_size") or (5.5, 4.2)
    fig, grid = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in grid.flat[len(panels):]:
        ax.set_visible(False)
    for i, (ax, panel) in enumerate(zip(grid.flat, panels)):
        PANEL_KINDS[panel["kind"]][1](ax, panel, [r for r in records if r["panel"] == i])
        ax.set_title(panel.get("title", ""))
        handles, labels = [], []
        for a in fig.axes:
            if a is ax or a.get_shared_x_axes().joined(a, ax):
                h, lab = a.get_legend_handles_labels()
                handles += h
                labels += lab
        if handles and ax.get_legend() is None:     # a kind may place its own legend
            ax.legend(handles, labels, fontsize=7)
    text = caption(paper, figure, scale, meta)
    lines = _wrap(text, int(18 * width * ncols))
    fig.text(0.01, 0.005, "\n".join(lines), fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, min(0.5, (0.25 + 0.12 * len(lines)) / (height * nrows)), 1, 1))
    out = Path(out)
    frame = pd.DataFrame(records)
    frame.insert(0, "scale", scale)
    with atomic_path(out.with_suffix(".csv")) as tmp:
        frame.to_csv(tmp, index=False)
    with atomic_path(out.with_suffix(".png")) as tmp:
        fig.savefig(tmp, format="png", dpi=130)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="pdf")
    plt.close(fig)
    print(frame[["panel", "series", "x", "metric", "mean", "sd", "n"]].to_string(index=False))


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]


from . import panels_embedding  # noqa: E402,F401  (registers its panel kinds)
