"""Paper figures as data (sentaug.report.figures): a sweep resolves to one run per declared setting (the
declared value reusing the method's own run), and the numbers behind every panel (.csv) are the mean and sd of
the result files, computed by hand here."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

import sentaug.config as sc
from sentaug.report.figures import (
    _draw_sweep,
    _panel_legend,
    _separate_paper_notes,
    PANEL,
    canonical_method,
    caption,
    caption_notes,
    render_figure,
)
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]

PAPER = """
short: X
figures:
  figure9:
    caption: "A sweep and bars."
    panels:
      - title: "(a) p"
        kind: sweep
        backbone: roberta-base
        x: {label: "p", setting: positive.p, values: [0.05, 0.2]}
        y: {label: "STS avg", metric: sts.avg}
        y2: {label: "seconds", metric: train.train_seconds}
        series:
          - {label: "switch-case", method: simcse_switch_case, paper: {0.2: 70.0}}
        baseline: {label: "SimCSE", method: simcse}
      - title: "(b) bars"
        kind: bars
        backbone: roberta-base
        y: {label: "score", metrics: [sts.avg, transfer.avg]}
        series:
          - {label: "pre-trained", pretrained: avg, paper: [50.0, null]}
          - {label: "SimCSE", method: simcse}
"""


DEMO_SEEDS = [1, 2]      # two seeds: one point per setting averages both (the shared `cfg` fixture)


@pytest.fixture()
def cfg(cfg, tmp_path):
    """The shared configuration with paper x (PAPER) alone."""
    config = cfg
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "x.yaml").write_text(PAPER)
    return {**config, "papers_dir": str(tmp_path / "papers"), "papers": ["x"], "scale": "demo"}


def test_canonical_method_drops_declared_settings(cfg):
    assert canonical_method(cfg, "simcse_switch_case", {"positive.p": 0.05}) == "simcse_switch_case"
    assert canonical_method(cfg, "simcse_switch_case", {"positive.p": 0.2}) == "simcse_switch_case~positive.p=0.2"
    assert canonical_method(cfg, "cards", {"negatives.s": 1, "negatives.k": 8}) == "cards~negatives.k=8"


def test_sweep_has_one_run_per_declared_setting(cfg, tmp_path):
    wf = Workflow(cfg, results=str(tmp_path / "R"))
    sweep, bars = wf.figure_points("x", "figure9")
    sts = [p for p in sweep if p["metric"] == "sts.avg" and not p.get("baseline")]
    assert [p["x"] for p in sts] == [0.05, 0.2]
    assert [p["method"] for p in sts] == ["simcse_switch_case", "simcse_switch_case~positive.p=0.2"]
    assert sts[1]["files"] == [f"{tmp_path}/R/eval/demo/shared/tiny-roberta/simcse_switch_case~positive.p=0.2/"
                               f"seed{s}/sts.json" for s in (1, 2)]
    # a training metric is read inside the run folder, which is what Snakemake must build
    secs = [p for p in sweep if p["metric"] == "train.train_seconds" and p["x"] == 0.2][0]
    run = f"{tmp_path}/R/runs/demo/shared/tiny-roberta/simcse_switch_case~positive.p=0.2/seed1"
    assert secs["files"][0] == f"{run}/train_summary.json" and secs["targets"][0] == run
    assert [p["files"] for p in bars if p["series"] == "pre-trained"] == [
        [f"{tmp_path}/R/eval/pretrained/demo/tiny-roberta/avg.json"],
        [f"{tmp_path}/R/eval/pretrained/demo/tiny-roberta/transfer/avg.json"]]


def test_rendered_numbers_are_the_result_files(cfg, tmp_path):
    wf = Workflow(cfg, results=str(tmp_path / "R"))
    panels = wf.figure_points("x", "figure9")
    values = {"sts.avg": {"simcse_switch_case": [60.0, 62.0], "simcse_switch_case~positive.p=0.2": [55.0, 58.0],
                          "simcse": [50.0, 51.0], "pretrained:avg": [40.0]},
              "train.train_seconds": {"simcse_switch_case": [10.0, 12.0],
                                      "simcse_switch_case~positive.p=0.2": [11.0, 11.0], "simcse": [9.0, 9.0]},
              "transfer.avg": {"simcse": [70.0, 74.0], "pretrained:avg": [65.0]}}
    for panel in panels:
        for p in panel:
            for f, v in zip(p["files"], values[p["metric"]][p["method"]]):
                Path(f).parent.mkdir(parents=True, exist_ok=True)
                Path(f).write_text(json.dumps({p["metric"].split(".", 1)[1]: v}))
    out = tmp_path / "fig" / "figure9.pdf"
    render_figure(str(tmp_path / "papers" / "x.yaml"), "figure9", json.dumps({"panels": panels, "meta": {}}),
                  str(out), "demo")
    csv = pd.read_csv(out.with_suffix(".csv"))
    row = csv[(csv.method == "simcse_switch_case~positive.p=0.2") & (csv.metric == "sts.avg")].iloc[0]
    # mean(55, 58) = 56.5; sd = 3 / sqrt(2) = 2.1213; the paper's point at x = 0.2 is 70
    assert (row["mean"], round(row["sd"], 4), row["n"], row["paper"]) == (56.5, 2.1213, 2, 70.0)
    base = csv[(csv.series == "SimCSE") & (csv.metric == "train.train_seconds") & (csv.panel == 0)].iloc[0]
    assert base["mean"] == 9.0 and base["sd"] == 0.0 and bool(base["baseline"])
    bar = csv[(csv.panel == 1) & (csv.series == "pre-trained") & (csv.metric == "sts.avg")].iloc[0]
    assert (bar["mean"], bar["n"], bar["paper"]) == (40.0, 1, 50.0)
    assert len(csv) == 2 * 2 + 2 + 2 * 2        # sweep: 2 x values x 2 metrics + baseline x 2; bars: 2 x 2
    assert out.stat().st_size > 1000 and out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_caption_counts_its_seeds():
    paper = yaml.safe_load(PAPER)
    meta = {"seeds": 1, "corpus": "demo_corpus", "stand_ins": {"roberta-base": "tiny-roberta"}}
    text = caption(paper, "figure9", "demo", meta)
    assert "Ours: mean ± sd over 1 seed;" in text and "Backbone: tiny-roberta (stand-in for roberta-base)." in text
    assert "Ours: mean ± sd over 2 seeds;" in caption(paper, "figure9", "demo", {**meta, "seeds": 2})


def test_missing_metric_names_it_and_writes_nothing(cfg, tmp_path):
    wf = Workflow(cfg, results=str(tmp_path / "R"))
    panels = wf.figure_points("x", "figure9")
    for panel in panels:
        for p in panel:
            for f in p["files"]:
                Path(f).parent.mkdir(parents=True, exist_ok=True)
                Path(f).write_text(json.dumps({"other": 1.0}))
    out = tmp_path / "fig" / "figure9.pdf"
    with pytest.raises(KeyError, match="metric 'sts.avg': result has no key 'avg'"):
        render_figure(str(tmp_path / "papers" / "x.yaml"), "figure9", json.dumps({"panels": panels}), str(out),
                      "demo")
    assert not out.parent.exists() or not any(out.parent.iterdir())


def test_unknown_panel_kind_is_named(cfg, tmp_path):
    (tmp_path / "papers" / "x.yaml").write_text(PAPER.replace("kind: bars", "kind: pie"))
    with pytest.raises(ValueError, match="unknown panel kind 'pie'"):
        Workflow(cfg, results="R").figure_points("x", "figure9")


def test_declared_defaults_reuse_the_declared_run(cfg):
    # a method that does not set the key runs at the panel's `declared` value: that point is its own run
    assert canonical_method(cfg, "sda_pi", {"positive.proportion": 1.0}, {"positive.proportion": 1.0}) == "sda_pi"
    assert canonical_method(cfg, "sda_pi", {"positive.proportion": 0.5}, {"positive.proportion": 1.0}) == \
        "sda_pi~positive.proportion=0.5"
    assert canonical_method(cfg, "simcse", {"train.dropout": 0.1}, {"train.dropout": 0.1}) == "simcse"
    assert canonical_method(cfg, "simcse", {"train.dropout": 0.1}) == "simcse~train.dropout=0.1"


@pytest.mark.parametrize("scale", ["demo", "small", "paper"])
def test_every_declared_sweep_has_one_point_per_setting_of_its_scale(scale, shipped_config):
    """For every sweep panel of papers/*.yaml: one STS point per (series, declared x value at this scale), each the
    run of the variant with that value (the declared value: the declared method's own run), one file per seed."""
    config = {**shipped_config, "scale": scale}
    wf = Workflow(config, results="R")
    checked = 0
    for paper, spec in wf.papers.items():
        for figure, fig in spec.get("figures", {}).items():
            for panel, points in zip(fig["panels"], wf.figure_points(paper, figure)):
                if panel["kind"] != "sweep":
                    continue
                x = panel["x"]
                values = (x.get("values_by_scale") or {}).get(scale, x["values"])
                for series in panel["series"]:
                    pts = [p for p in points if p["series"] == series["label"] and p["metric"] == panel["y"]["metric"]
                           and not p.get("baseline")]
                    assert [p["x"] for p in pts] == values, (paper, figure, series["label"])
                    for p in pts:
                        method, overrides = sc.split_variant(p["method"])
                        assert method == series["method"]
                        declared = sc.method_config(config, method)
                        try:
                            at = sc.get_setting(declared, x["setting"])
                        except sc.ConfigError:
                            at = x.get("declared")
                        assert overrides == ({} if p["x"] == at else {x["setting"]: p["x"]}), p["method"]
                        assert len(p["files"]) == len(wf.seeds)
                    checked += 1
    assert checked >= 10      # SDA figure 2 (7 series), CARDS figures 2 and 3 (5 series)


def test_sda_figure2_demo_runs_are_the_declared_variants(shipped_config):
    config = {**shipped_config, "scale": "demo"}
    wf = Workflow(config, results="R")
    a, b = wf.figure_points("sda", "figure2")
    assert sorted({p["method"] for p in a if p["series"] == "PI"}) == ["sda_pi", "sda_pi~positive.proportion=0.5"]
    assert sorted({p["method"] for p in b if p["series"] == "SimCSE"}) == ["simcse", "simcse~train.dropout=0.0"]
    spec = wf.specs.run_spec("shared", "tiny-roberta", "sda_pi~positive.proportion=0.5", 1)
    assert spec["positive"] == {"source": "cache", "augmentation": "sda_pi", "proportion": 0.5,
                                "op": "punctuation_insertion"}
    assert wf.specs.run_spec("shared", "tiny-roberta", "simcse~train.dropout=0.0", 1)["dropout"] == 0.0


def _drawn_sweep(panel: dict, records: list[dict], height: float = 4.2):
    """A sweep panel drawn with its legend and laid out as render_figure lays it out; returns (plt, fig, ax)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, height))
    _draw_sweep(ax, panel, records, {"compares_with_papers": False})
    _panel_legend(fig, ax)
    fig.tight_layout()
    fig.canvas.draw()
    return plt, fig, ax


def _sweep_layout(twin: bool):
    """Draw a below-paper-scale sweep (the paper's value written beside our rightmost point) and its legend;
    return the rendered window extents of the frame, the x label, the legend and the annotation."""
    panel = {"x": {"label": "p"}, "y": {"label": "STS avg", "metric": "sts.avg"}}
    if twin:
        panel["y2"] = {"label": "seconds", "metric": "train.train_seconds"}
    records = [{"series": "S", "x": x, "metric": m, "mean": v, "sd": 0.5, "paper": paper, "scale": "small"}
               for x, paper in ((0.05, None), (0.3, 77.5))
               for m, v in (("sts.avg", 36.0 + x), ("train.train_seconds", 100.0 + 10 * x))]
    records.append({"series": "SimCSE", "x": None, "metric": "sts.avg", "mean": 36.0, "sd": 0.0, "paper": 77.0,
                    "scale": "small", "baseline": True})
    plt, fig, ax = _drawn_sweep(panel, records)
    note = [t for a in fig.axes for t in a.texts if t.get_text() == "paper 77.5"]
    extents = (ax.get_window_extent(), ax.xaxis.label.get_window_extent(), ax.get_legend().get_window_extent(),
               note[0].get_window_extent())
    plt.close(fig)
    return extents


def test_twin_axis_legend_sits_below_the_x_label_and_the_last_annotation_inside_the_frame():
    frame, xlabel, legend, note = _sweep_layout(twin=True)
    # the second y axis would draw its lines over a legend inside the frame; below it nothing covers it
    assert legend.y1 <= xlabel.y0 <= frame.y0
    # the rightmost point's "paper" text turns left instead of running into the second axis' tick labels
    assert frame.x0 <= note.x0 and note.x1 <= frame.x1
    # a single-axis panel keeps its legend inside the frame
    frame, _, legend, note = _sweep_layout(twin=False)
    assert frame.x0 <= legend.x0 and legend.x1 <= frame.x1 and frame.y0 <= legend.y0 and legend.y1 <= frame.y1
    assert note.x1 <= frame.x1


def test_paper_values_of_series_that_meet_at_one_x_are_stacked_not_printed_over_each_other():
    """SDA figure 2 (b) at small scale: four series within 0.9 points of each other at dropout 0.1, each
    with the paper's value written beside it."""
    panel = {"x": {"label": "dropout"}, "y": {"label": "STS avg", "metric": "sts.avg"}}
    at_01 = {"PI": (36.56, 77.90), "AA": (37.20, 78.16), "DN": (36.71, 77.78), "SimCSE": (36.38, 76.57)}
    records = [{"series": s, "x": x, "metric": "sts.avg", "sd": 0.3,
                "mean": {0.0: 37.0, 0.1: mean, 0.2: 41.3}[x],
                "paper": paper if x == 0.1 else None, "scale": "small"}
               for s, (mean, paper) in at_01.items() for x in (0.0, 0.1, 0.2)]
    plt, fig, ax = _drawn_sweep(panel, records, height=3.2)   # the height a panel keeps above F2's caption
    notes = {t.get_text(): t for t in ax.texts}
    assert sorted(notes) == ["paper 76.57", "paper 77.78", "paper 77.9", "paper 78.16"]
    before = {k: t.get_window_extent() for k, t in notes.items()}
    # the case being mended: drawn where their points are, the notes print over each other
    assert before["paper 77.9"].overlaps(before["paper 77.78"]) and before["paper 77.9"].overlaps(before["paper 76.57"])
    _separate_paper_notes(fig)
    after = {k: t.get_window_extent() for k, t in notes.items()}
    plt.close(fig)
    boxes = list(after.values())
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    # only lifted: same x, the lowest (SimCSE's, at 36.38) stays beside its point, the others keep their order
    assert all(after[k].x0 == before[k].x0 and after[k].y0 >= before[k].y0 for k in notes)
    assert after["paper 76.57"].y0 == before["paper 76.57"].y0
    assert after["paper 76.57"].y0 < after["paper 77.9"].y0 < after["paper 77.78"].y0 < after["paper 78.16"].y0
    # and no further than it takes: a lifted note sits 1 px above the top of the note it cleared
    for k in notes:
        assert after[k].y0 == before[k].y0 or any(abs(after[k].y0 - after[o].y1 - 1) < 1e-6 for o in notes)
    assert after["paper 77.9"].y0 > before["paper 77.9"].y0


TOKEN_PAPER = """
short: X
figures:
  figure1:
    caption: "Tokens."
    panels:
      - {title: "(a)", kind: token_pca, backbone: roberta-base, colour: category}
      - {title: "(b)", kind: token_pca, backbone: roberta-base, colour: frequency}
"""


def test_token_pca_csv_holds_every_token_of_the_analysis(cfg, tmp_path):
    (tmp_path / "papers" / "x.yaml").write_text(TOKEN_PAPER)
    wf = Workflow(cfg, results=str(tmp_path / "R"))
    panels = wf.figure_points("x", "figure1")
    file = Path(panels[0][0]["files"][0])
    assert file == tmp_path / "R/analysis/token_pca/demo_corpus/tiny-roberta.json"
    assert panels[1][0]["files"] == [str(file)]
    tokens = {"id": [5, 9, 12], "token": ["Ġthe", "ĠParis", "ing"], "category": ["lower", "upper", "subtoken"],
              "pc1": [0.5, -1.25, 2.0], "pc2": [1.0, 0.0, -3.5], "frequency": [40, 2, 0]}
    file.parent.mkdir(parents=True)
    file.write_text(json.dumps({"tokens": tokens, "separation": {"nearest_centroid_full": 0.9, "majority_share": 0.5}}))
    out = tmp_path / "fig" / "figure1.pdf"
    render_figure(str(tmp_path / "papers" / "x.yaml"), "figure1", json.dumps({"panels": panels, "meta": {}}),
                  str(out), "demo")
    csv = pd.read_csv(out.with_suffix(".csv"))
    for panel in (0, 1):
        rows = csv[(csv.panel == panel) & (csv.series != "separation")]
        scores = csv[(csv.panel == panel) & (csv.series == "separation")]
        assert dict(zip(scores.metric, scores["mean"])) == {"nearest_centroid_full": 0.9, "majority_share": 0.5}
        assert rows.token.tolist() == tokens["token"] and rows.series.tolist() == tokens["category"]
        assert rows.x.tolist() == tokens["pc1"] and rows.y.tolist() == tokens["pc2"]
        assert rows.frequency.tolist() == tokens["frequency"]


def test_caption_names_the_panels_a_note_holds_for_once():
    seeds, kept = f"At small scale {PANEL} uses seed(s) 1.", f"At small scale {PANEL} keeps x = 10, 20 (of 5, 10, 20)."
    fixed = "At small scale 4 of the 8 augmentations are in the projections: a, b, c, d."
    panels = [{"title": "(a) STS"}, {"title": "(b) WDel"}, {}]
    points = [[{"note": seeds}, {"note": seeds}], [{"note": seeds}, {"note": kept}], [{"note": seeds}, {"note": fixed}]]
    assert caption_notes(panels, points) == ["At small scale every panel uses seed(s) 1.",
                                             "At small scale (b) WDel keeps x = 10, 20 (of 5, 10, 20).", fixed]
    assert caption_notes(panels[:1], points[:1]) == ["At small scale (a) STS uses seed(s) 1."]
    assert caption_notes(panels[:2], [[{"note": kept}], [{}, {"note": kept}]]) == [
        "At small scale every panel keeps x = 10, 20 (of 5, 10, 20)."]


@pytest.mark.parametrize("first", ["panels_embedding", "panels_augmentation", "sources", "figures"])
def test_any_figure_module_imports_first_and_figures_knows_every_documented_kind(first):
    # a fresh interpreter, so that `first` is the report package's first module to load: no import cycle
    code = (f"import sentaug.report.{first}; from sentaug.report.figures import PANEL_KINDS, PANEL_RECORDS; "
            "print(' '.join(sorted(PANEL_KINDS))); print(' '.join(sorted(PANEL_RECORDS)))")
    kinds, records = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout.splitlines()
    documented = {"sweep", "bars", "token_pca", "result_curve", "nli_distances", "projection", "training_curve",
                  "augmentation_sweep", "augmentation_table", "correlation"}   # the three modules' docstrings
    assert set(kinds.split()) == documented
    assert set(records.split()) == documented - {"sweep", "bars"}           # both read the metrics' files
