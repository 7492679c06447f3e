# Paths, scale resolution and input functions shared by every stage. Logic lives in the sentaug package;
# rules call its command line (`python -m sentaug.cli`, so a conda env only needs the dependencies).
import json
import os
import sys
from pathlib import Path

from sentaug.data.download import load_sources

SRC = Path(workflow.basedir) / "src"
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
# Jobs run `python` from the interpreter running Snakemake (e.g. .venv/bin/snakemake without activating
# the venv); with --software-deployment-method conda the rule's environment is put in front of this.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
SENTAUG = "python -m sentaug.cli"

R = config.get("results", "results")
SCALE = config["scale"]
S = sc.scale_settings(config)
ORIGIN = S["data"]                      # demo (bundled) or official (downloads / mirror)
CORPUS = S["corpus"]
SEEDS = S["seeds"]
SOURCES = load_sources()
PAPERS = {name: sc.load_paper(config, name) for name in config["papers"]}


def code(*modules):
    """The package modules a rule runs, as inputs: editing one reruns the jobs that depend on it.

    A folder stands for every file in it (Python modules and their data files)."""
    files = []
    for m in modules:
        path = SRC / "sentaug" / m
        if path.is_dir():
            files += sorted(str(f) for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        else:
            files.append(str(path))
    return files


def data_root(origin=ORIGIN):
    return f"{R}/data/{origin}"


def corpus_file(corpus=CORPUS):
    origin = "demo" if corpus in SOURCES["demo"] else "official"
    return f"{data_root(origin)}/wiki/{corpus}.txt"


def backbone_dir(name):
    return f"{R}/backbones/{name}"


def paper_backbone(actual):
    """The paper backbone a stand-in replaces at this scale (recipes are keyed by paper backbones)."""
    for paper_name, stand_in in S["backbones"].items():
        if stand_in == actual:
            return paper_name
    return actual


def cache_file(augmentation, seed, corpus=CORPUS):
    return f"{R}/augment/{corpus}/{augmentation}/seed{seed}.parquet"


def run_dir(paper, backbone, method, seed):
    return f"{R}/runs/{SCALE}/{paper}/{backbone}/{method}/seed{seed}"


def run_eval(paper, backbone, method, seed):
    return f"{R}/eval/{SCALE}/{paper}/{backbone}/{method}/seed{seed}/sts.json"


def run_eval_pooler(paper, backbone, method, seed, pooler):
    """A run's STS scores under another pooler than its own eval pooler (e.g. CLEAR Table 2's -mean rows)."""
    return f"{R}/eval/{SCALE}/{paper}/{backbone}/{method}/seed{seed}/sts.{pooler}.json"


def row_run_eval(paper, row, seed):
    """The STS file of a table row's run: its eval pooler's sts.json unless the row names another `pooler`."""
    bb = sc.stand_in(config, row["backbone"])
    pooler = row.get("pooler")
    if pooler and pooler != sc.train_spec(config, PAPERS[paper], row["backbone"], row["method"], seed)["eval_pooler"]:
        return run_eval_pooler(paper, bb, row["method"], seed, pooler)
    return run_eval(paper, bb, row["method"], seed)


def pretrained_eval(backbone, pooler):
    return f"{R}/eval/pretrained/{ORIGIN}/{backbone}/{pooler}.json"


def run_spec(w):
    return sc.train_spec(config, PAPERS[w.paper], paper_backbone(w.backbone), w.method, int(w.seed))


def table_inputs(paper, table):
    """Result files of each row of a paper table, keyed by row index (the report reads them in order)."""
    spec = PAPERS[paper]["tables"][table]
    rows = {}
    for i, row in enumerate(sc.iter_rows(spec)):
        if spec["kind"] == "tokenization_effects":
            rows[str(i)] = [tokenization_effects_file()]
        elif spec["kind"] == "augmentation_share":
            rows[str(i)] = [cache_file(row["augmentation"], s).replace(".parquet", ".json") for s in SEEDS]
        elif spec["kind"] in SUITES:    # a downstream suite's table (kind = suite): {suite}.json per model
            bb = sc.stand_in(config, row["backbone"])
            if "pretrained" in row:
                rows[str(i)] = [pretrained_suite_eval(bb, spec["kind"], row["pretrained"])]
            else:
                rows[str(i)] = [suite_eval(paper, bb, row["method"], s, spec["kind"]) for s in SEEDS]
        elif "pretrained" in row:
            rows[str(i)] = [pretrained_eval(sc.stand_in(config, row["backbone"]), row["pretrained"])]
        else:
            rows[str(i)] = [row_run_eval(paper, row, s) for s in SEEDS]
    return rows


def tokenization_effects_file(corpus=CORPUS):
    """CARDS Table 1 counts on `corpus` under the scale's RoBERTa stand-in tokenizer."""
    return f"{R}/analysis/tokenization_effects/{corpus}/{sc.stand_in(config, 'roberta-base')}.json"


def all_tables():
    return [f"{R}/tables/{p}/{t}.tex" for p, paper in PAPERS.items() for t in paper.get("tables", {})]


# Downstream suites (`sentaug evaluate SUITE`, one JSON per model) and the data folders each reads under a
# data root. They read official data only (there is no demo version of them), also at demo scale.
SUITES = ["transfer", "clustering", "intent", "glue", "analysis"]
SUITE_DATA = {"transfer": ["transfer"], "clustering": ["clustering"], "intent": ["intent"], "glue": ["glue"],
              "analysis": ["sts", "clustering"]}
SUITE_ARGS = {"transfer": f"--mode {'test' if SCALE == 'paper' else 'fast'}"}  # extra CLI flags per suite
if SCALE != "paper":
    # GLUE train files are not available offline: below paper scale the GLUE suite is a smoke test that
    # fine-tunes briefly on the four dev sets there are (its JSON says train_on_dev: true).
    SUITE_ARGS["glue"] = "--tasks CoLA SST-2 MRPC RTE --train-on-dev --max-steps 100"
if SCALE == "demo":
    SUITE_ARGS["analysis"] = "--stackoverflow-limit 4000"  # a labelled subsample (purity is not comparable)


def suite_data(suite, origin="official"):
    return [f"{data_root(origin)}/{folder}" for folder in SUITE_DATA[suite]]


def suite_code(suite):
    """The modules a suite runs (those that exist: suites differ in layout), as inputs."""
    files = code(f"evaluate/{suite}.py", "evaluate/embeddings.py", "evaluate/logreg.py", f"data/{suite}.py",
                 "models/encoder.py", "models/poolers.py")
    return [f for f in files if Path(f).exists()]


def suite_eval(paper, backbone, method, seed, suite):
    return f"{R}/eval/{SCALE}/{paper}/{backbone}/{method}/seed{seed}/{suite}.json"


def pretrained_suite_eval(backbone, suite, pooler, origin="official"):
    return f"{R}/eval/pretrained/{origin}/{backbone}/{suite}/{pooler}.json"


wildcard_constraints:
    seed=r"\d+",
    origin="demo|official",
    suite="|".join(SUITES),
    backbone=r"[^/]+",
    pooler=r"[^/]+",
