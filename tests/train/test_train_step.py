"""The step split in two (host `prepare`, device `compute`) and what the CUDA-graph path relies on, checked on
the CPU: inputs prepared ahead in worker processes equal inline ones; fixed shapes (every batch padded to the
run's length, MLM positions to a fixed room) give the loss of the usual padding; the running sums and the
divergence guard update their tensors in place; the scheduler fills tensor learning rates in place; the best
model kept aside is the one written; running out of GPU memory names the batch and keeps the checkpoint."""
import json
import math

import pytest
import torch

from sentaug import config as sc
from sentaug.models.packing import ROW
from sentaug.models.encoder import SentenceEncoder
from sentaug.train import trainer as trainer_module
from sentaug.train.checkpoint import BestModel, DivergenceGuard
from sentaug.objectives.mlm.module import mlm_capacity
from sentaug.train.inputs import EpochOrder, FixedShape, StepInputs, StepPreparer, batch_order, prepared_steps
from sentaug.train.method import Method
from sentaug.train.sources import training_data
from sentaug.train.step import LossTally
from sentaug.train.trainer import learning_rates_on, load_backbone, step_path, train
from tests.train.test_methods_train import CORPUS, make_cache, setup, spec_for  # noqa: F401 (setup: a fixture)

WIDTH = 24


def build_method(root, corpus, backbone, method, index=None, **train_kw):
    """A method as the trainer builds it (CPU), with its data."""
    spec = spec_for(method, **train_kw)
    caches = [make_cache(root / f"{aug}_{seed}.parquet", seed) for aug, seed in sc.method_caches(spec)]
    data = training_data(spec, corpus, caches)
    model, tokenizer, lm_head = load_backbone(backbone, spec, torch.device("cpu"))
    torch.manual_seed(spec["seed"])
    encoder = SentenceEncoder(model, pooler=spec["pooler"], head=spec.get("head"), head_only_train=spec["mlp_only_train"])
    return spec, data, Method(spec, encoder, tokenizer, data, lm_head, index)


def retrieval_index(root, corpus, backbone):
    from sentaug.index.neighbours import build_index

    path = root / "index.npz"
    build_index(corpus, backbone, "cls_before_pooler", 4, path)
    return str(path)


def same_inputs(a, b) -> bool:
    return (a.layout == b.layout and a.lookups == b.lookups and a.full == b.full and set(a.tensors) == set(b.tensors)
            and all(torch.equal(a.tensors[k], b.tensors[k]) for k in a.tensors))


@pytest.mark.parametrize("method", ["cards", "vascl", "augcse", "clear_double_mlm"])
def test_inputs_prepared_by_worker_processes_equal_the_inline_ones(setup, method):
    root, corpus, backbone = setup
    index = retrieval_index(root, corpus, backbone) if method == "cards" else None
    spec, data, m = build_method(root, corpus, backbone, method, index)
    preparer = StepPreparer(m, data, spec["batch_size"], spec["seed"], FixedShape(WIDTH, 64))
    steps = range(3, 9)      # a resumed run's steps: prepared from the step number alone
    inline = list(prepared_steps(preparer, steps, workers=0))
    forked = list(prepared_steps(preparer, steps, workers=2))
    assert len(forked) == len(inline) == 6
    assert all(same_inputs(a, b) for a, b in zip(inline, forked))
    # and each step its own draws: switch-case positives, retrieved negatives, noise and masks differ by step
    assert not same_inputs(inline[0], inline[1])


def cropped(inputs: StepInputs, width: int) -> StepInputs:
    """Fixed-shape inputs cut back to `width` columns, their MLM positions renumbered and the padded ones
    dropped: what the usual padding gives for the same draws."""
    t = dict(inputs.tensors)
    for key in [k for k in t if k.endswith("input_ids")]:
        mask_key = key.replace("input_ids", "attention_mask")
        assert not t[mask_key][:, width:].any()          # only padding is cut
        t[key], t[mask_key] = t[key][:, :width], t[mask_key][:, :width]
    for i in range(4):
        if f"mlm{i}_positions" in t:
            keep = t[f"mlm{i}_targets"] != -100
            p = t[f"mlm{i}_positions"][keep]
            full = inputs.tensors[f"mlm{i}_input_ids"].shape[1]
            t[f"mlm{i}_positions"], t[f"mlm{i}_targets"] = p // full * width + p % full, t[f"mlm{i}_targets"][keep]
    return StepInputs(t, inputs.layout, inputs.lookups, inputs.full)


