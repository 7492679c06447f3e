"""Where the workflow keeps every output, and which result files each target reads.

The Snakefile builds one `Workflow` from the validated config and its rules ask its members for paths, specs and
resources; nothing here runs a job. Keeping this in the package (not in `rules/*.smk`) lets tests resolve a table's
inputs without Snakemake and keeps the rules free of logic. Its modules: `paths` (where data, caches, runs,
evaluations, analyses and every job's log live: every path pattern, once), `specs` (every run's resolved training
spec, and the stand-in backbones), `evaluations` (what an evaluation's result file is, and what its job reads and is
given), `jobs` (every rule: on a GPU, doing what, or on CPUs), `resources` (what a job asks a cluster for) and
`targets` (the `Workflow`, holding the others as `W.paths`, `W.specs`, `W.evaluations` and `W.resources`, and what
each paper table, figure, leaderboard and report page reads); `planned` lists the jobs of a DAG (a Snakemake dry
run), which sentaug.pricing prices (`sentaug cost`).

Runs are keyed by (scale, paper, backbone, method, seed). Only paper scale applies the papers' own training
recipes, so below it a method's run does not depend on the paper and every paper's tables share one run:
its paper component is `shared` (SimCSE is trained once per backbone and seed, not once per paper).
"""
# What the Snakefile, tests and benchmarks import; TRAIN_RESOURCES because config.yaml and the config schema
# name it here as the training defaults.
from .paths import data_folders, parse_token_key, token_key
from .resources import TRAIN_RESOURCES
from .targets import Workflow

__all__ = ["TRAIN_RESOURCES", "Workflow", "data_folders", "parse_token_key", "token_key"]
