"""Paper tables as data (papers/<paper>.yaml): every declared table loads against the real config.yaml, its
numbers are the papers' (spot checks read off ../shared/papers/*.md by hand, each table's Avg column against
the mean of its task columns, numbers one paper quotes from another against that other's table), the papers'
training recipes resolve as their texts say, suite tables render from suite JSON keys, and a dry run resolves
each new table's result files."""
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import sentaug.config as sc
from sentaug.report.tables import render_table

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cfg():
    config = sc.load_yaml(ROOT / "config.yaml")
    config["papers_dir"] = str(ROOT / "papers")
    config["scales"]["demo"]["seeds"] = [1, 2]   # two seeds: every input list shows one path per seed
    return config


@pytest.fixture(scope="module")
def papers(cfg):
    return {name: sc.load_paper(cfg, name) for name in cfg["papers"]}


def suite_keys(kind: str) -> set[str]:
    """The keys each evaluation writes to its JSON (read from the evaluation modules, not from the tables)."""
    if kind == "sts":
        return set(sc.STS_COLUMNS) | {"STSBenchmark_dev", "SICKRelatedness_dev"}
    if kind == "clustering":
        from sentaug.evaluate.clustering import PAPER_COLUMNS

        return {*PAPER_COLUMNS, "avg"}
    if kind == "intent":
        from sentaug.data.intent import DATASETS
        from sentaug.evaluate.intent import KS

        return {f"{d}_{k}shot" for d in DATASETS for k in KS} | {f"avg_{k}shot" for k in KS}
    if kind == "transfer":
        from sentaug.data.transfer import TASKS

        return {*TASKS, "avg"}
    if kind == "cnsd":
        return {"CNSD", "CNSD_dev"}
    if kind in ("glue", "glue_cards"):
        from sentaug.evaluate.glue import TASKS
        from sentaug.report.kinds import GLUE_COLUMN_TASKS

        return {*TASKS, *GLUE_COLUMN_TASKS, "avg"}
    if kind == "cola":
        return {"accuracy", "majority_baseline"}
    if kind == "nli":
        return {"anli.accuracy", "anli.accuracy_code"}
    if kind == "train":
        return {"best_stsb_dev", "train_seconds"}
    if kind == "nli_isomorphism":
        from sentaug.evaluate.nli import ISO_PAIRS

        return set(ISO_PAIRS)
    raise AssertionError(f"no key list for kind {kind}")


def find_row(paper: dict, table: str, label: str, block: str | None = None) -> dict:
    rows = [r for r in sc.iter_rows(paper["tables"][table]) if r["label"] == label
            and (block is None or r.get("block") == block)]
    assert len(rows) == 1, f"{table}: {len(rows)} rows labelled {label!r}"
    return rows[0]


def cell(paper: dict, table: str, label: str, column: str, block: str | None = None):
    row = find_row(paper, table, label, block)
    return dict(zip(paper["tables"][table]["columns"], row["paper"]))[column]


def test_all_five_papers_are_expanded(cfg):
    assert set(cfg["papers"]) >= {"sda", "cards", "vascl", "augcse", "clear"}


@pytest.mark.parametrize("name", ["sda", "cards", "vascl", "augcse", "clear"])
def test_rows_match_columns_methods_and_poolers_exist(cfg, papers, name):
    from sentaug.models.poolers import POOLERS

    for tname, table in papers[name]["tables"].items():
        rows = list(sc.iter_rows(table))
        assert rows, f"{name} {tname} has no rows"
        for row in rows:
            assert len(row["paper"]) == len(table["columns"]), (name, tname, row["label"])
            sources = [k for k in ("method", "pretrained", "augmentation", "effect", "split", "dataset") if k in row]
            assert len(sources) == 1, (name, tname, row["label"], sources)
            if "method" in row:    # a declared method or a variant of one (method~key.path=value)
                sc.method_config(cfg, row["method"])
            for pooler in (row.get("pretrained"), row.get("pooler")):
                assert pooler is None or pooler in POOLERS, (name, tname, row["label"], pooler)
            if "backbone" in row:
                assert row["backbone"] in cfg["backbones"]
        if table["kind"] in ("sts", "clustering", "intent", "transfer", "cnsd", "glue", "glue_cards",
                             "nli_isomorphism"):
            missing = set(table["columns"]) - suite_keys(table["kind"])
            assert not missing, f"{name} {tname}: columns {missing} are not keys the {table['kind']} suite writes"
        if table["kind"] == "metrics":     # columns <result>.<key>: a key that result writes
            for column in table["columns"]:
                result, key = column.split(".", 1)
                assert key in suite_keys(result), f"{name} {tname}: {key} is not a key {result} writes"


