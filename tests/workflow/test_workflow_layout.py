"""Workflow resolution without Snakemake (sentaug.workflow): method variants, runs shared by the papers below
paper scale, and the result files each table row reads."""
import re
from pathlib import Path

import pytest

import sentaug.config as sc
from sentaug.report.figures import caption
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]


DEMO_SEEDS = [1, 2]      # two seeds: every input list shows one path per seed (the shared `cfg` fixture)


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
    assert m["positive"] == {"source": "switch_case", "p": 0.2, "version": "v2"}
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
    assert demo.paths.run_dir("cards", "tiny-roberta", "simcse", 1) == "R/runs/demo/shared/tiny-roberta/simcse/seed1"
    assert paper.paths.run_dir("cards", "roberta-base", "simcse", 42) == "R/runs/paper/cards/roberta-base/simcse/seed42"
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
    # SDA Table 3: one augmentation per column (the paper's algorithm, the released code), each its own caches
    share = wf.table_inputs("sda", "table3")
    assert share["0/Paper algorithm %"] == [f"R/augment/demo_corpus/sda_pi/seed{s}.json" for s in (1, 2)]
    assert share["2/Released code %"] == [f"R/augment/demo_corpus/sda_dn_official_code/seed{s}.json" for s in (1, 2)]
    assert len(share) == 6
    assert wf.table_inputs("vascl", "table2")["1"] == \
        [f"R/eval/demo/shared/tiny-roberta/simcse/seed{s}/clustering.json" for s in (1, 2)]
    small = at_scale(cfg, "small")
    assert small.table_inputs("cards", "table1")["0"] == \
        ["R/analysis/tokenization_effects/wiki1m_head1k/tiny-roberta-bpe.json"]


def test_a_run_path_under_the_wrong_paper_component_is_refused(cfg):
    with pytest.raises(ValueError, match="live under R/runs/demo/shared/"):
        at_scale(cfg, "demo").specs.run_spec("sda", "tiny-bert", "simcse", 1)
    with pytest.raises(ValueError, match="not under 'shared'"):
        at_scale(cfg, "paper").specs.run_spec("shared", "roberta-base", "simcse", 42)
    assert at_scale(cfg, "paper").specs.run_spec("cards", "roberta-base", "cards", 42)["learning_rate"] == 4.0e-5


def test_glue_runs_on_the_offline_train_sets_below_paper_scale(cfg):
    """No --train-on-dev at any scale: `scales.<scale>.glue_tasks` names the tasks whose training sets exist."""
    small, paper = at_scale(cfg, "small"), at_scale(cfg, "paper")
    assert small.evaluations.suite_args("glue") == "--tasks CoLA SST-2 MRPC RTE STS-B --max-steps 40 --train-batch-size 16 --max-seq-length 64"
    assert paper.evaluations.suite_args("glue") == "--tasks CoLA SST-2 MRPC RTE STS-B QQP QNLI MNLI"
    assert "--train-on-dev" not in at_scale(cfg, "demo").evaluations.suite_args("glue")
    assert small.evaluations.suite_args("transfer") == "--mode fast"
    assert paper.evaluations.suite_args("transfer") == "--mode test"
    meta = small.table_meta("clear", "table1")
    assert meta["unbuilt_reason"] == ("not in scales.small.glue_tasks: their training sets are not available offline "
                                      "(glue/QQP/train.tsv, glue/QNLI/train.tsv, glue/MNLI/train.tsv)")
    assert "unbuilt_reason" not in paper.table_meta("clear", "table1")


