# Paths, scale resolution and input functions shared by every stage. Logic lives in the sentaug package;
# rules call its command line (`python -m sentaug.cli`, so a conda env only needs the dependencies).
import json
import os
import sys
from pathlib import Path

from sentaug.workflow import SUITES, Workflow, code_files

SRC = Path(workflow.basedir) / "src"
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
# Jobs run `python` from the interpreter running Snakemake (e.g. .venv/bin/snakemake without activating
# the venv); with --software-deployment-method conda the rule's environment is put in front of this.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
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


wildcard_constraints:
    seed=r"\d+",
    origin="demo|official",
    suite="|".join(SUITES),
    backbone=r"[^/]+",
    pooler=r"[^/]+",