# Rows whose reported Avg is not the mean of the reported tasks, in the paper itself (checked by hand):
# SDA Table 4 BERT +DN: the seven values average 75.84, the paper prints 75.99; AugCSE Table 5 quotes
# Sentence-BERT's "Avg. BERT embeddings" Avg 84.94 where its seven values average 84.95.
# CARDS Table 6: every row's Avg is 0.3 below the mean of its eight cells (91.0/91.49/91.96 printed as
# 90.7/91.2/91.7).
PAPER_INCONSISTENT = {("sda", "table4", "BERT models", "+Double Negation"),
                      ("augcse", "table5", "BERT-base", "Avg. BERT embeddings"),
                      *(("cards", "table6", "DeBERTa-1.5B", r) for r in ("Baseline", "R-drop", "R-drop + switch-case"))}


def test_reported_avg_is_the_mean_of_the_reported_tasks(papers):
    """A transcription slip (a swapped or mistyped digit) moves the mean of a row away from its Avg; the
    tolerance is one unit of the table's last printed digit (rounded inputs, rounded average)."""
    checked, inconsistent = 0, set()
    for name, paper in papers.items():
        for tname, table in paper["tables"].items():
            if "avg" not in table["columns"] or len(table["columns"]) == 1:   # an Avg alone: nothing to check
                continue
            values = [v for row in sc.iter_rows(table) for v in row["paper"] if v is not None]
            unit = 0.1 if all(abs(v * 10 - round(v * 10)) < 1e-9 for v in values) else 0.01
            for row in sc.iter_rows(table):
                vals = dict(zip(table["columns"], row["paper"]))
                mean = statistics.fmean(v for c, v in vals.items() if c != "avg")
                key = (name, tname, row.get("block", ""), row["label"])
                if abs(mean - vals["avg"]) > unit + 1e-9:
                    inconsistent.add(key)
                checked += 1
    assert inconsistent == PAPER_INCONSISTENT
    assert checked >= 40


