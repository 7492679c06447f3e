"""Every rule of the workflow, declared once with what its jobs do on a GPU, if anything, and so what they run on.

A rule whose jobs use a GPU (training, the retrieval index, evaluations: their embeddings and GLUE's fine-tuning,
the analyses behind figures) asks for one at scales on GPUs and goes to the GPU partition on SLURM
(sentaug.workflow.resources); `sentaug cost` prices its jobs on the device's step times by what they do
(sentaug.pricing.prices).
Every other rule's jobs run on CPUs and are not in device-hours. A rule missing here is an error naming it,
in the bill and in the rules that ask for their resources, so that a new GPU rule is never priced or scheduled
as a CPU one without a word.

A rule whose jobs run `sentaug evaluate ...` on a model names that model (`JobKind.model`): at a scale on GPUs
its jobs of one model run in one process (sentaug.evaluate.service), and the bill counts the process's start-up
once per model (its other jobs start as clients, `sentaug.pricing.cost.SHARED`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

TRAINING = "train"      # the work of a training run


@dataclass(frozen=True)
class JobKind:
    """What a rule's jobs do, and so what they run on and ask for. `work`: what a job does on a GPU, as the bill
    prices it (sentaug.pricing.prices.PRICES); None: its jobs run on CPUs. `shares_gpu`: at a scale on GPUs a job
    asks for its GPU as the string `gres`, which a SLURM group of such jobs (profiles/slurm) takes once, instead of
    the number `gpu` of a job with a GPU of its own (sentaug.workflow.resources). `model(workflow, wildcards)`: the
    model folder a job evaluates in the model's evaluation process (sentaug.evaluate.service), None for a rule
    whose jobs run in processes of their own."""
    work: str | None = None
    shares_gpu: bool = False
    model: Callable | None = None

    @property
    def gpu(self) -> bool:
        """Whether its jobs use a GPU: every job priced on the device does."""
        return self.work is not None

    @property
    def trains(self) -> bool:
        """Whether its jobs are training runs (sentaug.workflow.resources: the training resources)."""
        return self.work == TRAINING


def _run_model(workflow, w: dict) -> str:
    return workflow.paths.run_dir(w["paper"], w["backbone"], w["method"], int(w["seed"]))


def _backbone_model(workflow, w: dict) -> str:
    return workflow.paths.backbone_dir(w["backbone"])


CPU = JobKind()
RULES: dict[str, JobKind] = {
    # on a GPU (rules/train.smk, index.smk, evaluate.smk)
    "train": JobKind(TRAINING),
    "index": JobKind("index"),
    "evaluate_run": JobKind("run_evaluation", shares_gpu=True, model=_run_model),
    "evaluate_pretrained": JobKind("pretrained_evaluation", shares_gpu=True, model=_backbone_model),
    "augmentation_analysis_run": JobKind("augmentation_analysis", shares_gpu=True, model=_run_model),
    "augmentation_analysis_pretrained": JobKind("augmentation_analysis", shares_gpu=True, model=_backbone_model),
    "projection_run": JobKind("projection", shares_gpu=True),
    "projection_pretrained": JobKind("projection", shares_gpu=True),
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