def test_glue_settings_of_a_row_are_a_path_and_flags(cfg):
    wf = at_scale(cfg, "small")
    opts = wf.evaluations.glue_options({"switch_case": 0.1, "rdrop": 1})
    assert opts == "rdrop=1.0~switch_case=0.1"                  # fixed order, floats
    assert wf.evaluations.glue_option_args(opts) == "--rdrop 1.0 --switch-case 0.1"
    assert wf.evaluations.pretrained_glue_eval("tiny-roberta-bpe", "cls_before_pooler", {"rdrop": 1.0}) == \
        "R/eval/pretrained/official-small/tiny-roberta-bpe/glue~rdrop=1.0/cls_before_pooler.json"
    assert wf.evaluations.pretrained_glue_eval("tiny-roberta-bpe", "cls_before_pooler") == \
        "R/eval/pretrained/official-small/tiny-roberta-bpe/glue/cls_before_pooler.json"
    with pytest.raises(ValueError, match="unknown GLUE setting 'alpha'"):
        wf.evaluations.glue_options({"alpha": 1})
    rows = wf.table_inputs("cards", "table6")                   # DeBERTa-1.5B's stand-in, three settings
    assert [r[0].split("/")[-2] for r in rows.values()] == ["glue", "glue~rdrop=1.0", "glue~rdrop=1.0~switch_case=0.1"]
    assert wf.table_inputs("clear", "table3")["0"] == ["R/eval/small/shared/tiny-roberta-bpe/clear_mlm/seed1/glue.json"]
    # at paper scale each row fine-tunes with its paper's recipe (config.yaml glue.recipes), named in the path
    paper = at_scale(cfg, "paper")
    assert [r[0].split("/")[-2] for r in paper.table_inputs("cards", "table6").values()] == \
        ["glue~recipe=cards", "glue~rdrop=1.0~recipe=cards", "glue~rdrop=1.0~switch_case=0.1~recipe=cards"]
    assert paper.table_inputs("clear", "table3")["0"][0] == \
        "R/eval/paper/clear/roberta-base/clear_mlm/seed42/glue~recipe=roberta.json"


def test_a_glue_recipe_is_a_path_component_and_its_settings_the_flag(cfg):
    """A paper's fine-tuning recipe (config.yaml glue.recipes): named in the path, its settings on the command line,
    for a pre-trained backbone's GLUE and for a trained run's (CLEAR's rows)."""
    import json
    import shlex

    from sentaug.workflow.evaluations import run_evaluation

    wf = at_scale(cfg, "paper")
    flags = shlex.split(wf.evaluations.evaluation_args(run_evaluation("glue~recipe=roberta")))
    assert flags[:2] == ["--tasks", "CoLA"] and flags[-2] == "--recipe"
    recipe = json.loads(flags[-1])
    assert recipe["tasks"]["RTE"] == {"learning_rate": 2.0e-5, "batch_size": 16} and recipe["all"]["epochs"] == 10
    assert "source" not in recipe
    cards = json.loads(shlex.split(wf.evaluations.glue_option_args("rdrop=1.0~recipe=cards"))[-1])
    assert {t: s["epochs"] for t, s in cards["tasks"].items()} == {
        "MNLI": 4, "QNLI": 4, "QQP": 4, "SST-2": 4, "RTE": 20, "MRPC": 20, "CoLA": 20, "STS-B": 20}
    with pytest.raises(ValueError, match="unknown GLUE recipe 'robrta'"):
        wf.evaluations.glue_option_args("recipe=robrta")