# Values read off the paper texts by hand: (paper, table, row label, column) -> reported number.
SPOT_CHECKS = [
    ("cards", "table3", "CARDS", "avg", 78.68),
    ("cards", "table3", "+switch-case", "STS12", 70.62),
    ("cards", "table3", "+retrieval", "SICKRelatedness", 69.26),
    ("cards", "table3", "SimCSE (ours)", "STSBenchmark", 81.00),
    ("vascl", "table1", "VaSCL-base", "SICKRelatedness", 71.23),   # VaSCL prints SICK-R before STS-B
    ("vascl", "table1", "VaSCL-base", "STSBenchmark", 80.23),
    ("vascl", "table1", "RoBERTa-base (mean pooling)", "avg", 58.12),
    ("vascl", "table2", "VaSCL-base", "StackOverflow", 73.60),
    ("vascl", "table2", "RoBERTa-base (mean pooling)", "GoogleNews-TS", 58.51),
    ("vascl", "table3", "VaSCL", "HWU64_20shot", 77.66),
    ("vascl", "table3", "SimCSE", "BANKING77_5shot", 67.48),
    ("augcse", "table4", "AugCSE-RoBERTa-base", "avg", 76.83),
    ("augcse", "table4", "AugCSE-BERT-base", "STS16", 79.61),
    ("augcse", "table6", "bool", "STSBenchmark_dev", 84.52),
    ("augcse", "table6", "no discriminator", "STSBenchmark_dev", 84.91),
    ("augcse", "table5", "AugCSE-BERT-base", "CR", 88.19),
    ("clear", "table2", "MLM+del-span+reorder-[CLS]", "STS13", 54.3),
    ("clear", "table2", "MLM+subs+del-word-mean", "SICKRelatedness", 73.6),   # CLEAR prints SICK-R first
    ("clear", "table2", "RoBERTa-base-[CLS]", "avg", 56.1),
    ("sda", "table5", "Roberta-base (last CLS)", "CNSD", 68.25),
    ("sda", "table5", "+Affirmative Auxilary", "CNSD", 71.94),
    ("sda", "table6", "None (Unsup-SimCSE)", "STSBenchmark_dev", 82.45),
    ("sda", "table6", "Crop 30%", "STSBenchmark_dev", 63.62),
    ("sda", "table6", "Word Deletion 20%", "STSBenchmark_dev", 72.20),
    ("sda", "table6", "Mask 15%", "STSBenchmark_dev", 62.21),
    ("sda", "table6", "Word Repetition", "STSBenchmark_dev", 84.09),
    ("sda", "table6", "Affirmative Auxilary", "STSBenchmark_dev", 84.99),
    ("sda", "table7", "Random Insertion", "avg", 76.22),
    ("cards", "table4", "Upper case ignored: training", "avg", 78.61),
    ("cards", "table4", "Upper case ignored: evaluation", "avg", 78.67),
    ("cards", "table4", "Upper case ignored: train. & eval.", "avg", 78.70),
    ("cards", "table5", "Substit.", "avg", 77.43),
    ("cards", "table5", "BPE-drop.", "avg", 76.74),
    ("cards", "table6", "Baseline", "CoLA", 72.0),
    ("cards", "table6", "R-drop + switch-case", "MRPC", 93.9),
    ("cards", "table6", "R-drop", "MNLI-m", 91.9),
    ("vascl", "table5", "RoBERTa", "ATIS_5shot", 45.42),
    ("vascl", "table5", "SimCSE", "ATIS_20shot", 61.45),
    ("vascl", "table5", "VaSCL", "ATIS_10shot", 46.80),
    ("clear", "table1", "RoBERTa-base", "CoLA", 56.1),
    ("clear", "table1", "MLM+del-word", "RTE", 79.4),
    ("clear", "table1", "MLM+subs+del-span", "CoLA", 63.3),
    ("clear", "table1", "MLM+del-span+reorder", "avg", 85.7),
    ("clear", "table3", "RoBERTa-base (MLM)", "MNLI-m", 80.4),
    ("clear", "table3", "Double MLM RoBERTa-base", "MRPC", 77.7),
    ("clear", "table3", "MLM+subs+del-word+reorder", "STS", 87.1),
    ("augcse", "table1", "RandomContextualWordAugmentation", "cola.accuracy", 78.14),
    ("augcse", "table1", "SentenceAdjectivesAntonymsSwitch", "nli.anli.accuracy", 58.63),
    ("augcse", "table1", "BERT-base", "nli.anli.accuracy", 53.80),
    ("augcse", "table1", "AntonymSubstitute", "transfer.avg", 79.93),
    ("augcse", "table2", "contradiction as pos, entailment as neg", "train.best_stsb_dev", 67.16),
    ("augcse", "table2", "no contradiction", "train.best_stsb_dev", 83.60),
    ("augcse", "table10", "lambda", "roberta-base", 1.0e-4),
    ("augcse", "table11", "learning rate", "roberta-base", 7.0e-6),
    ("augcse", "table12", "AugCSE-RoBERTa", "sts.avg", 75.54),
    ("augcse", "table13", "AugCSE-RoBERTa", "train", 132),
    ("augcse", "table14", "Supervised SimCSE (Sampled)", "train.best_stsb_dev", 83.82),
    ("augcse", "table14", "ANLI-SimCSE w/o negatives", "train.best_stsb_dev", 78.66),
]


@pytest.mark.parametrize("name,table,label,column,value", SPOT_CHECKS)
def test_spot_checks_against_the_paper_text(papers, name, table, label, column, value):
    assert cell(papers[name], table, label, column) == value


def test_augcse_tables_read_the_paper_blocks_and_markup(papers):
    """Cells of AugCSE's Tables 3, 12 and 15 that a row label alone does not pin (read off the text by hand)."""
    assert cell(papers["augcse"], "table15", "GD", "A-E", block="ANLI") == 51.7
    assert cell(papers["augcse"], "table15", "COND-HM", "E-C", block="ANLI") == 91.54
    assert cell(papers["augcse"], "table15", "SVG", "E-C", block="MNLI + SNLI (sample)") == 0.59
    assert find_row(papers["augcse"], "table12", "AugCSE-BERT")["paper_sd"] == [0.63, 0.29]
    # Table 3: the asterisked four, and the 16 bold or underlined augmentations
    t3 = papers["augcse"]["tables"]["table3"]
    rows = list(sc.iter_rows(t3))
    assert len(rows) == 26
    assert {r["augmentation"] for r in rows if r["paper"][0] == 1} == {
        "DiverseParaphrase", "TenseTransformation", "RandomSwap", "ContractionExpansions"}
    assert len([r for r in rows if r["paper"][3] == 1]) == 16
    assert find_row(papers["augcse"], "table3", "SentenceSubjectObjectSwitch")["block"] == "Meaning Alteration"


