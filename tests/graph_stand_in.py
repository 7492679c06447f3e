"""A CPU stand-in for the CUDA graph of `sentaug.train.step.StepRunner` (its `graphs`), so that the runner's own
logic (which steps run eagerly, the static inputs, the gradient buffers, the fallback) runs without a GPU.

It does what a captured graph does, as far as the runner can tell: capturing runs nothing and leaves every
parameter's `.grad` at a buffer of its own (the captured backward's allocation); a replay runs the step on the
tensors captured (the static inputs: what the runner copied into them, nothing else), writes each gradient into
its buffer, and leaves `.grad` as it found it (a replay writes to addresses, not to attributes). Warm-up steps
run where they are (no side stream); nothing is pinned.

    monkeypatch.setattr(StepRunner, "graphs", RecordedGraphs)
"""
from __future__ import annotations

import contextlib

from sentaug.train.inputs import StepInputs


class RecordedGraph:
    """One captured step: `replay()` runs it again."""

    def __init__(self, step_fn, inputs: StepInputs, params: list):
        self.step_fn, self.params = step_fn, params
        # the tensors themselves (their addresses), not the runner's attribute: a replay reads these
        self.inputs = StepInputs(dict(inputs.tensors), inputs.layout, inputs.lookups, inputs.full)
        self.buffers = [p.new_zeros(p.shape) for p in params]
        for p, buffer in zip(params, self.buffers):
            p.grad = buffer
        self.replays = 0

    def replay(self) -> None:
        attributes = [p.grad for p in self.params]
        for p in self.params:
            p.grad = None                         # the captured backward overwrites: nothing to add onto
        self.step_fn(self.inputs)
        for p, buffer, attribute in zip(self.params, self.buffers, attributes):
            if p.grad is not None:
                buffer.copy_(p.grad)
            p.grad = attribute
        self.replays += 1


class RecordedGraphs:
    """`StepRunner.graphs` on the CPU. `fail`: the attention kernels whose capture raises (None: SDPA's default,
    "efficient"), a forced capture failure; `captures` and `warmups` count what the runner asked for."""

    fail: tuple = ()

    def __init__(self, runner):
        self.runner = runner
        self.captures: list = []       # the attention kernel of each capture asked for
        self.warmups = 0
        self.graph: RecordedGraph | None = None

    @contextlib.contextmanager
    def side_stream(self):
        self.warmups += 1
        yield

    def capture(self, step_fn, inputs: StepInputs, attention):
        self.captures.append(attention)
        if attention in self.fail:
            raise RuntimeError(f"forced capture failure ({attention or 'default'} attention)\nsecond line")
        params = [p for group in self.runner.optimizer.param_groups for p in group["params"] if p.requires_grad]
        self.graph = RecordedGraph(step_fn, inputs, params)
        return self.graph

    @staticmethod
    def pinned(tensor):
        return tensor


def failing(*attention) -> type:
    """`RecordedGraphs` whose captures with these attention kernels fail."""
    return type("FailingGraphs", (RecordedGraphs,), {"fail": attention})