@pytest.mark.parametrize("method", ["simcse", "cards", "vascl", "augcse", "simcse_mlm", "clear_double_mlm"])
def test_fixed_shapes_give_the_loss_of_padding_to_the_longest(setup, method):
    """What a captured graph computes (texts padded to the run's length, MLM positions padded with ignored
    targets) against the same draws padded as usual, dropout off: the same loss and parts to float rounding.
    (MLM masks are drawn over the padded shape, so they are the fixed inputs' own, cut back.)"""
    root, corpus, backbone = setup
    index = retrieval_index(root, corpus, backbone) if method == "cards" else None
    spec, data, m = build_method(root, corpus, backbone, method, index)
    m.eval()
    batch = data.batch(batch_order(len(data), spec["batch_size"], spec["seed"], 1), 1)
    usual, fixed = m.prepare(batch, 1), m.prepare(batch, 1, FixedShape(WIDTH, 64))
    width = usual.tensors.get("input_ids", usual.tensors.get("mlm0_input_ids")).shape[1]
    assert fixed.tensors.get("input_ids", fixed.tensors.get("mlm0_input_ids")).shape[1] == WIDTH > width
    reference = cropped(fixed, width)
    if "mlm0_positions" in fixed.tensors:
        selected = int((fixed.tensors["mlm0_targets"] != -100).sum())
        assert fixed.tensors["mlm0_positions"].shape == (64,) and 0 < selected < 64
        assert (fixed.tensors["mlm0_targets"][selected:] == -100).all()
    else:       # without MLM the fixed inputs, cut back, are exactly the usual ones
        assert same_inputs(reference, usual)
    with torch.no_grad():
        loss_a, parts_a = m.compute(reference)
        loss_b, parts_b = m.compute(fixed)
    assert math.isfinite(float(loss_a))
    assert float(loss_b) == pytest.approx(float(loss_a), rel=1e-5, abs=1e-6)
    assert parts_b.keys() == parts_a.keys()
    for name in parts_a:
        assert float(parts_b[name]) == pytest.approx(float(parts_a[name]), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("method", ["simcse", "cards", "vascl", "augcse", "simcse_mlm", "clear_double_mlm"])
def test_packed_rows_give_the_loss_and_gradients_of_padded_texts(setup, method):
    """The same step's texts packed into rows (sentaug.models.packing) against padded, the same draws, dropout
    off: the same loss, parts and gradients to float rounding, for every block a method encodes (retrieved
    negatives, augmented views), mean pooling (VaSCL) and the MLM's own forward."""
    root, corpus, backbone = setup
    index = retrieval_index(root, corpus, backbone) if method == "cards" else None
    spec, data, m = build_method(root, corpus, backbone, method, index)
    m.eval()
    batch = data.batch(batch_order(len(data), spec["batch_size"], spec["seed"], 1), 1)
    padded, packed = m.prepare(batch, 1, FixedShape(WIDTH, 64)), m.prepare(batch, 1, FixedShape(WIDTH, 64, ROW))
    if "input_ids" in padded.tensors:        # (an MLM's own texts stay padded: clear_double_mlm encodes no others)
        assert "pack_ids" in packed.tensors and "input_ids" not in packed.tensors
        assert packed.tensors["pack_ids"].numel() < padded.tensors["input_ids"].numel()

    def run(inputs):
        m.zero_grad()
        loss, parts = m.compute(inputs)
        loss.backward()
        return loss.item(), parts, {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}

    (loss_a, parts_a, grads_a), (loss_b, parts_b, grads_b) = run(padded), run(packed)
    assert loss_b == pytest.approx(loss_a, rel=1e-5, abs=1e-6)
    assert parts_b.keys() == parts_a.keys()
    for name in parts_a:
        assert float(parts_b[name]) == pytest.approx(float(parts_a[name]), rel=1e-5, abs=1e-6)
    assert grads_b.keys() == grads_a.keys()
    for name, grad in grads_a.items():
        assert torch.linalg.vector_norm(grads_b[name] - grad) <= 1e-4 * torch.linalg.vector_norm(grad) + 1e-8, name


def test_a_packed_run_trains_as_a_padded_one(setup):
    """`train(packing="rows")` on the CPU (dropout off: both runs deterministic) logs the losses of the padded
    run to float rounding and says in its summary that it packed."""
    root, corpus, backbone = setup
    runs = {}
    for packing in ("off", "rows"):
        summary = train(spec_for("simcse", max_steps=4, eval_steps=1), corpus, None, backbone, str(root / "data"),
                        str(root / packing), packing=packing)
        runs[packing] = [json.loads(r)["loss"] for r in (root / packing / "train_log.jsonl").read_text().splitlines()]
        assert summary["step_path"]["packed_rows_of"] == (ROW if packing == "rows" else None)
    assert len(runs["off"]) == 4 and runs["rows"] == pytest.approx(runs["off"], rel=1e-5)


def test_mlm_room_is_the_binomial_mean_plus_eight_deviations_in_blocks_of_64():
    # 64 x 32 = 2,048 tokens at 15 %: mean 307.2, deviation sqrt(307.2 * 0.85) = 16.16 -> 307.2 + 129.3 + 1 = 437.5
    assert mlm_capacity(64, 32, 0.15) == 448
    # 128 x 32: mean 614.4, deviation 22.85 -> 614.4 + 182.8 + 1 = 798.2 -> 13 blocks of 64
    assert mlm_capacity(128, 32, 0.15) == 832


def test_running_sums_and_the_guard_update_the_same_tensors_at_every_step():
    """A replayed graph writes to the addresses it captured: the tally and the guard must add in place."""
    tally, guard, counter = LossTally("cpu"), DivergenceGuard(), torch.tensor(0)
    seen = None
    for loss in (1.5, 2.5, float("nan"), 4.0):
        counter.add_(1)
        tally.add(torch.tensor(loss), {"contrastive": torch.tensor(loss / 2)})
        guard.observe(torch.tensor(loss), counter)
        ids = (id(tally.loss), id(tally.parts["contrastive"]), id(guard._first_bad), id(guard._value))
        assert seen in (None, ids)
        seen = ids
    with pytest.raises(ValueError, match="the loss is nan at step 3"):
        guard.check("")
    tally = LossTally("cpu", loss=1.0)      # resumed with a running sum
    tally.add(torch.tensor(2.0), {"mlm": torch.tensor(3.0)})
    tally.add(torch.tensor(4.0), {"mlm": torch.tensor(5.0)})
    assert tally.take(2) == (3.5, {"mlm": 4.0})
    assert tally.take(1) == (0.0, {"mlm": 0.0})


def test_the_scheduler_fills_tensor_learning_rates_in_place_and_a_checkpoint_keeps_them():
    """The captured optimizer reads its rates from tensors: LambdaLR must fill those tensors, not replace them."""
    w = torch.nn.Parameter(torch.ones(3))
    lr = torch.tensor(0.1)
    opt = torch.optim.AdamW([{"params": [w], "lr": lr}], lr=lr, foreach=False)
    sched = trainer_module.lr_schedule(opt, total_steps=4)
    for step in range(1, 4):
        w.grad = torch.ones(3)
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] is lr
        assert float(lr) == pytest.approx(0.1 * (1 - step / 4))
    state = {"o": opt.state_dict(), "s": sched.state_dict()}
    opt2 = torch.optim.AdamW([{"params": [w], "lr": torch.tensor(0.1)}], lr=torch.tensor(0.1), foreach=False)
    sched2 = trainer_module.lr_schedule(opt2, total_steps=4)
    opt2.load_state_dict(state["o"])
    sched2.load_state_dict(state["s"])
    learning_rates_on(opt2, sched2, torch.device("cpu"))
    sched2.step()
    assert isinstance(opt2.param_groups[0]["lr"], torch.Tensor) and float(opt2.param_groups[0]["lr"]) == 0.0