def test_block_rows_are_attached_to_the_right_backbone(papers):
    # AugCSE Table 5 "w/ MLM" exists in both blocks with different numbers (MRPC 78.07 BERT, 75.13 RoBERTa)
    assert cell(papers["augcse"], "table5", "w/ MLM", "MRPC", block="BERT-base") == 78.07
    assert cell(papers["augcse"], "table5", "w/ MLM", "MRPC", block="RoBERTa-base") == 75.13
    assert find_row(papers["augcse"], "table5", "w/ MLM", block="RoBERTa-base")["backbone"] == "roberta-base"


def test_numbers_quoted_across_papers_agree(papers):
    """AugCSE quotes SimCSE's published rows, as SDA does; CARDS quotes VaSCL-base in its own column order."""
    for label_aug, label_sda, block_aug, block_sda in [
            ("Unsupervised SimCSE-BERT-base", "SimCSE-BERT-base", "BERT-base", "BERT models"),
            ("Unsupervised SimCSE-RoBERTa-base", "SimCSE-RoBERTa-base", "RoBERTa-base", "RoBERTa models"),
            ("RoBERTa-base (first-last avg.)", "RoBERTa-base (first-last avg.)", "RoBERTa-base", "RoBERTa models")]:
        assert (find_row(papers["augcse"], "table4", label_aug, block_aug)["paper"]
                == find_row(papers["sda"], "table4", label_sda, block_sda)["paper"])
    # CARDS Table 3, "VaSCL [51]" (RoBERTa-base): STS12-16, STS-B, SICK-R, Avg
    cards_quote = dict(zip(["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"],
                           [69.08, 81.95, 74.64, 82.64, 80.57, 80.23, 71.23, 77.19]))
    vascl = papers["vascl"]["tables"]["table1"]
    assert dict(zip(vascl["columns"], find_row(papers["vascl"], "table1", "VaSCL-base")["paper"])) == cards_quote


def test_rows_one_table_repeats_from_another_agree(papers):
    """Tables that repeat rows of other tables (read off the texts): SDA Table 7's None/PI are Table 4's
    RoBERTa SimCSE/+PI averages; CARDS Table 5's Baseline/Default are Table 3's SimCSE (ours)/+switch-case
    averages (RoBERTa-base); VaSCL Table 5 is Table 3 plus ATIS."""
    assert cell(papers["sda"], "table7", "None (Unsup-SimCSE)", "avg") == \
        cell(papers["sda"], "table4", "SimCSE-RoBERTa-base", "avg", block="RoBERTa models") == 76.57
    assert cell(papers["sda"], "table7", "Punctuation Insertion", "avg") == \
        cell(papers["sda"], "table4", "+Punctuation Insertion", "avg", block="RoBERTa models") == 77.90
    assert cell(papers["cards"], "table5", "Baseline", "avg") == cell(papers["cards"], "table3", "SimCSE (ours)", "avg")
    assert cell(papers["cards"], "table5", "Default", "avg") == cell(papers["cards"], "table3", "+switch-case", "avg")
    t3, t5 = papers["vascl"]["tables"]["table3"], papers["vascl"]["tables"]["table5"]
    for label in ("RoBERTa", "SimCSE", "VaSCL"):
        label3 = "RoBERTa (mean pooling)" if label == "RoBERTa" else label
        five = dict(zip(t5["columns"], find_row(papers["vascl"], "table5", label)["paper"]))
        three = dict(zip(t3["columns"], find_row(papers["vascl"], "table3", label3)["paper"]))
        assert {k: five[k] for k in three} == three
    # the same runs: VaSCL Table 5 reads Table 3's suite JSON
    assert [r.get("method") for r in sc.iter_rows(t5)] == [r.get("method") for r in sc.iter_rows(t3)]


