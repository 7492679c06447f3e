"""The leaderboards (papers/leaderboard.yaml, sentaug.report.leaderboard): t intervals and paired differences
against hand computations with the published t table, every row of a board on the same backbone and seeds, one
board per backbone, the papers' reported gains against the tables they come from, and the rendered numbers against
the result files."""
import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

import sentaug.config as sc
from sentaug.cli import main
from sentaug.report.leaderboard import board_progress, boards, load_leaderboard, render_leaderboard
from sentaug.report.pages import leaderboard_html, render_page
from sentaug.report.stats import paired_difference, t_interval, t_quantile
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]


def test_t_quantiles_are_the_published_table():
    # two-sided 95 %: t(0.975, dof) from any t table
    for dof, table in [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (29, 2.045)]:
        assert t_quantile(0.95, dof) == pytest.approx(table, abs=5e-4)
    assert t_quantile(0.99, 2) == pytest.approx(9.925, abs=5e-4)


def test_interval_by_hand():
    # mean 73; s^2 = (9 + 1 + 16) / 2 = 13; half-width = 4.303 * sqrt(13) / sqrt(3) = 8.957
    iv = t_interval([70.0, 72.0, 77.0])
    assert iv.mean == 73.0 and iv.n == 3
    assert iv.half_width == pytest.approx(4.30265 * math.sqrt(13) / math.sqrt(3), rel=1e-5)
    assert iv.half_width == pytest.approx(8.957, abs=1e-3)
    assert (iv.low, iv.high) == pytest.approx((73 - 8.957, 73 + 8.957), abs=1e-3)
    assert math.isnan(t_interval([5.0]).half_width)


def test_paired_difference_by_hand_is_narrower_than_unpaired():
    baseline = {1: 70.0, 2: 72.0, 3: 77.0}
    method = {1: 71.0, 2: 74.0, 3: 77.5}
    # per-seed differences 1, 2, 0.5: mean 7/6, s^2 = (1/36 + 25/36 + 16/36) / 2 = 7/12
    iv = paired_difference(method, baseline)
    assert iv.mean == pytest.approx(7 / 6)
    assert iv.half_width == pytest.approx(4.30265 * math.sqrt(7 / 12) / math.sqrt(3), rel=1e-5)   # 1.897
    assert iv.half_width < t_interval(list(method.values())).half_width / 4
    # only the seeds both sides have are paired
    assert paired_difference({1: 71.0, 2: 74.0, 9: 0.0}, baseline).n == 2


LEADERBOARD = """
title: "Test board"
backbones: [roberta-base, bert-base-uncased]
baseline: simcse
seeds: {demo: [1, 2, 3], small: [1, 2, 3], paper: [42, 43, 44]}
columns:
  - {label: "STS avg", metric: sts.avg}
  - {label: "Transfer avg", metric: transfer.avg}
rows:
  - {label: "SimCSE", method: simcse}
  - {label: "SDA", method: sda_pi, reported: {roberta-base: {sts.avg: 1.33}, bert-base-uncased: {sts.avg: 1.10}}}
references:
  - {label: "No training (CLS)", pooler: cls_before_pooler}
"""


@pytest.fixture()
def cfg(cfg, tmp_path):
    """The shared configuration with the test board (LEADERBOARD) and no paper."""
    config = cfg
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "leaderboard.yaml").write_text(LEADERBOARD)
    return {**config, "papers_dir": str(tmp_path / "papers"), "papers": [], "scale": "demo"}


