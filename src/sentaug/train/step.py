"""Running the training step: eagerly, or as one CUDA graph replayed at every step.

At the papers' batch of 64 a BERT-base step is a few milliseconds of GPU work spread over about a thousand
kernels; launched one by one from Python, the GPU waits on the host for most of the step. `StepRunner` runs
the same step function (`Method.compute`, backward, the optimizer step, the loss tally and the divergence
guard) either way:

* eager (always on the CPU, where runs keep their results bit for bit): the function, then `zero_grad`;
* graph (CUDA, one process): the inputs are padded to fixed shapes (`sentaug.train.inputs.FixedShape`) and
  copied into static device tensors; the first `warmup` steps run eagerly on a side stream (real steps: lazy
  initialisation, optimizer state), the next one is captured into a `torch.cuda.CUDAGraph` and every later
  step replays it. What makes that exact: the optimizer is the fused AdamW with `capturable=True` and its
  learning rates in device tensors, which the scheduler fills between replays; the gradients are allocated by
  the captured backward, so every replay overwrites them; the loss tally and the guard add into tensors in
  place; dropout draws from the CUDA generator, whose offset the graph advances at every replay, so each replay
  draws fresh masks (the same ones an eager step would draw). A step whose shapes differ (an epoch's last,
  smaller batch; an MLM selection larger than its room) runs eagerly beside the graph. A capture that fails
  leaves the run eager, and says why.

What the runner asks of CUDA itself (a side stream, a capture, pinned copies) is `CudaGraphs`, named by
`StepRunner.graphs`: the tests put a CPU stand-in there, so that the runner's own logic runs without a GPU.

Either way the host only copies the next inputs (prepared ahead, `sentaug.train.inputs.prepared_steps`) and
launches: it never waits for the device inside a step.
"""
from __future__ import annotations

import contextlib
import sys

import torch

from .inputs import StepInputs

WARMUP_STEPS = 3
ATTENTION_KERNELS = (None, "efficient")      # SDPA's own choice, then its memory-efficient kernel alone


def attention_kernel(name: str | None):
    """A context holding scaled-dot-product attention to one kernel (None: SDPA chooses)."""
    if name is None:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION])


def adamw(groups: list[dict], device: torch.device, capturable: bool = False) -> torch.optim.AdamW:
    """AdamW over parameter groups that each carry their `lr`: the fused CUDA kernel on a GPU (one launch for
    every tensor), the default implementation elsewhere. `capturable` (a step captured in a CUDA graph): the
    learning rates live in device tensors, which the scheduler fills between replays."""
    if device.type != "cuda":
        return torch.optim.AdamW(groups, lr=groups[0]["lr"])
    if capturable:
        for group in groups:
            group["lr"] = torch.tensor(group["lr"], dtype=torch.float32, device=device)
    return torch.optim.AdamW(groups, lr=groups[0]["lr"], fused=True, capturable=capturable)


class LossTally:
    """Sums of the loss and its parts since the last log line, on the device in float64, added in place (a
    captured step adds into the same tensors at every replay); read only where a log line is written."""

    def __init__(self, device, loss: float = 0.0):
        self.loss = torch.tensor(loss, dtype=torch.float64, device=device)
        self.parts: dict[str, torch.Tensor] = {}

    def add(self, loss: torch.Tensor, parts: dict[str, torch.Tensor]) -> None:
        self.loss.add_(loss.detach().double())
        for name, value in parts.items():
            if name not in self.parts:
                self.parts[name] = torch.zeros((), dtype=torch.float64, device=value.device)
            self.parts[name].add_(value.double())

    def take(self, steps: int) -> tuple[float, dict[str, float]]:
        """(mean loss, mean of each part) over the last `steps` steps; the sums start again from zero."""
        loss = self.loss.item() / steps
        parts = {k: v.item() / steps for k, v in self.parts.items()}
        self.loss.zero_()
        for v in self.parts.values():
            v.zero_()
        return loss, parts


