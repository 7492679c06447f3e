"""docs/fidelity.md: generated from the resolved paper-scale specs and src/sentaug/resources/fidelity.yaml, it is
current; every paper-scale setting (every run's, every GLUE row's) has a verdict; a reference marked equal agrees with
our value; and the checks find what is wrong when it is. Rows a paper quotes from SimCSE train with SimCSE's recipe
and their captions say so; `sentaug describe spec` points a run to its section."""
import json
import re

import pytest

import sentaug.config as sc
from sentaug.report import fidelity as fd
from tests.test_cli import ROOT


@pytest.fixture(scope="module")
def config():
    cfg = sc.load_yaml(ROOT / "config.yaml")
    sc.validate(cfg)
    return cfg


@pytest.fixture(scope="module")
def wf(config):
    from sentaug.workflow import Workflow

    return Workflow({**config, "scale": "paper"})


@pytest.fixture(scope="module")
def cells(config, wf):
    return fd.table_cells(config, wf)


def test_the_recipe_page_is_current(monkeypatch):
    from sentaug.docgen import fidelity_page

    monkeypatch.chdir(ROOT)
    problems, page = fidelity_page("config.yaml")
    assert problems == []
    assert (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8") == page, \
        "docs/fidelity.md is out of date: make docs-fidelity"


def test_every_paper_scale_setting_has_a_verdict_and_equal_references_agree(config, cells):
    training, glue = cells
    runs = {c["run"] for c in training}
    assert len(runs) >= 200 and {r.paper for r in runs} >= {"sda", "cards", "vascl", "augcse", "clear", "simcse",
                                                              "leaderboard"}
    assert len(training) == len(runs) * len(fd.SETTINGS)
    assert {c["glue"].table for c in glue} == {"table6", "table1", "table3"}
    fidelity = fd.load_fidelity()
    assert fd.check(fidelity, training) == [] and fd.glue_check(fidelity, glue) == []
    page = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    assert "; 0 without a verdict." in page and "**none**" not in page


def test_the_checks_find_a_missing_verdict_a_missing_reason_and_a_wrong_reference(config, cells):
    training, _ = cells
    fidelity = fd.load_fidelity()
    cell = next(c for c in training if c["run"] == fd.Run("cards", "roberta-base", "cards")
                and c["setting"] == "learning_rate")
    assert cell["rule"]["verdict"] == "equal" and cell["rule"]["code"]["value"] == cell["ours"] == 4.0e-5
    wrong = {**cell, "rule": {**cell["rule"], "code": {**cell["rule"]["code"], "value": 1.0e-5}}}
    unreasoned = {**cell, "rule": {"verdict": "deliberate", "code": cell["rule"]["code"]}}
    assert fd.check(fidelity, [{**cell, "rule": None}, wrong, unreasoned]) == [
        "cards/roberta-base/cards: learning_rate: no verdict",
        "cards/roberta-base/cards: learning_rate: verdict equal, but the code's value 1e-05 is not ours 4e-05",
        "cards/roberta-base/cards: learning_rate: verdict deliberate without its reason (`why`)"]
    # a setting no rule names has no verdict: the rules must cover every run's every setting
    assert fd.verdict_rule([r for r in fidelity["training"] if "length" not in fd._names(r, "settings")],
                           cell["run"], "length") is None


def test_a_variants_changed_setting_needs_a_rule_that_names_the_variant(config, cells):
    """`cards~negatives.s=4` changes the negatives: cards's own rule (k 64, s 1, equal) must not cover it."""
    training, _ = cells
    fidelity = fd.load_fidelity()
    assert fd.changed_rows("cards~negatives.s=4") == {"negatives"}
    assert fd.changed_rows("sda_pi~train.dropout=0.2") == {"dropout"}
    assert fd.changed_rows("simcse~head=none") == {"pooler"}
    run = fd.Run("cards", "roberta-base", "cards~negatives.s=4")
    assert fd.verdict_rule(fidelity["training"], run, "negatives")["verdict"] == "deliberate"
    assert fd.verdict_rule(fidelity["training"], run, "learning_rate") is \
        fd.verdict_rule(fidelity["training"], fd.Run("cards", "roberta-base", "cards"), "learning_rate")


def test_the_settings_changed_here_are_the_authors(config, cells):
    """The settings this audit changed, as the resolved specs hold them (each with its reference on the page)."""
    training, glue = cells
    ours = {(c["run"].paper, c["run"].backbone, c["run"].method, c["setting"]): c["ours"] for c in training}
    # CARDS README's RoBERTa-base command: switch-case v2; its RoBERTa-large one: v1 (Table 4's Switch-case row)
    assert ours[("cards", "roberta-base", "cards", "positive")]["version"] == "v2"
    assert ours[("cards", "roberta-large", "simcse_switch_case~positive.p=0.1~positive.version=v1",
                 "positive")] == {"source": "switch_case", "p": 0.1, "version": "v1"}
    # AugCSE's STS script: 4 epochs, STS-B dev every 500 steps; its case studies' script: 1 epoch, every 1000
    assert ours[("augcse", "bert-base-uncased", "augcse", "length")] == 4
    assert ours[("augcse", "bert-base-uncased", "augcse", "evaluation")] == 500
    assert ours[("augcse", "bert-base-uncased", "simcse_aug_negative", "length")] == 1
    assert ours[("augcse", "bert-base-uncased", "simcse_sup", "evaluation")] == 1000
    assert ours[("augcse", "bert-base-uncased", "simcse_sup", "pooler")] == "cls + none"
    # VaSCL's loop clips nothing; its "VaSCL w/ X" runs keep VaSCL's backbone rate
    assert ours[("vascl", "roberta-base", "vascl", "max_grad_norm")] is None
    assert ours[("vascl", "roberta-base", "vascl~positive.source=cache~positive.augmentation=vascl_wdel_10",
                 "learning_rate")] == 5.0e-6
    assert ours[("leaderboard", "roberta-base", "vascl", "learning_rate")] == 5.0e-6
    # CLEAR's projection head g; the SimCSE rows quoted by SDA and AugCSE: SimCSE's own recipe
    assert ours[("clear", "roberta-base", "clear_del_span", "pooler")] == "cls + mlp"
    assert ours[("simcse", "bert-base-uncased", "simcse", "batch_size")] == 64
    assert ours[("simcse", "roberta-base", "simcse", "learning_rate")] == 1.0e-5
    assert ("sda", "bert-base-uncased", "simcse", "batch_size") not in ours
    # CARDS Table 6: 20 epochs on the small tasks, 4 on the rest; CLEAR: RoBERTa's 10, no clipping
    epochs = {(c["glue"].paper, c["task"]): c["ours"] for c in glue if c["setting"] == "epochs"}
    assert (epochs[("cards", "CoLA")], epochs[("cards", "MNLI")], epochs[("clear", "RTE")]) == (20, 4, 10)
    assert {c["ours"] for c in glue if c["glue"].paper == "clear" and c["setting"] == "max_grad_norm"} == {None}


def test_quoted_rows_train_with_the_recipe_of_the_paper_they_come_from_and_say_so(wf):
    rows = wf.table_inputs("sda", "table4")
    assert rows["1"][0].startswith("results/eval/paper/simcse/bert-base-uncased/simcse/seed42/")
    assert rows["2"][0].startswith("results/eval/paper/sda/bert-base-uncased/sda_pi/seed42/")
    quoted = wf.specs.run_spec("simcse", "bert-base-uncased", "simcse", 42)
    sda = wf.specs.run_spec("sda", "bert-base-uncased", "sda_pi", 42)
    assert (quoted["batch_size"], quoted["learning_rate"], quoted["eval_steps"]) == (64, 3.0e-5, 125)
    assert (sda["batch_size"], sda["learning_rate"], sda["eval_steps"]) == (128, 2.0e-5, 250)
    meta = wf.table_meta("augcse", "table5")
    assert meta["quoted"] == [{"source": "SimCSE (Gao et al., 2021)",
                               "rows": ["SimCSE-BERT-base", "w/ MLM", "SimCSE-RoBERTa-base", "w/ MLM"]}]
    from sentaug.report.tables import quoted_note

    assert quoted_note(meta).startswith("Rows quoted from SimCSE (Gao et al., 2021) (SimCSE-BERT-base, w/ MLM, "
                                        "SimCSE-RoBERTa-base, w/ MLM): trained at paper scale with SimCSE's own recipe")
    assert "quoted" not in wf.table_meta("cards", "table3")       # CARDS trains its own SimCSE


def test_a_row_naming_an_unknown_recipe_is_an_error(config, tmp_path):
    import yaml

    paper = sc.load_paper({**config, "papers_dir": str(ROOT / "papers")}, "sda")
    paper["tables"]["table4"]["blocks"][0]["rows"][1]["recipe"] = "simcsee"
    (tmp_path / "sda.yaml").write_text(yaml.safe_dump(paper))
    with pytest.raises(sc.ConfigError, match="unknown recipe 'simcsee'"):
        sc.load_paper({**config, "papers_dir": str(tmp_path)}, "sda")
    paper["tables"]["table4"]["blocks"][0]["rows"][1].pop("recipe")
    paper["tables"]["table4"]["blocks"][0]["rows"][1]["glue"] = {"recipe": "robrta"}
    (tmp_path / "sda.yaml").write_text(yaml.safe_dump(paper))
    with pytest.raises(sc.ConfigError, match="unknown GLUE recipe 'robrta'"):
        sc.load_paper({**config, "papers_dir": str(tmp_path)}, "sda")


def test_describe_spec_names_the_runs_section_of_the_page(wf, tmp_path):
    from sentaug.report.describe import describe_spec_cli

    spec = wf.specs.run_spec("cards", "roberta-base", "cards", 42)
    record = describe_spec_cli(spec, str(tmp_path / "spec.json"), "cards")
    assert record["fidelity"] == "docs/fidelity.md#cards-roberta-base"
    assert json.loads((tmp_path / "spec.json").read_text())["fidelity"] == record["fidelity"]
    page = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', page))
    assert "cards-roberta-base" in anchors and "simcse-bert-base-uncased" in anchors
    assert describe_spec_cli(spec, str(tmp_path / "s.json"), "shared")["fidelity"] == "docs/fidelity.md"


def test_the_pages_fixed_values_are_the_trainers():
    """What the page states of every run without a spec key: AdamW with torch's defaults, bf16 autocast on CUDA."""
    import inspect

    from sentaug.train import step, trainer

    assert "torch.optim.AdamW(groups" in inspect.getsource(step.adamw)
    assert 'torch.autocast("cuda", dtype=torch.bfloat16' in inspect.getsource(trainer.TrainingRun._step_function)
    assert fd.PRECISION == "bf16 autocast (CUDA)"
    assert fd.run_settings({"weight_decay": 0.0, "pooler": "cls", "batch_size": 8, "epochs": 1, "max_steps": None,
                            "learning_rate": 1e-5, "eval_pooler": "cls_before_pooler", "eval_steps": 125,
                            "corpus": "wiki1m", "max_seq_length": 32, "temperature": 0.05, "positive": {},
                            "negatives": {}, "objectives": []}, [1])["optimizer"] == \
        "AdamW, betas (0.9, 0.999), eps 1e-08"