def test_every_row_trains_on_the_same_backbone_and_the_boards_seeds(cfg, tmp_path):
    wf = Workflow(cfg, results="R")
    assert wf.leaderboards == {"leaderboard": "roberta-base", "leaderboard-bert-base-uncased": "bert-base-uncased"}
    rows = wf.leaderboard_points("roberta-base")
    assert [r["method"] for r in rows] == ["simcse", "sda_pi", None]
    for r in rows[:2]:
        assert r["seeds"] == [1, 2, 3]
        assert r["cells"]["sts.avg"]["files"] == [f"R/eval/demo/shared/tiny-roberta/{r['method']}/seed{s}/sts.json"
                                                  for s in (1, 2, 3)]
        assert r["train"][2] == f"R/runs/demo/shared/tiny-roberta/{r['method']}/seed3/train_summary.json"
    # the reference row: the same backbone untrained, one file per column, nothing to train
    untrained = rows[2]["cells"]
    assert untrained["sts.avg"]["files"] == ["R/eval/pretrained/demo/tiny-roberta/cls_before_pooler.json"]
    assert untrained["transfer.avg"]["files"] == ["R/eval/pretrained/demo/tiny-roberta/transfer/cls_before_pooler.json"]
    assert rows[2]["runs"] == rows[2]["train"] == []
    assert set(wf.leaderboard_targets("roberta-base")) >= {*untrained["sts.avg"]["files"],
                                                           *untrained["transfer.avg"]["files"]}
    # what its caption and report page say: its own stand-in and seeds (the demo scale's tables have one seed)
    assert wf.leaderboard_meta("bert-base-uncased")["stand_ins"] == {"bert-base-uncased": "tiny-bert"}
    assert (wf.leaderboard_meta("bert-base-uncased")["seeds"], wf.scale_meta()["seeds"]) == (3, 1)
    # the second board: the same rows and seeds on bert-base-uncased's stand-in
    bert = wf.leaderboard_points("bert-base-uncased")
    assert [r["method"] for r in bert] == ["simcse", "sda_pi", None]
    assert bert[1]["runs"] == [f"R/runs/demo/shared/tiny-bert/sda_pi/seed{s}" for s in (1, 2, 3)]
    assert bert[2]["cells"]["sts.avg"]["files"] == ["R/eval/pretrained/demo/tiny-bert/cls_before_pooler.json"]
    assert wf.leaderboard_outputs() == [f"R/{d}/{b}.{e}" for b in ("leaderboard", "leaderboard-bert-base-uncased")
                                        for d, es in (("tables", ("tex", "csv", "md")), ("figures", ("pdf", "png")))
                                        for e in es]
    # at paper scale the board's runs are its own (no paper's recipe): SimCSE's per-backbone recipe
    paper = Workflow({**cfg, "scale": "paper"}, results="R")
    assert paper.leaderboard_points("roberta-base")[1]["runs"][0] == \
        "R/runs/paper/leaderboard/roberta-base/sda_pi/seed42"
    spec = paper.specs.run_spec("leaderboard", "roberta-base", "sda_pi", 42)
    assert (spec["batch_size"], spec["learning_rate"]) == (512, 1.0e-5)


def test_the_real_boards_declare_three_seeds_and_one_backbone_each(shipped_config):
    config = shipped_config
    board = load_leaderboard(config)
    assert all(len(board["seeds"][s]) >= 3 for s in config["scales"])
    assert boards(board) == {"leaderboard": "roberta-base", "leaderboard-bert-base-uncased": "bert-base-uncased"}
    wf = Workflow({**config, "scale": "small"}, results="R")
    for backbone, stand_in in (("roberta-base", "tiny-roberta-bpe"), ("bert-base-uncased", "minilm")):
        rows = wf.leaderboard_points(backbone)
        trained, untrained = [r for r in rows if r["runs"]], [r for r in rows if not r["runs"]]
        assert {r["runs"][0].split("/")[4] for r in trained} == {stand_in}
        assert {r["cells"]["sts.avg"]["files"][0].split("/")[4] for r in untrained} == {stand_in}
    # SimCSE's evaluation pooler and VaSCL's: each trained row has its untrained counterpart
    assert {r["pooler"] for r in untrained} == {"cls_before_pooler", "avg"}
    assert {"simcse", "sda_pi", "cards", "vascl", "augcse", "sda_pi_retrieval"} <= {r["method"] for r in rows}
    assert [c["metric"].split(".")[0] for c in board["columns"]] == ["sts", "transfer", "clustering", "intent"]


