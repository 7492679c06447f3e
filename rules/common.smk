# Paths, scale resolution and input functions shared by every stage. Logic lives in the sentaug package;
# rules call its command line (`python -m sentaug.cli`, so a conda env only needs the dependencies).
import json
import os
import re
import shlex
import sys
from pathlib import Path

from sentaug.choices import answered
from sentaug.pricing.runtime import Runtimes
from sentaug.report.pages import page_caption, rst_escape
from sentaug.snakemake_hooks import (announce_first_table, augmentation_module, build_flags, code_digest,
                                     drop_local_job_rate_limit, explain_locks, export_job_environment,
                                     misplaced_target, misplaced_target_pattern, moved_target,
                                     moved_target_pattern, part_plugin_modules, plugin_file, plugin_module,
                                     reporting, share_evaluation_processes, share_gpus, start_job_server,
                                     stop_job_server)
from sentaug.train.mps import start_for_local_run as start_mps, stop_for_local_run as stop_mps
from sentaug.workflow import Workflow, data_folders, parse_token_key
from sentaug.workflow.evaluations import (load_suites, pretrained_evaluation, pretrained_evaluation_pattern,
                                         run_evaluation, run_evaluation_pattern)

SRC = Path(workflow.basedir) / "src"
export_job_environment(SRC, sys.executable)   # jobs import this checkout's src with this interpreter

R = config.get("results", "results")
# `snakemake --report FILE`: its default target is rule report_built, the report of whatever is built so far.
REPORTING = reporting()
if workflow.is_main_process:    # a second run in this folder: its lock error says whether the other one is alive
    explain_locks()
load_suites(config)     # the suites of config key suites.modules: evaluations as the built-in ones are
W = Workflow(config, results=R)
SCALE = W.scale
S = W.S
ORIGIN = W.origin                      # demo (bundled) or official (downloads / mirror); official-<scale>: sliced
INSTALLED_ORIGINS = "demo|official"    # what the download rules install; slice_data cuts the sliced ones from them
# The sliced origin of this scale (rule slice_data); a pattern that matches no path at a scale without slices.
SLICED_ORIGIN = ORIGIN if W.slices else "official-none"
CORPUS = W.corpus
SEEDS = W.seeds
PAPERS = W.papers
TRAIN_RESOURCES = W.resources.train_resources()
TRAIN_LAUNCHER = W.resources.train_launcher()
TRAIN_GROUP = share_gpus(workflow, W.resources.runs_per_gpu())   # runs_per_gpu > 1: runs share GPUs (see there)
# At a scale on GPUs a model's evaluations run in one process, which loads it once (see there).
share_evaluation_processes(workflow, W.resources.on_gpus())
EVAL_THREADS = W.resources.eval_threads()
WORKERS = W.resources.workers()

# The names the rules use; the resolution lives in sentaug.workflow (documented and tested there). Every
# output's path is W.paths.pattern(<name>): sentaug.workflow.paths.PATTERNS.
data_root = W.paths.data_root
corpus_file = W.paths.corpus_file
backbone_dir = W.paths.backbone_dir
cache_file = W.paths.cache_file
run_dir = W.paths.run_dir
table_inputs = W.table_inputs
all_tables = W.all_tables
# The input functions that resolve a target's wildcards (its paper, table, figure, method, augmentation): a name
# that is not declared is answered in one line naming the valid ones, not by Snakemake's InputFunctionException.
table_files = answered()(W.table_files)
figure_targets = answered()(W.figure_targets)
# The resources each job asks for where it runs. At a scale on GPUs the jobs that use one (sentaug.workflow.jobs)
# ask for a GPU on the GPU partition for their projected runtime (sentaug.pricing.runtime); the others take the
# defaults (profiles/slurm).
RUNTIMES = Runtimes(W)


def job_resources(rule):
    return W.resources.job_resources(rule, runtime=RUNTIMES.job(rule))