def test_lowercase_rows_and_stand_ins_of_the_large_backbones(cfg):
    wf = at_scale(cfg, "demo")
    rows = wf.table_inputs("cards", "table4")      # RoBERTa-large: the roberta-base stand-in below paper scale
    ev = "R/eval/demo/shared/tiny-roberta"
    assert rows["0"] == [f"{ev}/simcse/seed{s}/sts.json" for s in (1, 2)]       # shared with Table 3's SimCSE
    assert rows["2"] == [f"{ev}/simcse/seed{s}/sts_lowercase.json" for s in (1, 2)]
    assert rows["3"] == [f"{ev}/simcse~train.lowercase=true/seed{s}/sts_lowercase.json" for s in (1, 2)]
    spec = sc.train_spec(cfg, None, "roberta-large", "simcse~train.lowercase=true", 1, scale="demo")
    assert spec["lowercase"] is True and spec["backbone"] == "tiny-roberta"
    # each table's caption names only the stand-ins of the backbones its rows use
    assert wf.table_meta("cards", "table4")["stand_ins"] == {"roberta-large": "tiny-roberta"}
    assert wf.table_meta("sda", "table4")["stand_ins"] == {"bert-base-uncased": "tiny-bert",
                                                           "roberta-base": "tiny-roberta"}
    # tables whose rows name none: the stand-ins their kind reads (CARDS Table 1: RoBERTa's tokenizer; AugCSE
    # Table 10: its columns), none for data statistics, which are counted from the files without a corpus either
    assert wf.table_meta("cards", "table1")["stand_ins"] == {"roberta-base": "tiny-roberta"}
    assert wf.table_meta("augcse", "table10")["stand_ins"] == {"bert-base-uncased": "tiny-bert",
                                                               "roberta-base": "tiny-roberta"}
    assert (wf.table_meta("sda", "table2")["stand_ins"], wf.table_meta("sda", "table2")["corpus"]) == ({}, None)
    assert (wf.table_meta("sda", "table3")["stand_ins"], wf.table_meta("sda", "table3")["corpus"]) == \
        ({}, "demo_corpus")                                                    # spaCy and the corpus, no model
    # the corpus a table names is what its rows train on: AugCSE Table 2's supervised rows learn from NLI triplets
    assert wf.table_meta("augcse", "table2")["corpus"] == "demo_corpus; NLI triplets: snli, anli_devtest"
    assert wf.table_meta("augcse", "table14")["corpus"] == \
        "demo_corpus; NLI triplets: snli, snli sampled to the size of anli_devtest, anli_devtest"
    # and a figure's, those its panels name: their backbone and the similarity model of their features
    assert wf.figure_meta("cards", "figure2")["stand_ins"] == {"roberta-base": "tiny-roberta"}
    assert wf.figure_meta("cards", "figure1")["stand_ins"] == {"roberta-base": "tiny-roberta",
                                                               "bert-base-uncased": "tiny-bert"}
    assert wf.figure_meta("augcse", "figure6")["stand_ins"] == {"bert-base-uncased": "tiny-bert",
                                                                "all-mpnet-base-v2": "tiny-bert"}
    assert "Backbone: tiny-bert (stand-in for bert-base-uncased), tiny-bert (stand-in for all-mpnet-base-v2)." in \
        caption(wf.papers["augcse"], "figure6", "demo", wf.figure_meta("augcse", "figure6"))
    # at paper scale RoBERTa-large is itself, with CARDS's recipe for it
    paper = at_scale(cfg, "paper")
    assert paper.specs.run_spec("cards", "roberta-large", "simcse", 42)["learning_rate"] == 7.5e-6


def test_chinese_runs_train_on_the_chinese_corpus_and_the_table_is_skipped_without_its_resources(cfg, monkeypatch):
    import sentaug.augment.parse as parse

    spec = sc.train_spec(cfg, None, "chinese-roberta-wwm-ext", "sda_pi~positive.augmentation=sda_pi_zh", 42,
                         scale="paper")
    assert (spec["corpus"], spec["language"], spec["backbone"]) == ("simclue", "zh", "chinese-roberta-wwm-ext")
    assert sc.method_caches(spec) == [("sda_pi_zh", 42)]
    assert "language" not in sc.train_spec(cfg, None, "roberta-base", "simcse", 42, scale="paper")
    with pytest.raises(sc.ConfigError, match="augmentation 'sda_pi' applies to en text"):
        sc.train_spec(cfg, None, "chinese-roberta-wwm-ext", "sda_pi", 42, scale="paper")
    with pytest.raises(sc.ConfigError, match="needs 'scales.demo.corpus_zh'"):
        sc.train_spec(cfg, None, "chinese-roberta-wwm-ext", "simcse", 1, scale="demo")
    paper, small, demo = at_scale(cfg, "paper"), at_scale(cfg, "small"), at_scale(cfg, "demo")
    assert paper.paths.spacy_model("simclue") == "zh_core_web_sm"
    assert paper.paths.spacy_model("wiki1m") == "en_core_web_sm"
    assert paper.paths.dev_data(spec) == "R/data/official/cnsd"
    assert paper.missing_resources("sda", "table5") == []        # fetched at paper scale
    assert paper.table_inputs("sda", "table5")["2"] == \
        [f"R/eval/paper/sda/chinese-roberta-wwm-ext/sda_pi~positive.augmentation=sda_pi_zh/seed{s}/cnsd.json"
         for s in (42, 43, 44)]
    monkeypatch.setattr(parse, "spacy_model_installed", lambda name: False)
    assert small.missing_resources("sda", "table5") == [
        "spaCy pipeline zh_core_web_sm is not installed (config key spacy_model_zh)"]
    assert len(demo.missing_resources("sda", "table5")) == 2     # and no Chinese corpus at demo scale
    assert demo.table_inputs("sda", "table5") == {} and demo.table_meta("sda", "table5")["skipped"]
    monkeypatch.setattr(parse, "spacy_model_installed", lambda name: True)
    assert small.missing_resources("sda", "table5") == []
    assert demo.missing_resources("sda", "table4") == []           # tables without `requires`


