"""Every rule of the workflow, declared once with what its jobs run on and how the bill prices them.

A rule whose jobs use a GPU (training, the retrieval index, evaluations: their embeddings and GLUE's fine-tuning,
the analyses behind figures) asks for one at scales on GPUs and goes to the GPU partition on SLURM
(sentaug.workflow.resources); `sentaug cost` prices its jobs on the device's step times (sentaug.workflow.bill).
Every other rule's jobs run on CPUs and are not in device-hours. A rule missing here is an error naming it,
in the bill and in the rules that ask for their resources, so that a new GPU rule is never priced or scheduled
as a CPU one without a word.

A rule whose jobs run `sentaug evaluate ...` on a model names that model (`JobKind.model`): at a scale on GPUs
its jobs of one model run in one process (sentaug.evaluate.service), and the bill counts the process's start-up
once per model (its other jobs start as clients, `cost.SHARED`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import cost
from .evaluations import Evaluation, load_suites, pretrained_evaluation, run_evaluation

# Columns of the bill a priced job falls in.
TRAIN, GLUE, EVAL = "train", "glue", "eval"
GPU_KINDS = (TRAIN, GLUE, EVAL)     # the bill's columns of jobs priced on the device; the other jobs run on CPUs


@dataclass(frozen=True)
class JobKind:
    """What a rule's jobs run on, and how one is priced: `price(workflow, wildcards, step_times, startup=OWN)` ->
    (the bill's column, cost.Projection); None for a job on CPUs. `model(workflow, wildcards)`: the model folder a
    job evaluates in the model's evaluation process (sentaug.evaluate.service), None for a rule whose jobs run in
    processes of their own."""
    gpu: bool
    price: Callable | None = None
    model: Callable | None = None


def _shape(workflow, w: dict) -> dict:
    return cost.backbone_shape(workflow.config, w["backbone"])


def _train(workflow, w: dict, times, startup: str = cost.OWN):
    spec = workflow.run_spec(w["paper"], w["backbone"], w["method"], int(w["seed"]))
    return TRAIN, cost.project_run(workflow, spec, times, workflow.config)


def _evaluation(name_to_evaluation: Callable[[str], Evaluation]) -> Callable:
    def price(workflow, w: dict, times, startup: str = cost.OWN):
        load_suites(workflow.config)        # a suite of the configuration's plugins is priced as a built-in one
        evaluation = name_to_evaluation(w["evaluation"])
        if evaluation.suite == "glue":
            options = dict(item.partition("=")[::2] for item in evaluation.options.split("~") if item)
            recipe = workflow.glue_recipe(options["recipe"]) if "recipe" in options else None
            return GLUE, cost.project_glue(times, _shape(workflow, w), workflow.glue_tasks,
                                           workflow.glue_max_steps(), "rdrop" in options, startup, recipe)
        return EVAL, cost.project_suite(times, _shape(workflow, w), evaluation.suite, startup)

    return price


def _augmentation_analysis(workflow, w: dict, times, startup: str = cost.OWN):
    """Each changed pair embedded, and scored by GPT-2's perplexity (loaded in the same process)."""
    n = 2 * workflow.augmentation_analysis_sample() * len(workflow.augmentation_set(w["set"]))
    p = cost.project_embedding(times, _shape(workflow, w), n, ["sample size as an upper bound"], startup=startup)
    lm = cost.project_embedding(times, cost.workload()["shapes"]["gpt2"], n)
    lm_work = lm.seconds - lm.parts["startup"]
    return EVAL, cost.Projection(p.seconds + lm_work, 0, {"sentences": 2 * n}, p.basis, p.sizes,
                                 [*p.pieces, ("perplexity", lm_work, lm.pieces[1][2])])


def _projection(workflow, w: dict, times, startup: str = cost.OWN):
    n = 2 * int(w["sample"]) * len(workflow.projection_augmentations(w["augs"]))
    return EVAL, cost.project_embedding(times, _shape(workflow, w), n, ["sample size as an upper bound"])


def _index(workflow, w: dict, times, startup: str = cost.OWN):
    return EVAL, cost.project_index(times, _shape(workflow, w), w["corpus"])


def _run_model(workflow, w: dict) -> str:
    return workflow.run_dir(w["paper"], w["backbone"], w["method"], int(w["seed"]))


def _backbone_model(workflow, w: dict) -> str:
    return workflow.backbone_dir(w["backbone"])


CPU = JobKind(gpu=False)
RULES: dict[str, JobKind] = {
    # on a GPU (rules/train.smk, index.smk, evaluate.smk)
    "train": JobKind(True, _train),
    "index": JobKind(True, _index),
    "evaluate_run": JobKind(True, _evaluation(run_evaluation), _run_model),
    "evaluate_pretrained": JobKind(True, _evaluation(pretrained_evaluation), _backbone_model),
    "augmentation_analysis_run": JobKind(True, _augmentation_analysis, _run_model),
    "augmentation_analysis_pretrained": JobKind(True, _augmentation_analysis, _backbone_model),
    "projection_run": JobKind(True, _projection),
    "projection_pretrained": JobKind(True, _projection),
    # on CPUs: downloads, parses, augmentation caches, token files, tables, figures and the report
    **dict.fromkeys(["all", "download_senteval", "download_corpus", "download_data", "data_stats", "parse", "augment",
                     "backbone", "nli_triplets", "tokenize_corpus", "tokenize_cache", "token_pca", "table", "figure",
                     "augment_cosine", "conformance", "census", "tokenization_effects", "describe_spec",
                     "describe_model_size", "leaderboard", "compare", "report_table", "report_figure",
                     "report_census", "report_leaderboard", "report_front_page", "moved_target", "slice_data"], CPU),
    **dict.fromkeys(["report_built", "misplaced_target"], CPU),
}


def rule_kind(rule: str) -> JobKind:
    """The declared kind of `rule`'s jobs; an undeclared rule is an error naming it."""
    if rule not in RULES:
        raise ValueError(f"rule '{rule}' is not declared in sentaug.workflow.jobs.RULES: declare whether its jobs "
                         f"run on a GPU (and how the bill prices them) or on CPUs")
    return RULES[rule]
