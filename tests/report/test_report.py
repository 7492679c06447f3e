"""Paper tables: mean ± sd over seeds next to the reported number, computed by hand here."""
import json

import pandas as pd
import pytest

from sentaug.report.tables import render_table

PAPER = """
short: X
tables:
  t4:
    kind: sts
    caption: "STS."
    columns: [STS12, avg]
    blocks:
      - title: "BERT models"
        backbone: bert-base-uncased
        rows:
          - {label: "BERT (first-last avg.)", pretrained: avg_first_last, paper: [39.70, 56.70]}
          - {label: "+PI & more", method: sda_pi, paper: [71.84, 77.35]}
  t3:
    kind: augmentation_share
    caption: "Share."
    columns: ["Augmented %"]
    rows:
      - {label: "PI", augmentation: sda_pi, paper: [62.61]}
"""


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "x.yaml").write_text(PAPER)
    paths = {}
    for name, payload in {"pre": {"STS12": 40.0, "avg": 50.0}, "s1": {"STS12": 70.0, "avg": 76.0},
                          "s2": {"STS12": 73.0, "avg": 77.0}, "a1": {"share_changed": 60.0},
                          "a2": {"share_changed": 64.0}}.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(payload))
    return tmp_path, paths


def test_sts_table_values_and_caption(files):
    root, p = files
    rows = {"0": [str(p["pre"])], "1": [str(p["s1"]), str(p["s2"])]}
    meta = {"stand_ins": {"bert-base-uncased": "tiny-bert"}, "corpus": "demo_corpus"}
    render_table(str(root / "x.yaml"), "t4", json.dumps({"rows": rows, "meta": meta}), str(root / "t4.tex"), "demo")
    csv = pd.read_csv(root / "t4.csv")
    row = csv[(csv.row == "+PI & more") & (csv.column == "STS12")].iloc[0]
    # mean(70, 73) = 71.5; sample sd = |73 - 70| / sqrt(2) = 2.1213; diff = 71.5 - 71.84 = -0.34
    assert (row.reproduced, row.sd, row.n, row.paper, row["diff"]) == (71.5, 2.12, 2, 71.84, -0.34)
    single = csv[(csv.row == "BERT (first-last avg.)") & (csv.column == "avg")].iloc[0]
    assert single.reproduced == 50.0 and pd.isna(single.sd) and single["diff"] == -6.7
    assert set(csv.scale) == {"demo"}
    tex = (root / "t4.tex").read_text()
    assert r"+PI \& more (n=2) & 71.50 $\pm$ 2.12 & 76.50 $\pm$ 0.71 \\" in tex
    assert r"\quad $\Delta$ & -0.34 & -0.85 \\" in tex
    assert (r"Built at scale \texttt{demo}, below paper scale "
            r"(stand-in backbones: tiny-bert for bert-base-uncased") in tex


def test_caption_says_a_table_counted_from_the_official_files_alone_compares_with_the_paper():
    from sentaug.report.tables import scale_note

    stats = {"stand_ins": {}, "corpus": None}
    assert scale_note("'small'", {**stats, "data": "official"}) == \
        "Built at scale 'small' from the official data files, as the paper's."
    assert scale_note("'demo'", {**stats, "data": "demo"}) == \
        "Built at scale 'demo', below paper scale: not comparable with the paper's numbers."
    share = {"stand_ins": {}, "corpus": "wiki1m_head", "data": "official"}     # a corpus below paper scale
    assert scale_note("x", share, lambda t: t.replace("_", r"\_")) == \
        r"Built at scale x, below paper scale (corpus: wiki1m\_head): not comparable with the paper's numbers."


def test_share_table_and_paper_scale_caption(files):
    root, p = files
    rows = {"0": [str(p["a1"]), str(p["a2"])]}
    # a scale whose numbers compare with the papers' (config key scales.<scale>.compares_with_papers) says nothing
    # of its scale; one that does not, whatever its name, says it is below paper scale
    paper = {"rows": rows, "meta": {"compares_with_papers": True}}
    render_table(str(root / "x.yaml"), "t3", json.dumps(paper), str(root / "t3.tex"), "paper")
    csv = pd.read_csv(root / "t3.csv")
    assert (csv.reproduced[0], csv.sd[0], csv["diff"][0]) == (62.0, 2.83, -0.61)
    assert "below paper scale" not in (root / "t3.tex").read_text()
    render_table(str(root / "x.yaml"), "t3", json.dumps({"rows": rows, "meta": {"compares_with_papers": False}}),
                 str(root / "t3.tex"), "paper")
    assert r"Built at scale \texttt{paper}, below paper scale" in (root / "t3.tex").read_text()


def test_unknown_table_is_an_error_and_writes_nothing(files):
    root, _ = files
    with pytest.raises(ValueError, match="no table 't9'"):
        render_table(str(root / "x.yaml"), "t9", json.dumps({"rows": {}}), str(root / "t9.tex"), "demo")
    assert not (root / "t9.tex").exists()


