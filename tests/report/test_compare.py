"""Methods, comparisons and rows from the user's own config file (examples/negation/negation.yaml, merged over
config.yaml as `snakemake --configfile` merges it): the comparison's rows, runs and cells (sentaug.report.compare),
and the rows it adds to the leaderboards and to a paper table, marked as not the paper's."""
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from snakemake.utils import update_config

import sentaug.config as sc
from sentaug.report.compare import comparison_spec, render_comparison
from sentaug.report.leaderboard import load_leaderboard
from sentaug.report.tables import render_table
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "negation" / "negation.yaml"
OURS = "SimCSE + negation negatives †"
T2 = 4.302653        # t(0.975, 2): three seeds


def with_example(edit=None) -> dict:
    """config.yaml extended by the example's file (and `edit`), as Snakemake extends it; demo scale."""
    config = sc.load_yaml(ROOT / "config.yaml")
    update_config(config, sc.load_yaml(EXAMPLE))
    update_config(config, edit or {})
    return {**config, "papers_dir": str(ROOT / "papers"), "scale": "demo"}


def test_the_comparison_puts_the_configurations_rows_beside_simcse_and_the_five_main_methods():
    config = with_example()
    spec = comparison_spec(config, load_leaderboard(config), "negation")
    assert [(r["label"], r["method"]) for r in spec["rows"]] == [
        ("SimCSE", "simcse"), ("SDA (punctuation insertion)", "sda_pi"), ("CARDS", "cards"), ("VaSCL", "vascl"),
        ("AugCSE", "augcse"), ("CLEAR (del-span + reorder)", "clear_del_span_reorder"), (OURS, "simcse_negation")]
    assert spec["rows"][-1]["added"] and not any(r.get("added") for r in spec["rows"][:-1])
    assert [c["metric"] for c in spec["columns"]] == ["sts.avg", "transfer.avg", "clustering.avg", "intent.avg_10shot"]
    assert (spec["backbones"], spec["baseline"], spec["seeds"]["demo"]) == (["bert-base-uncased"], "simcse", [1, 2, 3])
    wf = Workflow(config, results="R")
    ours = next(r for r in wf.comparison_points("negation") if r["method"] == "simcse_negation")
    # the leaderboard's runs: shared with the tables below paper scale, on the board backbone's stand-in
    assert ours["cells"]["sts.avg"]["files"] == [f"R/eval/demo/shared/tiny-bert/simcse_negation/seed{s}/sts.json"
                                                 for s in (1, 2, 3)]
    assert ours["runs"] == [f"R/runs/demo/shared/tiny-bert/simcse_negation/seed{s}" for s in (1, 2, 3)]
    assert wf.comparison_outputs() == [f"R/tables/compare/negation.{ext}" for ext in ("tex", "csv", "md")]
    spec = wf.specs.run_spec("shared", "tiny-bert", "simcse_negation", 1)       # the method as the trainer gets it
    assert spec["negatives"] == {"source": "cache", "augmentation": "negation", "changed_only": True,
                                 "settings": {"op": "negation"}}
    assert sc.method_caches(spec) == [("negation", 1)]


@pytest.mark.parametrize("edit, message", [
    ({"papers": ["sda", "bert"]}, r"comparisons\.negation\.papers': 'bert' has no main method on the leaderboard "
                                  r"\(papers: sda, cards, vascl, augcse, clear\)"),
    ({"columns": ["glue.avg"]}, r"comparisons\.negation\.columns': 'glue\.avg' is not a leaderboard column"),
    ({"rows": [{"label": "Mine", "method": "nosuch"}]}, r"comparisons\.negation\.rows': row 'Mine †': unknown method 'nosuch'"),
    ({"rows": [{"label": "CARDS", "method": "simcse_negation"}, {"label": "CARDS", "method": "simcse"}]},
     r"comparisons\.negation\.rows': label 'CARDS †' names two rows"),
    ({"seeds": {"demo": [1, 2]}}, r"comparisons\.negation\.seeds\.demo': a board needs at least 3 distinct seeds"),
    ({"backbone": "gpt-7"}, r"comparisons\.negation\.backbone': unknown backbone 'gpt-7'"),
])
def test_a_bad_comparison_names_its_key(edit, message):
    config = with_example({"comparisons": {"negation": edit}})
    with pytest.raises(sc.ConfigError, match=message):
        comparison_spec(config, load_leaderboard(config), "negation")