def test_local_runs_drop_the_job_rate_limit_and_cluster_runs_keep_it():
    """The limiter's timers multiply the scheduler's passes (sentaug.snakemake_hooks.drop_local_job_rate_limit):
    a local run's scheduler loses it, a cluster run's keeps it; and Snakemake's scheduler still has the attribute
    (an upgrade that renames it would make the hook a silent no-op)."""
    import inspect
    from types import SimpleNamespace

    from snakemake.scheduling.job_scheduler import JobScheduler

    from sentaug.snakemake_hooks import drop_local_job_rate_limit

    assert "self.job_rate_limiter = (" in inspect.getsource(JobScheduler.__init__)
    limiter = object()
    local = SimpleNamespace(local_exec=True, scheduler=SimpleNamespace(job_rate_limiter=limiter))
    cluster = SimpleNamespace(local_exec=False, scheduler=SimpleNamespace(job_rate_limiter=limiter))
    assert drop_local_job_rate_limit(local) and local.scheduler.job_rate_limiter is None
    assert not drop_local_job_rate_limit(local)                       # already gone
    assert not drop_local_job_rate_limit(cluster) and cluster.scheduler.job_rate_limiter is limiter


def test_every_log_is_named_beside_its_output_and_no_rule_writes_one_by_hand(cfg):
    """A rule's log is Paths.log of its output's name (LOGS, keyed as PATTERNS), under <results>/logs with the
    scale filled in and the other fields left as wildcards, each a field of its output (Snakemake's rule: a log
    takes the output's wildcards); no rule file or the Snakefile writes a log path of its own."""
    from sentaug.workflow.paths import LOGS, PATTERNS

    paper = at_scale(cfg, "paper")
    assert paper.paths.log("run") == "R/logs/train/paper/{paper}/{backbone}/{method}/seed{seed}.log"
    assert paper.paths.log("pretrained_augmentation_analysis") == \
        "R/logs/analysis/augmentations/{set}/pretrained/{backbone}/{pooler}.log"
    assert paper.paths.log("data_folder", folder="senteval") == "R/logs/download/{origin}/senteval.log"
    assert paper.paths.log("data_slice", origin="official-test") == "R/logs/download/official-test/{folder}.slice.log"
    assert paper.paths.log("describe", what="spec") == "R/logs/describe/paper/{paper}/{backbone}/{method}/spec.log"
    fields = lambda pattern: set(re.findall(r"{(\w+)}", pattern)) - {"R"}      # noqa: E731
    for kind in set(LOGS) & set(PATTERNS):
        assert fields(LOGS[kind]) <= fields(PATTERNS[kind]), kind
    assert set(LOGS) - set(PATTERNS) == {"data_slice", "job_server"}
    by_hand = [f"{f.name}: {line.strip()}" for f in [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]
               for line in f.read_text(encoding="utf-8").splitlines() if "logs/" in line]
    assert by_hand == []