class CudaGraphs:
    """What a `StepRunner` asks of CUDA for its graph: eager warm-up steps on a side stream, the capture of one
    step into a `torch.cuda.CUDAGraph`, and host tensors pinned for copies the host does not wait for."""

    def __init__(self, runner: "StepRunner"):
        from ..models.capturable import make_capturable

        self.device, self.runner = runner.device, runner
        make_capturable()       # backbones that copy host tensors in their forward build them before a capture

    @contextlib.contextmanager
    def side_stream(self):
        """Work on a side stream that waits for the current one and is waited for after (what CUDA graphs need
        of the eager steps before a capture: torch.cuda.graphs docs)."""
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            yield
        torch.cuda.current_stream(self.device).wait_stream(side)

    def capture(self, step_fn, inputs: StepInputs, attention: str | None):
        """`step_fn(inputs)` captured into a new graph, with SDPA held to `attention` (capturing runs nothing;
        the graph's replays read `inputs`' tensors and write the gradients the captured backward allocated)."""
        graph = torch.cuda.CUDAGraph()
        # thread_local: the prefetching pin-memory thread may allocate while this thread captures; pool: the
        # memory pool the runner's graphs share (None: a pool of its own)
        with attention_kernel(attention), torch.cuda.graph(graph, pool=self.runner.pool,
                                                           capture_error_mode="thread_local"):
            step_fn(inputs)
        return graph

    @staticmethod
    def pinned(tensor: torch.Tensor) -> torch.Tensor:
        return tensor if tensor.is_pinned() else tensor.pin_memory()


class StepRunner:
    """`runner(inputs)` runs one training step of `step_fn` (which must not zero the gradients) on `inputs`.

    `graph`: capture it into a CUDA graph (CUDA only); `why`: the reason it runs eagerly otherwise, for the
    run's summary (`describe`)."""

    graphs = CudaGraphs       # made with the runner: what captures and replays (tests: a CPU stand-in)

    def __init__(self, step_fn, optimizer, device: torch.device, graph: bool, why: str = "",
                 warmup: int = WARMUP_STEPS, pool=None):
        self.step_fn, self.optimizer, self.device = step_fn, optimizer, device
        self.wanted, self.why, self.warmup, self.pool = graph, why, warmup, pool
        self.backend = self.graphs(self)
        self.graph = None
        self.attention = None           # the SDPA kernel the graph was captured with (None: SDPA's choice)
        self.graph_grads: list = []
        self.static: StepInputs | None = None
        self.warmed = 0
        self.counts = {"graph": 0, "eager": 0}

    def __call__(self, inputs: StepInputs) -> None:
        if self.wanted and inputs.full:
            if self.static is None:     # the graph's inputs: allocated once (never the caller's), refilled
                self.static = inputs.to(self.device, copy=True)
            if inputs.signature() == self.static.signature():
                return self._graph_step(inputs)
        self._eager(inputs.to(self.device))

    def _eager(self, inputs: StepInputs) -> None:
        """An eager step; beside a captured graph it must not add onto the graph's gradients, and puts them back
        afterwards (`p.grad` is again where the next replay writes its gradient)."""
        self.counts["eager"] += 1
        self.optimizer.zero_grad(set_to_none=True)
        self.step_fn(inputs)
        self.optimizer.zero_grad(set_to_none=True)
        for p, grad in self.graph_grads:
            p.grad = grad

    def _graph_step(self, inputs: StepInputs) -> None:
        for name, tensor in self.static.tensors.items():
            # pinned (the prefetching workers pin), so the host never waits
            tensor.copy_(self.backend.pinned(inputs.tensors[name]), non_blocking=True)
        if self.graph is None and self.warmed < self.warmup:
            with self.backend.side_stream():     # eager steps before the capture
                # (no gradients to add onto: another runner's graph may have left its own in p.grad)
                self.optimizer.zero_grad(set_to_none=True)
                self.step_fn(self.static)
                self.optimizer.zero_grad(set_to_none=True)
            self.warmed += 1
            self.counts["eager"] += 1
            return
        if self.graph is None and not self._capture():
            return self._eager(self.static)
        self.graph.replay()
        self.counts["graph"] += 1

    def _capture(self) -> bool:
        """Capture one step (capturing runs nothing: the caller replays it). Tried as the step runs eagerly, then
        with SDPA held to its memory-efficient kernel (which takes a mask and dropout in a graph); False, with
        the reasons said and kept, if both fail: the run goes on eagerly."""
        errors = []
        for attention in ATTENTION_KERNELS:
            self.optimizer.zero_grad(set_to_none=True)    # the captured backward allocates the gradients
            try:
                graph = self.backend.capture(self.step_fn, self.static, attention)
            except Exception as e:     # any failure to capture: the step is still correct eagerly
                first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                errors.append(f"{attention or 'default attention'}: {type(e).__name__}: {first[:240]}")
                continue
            self.graph, self.attention = graph, attention
            self.graph_grads = [(p, p.grad) for group in self.optimizer.param_groups for p in group["params"]
                                if p.grad is not None]      # where every replay writes its gradients
            return True
        self.wanted, self.graph = False, None
        self.why = f"CUDA graph capture failed ({'; '.join(errors)}); eager steps instead"
        print(f"[train] {self.why}", file=sys.stderr, flush=True)
        self.optimizer.zero_grad(set_to_none=True)
        return False

    def describe(self) -> dict:
        """Which path ran, for `train_summary.json`."""
        path = "graph" if self.counts["graph"] else "eager"
        out = {"path": path, "graph_steps": self.counts["graph"], "eager_steps": self.counts["eager"]}
        if path == "graph":
            out["why"] = (f"one CUDA graph per step, captured after {self.warmed} eager warm-up steps; steps of "
                          f"other shapes (an epoch's last batch) eager")
            out["attention"] = self.attention or "sdpa default"
        else:
            out["why"] = self.why or "graph capture was not reached"
        return out


