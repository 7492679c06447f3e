"""`StepRunner`'s graph path on the CPU, its CUDA graph replaced by a recorded stand-in (tests/train/graph_stand_in.py):
which steps run eagerly (the warm-up, a batch that is not full, another shape), the static inputs refilled
before every replay, the graph's gradient buffers put back after an eager step, a failed capture falling back
to eager steps with its reason, and the counts in `train_summary.json`. Every step is checked against a plain
loop over the same batches (zero_grad, backward, step): the same weights bit for bit, and after a replay the
same gradient in `p.grad`."""
import json

import pytest
import torch

from sentaug.train import trainer as trainer_module
from sentaug.train.inputs import StepInputs
from sentaug.train.step import StepRunner
from tests.train.graph_stand_in import RecordedGraphs, failing
from tests.train.test_methods_train import CORPUS, setup, spec_for  # noqa: F401 (setup: a fixture)


def batch(step: int, rows: int = 8, full: bool = True, layout: tuple = ()) -> StepInputs:
    g = torch.Generator().manual_seed(step)
    return StepInputs({"x": torch.randn(rows, 4, generator=g), "y": torch.randn(rows, 3, generator=g)},
                      layout, (0, 0), full)


# (batch, path): the first three full batches warm up eagerly, the fourth is captured and replayed; a batch
# that is not full, one of other shapes and one of another layout run eagerly beside the graph.
STEPS = [(batch(0), "warm-up"), (batch(1), "warm-up"), (batch(2), "warm-up"), (batch(3), "graph"),
         (batch(4, rows=5, full=False), "eager"), (batch(5), "graph"), (batch(6, rows=6), "eager"),
         (batch(7), "graph"), (batch(8, layout=(1,)), "eager"), (batch(9), "graph")]


class Toy:
    """A linear model, AdamW, and a step function as the trainer's (no zero_grad) recording what it was given."""

    def __init__(self, model=None):
        torch.manual_seed(0)
        self.model = model or torch.nn.Linear(4, 3)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=0.1)
        self.seen: list = []

    def step(self, inputs: StepInputs) -> None:
        self.seen.append(inputs.tensors["x"].clone())
        loss = ((self.model(inputs.tensors["x"]) - inputs.tensors["y"]) ** 2).mean()
        loss.backward()
        self.optimizer.step()

    def weights(self) -> list:
        return [p.detach().clone() for p in self.model.parameters()]


def reference_steps(batches) -> list:
    """The plain loop: (weights, gradients) after each step."""
    toy = Toy()
    out = []
    for inputs in batches:
        toy.optimizer.zero_grad(set_to_none=True)
        toy.step(inputs)
        out.append((toy.weights(), [p.grad.clone() for p in toy.model.parameters()]))
    return out


@pytest.fixture
def recorded(monkeypatch):
    monkeypatch.setattr(StepRunner, "graphs", RecordedGraphs)


def test_steps_run_eagerly_or_replayed_as_the_runner_says_and_train_as_a_plain_loop(recorded):
    toy = Toy()
    runner = StepRunner(toy.step, toy.optimizer, torch.device("cpu"), graph=True)
    expected = reference_steps([b for b, _ in STEPS])
    for k, ((inputs, path), (weights, grads)) in enumerate(zip(STEPS, expected)):
        runner(inputs)
        assert all(torch.equal(a, b) for a, b in zip(toy.weights(), weights)), f"step {k} ({path})"
        assert torch.equal(toy.seen[-1], inputs.tensors["x"]), f"step {k} ran on another batch"
        if path == "graph":    # the replay's gradient, in the buffers the graph writes
            assert all(torch.equal(p.grad, g) for p, g in zip(toy.model.parameters(), grads)), f"step {k}"
        if runner.graph is not None:     # after an eager step too, p.grad is where the replays write
            assert all(p.grad is b for p, b in zip(toy.model.parameters(), runner.graph.buffers)), f"step {k}"
    graphs = runner.backend
    assert (graphs.warmups, graphs.captures, graphs.graph.replays) == (3, [None], 4)
    assert runner.describe() == {
        "path": "graph", "graph_steps": 4, "eager_steps": 6, "attention": "sdpa default",
        "why": "one CUDA graph per step, captured after 3 eager warm-up steps; steps of other shapes (an epoch's "
               "last batch) eager"}