def test_the_best_model_kept_aside_is_written_as_it_was(setup, tmp_path):
    from transformers import AutoModel

    root, corpus, backbone = setup
    model, tokenizer, _ = load_backbone(backbone, spec_for("simcse"), torch.device("cpu"))
    encoder = SentenceEncoder(model, pooler="cls")
    keeper = BestModel(tmp_path, encoder, tokenizer, "cls_before_pooler", on_device=True)
    keeper.keep(7, 61.5)
    kept = {k: v.clone() for k, v in encoder.snapshot().items()}
    with torch.no_grad():
        for p in encoder.parameters():
            p.add_(1.0)                       # training goes on after the improvement
    assert not (tmp_path / "best").exists()    # nothing written until asked
    keeper.write()
    saved = AutoModel.from_pretrained(tmp_path / "best").state_dict()
    assert json.loads((tmp_path / "best" / "best_step.json").read_text()) == {"step": 7, "stsb_dev": 61.5}
    assert all(torch.equal(saved[k], kept[k]) for k in saved)
    # the MLP head is stored as the pooler layer, as SimCSE's checkpoints do
    assert torch.equal(saved["pooler.dense.weight"], kept["pooler.dense.weight"])
    assert not torch.equal(saved["pooler.dense.weight"], encoder.head.dense.weight)