class RunnerPerShape:
    """`runner(inputs)`: one training step, with one `StepRunner` (one CUDA graph) for each shape of full
    batches, every runner stepping the same optimizer: GLUE's length buckets (`sentaug.evaluate.glue_steps`),
    each padded to its own width; a training step's packed rows (`sentaug.models.packing`), a few row counts.
    A batch that is not full runs eagerly. What makes several graphs exact beside each other: each holds its own
    gradients (allocated by its captured backward, `StepRunner.graph_grads`), a runner's warm-up and eager steps
    start from no gradients, and the optimizer's state and learning rates are the same device tensors in every
    graph. The graphs share one memory pool: a replay reads nothing another graph's replay left in it (each
    writes its activations and gradients before reading them, and its optimizer step consumes the gradients
    inside the same replay), so one pool holds the largest graph's memory rather than every graph's."""

    def __init__(self, step_fn, optimizer, device: torch.device, graph: bool, why: str = "",
                 warmup: int = WARMUP_STEPS):
        self.step_fn, self.optimizer, self.device, self.warmup = step_fn, optimizer, device, warmup
        self.wanted = graph
        self.eager = StepRunner(step_fn, optimizer, device, False, why)
        self.runners: dict[tuple, StepRunner] = {}
        self.pool = torch.cuda.graph_pool_handle() if graph and device.type == "cuda" else None

    def __call__(self, inputs: StepInputs) -> None:
        if not (self.wanted and inputs.full):
            return self.eager(inputs)
        key = inputs.signature()
        if key not in self.runners:
            self.runners[key] = StepRunner(self.step_fn, self.optimizer, self.device, True, warmup=self.warmup,
                                           pool=self.pool)
        self.runners[key](inputs)

    def graph_steps(self) -> int:
        """Steps replayed from a graph so far."""
        return sum(r.counts["graph"] for r in self.runners.values())

    def describe(self) -> dict:
        """Which path ran: steps replayed from graphs, eager steps (warm-ups, batches that are not full), graphs."""
        graph = self.graph_steps()
        eager = self.eager.counts["eager"] + sum(r.counts["eager"] for r in self.runners.values())
        out = {"path": "graph" if graph else "eager", "graph_steps": graph, "eager_steps": eager,
               "graphs": sum(r.graph is not None for r in self.runners.values())}
        if graph:
            out["why"] = ("one CUDA graph per batch shape, each captured after its own eager warm-up steps; "
                          "batches that are not full eager")
            failed = [r.why for r in self.runners.values() if r.why]
            if failed:
                out["failed"] = failed[0]
        else:
            failed = [r.why for r in self.runners.values() if r.why]
            out["why"] = failed[0] if failed else (self.eager.why or "graph capture was not reached")
        return out