def test_recipes_resolve_as_the_papers_state(cfg, papers):
    spec = lambda paper, bb, method: sc.train_spec(cfg, papers[paper], bb, method, 42, scale="paper")  # noqa: E731
    # VaSCL appendix A: batch 1024, 5 epochs, STS-B dev every 500; SimCSE 3e-5, VaSCL 5e-4 head / 5e-6 backbone
    v, s = spec("vascl", "roberta-base", "vascl"), spec("vascl", "roberta-base", "simcse")
    assert (v["batch_size"], v["epochs"], v["eval_steps"], v["learning_rate"], v["head_learning_rate"]) == \
        (1024, 5, 500, 5.0e-6, 5.0e-4)
    assert (s["batch_size"], s["epochs"], s["learning_rate"]) == (1024, 5, 3.0e-5)
    # CARDS official settings for RoBERTa-base: lr 4e-5, batch 512; STS-B dev every 125 steps
    c = spec("cards", "roberta-base", "cards")
    assert (c["batch_size"], c["learning_rate"], c["eval_steps"]) == (512, 4.0e-5, 125)
    # AugCSE Table 10 / A.6: batch 128, lr 2e-5 (both backbones)
    for bb in ("bert-base-uncased", "roberta-base"):
        a = spec("augcse", bb, "augcse")
        assert (a["batch_size"], a["learning_rate"]) == (128, 2.0e-5)
    # CLEAR: weight decay 0.01 on top of SimCSE's RoBERTa-base 512 / 1e-5
    cl = spec("clear", "roberta-base", "clear_subs_del_word")
    assert (cl["batch_size"], cl["learning_rate"], cl["weight_decay"]) == (512, 1.0e-5, 0.01)
    # below paper scale the recipes are ignored: the demo scale's batch and VaSCL's own rate
    d = sc.train_spec(cfg, papers["vascl"], "roberta-base", "vascl", 1, scale="demo")
    assert (d["batch_size"], d["learning_rate"]) == (cfg["scales"]["demo"]["train"]["batch_size"], 5.0e-6)


def test_recipe_naming_an_unknown_method_is_an_error(cfg, tmp_path):
    (tmp_path / "x.yaml").write_text("recipes:\n  roberta-base: {batch_size: 8, methods: {vascl_typo: {}}}\n")
    with pytest.raises(sc.ConfigError, match="recipes.roberta-base.methods: unknown method 'vascl_typo'"):
        sc.load_paper({**cfg, "papers_dir": str(tmp_path)}, "x")


SUITE_PAPER = """
short: X
tables:
  t2:
    kind: clustering
    caption: "Clustering."
    columns: [AgNews, GoogleNews-TS, avg]
    blocks:
      - title: "RoBERTa-base"
        backbone: roberta-base
        rows:
          - {label: "VaSCL", method: vascl, paper: [67.46, null, 59.96]}
"""


def test_suite_table_reads_suite_keys(tmp_path):
    (tmp_path / "x.yaml").write_text(SUITE_PAPER)
    files = []
    for seed, payload in enumerate([{"AgNews": 60.0, "GoogleNews-TS": 50.0, "avg": 40.0, "details": {}},
                                    {"AgNews": 64.0, "GoogleNews-TS": 51.0, "avg": 44.0, "details": {}}]):
        files.append(tmp_path / f"s{seed}.json")
        files[-1].write_text(json.dumps(payload))
    inputs = json.dumps({"rows": {"0": [str(f) for f in files]}})
    render_table(str(tmp_path / "x.yaml"), "t2", inputs, str(tmp_path / "t2.tex"), "paper")
    import pandas as pd

    csv = pd.read_csv(tmp_path / "t2.csv").set_index("column")
    # mean(60, 64) = 62, sd = 4 / sqrt(2) = 2.83, diff = 62 - 67.46 = -5.46; null paper value -> no diff
    assert (csv.loc["AgNews", "reproduced"], csv.loc["AgNews", "sd"], csv.loc["AgNews", "diff"]) == (62.0, 2.83, -5.46)
    assert csv.loc["GoogleNews-TS", "reproduced"] == 50.5 and pd.isna(csv.loc["GoogleNews-TS", "diff"])
    assert r"\quad paper & 67.46 & -- & 59.96 \\" in (tmp_path / "t2.tex").read_text()