def test_step_paths():
    assert step_path("auto", torch.device("cpu"), False) == (False, "CUDA graphs need a GPU (device cpu)")
    with pytest.raises(ValueError, match="needs a CUDA device"):
        step_path("graph", torch.device("cpu"), False)
    with pytest.raises(ValueError, match="unknown step mode 'fast'"):
        step_path("fast", torch.device("cpu"), False)
    assert step_path("eager", torch.device("cuda"), False)[0] is False
    assert step_path("auto", torch.device("cuda"), "reduce-overhead")[0] is False      # its own graphs
    assert step_path("auto", torch.device("cuda"), True) == (True, "")       # fused kernels, captured
    assert step_path("auto", torch.device("cuda"), False) == (True, "")


def test_running_out_of_gpu_memory_names_the_batch_and_keeps_the_last_checkpoint(setup, monkeypatch):
    root, corpus, backbone = setup
    spec = spec_for("simcse", max_steps=4, save_steps=2, eval_steps=4)
    compute = Method.compute
    calls = []

    def compute_until_step_3(self, inputs):
        calls.append(1)
        if len(calls) == 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total "
                                              "capacity of 139.81 GiB of which 1.20 GiB is free.")
        return compute(self, inputs)

    monkeypatch.setattr(Method, "compute", compute_until_step_3)
    out = root / "run"
    with pytest.raises(trainer_module.OutOfDeviceMemory) as caught:
        train(spec, corpus, None, backbone, str(root / "data"), str(out))
    message = str(caught.value)
    assert "out of GPU memory at step 3 (batch 8: 16 texts x " in message
    assert "2.50 GiB asked for" in message and "step00000002" in message
    assert (root / "run.partial" / "checkpoints" / "step00000002").is_dir() and not out.exists()


def test_a_cpu_run_says_which_path_ran(setup):
    root, corpus, backbone = setup
    summary = train(spec_for("simcse"), corpus, None, backbone, str(root / "data"), str(root / "run"))
    assert summary["step_path"] == {"path": "eager", "graph_steps": 0, "eager_steps": 2,
                                    "why": "CUDA graphs need a GPU (device cpu)", "packed_rows_of": None}
    assert summary["token_lookups"] == {"from_files": 0, "tokenized": 2 * 2 * 8}


def test_the_epoch_order_is_drawn_once_per_epoch_with_the_indices_of_a_draw_per_step(monkeypatch):
    n, batch, seed = 23, 5, 7        # 5 batches an epoch, the last of 3 examples
    per_step = []
    for step in range(12):           # the order as it was drawn before: a permutation for every step
        epoch, k = divmod(step, math.ceil(n / batch))
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed * 1_000_003 + epoch))
        per_step.append(perm[k * batch:(k + 1) * batch].tolist())
    draws = []
    real = torch.randperm
    monkeypatch.setattr(torch, "randperm", lambda *a, **k: draws.append(a) or real(*a, **k))
    order = EpochOrder(n, batch, seed)
    assert [order(step) for step in range(12)] == per_step
    assert len(draws) == 3                                       # epochs 0, 1 and 2: one draw each
    assert sorted(i for step in range(5) for i in order(step)) == list(range(n))    # an epoch sees each once
    assert batch_order(n, batch, seed, 7) == per_step[7]