def test_what_a_job_asks_for_follows_its_rules_kind(cfg):
    """JobResources.job_resources by the kind sentaug.workflow.jobs.RULES declares: at a scale on GPUs a training
    run asks for the training resources, an index for a GPU of its own, an evaluation for one a SLURM group shares
    (`gres`), each with the runtime it is given, on the GPU partition; a CPU job for nothing; below such a scale only
    training asks for anything (its memory, no GPU)."""
    paper, demo = at_scale(cfg, "paper"), at_scale(cfg, "demo")
    runtime = lambda wildcards: 7       # noqa: E731
    assert paper.resources.job_resources("train") == {"gpu": 1, "mem_mb": 32000, "slurm_partition": "gpu"}
    assert paper.resources.job_resources("index", runtime) == {"gpu": 1, "runtime": runtime, "slurm_partition": "gpu"}
    for rule in ("evaluate_run", "augmentation_analysis_pretrained", "projection_run"):
        assert paper.resources.job_resources(rule, runtime) == {"gres": "gpu:1", "runtime": runtime,
                                                                "slurm_partition": "gpu"}, rule
    assert paper.resources.job_resources("evaluate_pretrained") == {"gres": "gpu:1", "slurm_partition": "gpu"}
    assert paper.resources.job_resources("table", runtime) == {}
    assert demo.resources.job_resources("train") == {"gpu": 0, "mem_mb": demo.resources.train_resources()["mem_mb"]}
    assert demo.resources.job_resources("evaluate_run", runtime) == demo.resources.job_resources("index") == {}


def test_each_path_is_filled_in_or_left_as_wildcards_from_its_one_pattern(cfg, tmp_path):
    """Paths.path fills a pattern in, Paths.pattern leaves what it is not given as Snakemake wildcards (a rule's
    output), Paths.folder is the folder above, Paths.found lists what exists; the results as documented."""
    paper = at_scale(cfg, "paper")
    assert paper.paths.pattern("run") == "R/runs/paper/{paper}/{backbone}/{method}/seed{seed}"
    assert paper.paths.pattern("run_augmentation_analysis", corpus="wiki1m") == \
        "R/analysis/augmentations/wiki1m/{set}/paper/{paper}/{backbone}/{method}/seed{seed}.json"
    assert paper.paths.pattern("data_folder", folder="sts") == "R/data/{origin}/sts"
    assert (paper.paths.folder("backbone"), paper.paths.data_root(), paper.paths.data_root("demo")) == \
        ("R/backbones", "R/data/official", "R/data/demo")
    # a run's inputs: CARDS's retrieval index (its k and its eval pooler), CLEAR's token files with [DEL] added
    cards = paper.specs.run_spec("cards", "roberta-base", "cards", 42)
    assert paper.paths.index_file(cards, "roberta-base") == "R/index/wiki1m/roberta-base/cls_before_pooler/k64.npz"
    clear = paper.specs.run_spec("clear", "roberta-base", "clear_del_word", 42)
    assert paper.paths.run_tokens(clear, "roberta-base") == [
        "R/tokens/wiki1m/roberta-base/len32-added-del/corpus.npz",
        "R/tokens/wiki1m/roberta-base/len32-added-del/clear_del_word/seed42.npz",
        "R/tokens/wiki1m/roberta-base/len32-added-del/clear_del_word/seed142.npz"]
    # supervised SimCSE trains on NLI triplets, tokenized per batch: no token files, the triplet file as corpus
    sup = paper.specs.run_spec("augcse", "bert-base-uncased", "simcse_sup", 42)
    assert paper.paths.run_tokens(sup, "bert-base-uncased") == []
    assert paper.paths.train_corpus(sup) == "R/nli/official/nli_for_simcse.csv"
    with pytest.raises(ValueError, match=r"path 'cache' \(.*\) needs the field 'seed'"):
        paper.paths.path("cache", corpus="wiki1m", augmentation="sda_pi")
    # what exists, at every scale unless one is given; an unfinished run's folder (seed1.partial) matches too
    wf = Workflow({**cfg, "scale": "demo"}, results=str(tmp_path))
    for run in ("demo/shared/tiny-bert/simcse/seed1", "paper/sda/bert-base-uncased/simcse/seed42",
                "demo/shared/tiny-bert/simcse/seed2.partial"):
        (tmp_path / "runs" / run).mkdir(parents=True)
    assert wf.paths.found("run", method="simcse", seed=42) == [
        {"scale": "paper", "paper": "sda", "backbone": "bert-base-uncased"}]
    assert [r["seed"] for r in wf.paths.found("run", scale="demo")] == ["1", "2.partial"]


