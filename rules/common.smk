# Paths, scale resolution and input functions shared by every stage. Logic lives in the sentaug package;
# rules call its command line (`python -m sentaug.cli`, so a conda env only needs the dependencies).
import json
import os
import re
import sys
from pathlib import Path

from sentaug.workflow import SUITES, Workflow, code_files, data_folders, export_job_environment

SRC = Path(workflow.basedir) / "src"
export_job_environment(SRC, sys.executable)   # jobs import this checkout's src with this interpreter
SENTAUG = "python -m sentaug.cli"

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


# Extra CLI flags per suite at this scale (sentaug.workflow.Workflow.suite_args); every suite reads the scale's
# data: the bundled demo data at demo scale, the official data (downloads or the mirror) above it.
SUITE_ARGS = {suite: W.suite_args(suite) for suite in SUITES}


def suite_code(suite):
    """The modules a suite runs (those that exist: suites differ in layout), as inputs."""
    extra = {"nli": ["data/triplets.py", "evaluate/analysis.py"], "cola": ["data/glue.py"]}.get(suite, [])
    files = code(f"evaluate/{suite}.py", "evaluate/embeddings.py", "evaluate/logreg.py", f"data/{suite}.py",
                 "models/encoder.py", "models/poolers.py", "models/tokens.py", *extra)
    return [f for f in files if Path(f).exists()]


wildcard_constraints:
    seed=r"\d+",
    origin="demo|official",
    suite="|".join(SUITES),
    backbone=r"[^/]+",
    pooler=r"[^/]+",


def _augmentation(w):
    """(op, parameters, backbone folders) of the declared augmentation; `backbone:<name>` parameters (CARDS's
    RoBERTa tokenizer, CTxt's masked LM, AugCSE's seq2seq models) name this scale's backbone folders."""
    return sc.augmentation_call(config, w.augmentation, f"{R}/backbones")