def test_an_eager_step_beside_the_graph_puts_its_gradient_buffers_back(recorded):
    toy = Toy()
    runner = StepRunner(toy.step, toy.optimizer, torch.device("cpu"), graph=True)
    for inputs, _ in STEPS[:5]:          # warm-up, capture and replay, then a batch that is not full
        runner(inputs)
    buffers = runner.graph.buffers
    assert all(p.grad is b for p, b in zip(toy.model.parameters(), buffers))
    # the eager step did not add onto them: they still hold the replay of step 3
    assert all(torch.equal(b, g) for b, g in zip(buffers, reference_steps([s for s, _ in STEPS[:4]])[3][1]))


def test_the_static_inputs_are_the_runners_own_and_refilled_before_every_replay(recorded):
    toy = Toy()
    runner = StepRunner(toy.step, toy.optimizer, torch.device("cpu"), graph=True)
    first = batch(0)
    runner(first)
    assert all(runner.static.tensors[k] is not first.tensors[k] for k in first.tensors)     # a copy
    for inputs, _ in STEPS[1:4]:
        runner(inputs)
    assert torch.equal(first.tensors["x"], batch(0).tensors["x"])      # the caller's batch untouched
    captured = runner.graph.inputs.tensors
    assert all(captured[k] is runner.static.tensors[k] for k in captured)
    runner(batch(5))
    assert torch.equal(captured["x"], batch(5).tensors["x"]) and torch.equal(toy.seen[-1], batch(5).tensors["x"])


def test_a_failed_capture_runs_every_later_step_eagerly_and_says_why(monkeypatch, capsys):
    monkeypatch.setattr(StepRunner, "graphs", failing(None, "efficient"))
    toy = Toy()
    runner = StepRunner(toy.step, toy.optimizer, torch.device("cpu"), graph=True)
    expected = reference_steps([b for b, _ in STEPS])
    for (inputs, _), (weights, _) in zip(STEPS, expected):
        runner(inputs)
        assert all(torch.equal(a, b) for a, b in zip(toy.weights(), weights))
    assert runner.backend.captures == [None, "efficient"]        # tried once with each kernel, never again
    why = ("CUDA graph capture failed (default attention: RuntimeError: forced capture failure (default "
           "attention); efficient: RuntimeError: forced capture failure (efficient attention)); eager steps "
           "instead")
    assert runner.describe() == {"path": "eager", "graph_steps": 0, "eager_steps": 10, "why": why}
    assert f"[train] {why}" in capsys.readouterr().err
    assert all(p.grad is None for p in toy.model.parameters())


def test_a_capture_failing_with_sdpas_default_is_tried_with_the_memory_efficient_kernel(monkeypatch):
    monkeypatch.setattr(StepRunner, "graphs", failing(None))
    toy = Toy()
    runner = StepRunner(toy.step, toy.optimizer, torch.device("cpu"), graph=True)
    for inputs, _ in STEPS:
        runner(inputs)
    assert runner.backend.captures == [None, "efficient"]
    assert runner.describe()["path"] == "graph" and runner.describe()["attention"] == "efficient"


def test_eager_runs_and_graphs_never_reached(recorded):
    toy = Toy()
    runner = StepRunner(toy.step, toy.optimizer, torch.device("cpu"), graph=False, why="eager steps asked for")
    for inputs, _ in STEPS:
        runner(inputs)
    assert runner.backend.warmups == 0 and runner.backend.captures == []
    assert runner.describe() == {"path": "eager", "graph_steps": 0, "eager_steps": 10,
                                 "why": "eager steps asked for"}
    short = StepRunner(Toy().step, Toy().optimizer, torch.device("cpu"), graph=True)
    for inputs, _ in STEPS[:3]:         # the warm-up only
        short(inputs)
    assert short.describe() == {"path": "eager", "graph_steps": 0, "eager_steps": 3,
                                "why": "graph capture was not reached"}