METRICS_PAPER = """
short: X
tables:
  t12:
    kind: metrics
    caption: "Mean and sd."
    columns: [sts.avg, nli.anli.accuracy, train.best_stsb_dev]
    headers: [STS, ANLI, STS-B dev]
    rows:
      - {label: "AugCSE", method: augcse, backbone: bert-base-uncased, paper: [77.27, 50.0, null],
         paper_sd: [0.63, null, null]}
"""


def test_metrics_table_reads_several_results_per_seed(tmp_path):
    """AugCSE Tables 1, 2, 12, 14: each seed's cells come from several results (an eval JSON, a nested key of
    another, a run folder's train_summary.json); mean and sd over seeds beside the paper's mean and sd."""
    (tmp_path / "x.yaml").write_text(METRICS_PAPER)
    entries = []
    for seed, (sts, anli, dev) in enumerate([(70.0, 40.0, 80.0), (74.0, 44.0, 81.0)]):
        run = tmp_path / f"run{seed}"
        run.mkdir()
        (run / "train_summary.json").write_text(json.dumps({"best_stsb_dev": dev}))
        (tmp_path / f"sts{seed}.json").write_text(json.dumps({"avg": sts}))
        (tmp_path / f"nli{seed}.json").write_text(json.dumps({"anli": {"accuracy": anli}}))
        entries.append({"sts": str(tmp_path / f"sts{seed}.json"), "nli": str(tmp_path / f"nli{seed}.json"),
                        "train": str(run)})
    render_table(str(tmp_path / "x.yaml"), "t12", json.dumps({"rows": {"0": entries}}), str(tmp_path / "t.tex"),
                 "paper")
    import pandas as pd

    csv = pd.read_csv(tmp_path / "t.csv").set_index("column")
    # mean(70, 74) = 72, sd = 4 / sqrt(2) = 2.83, diff = 72 - 77.27 = -5.27
    assert tuple(csv.loc["sts.avg", ["reproduced", "sd", "diff", "paper_sd"]]) == (72.0, 2.83, -5.27, 0.63)
    assert csv.loc["nli.anli.accuracy", "reproduced"] == 42.0 and csv.loc["train.best_stsb_dev", "sd"] == 0.71
    tex = (tmp_path / "t.tex").read_text()
    assert "Method & STS & ANLI & STS-B dev" in tex
    assert r"\quad paper & 77.27 $\pm$ 0.63 & 50.00 & -- \\" in tex


def test_suite_table_missing_key_names_it_and_writes_nothing(tmp_path):
    (tmp_path / "x.yaml").write_text(SUITE_PAPER)
    (tmp_path / "s.json").write_text(json.dumps({"AgNews": 60.0, "avg": 40.0}))
    with pytest.raises(KeyError, match="no key 'GoogleNews-TS'"):
        render_table(str(tmp_path / "x.yaml"), "t2", json.dumps({"rows": {"0": [str(tmp_path / "s.json")]}}),
                     str(tmp_path / "t2.tex"), "demo")
    assert not (tmp_path / "t2.tex").exists() and not (tmp_path / "t2.csv").exists()


