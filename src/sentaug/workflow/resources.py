"""What each job asks for where it runs: threads, memory, GPUs, the node (a SLURM partition) and its runtime, and
how a training job is launched. Which rules' jobs use a GPU is declared once, in sentaug.workflow.jobs; their
runtime on a cluster is the bill's projection with a margin (sentaug.pricing.runtime)."""
from __future__ import annotations

from typing import Callable

from .. import config as sc
from .jobs import rule_kind

# What a training job asks for unless `scales.<scale>.train_resources` says otherwise.
TRAIN_RESOURCES = {"gpu": 0, "threads": 2, "mem_mb": 4000, "runtime": 60}
# Threads of an evaluation or analysis job unless `scales.<scale>.eval_threads` says otherwise.
EVAL_THREADS = 2


class JobResources:
    """The resources of the workflow's jobs at its scale (a part of `Workflow`): `config` the workflow's, `settings`
    its scale's (sentaug.config.scale_settings)."""

    def __init__(self, config: dict, settings: dict):
        self.config = config
        self.scale = config["scale"]
        self.S = settings

    def train_resources(self) -> dict:
        """GPUs, threads, memory (MB) and run time (minutes) of a training job at this scale."""
        return {**TRAIN_RESOURCES, **(self.S.get("train_resources") or {})}

    def on_gpus(self) -> bool:
        """Whether this scale runs on GPUs: its training jobs ask for one or more (`train_resources.gpu`); then
        every job of a GPU rule does (sentaug.workflow.jobs)."""
        return self.train_resources()["gpu"] >= 1

    def runs_per_gpu(self) -> int:
        """Training runs that share one GPU (`scales.<scale>.runs_per_gpu`, default 1): only with one GPU per run."""
        k = int(self.S.get("runs_per_gpu", 1))
        if k > 1 and self.train_resources()["gpu"] != 1:
            raise sc.ConfigError(f"scales.{self.scale}.runs_per_gpu is {k}: runs share a GPU only when each asks "
                                 f"for one (scales.{self.scale}.train_resources.gpu is "
                                 f"{self.train_resources()['gpu']})")
        return k

    def train_job_resources(self) -> dict:
        """A training job's resources but its runtime (`train_runtime`): its GPUs and memory, and with
        runs_per_gpu > 1 its share of a GPU. A group of runs_per_gpu such jobs goes to SLURM as one job
        (sentaug.snakemake_hooks.share_gpus), and a group adds its jobs' numeric resources up: they ask for
        the GPU as the string `gres` (all equal in a group, so taken once: one GPU for the group) instead of
        the number `gpu`. `gpu_runs`, one per job, is what a local run counts against runs_per_gpu x GPUs."""
        res = self.train_resources()
        out = {"mem_mb": res["mem_mb"]}
        if self.runs_per_gpu() > 1:
            return {**out, "gres": "gpu:1", "gpu_runs": 1}
        return {"gpu": res["gpu"], **out}

    def job_resources(self, rule: str, runtime: Callable | None = None) -> dict:
        """What a job of `rule` asks for beside its threads, by the kind of its rule (sentaug.workflow.jobs.RULES).
        At a scale on GPUs a job that uses one asks for it on the GPU partition (config `slurm_gpu_partition`; the
        other jobs go to the profile's default partition): a training run as `train_job_resources` says, another
        job for one GPU, as the string `gres` where a SLURM group of its rule's jobs shares one (profiles/slurm)
        instead of adding theirs up, and for `runtime`, a callable of its wildcards (its projected time on the
        scale's device with a margin: sentaug.pricing.runtime) when given. Jobs on CPUs, and every job but
        training below such a scale, ask for nothing more: the profile's defaults (the CPU partition)."""
        kind = rule_kind(rule)
        if kind.trains:
            out = dict(self.train_job_resources())
            if not self.on_gpus():
                return out
        elif not (kind.gpu and self.on_gpus()):
            return {}
        else:
            out = {"gres": "gpu:1"} if kind.shares_gpu else {"gpu": 1}
            if runtime is not None:
                out["runtime"] = runtime
        return {**out, "slurm_partition": self.config["slurm_gpu_partition"]}

    def workers(self) -> int:
        """Worker processes of a parse, augmentation or index job: the scale's `workers`, else the top level's."""
        return self.S.get("workers", self.config.get("workers", 1))

    def eval_threads(self) -> int:
        """Threads of an evaluation or analysis job at this scale."""
        return self.S.get("eval_threads", EVAL_THREADS)

    def train_launcher(self) -> tuple[str, int]:
        """(command, threads per process) of a training job: `python -m sentaug.cli`, or with more than one
        GPU `torchrun` with one process per GPU (data parallel, `sentaug.train.distributed`), the job's
        threads shared among them."""
        res = self.train_resources()
        if res["gpu"] > 1:
            return (f"torchrun --standalone --nproc_per_node {res['gpu']} -m sentaug.cli",
                    max(1, res["threads"] // res["gpu"]))
        return "python -m sentaug.cli", res["threads"]
