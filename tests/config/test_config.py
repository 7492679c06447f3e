"""config.yaml: schema errors name the key; scales resolve stand-ins and recipes as documented."""
import copy
import subprocess
import sys

import pytest

from sentaug import config as sc

from tests.conftest import ROOT


def test_shipped_config_and_papers_are_valid(cfg):
    sc.validate(cfg)
    for name in cfg["papers"]:
        cfg["papers_dir"] = str(ROOT / "papers")
        sc.load_paper(cfg, name)


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["scales"]["demo"]["train"].update(batchsize=8),
     r"'scales\.demo\.train\.batchsize': unknown setting 'batchsize' of 'scales\.demo\.train' \(did you mean "
     r"'batch_size'\?\); valid: batch_size, "),
    (lambda c: c["train"].update(batch_size="64"), r"'train\.batch_size': '64' is not of type 'integer'"),
    (lambda c: c.update(scale="huge"), r"'scale': unknown scale 'huge'; valid: demo, small, test, paper, gpu$"),
    (lambda c: c.update(colour="blue"), r"'colour': unknown setting 'colour' of the configuration; valid: scale, "),
    (lambda c: c.update(scael="small"), r"'scael': unknown setting 'scael' of the configuration \(did you mean "
                                         r"'scale'\?\)"),
    (lambda c: c["scales"]["test"]["evaluate"]["glue"].update(max_step=4),
     r"'scales\.test\.evaluate\.glue\.max_step': unknown setting 'max_step' .*\(did you mean 'max_steps'\?\)"),
    (lambda c: c["scales"]["paper"]["evaluate"]["transfer"].update(mode="slow"),
     r"'scales\.paper\.evaluate\.transfer\.mode': "),
    (lambda c: c["scales"]["small"].pop("augmentation_analysis_sample"), r"augmentation_analysis_sample"),
    (lambda c: c["scales"]["gpu"].pop("compares_with_papers"), r"compares_with_papers"),
    (lambda c: c["scales"]["paper"].update(compares_with_papers="yes"),
     r"'scales\.paper\.compares_with_papers': 'yes' is not of type 'boolean'"),
    (lambda c: c["methods"]["sda_pi"]["positive"].update(changed_onyl=True),
     r"'methods\.sda_pi\.positive\.changed_onyl': unknown setting 'changed_onyl' of 'methods\.sda_pi\.positive' "
     r"\(did you mean 'changed_only'\?\)"),
])
def test_schema_errors_name_the_key(cfg, mutate, message):
    mutate(cfg)
    with pytest.raises(sc.ConfigError, match=message):
        sc.validate(cfg)


def test_the_papers_scale_is_the_first_whose_numbers_compare_with_the_papers(cfg):
    """Captions, figures and the report's bill ask a scale's setting, never its name (config.yaml: only paper)."""
    assert [s for s, v in cfg["scales"].items() if v["compares_with_papers"]] == ["paper"]
    assert sc.papers_scale(cfg) == "paper"
    cfg["scales"]["paper"]["compares_with_papers"], cfg["scales"]["gpu"]["compares_with_papers"] = False, True
    assert sc.papers_scale(cfg) == "gpu"
    cfg["scales"]["gpu"]["compares_with_papers"] = False
    with pytest.raises(sc.ConfigError, match="no scale compares with the papers"):
        sc.papers_scale(cfg)


def test_a_former_setting_name_is_read_as_the_name_of_now_with_a_one_line_note(cfg, capsys):
    """One idea, one name: a cached negative's `only_changed` is `changed_only`, as a cached positive's."""
    method = cfg["methods"]["augcse_single_negative"] = {
        "positive": {"source": "dropout"},
        "negatives": {"source": "cache", "augmentation": "RandomSwap", "only_changed": False, "shared": False}}
    sc.validate(cfg)
    assert list(method["negatives"]) == ["source", "augmentation", "changed_only", "shared"]   # in its place
    assert method["negatives"]["changed_only"] is False
    err = capsys.readouterr().err.splitlines()
    assert err == ["note: method 'augcse_single_negative': negatives.only_changed is now called "
                   "negatives.changed_only (read as such; rename it in your configuration)"]
    sc.validate(cfg)                          # renamed once: no second note
    assert capsys.readouterr().err == ""
    both = copy.deepcopy(cfg)
    both["methods"]["x"] = {"positive": {"source": "dropout"},
                            "negatives": {"source": "cache", "augmentation": "RandomSwap", "only_changed": True,
                                          "changed_only": True}}
    with pytest.raises(sc.ConfigError, match=r"negatives\.only_changed and negatives\.changed_only are one setting"):
        sc.validate(both)
    # a spec recorded under the former name (a run built before) composes as before
    from sentaug.parts import compose

    old = compose({"method": "m", "positive": {"source": "dropout"},
                   "negatives": {"source": "cache", "augmentation": "a", "only_changed": False}})
    assert old.negatives.settings["changed_only"] is False and old.negatives.changed_only() == []


def test_cross_references_are_checked(cfg):
    bad = copy.deepcopy(cfg)
    bad["methods"]["sda_pi"]["positive"]["augmentation"] = "sda_typo"
    with pytest.raises(sc.ConfigError, match=r"methods\.sda_pi\.positive\.augmentation.*sda_typo"):
        sc.validate(bad)
    bad = copy.deepcopy(cfg)
    bad["scales"]["small"]["backbones"]["roberta-base"] = "tiny-robbie"
    with pytest.raises(sc.ConfigError, match=r"scales\.small\.backbones.*tiny-robbie"):
        sc.validate(bad)