def test_dry_run_resolves_the_new_tables(tmp_path):
    """One `snakemake -n` over a new table of each paper (results under tmp_path): the table job's inputs are
    the documented result paths of the demo stand-ins (tiny-roberta for roberta-base)."""
    results = tmp_path / "results"
    tables = ["cards/table3", "vascl/table1", "vascl/table2", "augcse/table4", "augcse/table6", "clear/table2",
              "cards/table4", "cards/table6", "sda/table5", "augcse/table1", "augcse/table2", "augcse/table13"]
    targets = [f"{results}/tables/{t}.tex" for t in tables]
    two_seeds = tmp_path / "seeds.yaml"      # every input list shows one path per seed
    two_seeds.write_text(yaml.safe_dump({"scales": {"demo": {"seeds": [1, 2]}}}))
    run = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--nolock", *targets,
                          "--configfile", "config.yaml", str(two_seeds),
                          "--config", f"results={results}", "scale=demo"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    inputs = {}
    for m in re.finditer(r"--paper-file papers/(\w+)\.yaml --table (\w+) --inputs '(\{.*?\})' ", run.stdout):
        inputs[f"{m[1]}/{m[2]}"] = json.loads(m[3])["rows"]
    assert set(inputs) == set(tables)
    # demo jobs run single-threaded, two side by side on 2 cores (scales.demo.train_resources / eval_threads)
    threads = re.findall(r"OMP_NUM_THREADS=(\d+) python -m sentaug.cli (train|evaluate) ", run.stdout)
    assert {kind for _, kind in threads} == {"train", "evaluate"} and {n for n, _ in threads} == {"1"}
    assert set(re.findall(r"sentaug.cli augment .*?--workers (\d+)", run.stdout)) == {"1"}     # scales.demo.workers
    ev = f"{results}/eval/demo/shared"     # below paper scale the papers share their runs
    assert inputs["cards/table3"]["3"] == [f"{ev}/tiny-roberta/cards/seed{s}/sts.json" for s in (1, 2)]
    assert inputs["vascl/table1"]["0"] == [f"{results}/eval/pretrained/demo/tiny-roberta/avg.json"]
    # at demo scale the suites read the bundled demo data (origin demo), as the STS evaluation does
    assert inputs["vascl/table2"]["0"] == [f"{results}/eval/pretrained/demo/tiny-roberta/clustering/avg.json"]
    assert inputs["vascl/table2"]["2"] == [f"{ev}/tiny-roberta/vascl/seed{s}/clustering.json" for s in (1, 2)]
    assert inputs["augcse/table4"]["2"] == [f"{ev}/tiny-bert/augcse/seed{s}/sts.json" for s in (1, 2)]
    assert inputs["augcse/table6"]["1"] == [f"{ev}/tiny-bert/augcse_bool/seed{s}/sts.json" for s in (1, 2)]
    # CLEAR: the -mean rows need the run under mean pooling; the [CLS] rows are the run's own eval pooler
    assert inputs["clear/table2"]["2"] == [f"{ev}/tiny-roberta/clear_subs_del_word/seed{s}/sts.avg.json"
                                           for s in (1, 2)]
    assert inputs["clear/table2"]["5"] == [f"{ev}/tiny-roberta/clear_del_span_reorder/seed{s}/sts.json"
                                           for s in (1, 2)]
    # two runs x two seeds under another pooler: the pooler named by the result's file
    assert len(re.findall(r"evaluate sts .*?--pooler avg .*?--out \S+/seed\d/sts\.avg\.json", run.stdout)) == 4
    # CARDS Table 4's lower-cased evaluation and Table 6's R-drop settings are results of their own; SDA Table 5
    # is skipped at demo scale (no Chinese pipeline or corpus): no inputs, nothing trained for it
    assert inputs["cards/table4"]["2"] == [f"{ev}/tiny-roberta/simcse/seed{s}/sts_lowercase.json" for s in (1, 2)]
    assert len(re.findall(r"evaluate sts .*? --lowercase --out \S+/sts_lowercase\.json", run.stdout)) == 4
    assert len(re.findall(r"evaluate glue .*? --rdrop 1\.0 .*?--out \S+/glue~rdrop=1\.0\S*\.json", run.stdout)) == 2
    assert "--rdrop 1.0 --switch-case 0.1" in run.stdout and "--train-on-dev" not in run.stdout
    assert inputs["sda/table5"] == {} and "sda_pi_zh" not in run.stdout and "evaluate cnsd" not in run.stdout
    # AugCSE Table 1: CoLA, ANLI and transfer of each seed side by side; its variants are runs of their own
    variant = "simcse_aug_negative~negatives.augmentation=AntonymSubstitute"
    assert inputs["augcse/table1"]["4"] == [{suite: f"{ev}/tiny-bert/{variant}/seed{s}/{suite}.json"
                                             for suite in ("cola", "nli", "transfer")} for s in (1, 2)]
    assert inputs["augcse/table1"]["0"] == [{suite: f"{results}/eval/pretrained/demo/tiny-bert/{suite}/"
                                                    f"cls_before_pooler.json" for suite in ("cola", "nli", "transfer")}]
    # Table 2 reads the runs' own STS-B dev (train_summary.json); the ANLI row trains on ANLI's triplets
    runs = f"{results}/runs/demo/shared/tiny-bert"
    assert inputs["augcse/table2"]["5"] == [{"train": f"{runs}/simcse_sup~positive.data=anli/seed{s}"} for s in (1, 2)]
    assert f"--set anli_devtest --data {results}/data/demo --out {results}/nli/demo/anli_devtest.csv" in run.stdout
    assert inputs["augcse/table13"]["1"] == [f"{results}/describe/demo/shared/tiny-roberta/augcse/model_size.json"]
