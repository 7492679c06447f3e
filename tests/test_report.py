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
    assert r"Built at scale \texttt{demo}, below paper scale (stand-in backbones: tiny-bert for bert-base-uncased" in tex


def test_share_table_and_paper_scale_caption(files):
    root, p = files
    rows = {"0": [str(p["a1"]), str(p["a2"])]}
    render_table(str(root / "x.yaml"), "t3", json.dumps({"rows": rows}), str(root / "t3.tex"), "paper")
    csv = pd.read_csv(root / "t3.csv")
    assert (csv.reproduced[0], csv.sd[0], csv["diff"][0]) == (62.0, 2.83, -0.61)
    assert "below paper scale" not in (root / "t3.tex").read_text()


def test_unknown_table_is_an_error_and_writes_nothing(files):
    root, _ = files
    with pytest.raises(ValueError, match="no table 't9'"):
        render_table(str(root / "x.yaml"), "t9", json.dumps({"rows": {}}), str(root / "t9.tex"), "demo")
    assert not (root / "t9.tex").exists()
