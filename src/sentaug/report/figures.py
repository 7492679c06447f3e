"""Render a paper figure (declared in papers/<paper>.yaml, `figures:`) from result files: PDF + PNG + CSV.

A figure is a list of panels; a panel names its `kind` (PANEL_KINDS) and what feeds it. Resolution
(`figure_points`, run by the Snakefile through `sentaug.workflow`) turns each panel into points, each a
(series, x, metric) with the result files behind it (one per seed); rendering reads those files, writes
every point's mean, sd and n (and the paper's value where its text gives one) to the CSV and draws the
panels from that CSV's records, so the numbers in the picture are the numbers in the file.

Metrics are `<result>.<key>` (`sentaug.report.sources`).

Panel kinds:
    sweep      x: {label, setting: <method key path>, values: [...], values_by_scale: {<scale>: [...]},
               declared: <value>, log: <base>}, y: {label, metric}, optional y2 (a second axis, e.g. wall time),
               series: [{label, method, set: {...}, paper: {x: y}}], optional baseline: {label, method, paper, recipe}
               (`recipe`: a quoted paper's, as a table row's)
               drawn as a dashed line (on both axes). Each point is the run of the method variant with the
               setting at that value (`sentaug.config.variant_name`; a value equal to the declared one is the
               declared method's own run, shared with the tables). `values_by_scale` keeps the cheap scales'
               sweeps short; `declared` is the value a method that does not set the key runs at (e.g. the
               backbones' dropout 0.1), so that point too reuses the declared run.
    bars       y: {label, metric | metrics: [...]}, series: [{label, method | pretrained: <pooler>, paper: [...]}]:
               one bar per series (grouped per metric when there are several).
    token_pca  backbone, colour: category | frequency: the 2-D PCA of the backbone's token embeddings
               (`sentaug token-pca`), one dot per token; its CSV holds every token's coordinates.

A kind is `PANEL_KINDS[name] = (points, draw)`, called `draw(ax, panel, records, meta)` (`meta`: the figure's,
which its caption reads too); a kind whose points are not metrics averaged over seeds also gives
`PANEL_RECORDS[name]`, which turns a point into its CSV records. At a scale whose numbers do not compare with the
papers' (`scales.<scale>.compares_with_papers`) the paper's values are written beside our points rather than
drawn on our axis: the scales differ too much to share one.
More kinds live in `sentaug.report.panels_embedding` (projections, training curves, distributions) and
`sentaug.report.panels_augmentation` (augmentation sweeps, per-augmentation tables, their correlations); each
module declares its own PANEL_KINDS and PANEL_RECORDS, merged here (they import nothing from this module).
Figure keys besides `caption`, `differs` and `panels`: `columns` (panels per row; default all in one row) and
`panel_size` ([width, height] in inches of one panel).
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from .. import config as sc
from ..intermediates import read_result
from ..io import atomic_path
from . import panels_augmentation, panels_embedding
from .panels_embedding import PANEL
from .sources import canonical_method, metric_file, metric_value, pretrained_metric_file


def _run_point(wf, paper: str, backbone: str, method: str, metric: str, labels: dict) -> dict:
    files, targets = zip(*(metric_file(wf, paper, backbone, method, s, metric) for s in wf.seeds))
    return {**labels, "metric": metric, "method": method, "files": list(files), "targets": list(targets)}


def _metrics(axis: dict) -> list[str]:
    return list(axis.get("metrics") or [axis["metric"]])


def sweep_values(panel: dict, scale: str) -> list:
    """The x values a sweep runs at this scale (`values_by_scale`, else `values`)."""
    x = panel["x"]
    return list((x.get("values_by_scale") or {}).get(scale, x["values"]))


def sweep_points(wf, paper: str, panel: dict) -> list[dict]:
    bb = wf.specs.stand_in(panel["backbone"])
    x = panel["x"]
    defaults = {x["setting"]: x["declared"]} if "declared" in x else None
    metrics = _metrics(panel["y"]) + (_metrics(panel["y2"]) if "y2" in panel else [])
    points = []
    for series in panel["series"]:
        for value in sweep_values(panel, wf.scale):
            method = canonical_method(wf.config, series["method"], {**series.get("set", {}), x["setting"]: value},
                                      defaults)
            paper_y = (series.get("paper") or {}).get(value)
            for metric in metrics:
                points.append(_run_point(wf, paper, bb, method, metric, {
                    "series": series["label"], "x": value, "paper": paper_y if metric == metrics[0] else None}))
    if "baseline" in panel:
        for metric in metrics:
            points.append(_run_point(wf, panel["baseline"].get("recipe") or paper, bb, panel["baseline"]["method"],
                                     metric, {
                "series": panel["baseline"]["label"], "x": None, "baseline": True,
                "paper": panel["baseline"].get("paper") if metric == metrics[0] else None}))
    return points


def bar_points(wf, paper: str, panel: dict) -> list[dict]:
    bb = wf.specs.stand_in(panel["backbone"])
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


PAPER_NOTE = "paper-note"     # gid of the texts that write the paper's values beside our points


def _paper_on_axis(records: list[dict], meta: dict) -> bool:
    """Draw the paper's values on our axis only at a scale whose numbers compare with them (`meta`, config key
    `scales.<scale>.compares_with_papers`); below it they are written as text."""
    return bool(records) and bool(meta.get("compares_with_papers"))


def _annotate_paper(ax, x, y_ours, value, colour, leftward: bool = False) -> None:
    """Write the paper's value beside our point; `leftward` for the rightmost point, whose text would
    otherwise run into the frame (or a second axis' tick labels)."""
    ax.annotate(f"paper {value:g}", (x, y_ours), textcoords="offset points", xytext=(-4 if leftward else 4, 6),
                fontsize=6, color=colour, ha="right" if leftward else "left", gid=PAPER_NOTE)


def _separate_paper_notes(fig) -> None:
    """Series that end up close together at one x would have their paper values printed over each other:
    from the lowest up, lift each note just clear of every note below it that it overlaps (offsets are in
    points, so the layout holds at any dpi). Call once the layout is final."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    notes = [(t, t.get_window_extent(renderer)) for a in fig.axes for t in a.texts if t.get_gid() == PAPER_NOTE]
    placed = []
    for note, box in sorted(notes, key=lambda pair: pair[1].y0):
        while blocking := [b for b in placed if box.overlaps(b)]:
            dx, dy = note.xyann
            note.xyann = (dx, dy + (max(b.y1 for b in blocking) - box.y0 + 1) * 72 / fig.dpi)
            box = note.get_window_extent(renderer)
        placed.append(box)


def _draw_sweep(ax, panel: dict, records: list[dict], meta: dict) -> None:
    on_axis = _paper_on_axis(records, meta)
    last_x = max((r["x"] for r in records if r["x"] is not None), default=None)
    y_metrics = _metrics(panel["y"])
    axes = [(ax, y_metrics, panel["y"]["label"], "-", "o")]
    if "y2" in panel:
        axes.append((ax.twinx(), _metrics(panel["y2"]), panel["y2"]["label"], ":", "s"))
    for k, (target, metrics, label, style, marker) in enumerate(axes):
        second = k == 1
        for i, series in enumerate(dict.fromkeys(r["series"] for r in records if not r.get("baseline"))):
            pts = sorted((r for r in records if r["series"] == series and r["metric"] in metrics
                          and not r.get("baseline")), key=lambda r: r["x"])
            colour = f"C{i}"
            target.errorbar([r["x"] for r in pts], [r["mean"] for r in pts],
                            yerr=[r["sd"] or 0 for r in pts], fmt=style + marker, color=colour, capsize=3,
                            alpha=0.6 if second else 1.0, markersize=4 if second else 5,
                            label=f"{series} (ours)" + (f", {label}" if second else ""))
            reported = [r for r in pts if r["paper"] is not None]
            if reported and on_axis:
                target.plot([r["x"] for r in reported], [r["paper"] for r in reported], "x", color=colour,
                            markersize=9, label=f"{series} (paper)")
            for r in reported if not on_axis else []:
                _annotate_paper(target, r["x"], r["mean"], r["paper"], colour, leftward=r["x"] == last_x)
        for r in records:
            if r.get("baseline") and r["metric"] in metrics:
                target.axhline(r["mean"], linestyle="--", color="dimgrey" if second else "black", linewidth=1,
                               label=f"{r['series']} (ours)" + (f", {label}" if second else ""))
                if r["paper"] is not None and on_axis:
                    target.axhline(r["paper"], linestyle="-.", color="black", linewidth=0.8,
                                   label=f"{r['series']} (paper)")
                elif r["paper"] is not None:
                    target.annotate(f"{r['series']}: paper {r['paper']:g}", (0.01, r["mean"]),
                                    xycoords=("axes fraction", "data"), textcoords="offset points",
                                    xytext=(0, 3), fontsize=6, gid=PAPER_NOTE)
        target.set_ylabel(label)
    if panel["x"].get("log"):
        ax.set_xscale("log", base=panel["x"]["log"])
        values = sorted({r["x"] for r in records if r["x"] is not None})
        ax.set_xticks(values, [f"{v:g}" for v in values])
    ax.set_xlabel(panel["x"]["label"])


def _draw_bars(ax, panel: dict, records: list[dict], meta: dict) -> None:
    on_axis = _paper_on_axis(records, meta)
    series = list(dict.fromkeys(r["series"] for r in records))
    metrics = list(dict.fromkeys(r["metric"] for r in records))
    width = 0.8 / len(series)
    for i, name in enumerate(series):
        rows = [next(r for r in records if r["series"] == name and r["metric"] == m) for m in metrics]
        xs = [j + i * width for j in range(len(metrics))]
        ax.bar(xs, [r["mean"] for r in rows], width, yerr=[r["sd"] or 0 for r in rows], capsize=3,
               label=f"{name} (ours)", color=f"C{i}")
        reported = [(x, r) for x, r in zip(xs, rows) if r["paper"] is not None]
        if reported and on_axis:
            ax.plot([x for x, _ in reported], [r["paper"] for _, r in reported], "kx", markersize=8,
                    label="paper" if i == 0 else None)
        for x, r in reported if not on_axis else []:
            _annotate_paper(ax, x - width / 2, r["mean"], r["paper"], "black")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(metrics))], metrics)
    ax.set_ylabel(panel["y"]["label"])


def token_pca_points(wf, paper: str, panel: dict) -> list[dict]:
    backbone = wf.specs.stand_in(panel["backbone"])
    file = wf.paths.token_pca_file(backbone)
    return [{"series": "tokens", "x": None, "metric": "token_pca", "method": f"pretrained:{backbone}",
             "files": [file], "targets": [file], "paper": None}]


def _token_pca_records(point: dict) -> list[dict]:
    """One record per token: its category (series), PCA coordinates (x, y) and corpus frequency; then the
    separation scores of the analysis (series `separation`, metric = the score's name, value in `mean`)."""
    result = read_result(point["files"][0])
    t = result["tokens"]
    records = [{"series": c, "x": x, "y": y, "frequency": f, "token": tok, "metric": point["metric"],
                "method": point["method"], "file": point["files"][0]}
               for tok, c, x, y, f in zip(t["token"], t["category"], t["pc1"], t["pc2"], t["frequency"])]
    records += [{"series": "separation", "metric": name, "mean": value, "method": point["method"],
                 "file": point["files"][0]} for name, value in (result.get("separation") or {}).items()]
    return records


CATEGORY_STYLE = {"lower": ("tab:green", "lower-case beginning"), "upper": ("tab:blue", "upper-case beginning"),
                  "subtoken": ("tab:red", "sub-token")}


def _draw_token_pca(ax, panel: dict, records: list[dict], meta: dict) -> None:
    import math
    import random

    scores = {r["metric"]: r["mean"] for r in records if r["series"] == "separation"}
    tokens = [r for r in records if r["series"] != "separation"]
    if panel.get("colour", "category") == "frequency":
        ordered = sorted(tokens, key=lambda r: r["frequency"])     # frequent tokens drawn on top
        art = ax.scatter([r["x"] for r in ordered], [r["y"] for r in ordered], s=3, linewidths=0,
                         c=[math.log10(1 + r["frequency"]) for r in ordered], cmap="viridis_r")
        ax.figure.colorbar(art, ax=ax, label="log10(1 + frequency in the corpus)")
    else:
        # one scatter in a fixed shuffled order, so that no category is drawn over all the others
        order = random.Random(0).sample(tokens, len(tokens))
        ax.scatter([r["x"] for r in order], [r["y"] for r in order], s=3, linewidths=0, alpha=0.6,
                   c=[CATEGORY_STYLE[r["series"]][0] for r in order])
        for category, (colour, label) in CATEGORY_STYLE.items():
            n = sum(r["series"] == category for r in tokens)
            if n:
                ax.scatter([], [], s=12, color=colour, label=f"{label} ({n})")
        if "nearest_centroid_full" in scores:
            ax.text(0.99, 0.01, f"category from its embedding (nearest centroid): "
                    f"{scores['nearest_centroid_full']:.2f}\nmajority share (no bias): "
                    f"{scores.get('majority_share', float('nan')):.2f}", transform=ax.transAxes, ha="right",
                    va="bottom", fontsize=6, bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0})
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")


PANEL_KINDS = {"sweep": (sweep_points, _draw_sweep), "bars": (bar_points, _draw_bars),
               "token_pca": (token_pca_points, _draw_token_pca),
               **panels_embedding.PANEL_KINDS, **panels_augmentation.PANEL_KINDS}
# Kinds that read their own points into CSV records (point -> records); `sweep` and `bars` are `summarise_points`'.
PANEL_RECORDS = {"token_pca": _token_pca_records, **panels_embedding.PANEL_RECORDS,
                 **panels_augmentation.PANEL_RECORDS}


def figure_points(wf, paper: str, figure: str) -> list[list[dict]]:
    """Every panel's points (with the result files behind each) of `paper`'s `figure`."""
    spec = wf.papers[paper]["figures"][figure]
    panels = []
    for panel in spec["panels"]:
        if panel["kind"] not in PANEL_KINDS:
            raise ValueError(f"papers/{paper}.yaml: figure {figure}: unknown panel kind '{panel['kind']}' "
                             f"(known: {', '.join(PANEL_KINDS)})")
        try:
            panels.append(PANEL_KINDS[panel["kind"]][0](wf, paper, panel))
        except (sc.ConfigError, KeyError) as e:
            raise ValueError(f"papers/{paper}.yaml: figure {figure}, panel '{panel.get('title', '')}': "
                             f"{e.args[0] if e.args else e}") from None
    return panels


def summarise_points(points: list[dict]) -> list[dict]:
    """One record per point: mean and sample sd over its files (seeds), n, the paper's value."""
    records = []
    for p in points:
        values = [metric_value(read_result(f), p["metric"]) for f in p["files"]]
        records.append({"series": p["series"], "x": p["x"], "metric": p["metric"], "method": p["method"],
                        "mean": statistics.fmean(values), "sd": statistics.stdev(values) if len(values) > 1 else None,
                        "n": len(values), "paper": p.get("paper"), "baseline": bool(p.get("baseline"))})
    return records


def figure_records(panels: list[dict], points: list[list[dict]], scale: str) -> list[dict]:
    """The CSV records of every panel (its index and the scale on each): the numbers the drawing is made from."""
    records = []
    for i, (panel, panel_points) in enumerate(zip(panels, points)):
        if panel["kind"] in PANEL_RECORDS:
            rows = [r for p in panel_points for r in PANEL_RECORDS[panel["kind"]](p)]
        else:
            rows = summarise_points(panel_points)
        records += [{"scale": scale, "panel": i, **r} for r in rows]
    return records


def figure_backbones(spec: dict) -> list[str]:
    """The paper backbones a figure's panels name, in order: each panel's `backbone` and the similarity model of
    its features (AugCSE Fig. 6)."""
    named = [b for panel in spec["panels"]
             for b in (panel.get("backbone"), (panel.get("features") or {}).get("backbone"))]
    return list(dict.fromkeys(b for b in named if b))


def caption(paper: dict, figure: str, scale: str, meta: dict) -> str:
    spec = paper["figures"][figure]
    text = f"{paper.get('short', '')} {figure}: {spec['caption']}"
    kinds = {panel["kind"] for panel in spec["panels"]}
    if kinds - set(PANEL_RECORDS):
        seeds = meta.get("seeds", "?")
        text += f" Ours: mean ± sd over {seeds} seed{'' if seeds == 1 else 's'}; "
        text += ("x markers: the paper's values where its text gives them." if meta.get("compares_with_papers") else
                 "the paper's values, where its text gives them, are written beside our points.")
    stand_ins = meta.get("stand_ins", {})
    backbones = figure_backbones(spec)
    if backbones:
        text += " Backbone: " + ", ".join(
            f"{stand_ins[b]} (stand-in for {b})" if stand_ins.get(b, b) != b else b for b in backbones) + "."
    if not meta.get("compares_with_papers"):
        slices = (f"; slices of the official data files, the rest of each left out: {'; '.join(meta['slices'])}"
                  if meta.get("slices") else "")
        text += (f" Built at scale '{scale}', below paper scale (corpus: {meta.get('corpus', '?')}{slices}): the "
                 f"direction of effects, not the paper's numbers.")
    if spec.get("differs"):
        text += f" Differs from the paper: {spec['differs']}"
    if meta.get("notes"):
        text += " " + " ".join(meta["notes"])
    return text


def caption_notes(panels: list[dict], points: list[list[dict]]) -> list[str]:
    """Each distinct note of the panels' points once, naming the panels it holds for ("every panel" when all
    of several share it), instead of one sentence per panel."""
    holders: dict[str, list[str]] = {}
    for panel, panel_points in zip(panels, points):
        for note in dict.fromkeys(p["note"] for p in panel_points if p.get("note")):
            holders.setdefault(note, []).append(panel.get("title") or "the panel")
    return [note.replace(PANEL, "every panel" if len(names) == len(panels) > 1 else ", ".join(names))
            for note, names in holders.items()]


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
    records = figure_records(panels, spec["panels"], scale)
    notes = caption_notes(panels, spec["panels"])
    meta = {**spec.get("meta", {}), **({"notes": notes} if notes else {})}
    ncols = min(int(declared.get("columns") or len(panels)), len(panels))
    nrows = -(-len(panels) // ncols)
    width, height = declared.get("panel_size") or (5.5, 4.2)
    fig, grid = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in grid.flat[len(panels):]:
        ax.set_visible(False)
    for i, (ax, panel) in enumerate(zip(grid.flat, panels)):
        PANEL_KINDS[panel["kind"]][1](ax, panel, [r for r in records if r["panel"] == i], meta)
        ax.set_title(panel.get("title", ""))
        if ax.get_legend() is None:     # a kind may place its own legend
            _panel_legend(fig, ax)
    text = caption(paper, figure, scale, meta)
    lines = _wrap(text, int(18 * width * ncols))
    fig.text(0.01, 0.005, "\n".join(lines), fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, min(0.5, (0.25 + 0.12 * len(lines)) / (height * nrows)), 1, 1))
    _separate_paper_notes(fig)
    out = Path(out)
    frame = pd.DataFrame(records)
    with atomic_path(out.with_suffix(".csv")) as tmp:
        frame.to_csv(tmp, index=False)
    with atomic_path(out.with_suffix(".png")) as tmp:
        fig.savefig(tmp, format="png", dpi=130)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="pdf")
    plt.close(fig)
    shown = [c for c in ("panel", "series", "x", "metric", "mean", "sd", "n") if c in frame]
    print(frame[shown].head(60).to_string(index=False))


def _panel_legend(fig, ax) -> None:
    """One legend for a panel and its twin axes. A second y axis is drawn over anything inside the frame, so
    a twin-axis panel's legend goes below it."""
    twins = [a for a in fig.axes if a is ax or a.get_shared_x_axes().joined(a, ax)]
    handles, labels = [], []
    for a in twins:
        h, lab = a.get_legend_handles_labels()
        handles += h
        labels += lab
    if not handles:
        return
    if len(twins) > 1:
        ax.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.24), ncol=2)
    else:
        ax.legend(handles, labels, fontsize=7)


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]