def code(*entries, skip=()):
    """A digest of the package code a rule's command runs (its entry modules and all they import), as the
    rule's `code` parameter: a job reruns when what it runs changes (sentaug.snakemake_hooks.code_digest)."""
    return code_digest(SRC, *entries, skip=skip)


@answered()
def run_spec(w):
    return W.specs.run_spec(w.paper, w.backbone, w.method, w.seed)


onstart:
    drop_local_job_rate_limit(workflow)   # its timers multiply the scheduler's passes (see there)
    # Local jobs as forks of one process that imported torch & co. once (scales.<scale>.job_server; see there).
    start_job_server(workflow, S.get("job_server", False), W.paths.log("job_server"))
    # Where to look while a long build goes on: the first table, and the report that `make report` writes.
    announce_first_table(W.paths.folder("table"), then="results/report.html (make report; make demo writes it last)")
    # Training runs sharing a GPU run side by side under NVIDIA MPS where it exists (sentaug.train.mps).
    start_mps(workflow, W.resources.runs_per_gpu())


onsuccess:
    stop_job_server()
    stop_mps(workflow, W.resources.runs_per_gpu())


onerror:
    stop_job_server()
    stop_mps(workflow, W.resources.runs_per_gpu())


wildcard_constraints:
    seed=r"\d+",
    origin=r"demo|official(?:-[a-z0-9]+)?",     # official-<scale>: a scale's slices (rule slice_data)
    backbone=r"[^/]+",
    pooler=r"[^/]+",
    paper=r"(?!compare/)[^/]+",     # <results>/tables/compare/<name>.* is a comparison's (rule compare)


# Input functions and values of single rules (kept here: the rule files hold rules only).


# download.smk
def _mirror_flag():
    return f"--mirror {config['data']['mirror']}" if config["data"].get("mirror") else ""


def _download_code(w):
    """A download from the official source never reads the bundled demo data."""
    return code("data/download.py", skip=() if w.origin == "demo" else ("resources/demo",))


# augment.smk
@answered()
def _augmentation(w):
    """(op, parameters, backbone folders) of the declared augmentation; `backbone:<name>` parameters (CARDS's
    RoBERTa tokenizer, CTxt's masked LM, AugCSE's seq2seq models) name this scale's backbone folders."""
    return sc.augmentation_call(config, w.augmentation, W.paths.folder("backbone"))


def _augmentation_code(w):
    """The cache builder and the module of this augmentation's family or plugin (the registry imports it by name)."""
    return code("augment/cache.py", augmentation_module(_augmentation(w)[0]))


def _augmentation_args(w):
    """--param k=v per parameter of the declared augmentation; a plugin's op adds --module, the module the job
    imports first (a module the config names is not among those a new process imports on its own)."""
    op, params, _ = _augmentation(w)
    plugin = plugin_module(op)
    return " ".join([f"--param {k}={json.dumps(v)}" for k, v in params.items()]
                    + ([f"--module {plugin}"] if plugin else []))


# train.smk
def train_runtime(w):
    """Minutes a training job asks for: its run's projection on the scale's GPU with a margin, unless the
    scale sets a runtime (sentaug.pricing.runtime.Runtimes.train)."""
    return RUNTIMES.train(w.paper, w.backbone, w.method, w.seed)


def _train_code(w):
    """The trainer's modules (and those of the STS-B dev scoring it selects checkpoints with), the built-in
    objectives and the plugins that register a part of the run's method (the registry imports both by name, which
    the digest cannot follow); not the model card's (its words retrain nothing: a card is rewritten at the run's
    next evaluation)."""
    return code("train/trainer.py", "objectives", *map(plugin_file, part_plugin_modules(run_spec(w))),
                skip=("train/model_card.py", "models/identity.py"))


def _train_modules(w):
    """--module per plugin that registers a part of the run's method: the job imports it first."""
    return " ".join(f"--module {m}" for m in part_plugin_modules(run_spec(w)))