def test_the_comparisons_cells_are_the_hand_computed_statistics_of_its_result_files(tmp_path):
    config = with_example({"comparisons": {"negation": {"papers": ["sda"], "columns": ["sts.avg"]}}})
    wf = Workflow(config, results=str(tmp_path / "R"))
    rows = wf.comparison_points("negation")
    sts = {"simcse": [70.0, 72.0, 77.0], "sda_pi": [71.0, 74.0, 77.5], "simcse_negation": [69.0, 73.0, 80.0]}
    for row in rows:
        for f, v in zip(row["cells"]["sts.avg"]["files"], sts[row["method"]]):
            Path(f).parent.mkdir(parents=True, exist_ok=True)
            Path(f).write_text(json.dumps({"avg": v}))
        for f, v in zip(row["train"], (10.0, 30.0, 20.0)):
            Path(f).parent.mkdir(parents=True, exist_ok=True)
            Path(f).write_text(json.dumps({"train_seconds": v}))
    out = tmp_path / "compare" / "negation.tex"
    render_comparison("negation", json.dumps({"spec": wf.comparisons["negation"], "rows": rows,
                                              "meta": wf.comparison_meta("negation")}), str(out), "demo")
    csv = pd.read_csv(out.with_suffix(".csv"))
    assert list(dict.fromkeys(csv.row)) == ["SimCSE", "SDA (punctuation insertion)", OURS]
    ours = csv[(csv.method == "simcse_negation") & (csv.metric == "sts.avg")].iloc[0]
    # 69, 73, 80: mean 74, deviations -5, -1, 6: s^2 = 62 / 2 = 31
    assert ours["mean"] == 74.0 and ours["ci_half_width"] == pytest.approx(T2 * math.sqrt(31 / 3), abs=1e-4)
    # paired with SimCSE's 70, 72, 77: -1, 1, 3: mean 1, s^2 = 4
    assert ours["diff"] == 1.0 and ours["diff_ci_half_width"] == pytest.approx(T2 * 2 / math.sqrt(3), abs=1e-4)
    assert pd.isna(ours["reported_gain"])               # no paper reports it
    sda = csv[(csv.method == "sda_pi") & (csv.metric == "sts.avg")].iloc[0]
    assert sda["diff"] == pytest.approx(7 / 6, abs=1e-4) and sda["reported_gain"] == 1.10   # SDA's BERT-base gain
    md = out.with_suffix(".md").read_text()
    assert f"| {OURS} | 74.00 ± 13.83<br>Δ +1.00 ± 4.97 | 20.0 (10.0–30.0) |" in md
    assert "Backbone tiny-bert (stand-in for bert-base-uncased)" in md
    assert "† a row added by the configuration (config key comparisons.negation.rows), not from the paper." in md
    tex = out.read_text()
    assert r"SimCSE + negation negatives $^\dagger$ & 74.00 $\pm$ 13.83" in tex and r"\label{tab:compare-negation}" in tex


def test_the_same_file_adds_its_method_to_the_leaderboards_and_to_sda_table4_marked(tmp_path):
    config = with_example()
    wf = Workflow(config, results="R")
    board = wf.leaderboard_points("bert-base-uncased")
    ours = [r for r in board if r.get("added")]
    assert [(r["label"], r["method"]) for r in ours] == [(OURS, "simcse_negation")]
    assert ours[0]["cells"]["sts.avg"]["files"][0] == "R/eval/demo/shared/tiny-bert/simcse_negation/seed1/sts.json"
    assert [r["label"] for r in board[:-3]] == [r["label"] for r in sc.load_yaml(ROOT / "papers/leaderboard.yaml")
                                                ["rows"]]            # the board's own rows first, as declared
    # SDA Table 4: last row of its BERT block (rows 0-4 are the paper's), the RoBERTa block after it
    inputs = wf.table_inputs("sda", "table4")
    assert inputs["5"] == ["R/eval/demo/shared/tiny-bert/simcse_negation/seed1/sts.json"]
    assert inputs["6"] == ["R/eval/pretrained/demo/tiny-roberta/avg_first_last.json"] and len(inputs) == 11
    # rendered from result files (the demo's one seed): reproduced like every row, no paper numbers and no Δ
    files = {}
    for key, entries in inputs.items():
        for f in entries:
            columns = sc.load_yaml(ROOT / "papers/sda.yaml")["tables"]["table4"]["columns"]
            files[f] = {c: 50.0 + int(key) for c in columns}
            Path(tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
            Path(tmp_path / f).write_text(json.dumps(files[f]))
    out = tmp_path / "table4.tex"
    rows = {k: [str(tmp_path / f) for f in v] for k, v in inputs.items()}
    render_table(str(ROOT / "papers/sda.yaml"), "table4", json.dumps({"rows": rows,
                                                                      "meta": wf.table_meta("sda", "table4")}),
                 str(out), "demo")
    csv = pd.read_csv(out.with_suffix(".csv"))
    added = csv[csv.added]
    assert set(added.row) == {"+Negation as hard negative †"} and set(added.block) == {"BERT models"}
    assert set(added.reproduced) == {55.0} and added.paper.isna().all() and added["diff"].isna().all()
    assert not csv[~csv.added].paper.isna().any()
    tex = out.read_text().splitlines()
    line = next(i for i, t in enumerate(tex) if t.startswith(r"+Negation as hard negative $^\dagger$ (n=1)"))
    assert tex[line + 1] == r"\midrule" and "RoBERTa" in tex[line + 2]    # no paper and Δ lines under it
    assert r"$^\dagger$ a row added by the configuration (config key add\_rows), not from the paper." in out.read_text()


@pytest.mark.parametrize("add_rows, message", [
    ({"sda/table4": [{"label": "x", "method": "simcse"}]},
     r"add_rows\.sda/table4': row 'x †' must name its block \(block: one of 'BERT models', 'RoBERTa models'\)"),
    ({"sda/table9": [{"label": "x", "method": "simcse"}]}, r"add_rows\.sda/table9': .*papers/sda\.yaml has no table 'table9'"),
    ({"bert/table1": [{"label": "x", "method": "simcse"}]}, r"add_rows\.bert/table1': not 'leaderboard' or "),
    ({"leaderboard": [{"label": "x", "method": "nosuch"}]}, r"add_rows\.leaderboard': row 'x †': unknown method"),
])
def test_rows_added_where_they_cannot_go_name_the_key(add_rows, message, cfg):
    config = cfg
    config.update(add_rows=add_rows)
    with pytest.raises(sc.ConfigError, match=message):
        sc.check_references(config)
        Workflow(config, results="R").leaderboard