def _avg(table: dict, label: str, column: str = "avg", backbone: str = "roberta-base") -> float:
    row = next(r for r in sc.iter_rows(table) if r["label"] == label and r.get("backbone", "roberta-base") ==
               backbone)
    return row["paper"][table["columns"].index(column)]


def test_reported_gains_are_the_papers_own_table_differences(shipped_config):
    config = shipped_config
    board = {r["method"]: r.get("reported") or {} for r in load_leaderboard(config)["rows"]}
    roberta = {m: gains.get("roberta-base", {}) for m, gains in board.items()}
    bert = {m: gains["bert-base-uncased"] for m, gains in board.items() if "bert-base-uncased" in gains}
    papers = {p: sc.load_paper(config, p) for p in config["papers"]}
    sda, cards, vascl, augcse = (papers[p]["tables"] for p in ("sda", "cards", "vascl", "augcse"))
    assert roberta["sda_pi"]["sts.avg"] == pytest.approx(
        _avg(sda["table4"], "+Punctuation Insertion") - _avg(sda["table4"], "SimCSE-RoBERTa-base"), abs=5e-3)
    assert roberta["cards"]["sts.avg"] == pytest.approx(
        _avg(cards["table3"], "CARDS") - _avg(cards["table3"], "SimCSE (ours)"), abs=5e-3)
    assert roberta["vascl"]["sts.avg"] == pytest.approx(
        _avg(vascl["table1"], "VaSCL-base") - _avg(vascl["table1"], "SimCSE-base"), abs=5e-3)
    assert roberta["vascl"]["clustering.avg"] == pytest.approx(
        _avg(vascl["table2"], "VaSCL-base") - _avg(vascl["table2"], "SimCSE-base"), abs=5e-3)
    shots = [f"{d}_10shot" for d in ("SNIPS", "BANKING77", "CLINC150", "HWU64")]
    intent = sum(_avg(vascl["table3"], "VaSCL", c) - _avg(vascl["table3"], "SimCSE", c) for c in shots) / 4
    assert roberta["vascl"]["intent.avg_10shot"] == pytest.approx(intent, abs=5e-4)
    assert roberta["augcse"]["sts.avg"] == pytest.approx(
        _avg(augcse["table4"], "AugCSE-RoBERTa-base") - _avg(augcse["table4"], "Unsupervised SimCSE-RoBERTa-base"),
        abs=5e-3)
    assert roberta["augcse"]["transfer.avg"] == pytest.approx(
        _avg(augcse["table5"], "AugCSE-RoBERTa-base") - _avg(augcse["table5"], "SimCSE-RoBERTa-base"), abs=5e-3)
    # BERT-base: SDA and AugCSE train it; CARDS and VaSCL declare no BERT-base row, so their board has no gain
    b = "bert-base-uncased"
    assert set(bert) == {"sda_pi", "augcse"}
    assert not any(r.get("backbone") == b for t in (cards, vascl) for table in t.values() for r in sc.iter_rows(table))
    assert bert["sda_pi"]["sts.avg"] == pytest.approx(
        _avg(sda["table4"], "+Punctuation Insertion", backbone=b) - _avg(sda["table4"], "SimCSE-BERT-base", backbone=b),
        abs=5e-3)
    assert bert["augcse"]["sts.avg"] == pytest.approx(
        _avg(augcse["table4"], "AugCSE-BERT-base", backbone=b)
        - _avg(augcse["table4"], "Unsupervised SimCSE-BERT-base", backbone=b), abs=5e-3)
    assert bert["augcse"]["transfer.avg"] == pytest.approx(
        _avg(augcse["table5"], "AugCSE-BERT-base", backbone=b) - _avg(augcse["table5"], "SimCSE-BERT-base", backbone=b),
        abs=5e-3)