def _positives(w):
    spec = run_spec(w)
    return [cache_file(aug, seed, spec["corpus"]) for aug, seed in sc.method_caches(spec)]


def _index(w):
    """CARDS' retrieval index: built with the frozen backbone this run starts from, pooled as it evaluates."""
    spec = run_spec(w)
    return W.paths.index_file(spec, w.backbone) or []       # the index its parts read (sentaug.parts), if any


def _tokens(w):
    """Token files of the run's fixed texts at scales that pre-tokenize (`scales.<scale>.pretokenize`)."""
    return W.paths.run_tokens(run_spec(w), w.backbone) if S.get("pretokenize") else []


def _tokenize_args(w):
    """--max-length and --add-tokens of a token folder's key (`len32`, `len32-added-del`)."""
    declared = [t for m in config["methods"].values() for t in m.get("add_tokens") or []]
    max_length, added = parse_token_key(w.key, declared)
    return f"--max-length {max_length}" + ("" if not added else " --add-tokens " + " ".join(map(shlex.quote, added)))


# evaluate.smk: a model's evaluation named by its result file (sentaug.workflow.evaluations), its suite's data at
# the scale (the bundled demo data at demo scale, the official data above it) and its flags.
def _run_evaluation(w):
    return run_evaluation(w.evaluation)


def _pretrained_evaluation(w):
    return pretrained_evaluation(w.evaluation)


# evaluate.smk: analyses behind figures (sentaug.workflow resolves their paths and inputs).
# GPT-2 is config.yaml's backbone `gpt2`, at the commit it pins (`<id>@<commit>`, sentaug.models.hub).
_LM = config["backbones"].get("gpt2", {"id": "gpt2"})
AUGMENTATION_ANALYSIS = (f"--tasks augmentations --iso-sample {W.paths.augmentation_analysis_sample()} "
                         f"--gh-sample 0 --lm {_LM['id']}" + (f"@{_LM['revision']}" if _LM.get("revision") else ""))
# Where GPT-2 is not offline (scales.<scale>.hub_offline, below paper scale) the perplexity is recorded as skipped
# at once instead of after the hub client's minute of retries.
HUB_OFFLINE = "1" if W.paths.hub_offline() else "0"


# report.smk: the augmentation census, every declared augmentation on the scale's corpus (first seed), with the
# cosine between original and augmented under the scale's bert-base-uncased stand-in (mean pooling).
CENSUS_BACKBONE = sc.stand_in(config, "bert-base-uncased")
CONFORMANCE = W.paths.conformance_file()


def census_rows():
    """Every declared augmentation, or the `census` list when the config gives one."""
    names = config.get("census") or [a for a in config["augmentations"]     # English corpus: English rules
                                     if sc.augmentation_language(config, a) == "en"]
    unknown = [a for a in names if a not in config["augmentations"]]
    if unknown:
        raise ValueError(f"config key 'census': unknown augmentation {unknown[0]!r}")
    return {a: {"stats": W.paths.cache_stats(a, SEEDS[0]),
                "embedding": W.paths.census_embedding_file(a, SEEDS[0], CENSUS_BACKBONE)} for a in names}


# report.smk: report pages, one self-contained HTML page per table and figure.
LEADERBOARD_SPEC = str(Path(config.get("papers_dir", "papers")) / "leaderboard.yaml")
BOARDS = "|".join(re.escape(board) for board in W.leaderboards)   # the {board} wildcard: declared boards only
COMPARISONS = "|".join(re.escape(name) for name in W.comparisons)   # the {name} wildcard of rule compare


def _board_backbone(w):
    return W.leaderboards[w.board]


def _page_meta(short, meta):
    """A report page's meta: its output's own (W.table_meta, figure_meta, leaderboard_meta, scale_meta) and its
    category."""
    return {**meta, "short": short}


def _board_meta(w):
    return _page_meta("Leaderboard", W.leaderboard_meta(_board_backbone(w)))


def _short(paper):
    return PAPERS[paper].get("short", paper)