def train_on_the_graph_path(root, corpus, backbone, monkeypatch, graphs, out: str, packing: str = "off") -> dict:
    """A real CPU training run on the graph path (fixed shapes, the runner capturing), `graphs` standing in."""
    monkeypatch.setattr(trainer_module, "step_path", lambda mode, device, compile_backbone: (True, ""))
    monkeypatch.setattr(StepRunner, "graphs", graphs)
    # 16 sentences in batches of 6: each epoch is two full batches and one of 4, for 3 epochs
    spec = spec_for("simcse", max_steps=9, batch_size=6, eval_steps=9)
    assert len(CORPUS) == 16
    return trainer_module.train(spec, corpus, None, backbone, str(root / "data"), str(root / out), packing=packing)


def test_train_summary_counts_the_graph_and_eager_steps(setup, monkeypatch):
    """Steps 3, 6 and 9 (an epoch's last 4 sentences) run eagerly, 1, 2 and 4 warm up, 5 is captured and replayed
    with 7 and 8; the same run with every capture failing runs all 9 eagerly, with the same results bit for bit
    (the stand-in replays the step the eager path runs)."""
    from safetensors.torch import load_file

    root, corpus, backbone = setup
    captured = train_on_the_graph_path(root, corpus, backbone, monkeypatch, RecordedGraphs, "graph")
    assert captured["step_path"] == {
        "path": "graph", "graph_steps": 3, "eager_steps": 6, "attention": "sdpa default",
        "why": "one CUDA graph per step, captured after 3 eager warm-up steps; steps of other shapes (an epoch's "
               "last batch) eager", "packed_rows_of": None}
    fallen = train_on_the_graph_path(root, corpus, backbone, monkeypatch, failing(None, "efficient"), "eager")
    assert fallen["step_path"]["path"] == "eager" and fallen["step_path"]["eager_steps"] == 9
    assert fallen["step_path"]["why"].startswith("CUDA graph capture failed (default attention: RuntimeError: "
                                                 "forced capture failure")
    logs = [[{k: v for k, v in json.loads(line).items() if k != "elapsed_s"}
             for line in (root / run / "train_log.jsonl").read_text().splitlines()] for run in ("graph", "eager")]
    assert [r["step"] for r in logs[0]] == [9] and logs[0] == logs[1]
    a, b = (load_file(root / run / "model.safetensors") for run in ("graph", "eager"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_packed_rows_on_the_graph_path_run_one_graph_per_row_count(setup, monkeypatch):
    """Packed (the graph path's default), each step's rows rounded to a row count with a graph of its own, all
    stepping one optimizer: every full batch of a captured row count replays its graph, the others warm up; the
    run equals, bit for bit, the same run with every capture failing (all eager, the same packed inputs)."""
    from safetensors.torch import load_file

    root, corpus, backbone = setup
    captured = train_on_the_graph_path(root, corpus, backbone, monkeypatch, RecordedGraphs, "packed", "auto")
    path = captured["step_path"]
    assert path["packed_rows_of"] == 128 and path["path"] == "graph" and path["graphs"] >= 1
    # 9 steps: 3 not full (eager), the 6 full ones warm up (3 per row count) or replay
    assert path["graph_steps"] + path["eager_steps"] == 9 and path["eager_steps"] >= 3 + 3 * path["graphs"]
    fallen = train_on_the_graph_path(root, corpus, backbone, monkeypatch, failing(None, "efficient"),
                                     "packed-eager", "auto")
    assert fallen["step_path"]["path"] == "eager" and fallen["step_path"]["eager_steps"] == 9
    logs = [[{k: v for k, v in json.loads(line).items() if k != "elapsed_s"}
             for line in (root / run / "train_log.jsonl").read_text().splitlines()]
            for run in ("packed", "packed-eager")]
    assert logs[0] == logs[1]
    a, b = (load_file(root / run / "model.safetensors") for run in ("packed", "packed-eager"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