def test_augmentation_backbone_parameters_resolve_per_scale(cfg):
    # shipped: demo/small use the random tiny-bert as masked LM, paper scale bert-base-uncased itself
    assert [sc.augmentation_backbone(cfg, "backbone:masked_lm", s) for s in ("demo", "small", "paper")] == \
        ["tiny-bert", "tiny-bert", "bert-base-uncased"]
    assert sc.augmentation_backbone(cfg, "backbone:roberta-base", "small") == "tiny-roberta-bpe"
    assert sc.augmentation_backbone(cfg, "backbone:roberta-base", "paper") == "roberta-base"
    # AugCSE's seq2seq models: the scale's random tiny-bart below paper scale, the real model at paper scale
    assert [sc.augmentation_backbone(cfg, "backbone:wmt19-en-de", s) for s in ("demo", "small", "paper")] == \
        ["tiny-bart", "tiny-bart", "wmt19-en-de"]
    # ... and as the augment rule calls it: op, parameters with folders, the folders to build first
    assert sc.augmentation_call(cfg, "DiverseParaphrase", "B", "paper") == (
        "DiverseParaphrase", {"model": "B/wmt19-en-de", "back_model": "B/wmt19-de-en"},
        ["B/wmt19-de-en", "B/wmt19-en-de"])
    # below paper scale the random stand-in's outputs are capped by the scale's augmentation_params
    assert sc.augmentation_call(cfg, "DiverseParaphrase", "B", "small") == (
        "DiverseParaphrase", {"model": "B/tiny-bart", "back_model": "B/tiny-bart", "max_new_tokens": 12},
        ["B/tiny-bart"])
    assert sc.augmentation_call(cfg, "Casual2Formal", "B", "demo")[1]["max_new_tokens"] == 12
    assert sc.augmentation_call(cfg, "sda_pi", "B", "small") == ("punctuation_insertion", {}, [])
    del cfg["scales"]["small"]["masked_lm"]          # not given: the bert-base-uncased stand-in
    assert sc.augmentation_backbone(cfg, "backbone:masked_lm", "small") == "minilm"
    cfg["scales"]["demo"]["masked_lm"] = "tiny-brt"
    with pytest.raises(sc.ConfigError, match=r"scales\.demo\.masked_lm.*tiny-brt"):
        sc.check_references(cfg)


def test_train_spec_precedence(cfg):
    paper = {"recipes": {"roberta-base": {"batch_size": 64, "learning_rate": 1.0e-5, "eval_steps": 250}}}
    # paper scale: defaults < scale < backbone recipe (SimCSE: 512 / 1e-5) < paper recipe (SDA: 64 / 1e-5)
    spec = sc.train_spec(cfg, paper, "roberta-base", "sda_pi", 42, scale="paper")
    assert (spec["batch_size"], spec["learning_rate"], spec["eval_steps"]) == (64, 1.0e-5, 250)
    assert spec["backbone"] == "roberta-base" and spec["corpus"] == "wiki1m"
    assert spec["positive"] == {"source": "cache", "augmentation": "sda_pi", "op": "punctuation_insertion"}
    # without a paper recipe the backbone's SimCSE recipe applies
    spec = sc.train_spec(cfg, {}, "roberta-base", "simcse", 42, scale="paper")
    assert (spec["batch_size"], spec["eval_steps"]) == (512, 125)
    # demo scale: the scale's settings win, recipes are ignored, the stand-in is trained
    spec = sc.train_spec(cfg, paper, "roberta-base", "simcse", 1, scale="demo")
    assert spec["backbone"] == "tiny-roberta"
    assert spec["batch_size"] == cfg["scales"]["demo"]["train"]["batch_size"]
    assert spec["temperature"] == 0.05 and spec["max_seq_length"] == 32
    # CLEAR's double-batch baseline: twice whatever batch the scale or recipe resolves to
    for scale, recipe in (("small", None), ("paper", {"recipes": {"roberta-base": {"batch_size": 64}}})):
        single = sc.train_spec(cfg, recipe, "roberta-base", "clear_double_mlm", 1, scale=scale)["batch_size"]
        double = sc.train_spec(cfg, recipe, "roberta-base", "clear_double_batch", 1, scale=scale)
        assert double["batch_size"] == 2 * single and "batch_multiplier" not in double


def test_paper_rows_must_match_columns(cfg, tmp_path):
    (tmp_path / "p.yaml").write_text(
        "tables:\n  t:\n    kind: sts\n    columns: [STS12, avg]\n    caption: x\n"
        "    rows:\n      - {label: a, method: simcse, paper: [1.0]}\n")
    cfg["papers_dir"] = str(tmp_path)
    with pytest.raises(sc.ConfigError, match="row 'a' has 1 reported values for 2 columns"):
        sc.load_paper(cfg, "p")


def test_snakemake_validates_config_at_start():
    """The workflow itself refuses a bad value before building any job, naming the key."""
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--config", "scale=huge"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "config key 'scale': unknown scale 'huge'; valid: demo, small, test, paper, gpu" in proc.stdout + proc.stderr
