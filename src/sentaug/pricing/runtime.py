"""Minutes a job on a GPU asks a cluster for (SLURM's `runtime`): its projection on the device the scale is priced
on (`scales.<scale>.step_times`) with a margin (`cost.train_runtime_minutes`), as the bill prices it. The rules
ask here (rules/common.smk: `job_resources`, `train_runtime`); what else a job asks for is the workflow's
(sentaug.workflow.resources)."""
from __future__ import annotations

from typing import Callable

from . import cost
from .prices import price


class Runtimes:
    """The runtimes of a workflow's jobs on a GPU at its scale (`workflow`: a sentaug.workflow.Workflow)."""

    def __init__(self, workflow):
        self.workflow = workflow
        self._step_times = None

    def step_times(self):
        """The step-time table of the device this scale is priced on (`scales.<scale>.step_times`), or None."""
        name = self.workflow.S.get("step_times")
        if not name:
            return None
        if self._step_times is None:
            from .datasheet import load

            self._step_times = load(name)      # measured, else calibrated from datasheet rates
        return self._step_times

    def train(self, paper: str, backbone: str, method: str, seed: int) -> int:
        """Minutes a training job asks for: `scales.<scale>.train_resources.runtime` when given, else the run's
        projection on the scale's device with a margin, else the default (sentaug.workflow.resources)."""
        W = self.workflow
        explicit = (W.S.get("train_resources") or {}).get("runtime")
        times = self.step_times()
        if explicit is not None or times is None:
            return W.resources.train_resources()["runtime"]
        k = W.resources.runs_per_gpu()
        spec = W.specs.run_spec(paper, backbone, method, seed)
        projection = cost.project_run(W.paths, spec, times, W.config)
        return cost.train_runtime_minutes(projection, k, cost.sharing_gain(times, W.config, spec, k)[0])

    def job(self, rule: str) -> Callable | None:
        """What a job of a GPU rule other than training asks for as its runtime: a callable of its wildcards (its
        projection with the margin), None where the scale is priced on no device."""
        if not self.workflow.S.get("step_times"):
            return None
        return lambda wildcards: self.minutes(rule, wildcards)

    def minutes(self, rule: str, wildcards) -> int:
        """Minutes a job of `rule` with `wildcards` asks for: its projection with the margin."""
        _, projection = price(rule, self.workflow, dict(wildcards), self.step_times())
        return cost.train_runtime_minutes(projection)
