"""How the bill prices a job on a GPU, by what the job does (`sentaug.workflow.jobs.JobKind.work`): a training
run, CARDS' retrieval index, a trained run's or a pre-trained backbone's evaluation (GLUE's fine-tuning among
them), an augmentation analysis or a projection. Each is priced on one device's step times (`cost`) and falls in
a column of the bill: training, GLUE or the other evaluations. A job on CPUs is not in device-hours.
"""
from __future__ import annotations

from typing import Callable

from ..workflow.evaluations import Evaluation, load_suites, pretrained_evaluation, run_evaluation
from ..workflow.jobs import rule_kind
from . import cost

# Columns of the bill a priced job falls in.
TRAIN, GLUE, EVAL = "train", "glue", "eval"
GPU_KINDS = (TRAIN, GLUE, EVAL)     # the bill's columns of jobs priced on the device; the other jobs run on CPUs
CPU = "cpu"                         # the column of the jobs on CPUs


def _shape(workflow, w: dict) -> dict:
    return cost.backbone_shape(workflow.config, w["backbone"])


def _train(workflow, w: dict, times, startup: str = cost.OWN):
    spec = workflow.specs.run_spec(w["paper"], w["backbone"], w["method"], int(w["seed"]))
    return TRAIN, cost.project_run(workflow.paths, spec, times, workflow.config)


def _evaluation(name_to_evaluation: Callable[[str], Evaluation]) -> Callable:
    def price(workflow, w: dict, times, startup: str = cost.OWN):
        load_suites(workflow.config)        # a suite of the configuration's plugins is priced as a built-in one
        evaluation = name_to_evaluation(w["evaluation"])
        if evaluation.suite == "glue":
            options = dict(item.partition("=")[::2] for item in evaluation.options.split("~") if item)
            recipe = workflow.evaluations.glue_recipe(options["recipe"]) if "recipe" in options else None
            return GLUE, cost.project_glue(times, _shape(workflow, w), workflow.evaluations.glue_tasks,
                                           workflow.evaluations.glue_max_steps(), "rdrop" in options, startup, recipe)
        return EVAL, cost.project_suite(times, _shape(workflow, w), evaluation.suite, startup)

    return price


def _augmentation_analysis(workflow, w: dict, times, startup: str = cost.OWN):
    """Each changed pair embedded, and scored by GPT-2's perplexity (loaded in the same process)."""
    n = 2 * workflow.paths.augmentation_analysis_sample() * len(workflow.paths.augmentation_set(w["set"]))
    p = cost.project_embedding(times, _shape(workflow, w), n, ["sample size as an upper bound"], startup=startup)
    lm = cost.project_embedding(times, cost.workload()["shapes"]["gpt2"], n)
    lm_work = lm.seconds - lm.parts["startup"]
    return EVAL, cost.Projection(p.seconds + lm_work, 0, {"sentences": 2 * n}, p.basis, p.sizes,
                                 [*p.pieces, ("perplexity", lm_work, lm.pieces[1][2])])


def _projection(workflow, w: dict, times, startup: str = cost.OWN):
    n = 2 * int(w["sample"]) * len(workflow.paths.projection_augmentations(w["augs"]))
    return EVAL, cost.project_embedding(times, _shape(workflow, w), n, ["sample size as an upper bound"])


def _index(workflow, w: dict, times, startup: str = cost.OWN):
    return EVAL, cost.project_index(times, _shape(workflow, w), w["corpus"])


# What prices each kind of work on a GPU (the `work` of sentaug.workflow.jobs.RULES):
# `price(workflow, wildcards, step_times, startup=cost.OWN)` -> (the bill's column, cost.Projection).
PRICES: dict[str, Callable] = {
    "train": _train,
    "index": _index,
    "run_evaluation": _evaluation(run_evaluation),
    "pretrained_evaluation": _evaluation(pretrained_evaluation),
    "augmentation_analysis": _augmentation_analysis,
    "projection": _projection,
}


def price(rule: str, workflow, wildcards: dict, times, startup: str = cost.OWN) -> tuple[str, cost.Projection | None]:
    """(the bill's column, its projection) of a job of `rule` with `wildcards`; (CPU, None) for a job on CPUs. A
    rule missing from sentaug.workflow.jobs.RULES is an error naming it."""
    work = rule_kind(rule).work
    return PRICES[work](workflow, wildcards, times, startup) if work else (CPU, None)