def test_no_rule_writes_a_path_of_its_own():
    """The rules take every output and input path from sentaug.workflow (their logs aside)."""
    import re

    for smk in sorted((ROOT / "rules").glob("*.smk")):
        assert not re.findall(r'f"\{R\}/(?!logs/)', smk.read_text()), smk.name


@pytest.mark.parametrize("model, name, evaluation", [
    ("run", "sts", ("sts", None, "", False)),
    ("run", "sts.avg", ("sts", "avg", "", False)),                 # CLEAR Table 2's -mean rows
    ("run", "sts_lowercase", ("sts", None, "", True)),             # CARDS Table 4
    ("run", "transfer", ("transfer", None, "", False)),
    ("run", "glue~recipe=roberta", ("glue", None, "recipe=roberta", False)),   # CLEAR Tables 1, 3
    ("pretrained", "avg_first_last", ("sts", "avg_first_last", "", False)),
    ("pretrained", "clustering/avg", ("clustering", "avg", "", False)),
    ("pretrained", "glue~rdrop=1.0~switch_case=0.1/cls_before_pooler",
     ("glue", "cls_before_pooler", "rdrop=1.0~switch_case=0.1", False)),   # CARDS Table 6
])
def test_an_evaluation_is_named_by_its_result_file(model, name, evaluation):
    import re

    from sentaug.workflow import evaluations as ev

    parse, wildcard = {"run": (ev.run_evaluation, ev.RUN_EVALUATION),
                       "pretrained": (ev.pretrained_evaluation, ev.PRETRAINED_EVALUATION)}[model]
    assert parse(name) == ev.Evaluation(*evaluation)
    assert re.fullmatch(wildcard, name)


def test_evaluation_names_outside_the_suites_are_refused():
    import re

    from sentaug.workflow import evaluations as ev

    for name in ("colour", "sts/avg", "sts.avg.json"):
        assert not re.fullmatch(ev.RUN_EVALUATION, name), name
    assert not re.fullmatch(ev.PRETRAINED_EVALUATION, "colour/avg")
    with pytest.raises(ValueError, match="unknown suite 'colour' \\(known: sts, cnsd, transfer, "):
        ev.pretrained_evaluation("colour/avg")


def test_an_evaluations_flags_at_a_scale(cfg):
    from sentaug.workflow.evaluations import pretrained_evaluation, run_evaluation

    small = at_scale(cfg, "small")
    assert small.evaluations.evaluation_args(run_evaluation("sts_lowercase")) == "--lowercase"
    assert small.evaluations.evaluation_args(run_evaluation("sts.avg")) == ""
    assert small.evaluations.evaluation_args(pretrained_evaluation("glue~rdrop=1.0/cls")) == \
        "--tasks CoLA SST-2 MRPC RTE STS-B --max-steps 40 --train-batch-size 16 --max-seq-length 64 --rdrop 1.0"
    assert at_scale(cfg, "paper").evaluations.glue_max_steps() is None
    assert at_scale(cfg, "demo").evaluations.glue_max_steps() == 20


# Each scale's evaluation flags, from config.yaml's scales.<scale>.evaluate, augmentation_analysis_sample and
# hub_offline (issue 58: read from the scale's settings, never from its name).
SCALE_FLAGS = {
    "demo": {"transfer": "--mode fast", "glue": "--max-steps 20", "analysis": "--stackoverflow-limit 4000",
             "intent": "--iterations 200", "clustering": "", "sample": 500, "hub_offline": True},
    "small": {"transfer": "--mode fast", "glue": "--max-steps 40 --train-batch-size 16 --max-seq-length 64",
              "analysis": "--iso-sample 1000 --gh-sample 200 --nli-limit 1000", "intent": "--iterations 300",
              "clustering": "", "sample": 1000, "hub_offline": True},
    "test": {"transfer": "--mode fast", "glue": "--max-steps 4 --train-batch-size 8 --max-seq-length 64",
             "analysis": "--iso-sample 200 --gh-sample 50 --nli-limit 100", "intent": "--iterations 100",
             "clustering": "--seeds 2", "sample": 200, "hub_offline": True},
    "paper": {"transfer": "--mode test", "glue": "", "analysis": "", "intent": "", "clustering": "", "sample": 20000,
              "hub_offline": False},
    "gpu": {"transfer": "--mode fast", "glue": "", "analysis": "", "intent": "", "clustering": "", "sample": 2000,
            "hub_offline": True},
}


