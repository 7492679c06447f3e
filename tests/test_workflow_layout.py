"""Workflow resolution without Snakemake (sentaug.workflow): method variants, runs shared by the papers below
paper scale, and the result files each table row reads."""
from pathlib import Path

import pytest

import sentaug.config as sc
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cfg():
    config = sc.load_yaml(ROOT / "config.yaml")
    config["papers_dir"] = str(ROOT / "papers")
    return config


def at_scale(cfg, scale):
    return Workflow({**cfg, "scale": scale}, results="R")


def test_variant_names_round_trip():
    overrides = {"positive.p": 0.1, "objectives.discriminator.alpha": -10.0, "train.mlp_only_train": False}
    name = sc.variant_name("cards", overrides)
    assert name == "cards~positive.p=0.1~objectives.discriminator.alpha=-10.0~train.mlp_only_train=false"
    assert sc.split_variant(name) == ("cards", overrides)
    assert sc.split_variant("simcse") == ("simcse", {})


def test_variant_sets_nested_keys_and_leaves_the_declaration_alone(cfg):
    m = sc.method_config(cfg, "cards~positive.p=0.2~negatives.k=8")
    assert m["positive"] == {"source": "switch_case", "p": 0.2, "version": "v1"}
    assert m["negatives"]["k"] == 8 and m["negatives"]["mode"] == "top_k_uniform"
    assert cfg["methods"]["cards"]["positive"]["p"] == 0.05          # the declared method is unchanged
    # an objective is addressed by its name inside the list
    a = sc.method_config(cfg, "augcse~objectives.discriminator.alpha=-10")
    assert a["objectives"] == [{"name": "discriminator", "weight": 0.005, "alpha": -10}]
    # a train setting the method did not declare
    s = sc.method_config(cfg, "simcse~train.learning_rate=0.001")
    assert s["train"] == {"learning_rate": 0.001}


def test_variant_reaches_the_training_spec(cfg):
    spec = sc.train_spec(cfg, None, "roberta-base", "cards~positive.p=0.2~negatives.k=8", 1, scale="demo")
    assert spec["positive"]["p"] == 0.2 and spec["negatives"]["k"] == 8
    assert spec["method"] == "cards~positive.p=0.2~negatives.k=8"
    # a cached positive's augmentation settings follow the overridden augmentation
    spec = sc.train_spec(cfg, None, "roberta-base", "sda_pi~positive.augmentation=sda_dn", 1, scale="demo")
    assert spec["positive"] == {"source": "cache", "augmentation": "sda_dn", "op": "double_negation"}
    assert sc.method_caches(spec) == [("sda_dn", 1)]


@pytest.mark.parametrize("name,message", [
    ("nosuch~positive.p=0.1", "unknown method 'nosuch'"),
    ("cards~positive.p", "'positive.p' is not key.path=value"),
    ("cards~positive.p=2", r"method variant 'cards~positive.p=2': positive.p: 2 is greater than the maximum of 1"),
    ("cards~positive.colour=red", "Additional properties are not allowed"),
    ("augcse~objectives.mlm.weight=1", "no 'mlm' in 'objectives.mlm.weight'"),
    ("sda_pi~positive.augmentation=nosuch", "unknown augmentation 'nosuch'"),
])
def test_bad_variants_name_the_setting(cfg, name, message):
    with pytest.raises(sc.ConfigError, match=message):
        sc.method_config(cfg, name)


def test_runs_are_shared_by_the_papers_below_paper_scale(cfg):
    demo, paper = at_scale(cfg, "demo"), at_scale(cfg, "paper")
    assert demo.run_dir("cards", "tiny-roberta", "simcse", 1) == "R/runs/demo/shared/tiny-roberta/simcse/seed1"
    assert paper.run_dir("cards", "roberta-base", "simcse", 42) == "R/runs/paper/cards/roberta-base/simcse/seed42"
    # why sharing is sound: below paper scale no recipe applies, so every paper resolves the same spec
    specs = [sc.train_spec(cfg, demo.papers[p], "roberta-base", "simcse", 1, scale="demo") for p in cfg["papers"]]
    assert all(s == specs[0] for s in specs)
    specs = [sc.train_spec(cfg, demo.papers[p], "roberta-base", "simcse", 1, scale="paper") for p in cfg["papers"]]
    assert len({s["learning_rate"] for s in specs}) > 1           # at paper scale they differ (CARDS: 4e-5)


def test_table_inputs_follow_the_rows(cfg):
    wf = at_scale(cfg, "demo")
    rows = wf.table_inputs("sda", "table4")
    # BERT block: pretrained first-last avg, then SimCSE; RoBERTa block starts at row 5
    assert rows["0"] == ["R/eval/pretrained/demo/tiny-bert/avg_first_last.json"]
    assert rows["1"] == [f"R/eval/demo/shared/tiny-bert/simcse/seed{s}/sts.json" for s in (1, 2)]
    assert rows["7"] == [f"R/eval/demo/shared/tiny-roberta/sda_pi/seed{s}/sts.json" for s in (1, 2)]
    assert wf.table_inputs("sda", "table3")["0"] == [f"R/augment/demo_corpus/sda_pi/seed{s}.json" for s in (1, 2)]
    assert wf.table_inputs("vascl", "table2")["1"] == \
        [f"R/eval/demo/shared/tiny-roberta/simcse/seed{s}/clustering.json" for s in (1, 2)]
    small = at_scale(cfg, "small")
    assert small.table_inputs("cards", "table1")["0"] == \
        ["R/analysis/tokenization_effects/wiki1m_head/tiny-roberta-bpe.json"]


def test_a_run_path_under_the_wrong_paper_component_is_refused(cfg):
    with pytest.raises(ValueError, match="live under R/runs/demo/shared/"):
        at_scale(cfg, "demo").run_spec("sda", "tiny-bert", "simcse", 1)
    with pytest.raises(ValueError, match="not under 'shared'"):
        at_scale(cfg, "paper").run_spec("shared", "roberta-base", "simcse", 42)
    assert at_scale(cfg, "paper").run_spec("cards", "roberta-base", "cards", 42)["learning_rate"] == 4.0e-5