GLUE_PAPER = """
short: X
tables:
  g:
    kind: glue
    caption: "GLUE."
    columns: [MNLI-m, QQP, CoLA, STS, avg]
    blocks:
      - title: "RoBERTa-base"
        backbone: roberta-base
        rows:
          - {label: "M", method: clear_mlm, paper: [80.0, 87.0, 40.0, 82.0, 72.25]}
  c:
    kind: glue_cards
    caption: "GLUE, CARDS's metrics."
    columns: [MNLI-m, CoLA, STS-B, avg]
    rows:
      - {label: "B", pretrained: cls_before_pooler, paper: [91.7, 72.0, 92.9, 90.7]}
  s:
    kind: cnsd
    caption: "Chinese."
    columns: [CNSD]
    rows:
      - {label: "B", pretrained: cls_before_pooler, paper: [68.25]}
"""


def glue_result(cola: float, sts_score: float, sts_cards: float, mnli=None) -> dict:
    """A `sentaug evaluate glue` JSON: per task CLEAR's `score` and CARDS's `score_cards` (+ details)."""
    res = {"CoLA": {"score": cola, "score_cards": cola}, "STS-B": {"score": sts_score, "score_cards": sts_cards},
           "details": {}}
    if mnli is not None:     # (matched, mismatched)
        res["MNLI"] = {"score": sum(mnli) / 2, "score_cards": mnli[0]}
        res["details"]["MNLI"] = {"accuracy_matched": mnli[0], "accuracy_mismatched": mnli[1]}
    return res


def test_glue_tables_leave_tasks_that_were_not_run_empty_and_average_the_rest(tmp_path):
    (tmp_path / "x.yaml").write_text(GLUE_PAPER)
    files = []
    for seed, (cola, sts_p, sts_s) in enumerate([(40.0, 80.0, 81.0), (44.0, 82.0, 83.0)]):
        files.append(tmp_path / f"g{seed}.json")
        files[-1].write_text(json.dumps(glue_result(cola, (sts_p + sts_s) / 2, sts_s)))
    meta = {"stand_ins": {"roberta-base": "tiny-roberta-bpe"}, "unbuilt_reason": "no training set offline"}
    render_table(str(tmp_path / "x.yaml"), "g", json.dumps({"rows": {"0": [str(f) for f in files]}, "meta": meta}),
                 str(tmp_path / "g.tex"), "small")
    csv = pd.read_csv(tmp_path / "g.csv").set_index("column")
    # CoLA: mean(40, 44) = 42; STS (GLUE's score = mean of Pearson and Spearman): mean(80.5, 82.5) = 81.5;
    # avg per seed over the tasks run: (40 + 80.5)/2 = 60.25, (44 + 82.5)/2 = 63.25 -> 61.75
    assert (csv.loc["CoLA", "reproduced"], csv.loc["STS", "reproduced"], csv.loc["avg", "reproduced"]) == \
        (42.0, 81.5, 61.75)
    assert pd.isna(csv.loc["MNLI-m", "reproduced"]) and csv.loc["MNLI-m", "n"] == 0
    assert pd.isna(csv.loc["QQP", "diff"])
    tex = (tmp_path / "g.tex").read_text()
    assert r"M (n=2) & -- & -- & 42.00 $\pm$ 2.83 & 81.50 $\pm$ 1.41 & 61.75 $\pm$ 2.12 \\" in tex
    assert ("Not built at scale \\texttt{small} (--): MNLI-m, QQP (no training set offline); avg is over the "
            "columns built.") in tex


def test_glue_cards_metric_and_mnli_matched(tmp_path):
    (tmp_path / "x.yaml").write_text(GLUE_PAPER)
    f = tmp_path / "c.json"
    f.write_text(json.dumps(glue_result(70.0, 90.0, 92.0, mnli=(91.0, 89.0))))
    render_table(str(tmp_path / "x.yaml"), "c", json.dumps({"rows": {"0": [str(f)]}}), str(tmp_path / "c.tex"), "paper")
    csv = pd.read_csv(tmp_path / "c.csv").set_index("column")
    # CARDS: MNLI-m = matched accuracy 91, STS-B = Spearman 92; avg = (91 + 70 + 92) / 3 = 84.33
    assert (csv.loc["MNLI-m", "reproduced"], csv.loc["STS-B", "reproduced"], csv.loc["avg", "reproduced"]) == \
        (91.0, 92.0, 84.33)
    assert "Not built" not in (tmp_path / "c.tex").read_text()


def test_a_skipped_table_names_what_is_missing_and_reads_nothing(tmp_path):
    (tmp_path / "x.yaml").write_text(GLUE_PAPER)
    missing = ["spaCy pipeline zh_core_web_sm is not installed (config key spacy_model_zh)",
               "no training corpus at this scale (config key scales.demo.corpus_zh)"]
    render_table(str(tmp_path / "x.yaml"), "s", json.dumps({"rows": {}, "meta": {"skipped": missing}}),
                 str(tmp_path / "s.tex"), "demo")
    tex = (tmp_path / "s.tex").read_text()
    assert r"Not built at scale \texttt{demo}: spaCy pipeline zh\_core\_web\_sm is not installed" in tex
    assert r"scales.demo.corpus\_zh" in tex
    csv = pd.read_csv(tmp_path / "s.csv")
    assert csv.skipped[0] == "; ".join(missing) and csv.scale[0] == "demo"
