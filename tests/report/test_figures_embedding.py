"""The representation figures' panel kinds (sentaug.report.panels_embedding and panels_augmentation) and their
analyses: projections against a hand computation (PCA by numpy's SVD), NLI distances by hand, one point per
declared setting (and the declared subset at demo scale), and the numbers in each figure's CSV against the result
files behind it."""
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sentaug.config as sc
from sentaug.evaluate import analysis as an
from sentaug.evaluate.projection import pca_2d, project_cli, sample_texts, tsne_2d
from sentaug.report.figures import PANEL, render_figure
from sentaug.report.panels_augmentation import pearson_pairwise
from sentaug.report.panels_embedding import nli_histograms
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("one_thread")      # tiny models: one torch thread (tests/conftest.py)


# -- projections and distances by hand -------------------------------------------------------------------------

def test_pca_is_the_centred_svd():
    x = np.random.default_rng(0).normal(size=(12, 5)) * np.array([5.0, 3.0, 1.0, 0.5, 0.1])
    coords, ratio = pca_2d(x)
    centred = x - x.mean(0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    for k in range(2):          # a principal axis is defined up to its sign
        sign = np.sign(coords[0, k]) * np.sign(expected[0, k])
        np.testing.assert_allclose(coords[:, k], sign * expected[:, k], atol=1e-10)
    np.testing.assert_allclose(ratio, (s[:2] ** 2) / (s ** 2).sum(), rtol=1e-10)


def test_tsne_keeps_separated_clusters_apart_and_is_seeded():
    rng = np.random.default_rng(1)
    centres = np.eye(3, 20) * 50
    x = np.concatenate([c + rng.normal(size=(10, 20)) for c in centres])
    labels = np.repeat([0, 1, 2], 10)
    y = tsne_2d(x, seed=3)
    d = np.linalg.norm(y[:, None] - y[None], axis=-1) + np.eye(30) * 1e9
    assert (labels[d.argmin(1)] == labels).all()          # every point's nearest neighbour is of its cluster
    np.testing.assert_allclose(tsne_2d(x, seed=3), y)


def _cache(path, originals, augmented):
    pd.DataFrame({"original": originals, "augmented": augmented,
                  "changed": [a != o for a, o in zip(augmented, originals)], "flag": [""] * len(originals)}
                 ).to_parquet(path)
    return str(path)


def test_projection_samples_changed_rows_and_pairs_one_augmentation_with_its_originals(tmp_path):
    orig = [f"sentence number {i}" for i in range(10)]
    a = _cache(tmp_path / "a.parquet", orig, [o + " a" if i % 2 else o for i, o in enumerate(orig)])
    b = _cache(tmp_path / "b.parquet", orig, [o + " b" if i < 3 else o for i, o in enumerate(orig)])
    texts, labels = sample_texts({"A": a}, sample=3, seed=0)
    aug = [t for t, lab in zip(texts, labels) if lab == "A"]
    assert len(aug) == 3 and all(t.endswith(" a") for t in aug)
    assert [t for t, lab in zip(texts, labels) if lab == "original"] == [t[:-2] for t in aug]
    texts, labels = sample_texts({"A": a, "B": b}, sample=100, seed=0)
    assert labels.count("A") == 5 and labels.count("B") == 3
    changed_by_any = {i for i in range(10) if i % 2 or i < 3}
    assert sorted(t for t, lab in zip(texts, labels) if lab == "original") == sorted(orig[i] for i in changed_by_any)


def test_nli_distances_by_hand():
    pairs = [("p1", "h1e", "entailment"), ("p1", "h1c", "contradiction"), ("p1", "h1n", "neutral"),
             ("p2", "h2e", "entailment"), ("p3", "h3c", "contradiction"), ("p3", "h3e", "entailment"),
             ("p3", "h3e2", "entailment")]
    assert an.nli_triples(pairs) == [("p1", "h1e", "h1c"), ("p3", "h3e", "h3c")]
    p = np.array([[1.0, 0.0], [0.0, 2.0]])
    e = np.array([[1.0, 1.0], [0.0, 1.0]])            # 45 degrees; the same direction
    c = np.array([[-1.0, 0.0], [3.0, 0.0]])           # opposite; 90 degrees
    res = an.nli_distances(p, e, c)
    assert res["entailment"] == pytest.approx([math.sqrt(2 - math.sqrt(2)), 0.0], abs=1e-5)
    assert res["contradiction"] == pytest.approx([2.0, math.sqrt(2)], abs=1e-5)
    assert res["share_entailment_closer"] == 1.0


def test_analysis_suite_nli_part_measures_each_premise_against_its_two_hypotheses(tmp_path, minilm_path):
    from sentaug.models.encoder import embed, load_pretrained

    rows = [("A man plays a guitar on stage .", "A man is playing music .", "entailment"),
            ("A man plays a guitar on stage .", "A woman sleeps at home .", "contradiction"),
            ("Two dogs run in a field .", "Animals are outside .", "entailment"),
            ("Two dogs run in a field .", "Some animals are running .", "neutral"),
            ("Two dogs run in a field .", "Two cats sit on a sofa .", "contradiction"),
            ("A child eats an apple .", "A kid is eating .", "entailment")]   # no contradiction: left out
    nli = tmp_path / "data/nli/snli_senteval"
    nli.mkdir(parents=True)
    for name, col in (("s1", 0), ("s2", 1), ("labels", 2)):
        (nli / f"{name}.test").write_text("".join(f"{r[col]} \n" if col < 2 else f"{r[col]}\n" for r in rows))
    out = tmp_path / "a.json"
    an.evaluate_analysis_cli(minilm_path, "avg", tmp_path / "data", out, parts=["nli"])
    res = json.loads(out.read_text())["nli"]
    assert res["splits"] == ["test"] and res["n"] == 2
    model, tok = load_pretrained(minilm_path)
    texts = [rows[0][0], rows[0][1], rows[1][1], rows[2][0], rows[2][1], rows[4][1]]
    v = embed(model, tok, texts, poolers=("avg",))["avg"].astype(np.float64)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert res["entailment"] == pytest.approx([np.linalg.norm(v[0] - v[1]), np.linalg.norm(v[3] - v[4])], abs=1e-4)
    assert res["contradiction"] == pytest.approx([np.linalg.norm(v[0] - v[2]), np.linalg.norm(v[3] - v[5])],
                                                 abs=1e-4)
    assert res["share_entailment_closer"] == 1.0        # a sentence model tells these apart


def test_project_cli_writes_the_pca_of_the_model_s_vectors(tmp_path, minilm_path):
    from sentaug.models.encoder import embed, load_pretrained
    from tests.train.test_train import write_backbone

    backbone = write_backbone(tmp_path / "bb", minilm_path, dropout=0.0)
    orig = ["the river flows north", "a cat sleeps on the mat", "rain fell all night", "he sold the old car",
            "two dogs play in the park", "markets fell today"]
    cache = _cache(tmp_path / "c.parquet", orig, [o.replace(" ", " , ", 1) for o in orig])
    out = tmp_path / "p.json"
    project_cli(backbone, "cls_before_pooler", [cache], ["Commas"], "pca", str(out), sample=4, seed=2)
    res = json.loads(out.read_text())
    texts, labels = sample_texts({"Commas": cache}, 4, 2)
    assert res["labels"] == labels and res["n"] == {"original": 4, "Commas": 4}
    model, tok = load_pretrained(backbone)
    x = embed(model, tok, texts, poolers=("cls_before_pooler",))["cls_before_pooler"].astype(np.float64)
    centred = x - x.mean(0)
    expected = centred @ np.linalg.svd(centred, full_matrices=False)[2][:2].T
    got = np.array([res["x"], res["y"]]).T
    np.testing.assert_allclose(np.abs(got), np.abs(expected), atol=1e-4)


# -- figures: points and CSVs ---------------------------------------------------------------------------------

PAPER = """
short: X
figures:
  figure1:
    caption: "Curves, distances, a sweep over explicit augmentations, a projection, a training curve."
    columns: 3
    panels:
      - title: "purity"
        kind: result_curve
        backbone: roberta-base
        x: {label: "K", values: [1, 5]}
        y: {label: "purity", metric: "analysis.stackoverflow.top_k.{x}.purity"}
        series: [{label: "RoBERTa", pretrained: avg}, {label: "VaSCL", method: vascl}]
      - title: "distances"
        kind: nli_distances
        show: distances
        backbone: roberta-base
        series: [{label: "VaSCL", method: vascl}]
      - title: "cosine"
        kind: augmentation_sweep
        backbone: roberta-base
        seeds: {demo: 1}
        x: {label: "strength", values: [5, 10, 20], set: vascl_explicit}
        y: {label: "cosine", cosine: {5: vascl_wdel_05, 10: vascl_wdel_10, 20: vascl_wdel_20}}
        series:
          - {label: "VaSCL w/ WDel", method: vascl, set: {positive.source: cache}, setting: positive.augmentation,
             augmentations: {5: vascl_wdel_05, 10: vascl_wdel_10, 20: vascl_wdel_20}}
        baselines: [{label: "RoBERTa", pretrained: avg}]
      - title: "sts"
        kind: augmentation_sweep
        backbone: roberta-base
        x: {label: "strength", values: [5, 10, 20], set: vascl_explicit}
        y: {label: "STS", metrics: [sts.avg, sts.STSBenchmark]}
        series:
          - {label: "SimCSE w/ WNet", method: simcse, set: {positive.source: cache, contrastive: nt_xent},
             setting: positive.augmentation, augmentations: {5: vascl_wnet_05, 10: vascl_wnet_10, 20: vascl_wnet_20}}
        baselines: [{label: "SimCSE", method: simcse, set: {contrastive: nt_xent}}]
      - title: "projection"
        kind: projection
        backbone: bert-base-uncased
        model: {method: augcse}
        augmentations: RandomSwap
        sample: 50
      - title: "accuracy"
        kind: training_curve
        backbone: bert-base-uncased
        y: {label: "accuracy", part: discriminator_accuracy}
        series: [{label: "AugCSE", method: augcse}]
  figure2:
    caption: "A per-augmentation table."
    panels:
      - title: "table"
        kind: augmentation_table
        backbone: bert-base-uncased
        augmentations: augcse_single
        features: {backbone: all-mpnet-base-v2, pooler: avg}
        columns:
          - {label: "Similarity", feature: cosine.mean}
          - {label: "PPL", feature: perplexity.difference}
          - {label: "Pos STS-b", method: augcse_single_positive, setting: positive.augmentation,
             metric: sts.STSBenchmark_dev, paper_scale: 100}
          - {label: "Neg STS-b", method: augcse_single_negative, setting: negatives.augmentation,
             metric: sts.STSBenchmark_dev, paper_scale: 100}
        paper:
          SentenceReordering: [0.95, 40.13, 0.78, 0.65]
          TenseTransformation: [0.96, 61.56, 0.83, 0.54]
          RandomSwap: [0.96, 374.12, 0.82, 0.52]
          ContractionExpansions: [0.99, 12.77, 0.84, null]
          Summarization: [0.53, 133.4, 0.46, 0.78]
  figure3:
    caption: "Correlations."
    panels:
      - {title: "r", kind: correlation, of: {figure: figure2, panel: 0}}
"""


def _workflow(tmp_path, scale="demo"):
    config = sc.load_yaml(ROOT / "config.yaml")
    config["scales"]["demo"]["seeds"] = [1, 2]   # two seeds: a panel's seeds and a point's mean over them
    papers = tmp_path / "papers"
    papers.mkdir(exist_ok=True)
    (papers / "x.yaml").write_text(PAPER)
    cfg = {**config, "papers_dir": str(papers), "papers": ["x"], "scale": scale}
    return Workflow(cfg, results=str(tmp_path / "R"))


def _write(path, data):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(data if isinstance(data, str) else json.dumps(data))


def test_sweeps_have_one_point_per_declared_setting_and_the_declared_subset_at_demo(tmp_path):
    full = _workflow(tmp_path, "paper").figure_points("x", "figure1")     # every declared setting
    cosine = [p for p in full[2] if not p.get("baseline")]
    assert [p["x"] for p in cosine] == [5, 10, 20]
    assert [p["method"] for p in cosine] == [f"vascl~positive.source=cache~positive.augmentation=vascl_wdel_{s:02d}"
                                             for s in (5, 10, 20)]
    assert len(cosine[0]["files"]) == 3 and cosine[0]["paths"] == [["augmentations", "vascl_wdel_05/seed42",
                                                                     "cosine", "mean"]]
    base = [p for p in full[2] if p.get("baseline")]     # the pre-trained model, on each x's augmentation
    assert [p["paths"][0][1] for p in base] == ["vascl_wdel_05/seed42", "vascl_wdel_10/seed42", "vascl_wdel_20/seed42"]
    sts = full[3]
    assert [p["x"] for p in sts] == [5, 10, 20, None]
    assert sts[-1]["method"] == "simcse~contrastive=nt_xent" and sts[0]["paths"] == [["avg"], ["STSBenchmark"]]

    demo = _workflow(tmp_path, "demo").figure_points("x", "figure1")
    assert [p["x"] for p in demo[2] if not p.get("baseline")] == [10]    # the set's demo subset: 10 % only
    assert len(demo[2][0]["files"]) == 1                                  # seeds: {demo: 1}
    assert "keeps x = 10" in demo[2][0]["note"] and "seed(s) 1" in demo[2][0]["note"]
    table = _workflow(tmp_path, "demo").figure_points("x", "figure2")[0]
    kept = sc.augmentation_set(sc.load_yaml(ROOT / "config.yaml"), "augcse_single", "demo")
    assert list(dict.fromkeys(p["x"] for p in table)) == kept
    assert table[0]["note"].startswith(f"At demo scale {len(kept)} of the 26 augmentations are in {PANEL}: "
                                       f"{', '.join(kept)}.")
    full = _workflow(tmp_path, "paper").figure_points("x", "figure2")[0]
    assert len(full) == 26 * 4 and {p["x"] for p in full} == set(
        sc.load_yaml(ROOT / "config.yaml")["augmentation_sets"]["augcse_single"]["augmentations"])


def test_rendered_numbers_are_those_of_the_analyses_and_runs(tmp_path):
    wf = _workflow(tmp_path, "demo")
    panels = wf.figure_points("x", "figure1")
    rng = np.random.default_rng(0)
    purity = {}
    for p in panels[0]:
        for f in p["files"]:
            v = round(float(rng.uniform()), 4)
            purity.setdefault((p["series"], p["x"]), []).append(v)
            data = json.loads(Path(f).read_text()) if Path(f).exists() else {"stackoverflow": {"top_k": {}}}
            data["stackoverflow"]["top_k"][str(p["x"])] = {"purity": v}
            _write(f, data)
    d_e, d_c = rng.uniform(0, 1.5, 50).round(5), rng.uniform(0.5, 2, 50).round(5)
    for f in panels[1][0]["files"]:
        data = json.loads(Path(f).read_text())
        data["nli"] = {"entailment": d_e.tolist(), "contradiction": d_c.tolist(), "mean_entailment": d_e.mean(),
                       "mean_contradiction": d_c.mean(), "share_entailment_closer": float(np.mean(d_e < d_c))}
        _write(f, data)
    cos = {}
    for p in panels[2]:
        (f,) = p["files"]
        data = json.loads(Path(f).read_text()) if Path(f).exists() else {"augmentations": {}}
        key = p["paths"][0][1]
        cos[(p["series"], p["x"])] = data["augmentations"].setdefault(key, {"cosine": {"mean": float(rng.uniform())}})[
            "cosine"]["mean"]
        _write(f, data)
    for p in panels[3]:
        for k, f in enumerate(p["files"]):
            _write(f, {"avg": 60.0 + k + (p["x"] or 0), "STSBenchmark": 70.0 + k})
    (proj,) = panels[4]
    _write(proj["files"][0], {"labels": ["original", "RandomSwap", "original"], "x": [0.5, -1.0, 2.0],
                              "y": [1.5, 0.0, -2.0]})
    for k, f in enumerate(panels[5][0]["files"]):
        _write(f, "\n".join(json.dumps({"step": s, "loss": 1.0, "parts": {"discriminator_accuracy": s / 100 + k / 10}})
                            for s in (10, 20)) + "\n")
    out = tmp_path / "fig" / "figure1.pdf"
    render_figure(str(tmp_path / "papers" / "x.yaml"), "figure1", json.dumps({"panels": panels, "meta": {}}),
                  str(out), "demo")
    csv = pd.read_csv(out.with_suffix(".csv"))

    curve = csv[csv.panel == 0]
    for (series, x), values in purity.items():
        row = curve[(curve.series == series) & (curve.x == x)].iloc[0]
        assert row["mean"] == pytest.approx(np.mean(values)) and row["n"] == len(values)
    hist = csv[(csv.panel == 1) & (csv.metric == "distances.entailment.density")]
    edges = np.linspace(0, max(d_e.max(), d_c.max()), 31)
    np.testing.assert_allclose(hist["mean"], np.histogram(d_e, bins=edges, density=True)[0], rtol=1e-9)
    np.testing.assert_allclose(hist["x"], (edges[:-1] + edges[1:]) / 2, atol=1e-6)
    sweep = csv[csv.panel == 2]
    assert len(sweep) == 2 and {(r.series, r.x): r.mean for r in sweep.itertuples()} == pytest.approx(
        {(s, float(x)): v for (s, x), v in cos.items()})
    sts = csv[csv.panel == 3]
    point = sts[sts.series == "SimCSE w/ WNet"].iloc[0]      # per seed the mean of avg and STS-B: 70, 71
    assert (point["x"], point["mean"], point["n"]) == (10, 70.5, 2) and point["sd"] == pytest.approx(math.sqrt(0.5))
    base = sts[sts.series == "SimCSE"].iloc[0]              # seeds 1, 2: (60 + 70) / 2 and (61 + 71) / 2
    assert base["mean"] == 65.5 and base["sd"] == pytest.approx(math.sqrt(0.5)) and bool(base["baseline"])
    proj_rows = csv[csv.panel == 4]
    assert proj_rows[["series", "x", "y"]].values.tolist() == [["original", 0.5, 1.5], ["RandomSwap", -1.0, 0.0],
                                                               ["original", 2.0, -2.0]]
    acc = csv[csv.panel == 5]
    assert acc["x"].tolist() == [10, 20] and acc["mean"].tolist() == pytest.approx([0.15, 0.25])
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_correlations_are_pearson_over_the_augmentations_and_the_paper_s_from_its_table(tmp_path):
    wf = _workflow(tmp_path, "paper")
    table = wf.figure_points("x", "figure2")[0]
    rng = np.random.default_rng(4)
    augs = list(dict.fromkeys(p["x"] for p in table))
    truth = {}
    for p in table:
        if p["series"] in ("Similarity", "PPL"):
            (f,) = p["files"]
            data = json.loads(Path(f).read_text()) if Path(f).exists() else {"augmentations": {}}
            key = f"{p['x']}/seed42"
            entry = data["augmentations"].setdefault(key, {"cosine": {"mean": float(rng.uniform())},
                                                          "perplexity": {"skipped": "GPT-2 not offline"}})
            truth[(p["x"], p["series"])] = entry["cosine"]["mean"] if p["series"] == "Similarity" else None
            _write(f, data)
        else:
            vals = [float(rng.normal(70, 5)) for _ in p["files"]]
            for f, v in zip(p["files"], vals):
                _write(f, {"STSBenchmark_dev": v})
            truth[(p["x"], p["series"])] = float(np.mean(vals))
    panels = wf.figure_points("x", "figure3")
    out = tmp_path / "fig" / "figure3.pdf"
    render_figure(str(tmp_path / "papers" / "x.yaml"), "figure3", json.dumps({"panels": panels, "meta": {}}),
                  str(out), "paper")
    csv = pd.read_csv(out.with_suffix(".csv"))
    sim = np.array([truth[(a, "Similarity")] for a in augs])
    pos = np.array([truth[(a, "Pos STS-b")] for a in augs])
    r = csv[(csv.series == "Similarity") & (csv.x == "Pos STS-b")].iloc[0]
    assert r["mean"] == pytest.approx(np.corrcoef(sim, pos)[0, 1]) and r["n"] == 26
    assert pd.isna(csv[(csv.series == "PPL") & (csv.x == "Pos STS-b")].iloc[0]["mean"])   # skipped: no GPT-2
    # the paper's r over its table's rows (pairwise complete): Similarity vs Neg STS-b leaves out the null row
    paper = np.array([[0.95, 0.65], [0.96, 0.54], [0.96, 0.52], [0.53, 0.78]])
    neg = csv[(csv.series == "Similarity") & (csv.x == "Neg STS-b")].iloc[0]
    assert neg["paper"] == pytest.approx(np.corrcoef(paper[:, 0], paper[:, 1])[0, 1], abs=1e-6)

    figure6 = tmp_path / "fig" / "figure2.pdf"
    render_figure(str(tmp_path / "papers" / "x.yaml"), "figure2",
                  json.dumps({"panels": wf.figure_points("x", "figure2"), "meta": {}}), str(figure6), "paper")
    cells = pd.read_csv(figure6.with_suffix(".csv"))
    row = cells[(cells.x == "RandomSwap") & (cells.series == "Pos STS-b")].iloc[0]
    assert row["mean"] == pytest.approx(truth[("RandomSwap", "Pos STS-b")]) and row["paper"] == pytest.approx(82.0)
    assert len(cells) == 26 * 4


def test_pairwise_pearson_and_histogram_grids():
    m = np.array([[1.0, 2.0, np.nan], [2.0, 4.1, 1.0], [3.0, 6.3, 2.0], [4.0, 7.9, 3.5]])
    r, n = pearson_pairwise(m)
    assert n[0, 2] == 3 and r[0, 2] == pytest.approx(np.corrcoef([2, 3, 4], [1, 2, 3.5])[0, 1])
    assert r[0, 1] == pytest.approx(np.corrcoef(m[:, 0], m[:, 1])[0, 1])
    ratio = nli_histograms(np.array([0.5, 1.0, 9.0]), np.array([1.0, 0.5, 1.0]), "ratio")["ratio"]
    assert ratio[1].sum() * (3.0 / 30) == pytest.approx(1.0)      # a density; 9.0 counted in the last bin
    assert ratio[1][-1] > 0