@pytest.mark.parametrize("edit,message", [
    ({"seeds": {"demo": [1, 2], "small": [1, 2, 3], "paper": [1, 2, 3]}}, "seeds.demo: .* at least 3 distinct"),
    ({"rows": [{"label": "X", "method": "nosuch"}]}, "row 'X': unknown method 'nosuch'"),
    ({"baseline": "cards"}, "baseline: 'cards' is not the method of any row"),
    ({"rows": [{"label": "S", "method": "simcse", "reported": {"roberta-base": {"glue.avg": 1}}}]},
     "reported.roberta-base: 'glue.avg' is not a column"),
    ({"rows": [{"label": "S", "method": "simcse", "reported": {"sts.avg": 1}}]},
     "reported: 'sts.avg' is not one of the board's backbones"),
    ({"backbones": ["roberta-base", "roberta-base"]}, "backbones: a list of distinct backbones"),
    ({"backbones": ["gpt-7"]}, "backbones: unknown backbone 'gpt-7'"),
    ({"references": [{"label": "SimCSE", "pooler": "avg"}]}, "label 'SimCSE' names two rows"),
    ({"references": [{"label": "Untrained"}]}, "references: .* needs a label and a pooler"),
])
def test_bad_boards_name_the_key(cfg, tmp_path, edit, message):
    board = {**yaml.safe_load(LEADERBOARD), **edit}
    (tmp_path / "papers" / "leaderboard.yaml").write_text(yaml.safe_dump(board))
    with pytest.raises(sc.ConfigError, match=message):
        load_leaderboard(cfg)


def test_a_board_in_the_one_backbone_form_says_how_to_write_it(cfg, tmp_path):
    board = {k: v for k, v in yaml.safe_load(LEADERBOARD).items() if k != "backbones"}
    (tmp_path / "papers" / "leaderboard.yaml").write_text(yaml.safe_dump({**board, "backbone": "roberta-base"}))
    with pytest.raises(sc.ConfigError, match=r"'backbone' is now 'backbones'.*backbones: \[roberta-base\]"):
        load_leaderboard(cfg)


STS = {"simcse": [70.0, 72.0, 77.0], "sda_pi": [71.0, 74.0, 77.5], None: [80.0]}   # None: the untrained backbone
TRANSFER = {"simcse": [80.0, 80.0, 80.0], "sda_pi": [81.0, 82.0, 83.0], None: [79.0]}
SECONDS = {"simcse": [10.0, 12.0, 20.0], "sda_pi": [11.0, 11.0, 11.0], None: []}   # the untrained row trains nothing


def _write_results(rows: list[dict], transfer: dict = TRANSFER) -> None:
    """The result files of a board's rows: `{"avg": v}` per metric and seed, and each run's training time."""
    for r in rows:
        for metric, values in (("sts.avg", STS), ("transfer.avg", transfer)):
            for f, v in zip(r["cells"][metric]["files"], values[r["method"]]):
                Path(f).parent.mkdir(parents=True, exist_ok=True)
                Path(f).write_text(json.dumps({"avg": v}))
        for f, v in zip(r["train"], SECONDS[r["method"]]):
            Path(f).parent.mkdir(parents=True, exist_ok=True)
            Path(f).write_text(json.dumps({"train_seconds": v}))


