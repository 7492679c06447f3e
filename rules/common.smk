# Paths, scale resolution and input functions shared by every stage. Logic lives in the sentaug package;
# rules call its command line (`python -m sentaug.cli`, so a conda env only needs the dependencies).
import json
import os
import sys
from pathlib import Path

from sentaug.workflow import SUITES, Workflow, code_files, export_job_environment

SRC = Path(workflow.basedir) / "src"
export_job_environment(SRC, sys.executable)   # jobs import this checkout's src with this interpreter

R = config.get("results", "results")
W = Workflow(config, results=R)
SCALE = W.scale
S = W.S
ORIGIN = W.origin                      # demo (bundled) or official (downloads / mirror)
CORPUS = W.corpus
SEEDS = W.seeds
PAPERS = W.papers
TRAIN_RESOURCES = W.train_resources()
TRAIN_LAUNCHER = W.train_launcher()

# The names the rules use; the resolution lives in sentaug.workflow (documented and tested there).
data_root = W.data_root
corpus_file = W.corpus_file
backbone_dir = W.backbone_dir
paper_backbone = W.paper_backbone
cache_file = W.cache_file
run_dir = W.run_dir
pretrained_eval = W.pretrained_eval
pretrained_suite_eval = W.pretrained_suite_eval
tokenization_effects_file = W.tokenization_effects_file
table_inputs = W.table_inputs
all_tables = W.all_tables
suite_data = W.suite_data


def code(*modules):
    return code_files(SRC, *modules)


def run_spec(w):
    return W.run_spec(w.paper, w.backbone, w.method, w.seed)


# Downstream suites read official data only (there is no demo version of them), also at demo scale.
SUITE_ARGS = {"transfer": f"--mode {'test' if SCALE == 'paper' else 'fast'}"}  # extra CLI flags per suite
if SCALE != "paper":
    # GLUE train files are not available offline: below paper scale the GLUE suite is a smoke test that
    # fine-tunes briefly on the four dev sets there are (its JSON says train_on_dev: true).
    SUITE_ARGS["glue"] = "--tasks CoLA SST-2 MRPC RTE --train-on-dev --max-steps 100"
if SCALE == "demo":
    SUITE_ARGS["analysis"] = "--stackoverflow-limit 4000"  # a labelled subsample (purity is not comparable)


def suite_code(suite):
    """The modules a suite runs (those that exist: suites differ in layout), as inputs."""
    files = code(f"evaluate/{suite}.py", "evaluate/embeddings.py", "evaluate/logreg.py", f"data/{suite}.py",
                 "models/encoder.py", "models/poolers.py")
    return [f for f in files if Path(f).exists()]


# Input functions and values of single rules (kept here: the rule files hold rules only).


def _mirror_flag():
    return f"--mirror {config['data']['mirror']}" if config["data"].get("mirror") else ""


def _download_code(w):
    extra = ["resources/demo/MANIFEST.sha256"] if w.origin == "demo" else []
    return code("data/download.py", "data/sources.yaml", *extra)


def _augmentation(w):
    """(op, parameters, backbone folders) of the declared augmentation; `backbone:<name>` parameters (CARDS's
    RoBERTa tokenizer, CTxt's masked LM, AugCSE's seq2seq models) name this scale's backbone folders."""
    return sc.augmentation_call(config, w.augmentation, f"{R}/backbones")


def _positives(w):
    spec = run_spec(w)
    return [cache_file(aug, seed, spec["corpus"]) for aug, seed in sc.method_caches(spec)]


def _index(w):
    """CARDS' retrieval index: built with the frozen backbone this run starts from, pooled as it evaluates."""
    spec = run_spec(w)
    if spec["negatives"]["source"] != "retrieved":
        return []
    return f"{R}/index/{spec['corpus']}/{w.backbone}/{spec['eval_pooler']}/k{spec['negatives'].get('k', 64)}.npz"


# Augmentation census: every declared augmentation on the scale's corpus (first seed), with the cosine
# between original and augmented under the scale's bert-base-uncased stand-in (mean pooling).
CENSUS_BACKBONE = sc.stand_in(config, "bert-base-uncased")


def census_embedding_file(augmentation, seed, corpus=CORPUS):
    return f"{R}/census/{corpus}/{augmentation}/seed{seed}.{CENSUS_BACKBONE}.json"


def census_rows():
    """Every declared augmentation, or the `census` list when the config gives one."""
    names = config.get("census") or list(config["augmentations"])
    unknown = [a for a in names if a not in config["augmentations"]]
    if unknown:
        raise ValueError(f"config key 'census': unknown augmentation {unknown[0]!r}")
    return {a: {"stats": cache_file(a, SEEDS[0]).replace(".parquet", ".json"),
                "embedding": census_embedding_file(a, SEEDS[0])} for a in names}


wildcard_constraints:
    seed=r"\d+",
    origin="demo|official",
    suite="|".join(SUITES),
    backbone=r"[^/]+",
    pooler=r"[^/]+",