@pytest.mark.parametrize("scale", SCALE_FLAGS)
def test_each_scales_evaluation_flags_come_from_its_settings(cfg, scale):
    w, want = at_scale(cfg, scale), SCALE_FLAGS[scale]
    for suite in ("transfer", "analysis", "intent", "clustering"):
        assert w.evaluations.suite_args(suite) == want[suite], suite
    tasks = f"--tasks {' '.join(w.evaluations.glue_tasks)}"
    assert w.evaluations.suite_args("glue") == " ".join(filter(None, [tasks, want["glue"]]))
    assert w.evaluations.glue_max_steps() == (int(want["glue"].split()[1]) if want["glue"] else None)
    assert w.evaluations.suite_args("sts") == w.evaluations.suite_args("cola") == ""
    assert w.paths.augmentation_analysis_sample() == want["sample"]
    assert w.paths.hub_offline() is want["hub_offline"]


def test_a_scales_evaluation_options_are_its_configs_not_its_names(cfg):
    """Changing a scale's settings changes its flags, in the order given; a scale without any gives none."""
    cfg["scales"]["paper"]["evaluate"] = {"glue": {"max_steps": 7, "max_seq_length": 32},
                                          "clustering": {"seeds": 3}}
    cfg["scales"]["paper"]["augmentation_analysis_sample"] = 99
    paper = at_scale(cfg, "paper")
    assert paper.evaluations.suite_args("glue").endswith("MNLI --max-steps 7 --max-seq-length 32")
    assert paper.evaluations.glue_max_steps() == 7 and paper.evaluations.suite_args("clustering") == "--seeds 3"
    assert paper.evaluations.suite_args("transfer") == "" and paper.paths.augmentation_analysis_sample() == 99
    del cfg["scales"]["paper"]["hub_offline"]
    assert at_scale(cfg, "paper").paths.hub_offline() is True      # not given: offline, the perplexity skipped at once
    del cfg["scales"]["demo"]["evaluate"]
    demo = at_scale(cfg, "demo")
    assert demo.evaluations.suite_args("intent") == "" and demo.evaluations.glue_max_steps() is None
    assert demo.evaluations.suite_args("nli") == "--set nli=snli --set anli=anli_devtest"


def test_every_rule_is_declared_on_a_gpu_or_on_cpus(tmp_path):
    """sentaug.workflow.jobs.RULES names every rule of the workflow and nothing else (with a configuration that
    declares a comparison, which brings rule `compare`), and an undeclared rule is refused by name."""
    import os
    import subprocess
    import sys

    from sentaug.workflow.jobs import RULES, rule_kind

    example = ROOT / "examples" / "negation"
    (tmp_path / "modules.yaml").write_text("augment: {modules: [sentaug_negation.negation]}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(example), os.environ.get("PYTHONPATH")]))}
    listed = subprocess.run([sys.executable, "-m", "snakemake", "--list-rules", "--configfile", "config.yaml",
                             str(example / "negation.yaml"), str(tmp_path / "modules.yaml")],
                            cwd=ROOT, capture_output=True, text=True, env=env)
    assert listed.returncode == 0, listed.stderr[-3000:]
    # one rule a line, its docstring after it (continued on indented lines)
    assert {line.split()[0] for line in listed.stdout.splitlines() if line[:1].strip()} == set(RULES)
    assert {rule for rule, kind in RULES.items() if kind.gpu} == {
        "train", "index", "evaluate_run", "evaluate_pretrained", "augmentation_analysis_run",
        "augmentation_analysis_pretrained", "projection_run", "projection_pretrained"}
    with pytest.raises(ValueError, match="rule 'finetune' is not declared in sentaug.workflow.jobs.RULES"):
        rule_kind("finetune")