def test_rendered_board_is_the_hand_computed_statistics_of_the_result_files(cfg, tmp_path):
    wf = Workflow(cfg, results=str(tmp_path / "R"))
    rows = wf.leaderboard_points("bert-base-uncased")
    _write_results(rows)
    out = tmp_path / "tables" / "leaderboard-bert-base-uncased.tex"
    render_leaderboard(str(tmp_path / "papers" / "leaderboard.yaml"), "leaderboard-bert-base-uncased",
                       json.dumps({"rows": rows, "meta": {"stand_ins": {"bert-base-uncased": "tiny-bert"}}}),
                       str(out), str(tmp_path / "figures" / "leaderboard-bert-base-uncased.pdf"), "demo")
    csv = pd.read_csv(out.with_suffix(".csv"))
    cell = csv[(csv.method == "sda_pi") & (csv.metric == "sts.avg")].iloc[0]
    t2 = 4.302653
    assert cell["mean"] == pytest.approx(74.1667, abs=1e-4)
    # deviations -19/6, -1/6, 20/6: s^2 = (361 + 1 + 400) / 36 / 2 = 127 / 12
    assert cell["ci_half_width"] == pytest.approx(t2 * math.sqrt(127 / 12) / math.sqrt(3), abs=1e-4)
    assert cell["diff"] == pytest.approx(7 / 6, abs=1e-4)
    assert cell["diff_ci_half_width"] == pytest.approx(t2 * math.sqrt(7 / 12) / math.sqrt(3), abs=1e-4)
    # the gain SDA reports for this board's backbone (BERT-base), not for the other's
    assert cell["reported_gain"] == 1.10 and cell["values"] == "71.0000 74.0000 77.5000"
    assert set(csv.backbone) == {"bert-base-uncased"}
    # SimCSE's transfer never varies: a zero-width interval; SDA's difference 1, 2, 3: mean 2, s = 1
    flat = csv[(csv.method == "simcse") & (csv.metric == "transfer.avg")].iloc[0]
    assert flat["ci_half_width"] == 0.0 and pd.isna(flat["diff"])
    gain = csv[(csv.method == "sda_pi") & (csv.metric == "transfer.avg")].iloc[0]
    assert gain["diff"] == 2.0 and gain["diff_ci_half_width"] == pytest.approx(t2 / math.sqrt(3), abs=1e-4)
    time = csv[(csv.method == "simcse") & (csv.metric == "train.train_seconds")].iloc[0]
    # 10, 12, 20 s: the slow run moves the mean to 14 but leaves the median at 12; the cell shows the median and
    # the range, the CSV keeps the mean and its interval too (deviations -4, -2, 6: s^2 = 56 / 2 = 28)
    assert (time["median"], time["min"], time["max"]) == (12.0, 10.0, 20.0)
    assert time["mean"] == 14.0 and time["ci_half_width"] == pytest.approx(t2 * math.sqrt(28 / 3), abs=1e-4)
    # untrained: 80 - (70, 72, 77) = 10, 8, 3: mean 7 with SimCSE's own interval (s^2 = 13)
    untrained = csv[(csv.row == "No training (CLS)") & (csv.metric == "sts.avg")].iloc[0]
    assert untrained["mean"] == 80.0 and pd.isna(untrained["ci_half_width"]) and untrained["reference"]
    assert untrained["diff"] == 7.0 and untrained["diff_ci_half_width"] == pytest.approx(8.957, abs=1e-3)
    assert csv[(csv.row == "No training (CLS)") & (csv.metric == "transfer.avg")].iloc[0]["diff"] == -1.0
    md = out.with_suffix(".md").read_text()
    assert "| SDA | 74.17 ± 8.08<br>Δ +1.17 ± 1.90 (paper +1.10) |" in md
    assert "Backbone tiny-bert (stand-in for bert-base-uncased)" in md
    assert "| No training (CLS) | 80.00<br>Δ +7.00 ± 8.96 | 79.00<br>Δ -1.00 ± 0.00 | -- |" in md
    assert "| SimCSE | 73.00 ± 8.96 | 80.00 ± 0.00 | 12.0 (10.0–20.0) |" in md
    # the report page renders the records read back from the CSV, where a missing Δ or gain is NaN: blank
    html = leaderboard_html(csv.where(csv.notna(), None).to_dict("records"))
    # SimCSE STS 70, 72, 77: mean 73, s^2 = (9 + 1 + 16) / 2 = 13; its own row has no Δ
    assert "nan" not in html.lower() and "<td>SimCSE</td><td>73.00 ± 8.96</td>" in html
    assert (tmp_path / "figures" / "leaderboard-bert-base-uncased.png").read_bytes()[:4] == b"\x89PNG"
    # its report page: headed by the board's backbone, the caption the renderer wrote, the same table
    page = tmp_path / "report" / "leaderboard-bert-base-uncased.html"
    render_page("leaderboard", "leaderboard-bert-base-uncased", str(page), "demo",
                json.dumps({"results": [], "meta": {"short": "Leaderboard",
                                                    "stand_ins": {"bert-base-uncased": "tiny-bert"}}}),
                spec_file=str(tmp_path / "papers" / "leaderboard.yaml"), csv=str(out.with_suffix(".csv")),
                png=str(tmp_path / "figures" / "leaderboard-bert-base-uncased.png"))
    text = page.read_text()
    assert "<h1>Leaderboard bert-base-uncased <span class='sub'>(leaderboard, scale demo)</span></h1>" in text
    assert "Backbone tiny-bert (stand-in for bert-base-uncased)" in text
    assert "<td>SimCSE</td><td>73.00 ± 8.96</td>" in text
    assert r"\pm" in out.read_text()


def test_progress_view_shows_complete_cells_and_counts_the_pending_ones(cfg, tmp_path, capsys):
    wf = Workflow(cfg, results=str(tmp_path / "R"))
    # SDA's transfer has seeds 1 and 2 written, the untrained backbone's none
    _write_results(wf.leaderboard_points("bert-base-uncased"), {**TRANSFER, "sda_pi": [81.0, 82.0], None: []})
    md = board_progress(wf, "leaderboard-bert-base-uncased")
    # 3 rows x 2 columns + the 2 trained rows' training times = 8 cells (the untrained row waits for no training
    # time); pending: SDA's transfer and the untrained transfer
    assert "In progress: 6 of 8 cells complete." in md
    # a complete cell and its Δ are the full board's (hand computation in the test above)
    assert "| SDA | 74.17 ± 8.08<br>Δ +1.17 ± 1.90 (paper +1.10) | pending 2/3 | 11.0 (11.0–11.0) |" in md
    assert "| SimCSE | 73.00 ± 8.96 | 80.00 ± 0.00 | 12.0 (10.0–20.0) |" in md
    assert "| No training (CLS) | 80.00<br>Δ +7.00 ± 8.96 | pending 0/1 | -- |" in md
    # the other board is a different backbone's: none of its result files exist, none of its cells is complete
    assert "In progress: 0 of 8 cells complete." in board_progress(wf, "leaderboard")
    with pytest.raises(sc.ConfigError) as unknown:
        board_progress(wf, "leaderboard-bert")
    # difflib's ratio 2M/T: 'leaderboard' 2 * 11 / 27 = 0.81, 'leaderboard-bert-base-uncased' 2 * 16 / 45 = 0.71
    assert str(unknown.value) == ("unknown board 'leaderboard-bert' (did you mean 'leaderboard'?); "
                                  "valid: leaderboard, leaderboard-bert-base-uncased")
    # the command line reads the config file and prints the same view
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    main(["report", "leaderboard-progress", "--board", "leaderboard-bert-base-uncased", "--scale", "demo",
          "--config", str(tmp_path / "config.yaml"), "--results", str(tmp_path / "R")])
    assert capsys.readouterr().out == md


def test_a_scale_the_board_lists_no_seeds_for_has_no_board_and_says_so(cfg):
    """The board above lists demo, small and paper seeds; the config has the gpu check scale too."""
    assert "gpu" in cfg["scales"] and load_leaderboard(cfg)["seeds"]["paper"] == [42, 43, 44]
    with pytest.raises(sc.ConfigError, match="'Test board' has no seeds for scale 'gpu' .*add at least 3"):
        Workflow({**cfg, "scale": "gpu"}, results="R").leaderboard_points("roberta-base")
    bad = (Path(cfg["papers_dir"]) / "leaderboard.yaml")
    bad.write_text(LEADERBOARD.replace("paper: [42, 43, 44]", "papr: [42, 43, 44]"))
    with pytest.raises(sc.ConfigError, match="seeds.papr: unknown scale"):
        load_leaderboard(cfg)
