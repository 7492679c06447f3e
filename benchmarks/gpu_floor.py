"""The training step against the GPU's floor (issue 60): padded batches against packed rows, and one seed against
several seeds trained as one batched model, each a model-alone SimCSE step captured in a CUDA graph; one JSON.

    python benchmarks/gpu_floor.py --device cuda --size base --data .gpu/data --tokenizers .gpu/models \
        --out $OUT/floor.json
    python benchmarks/gpu_floor.py --device cpu --size tiny --configs bert/8 --steps 3 --out /tmp/floor.json

The sentences are the wiki1m head's lines as training reads them (truncated at `--length` tokens, not only the long
ones), drawn at random: `--sets` batches of each shape, replayed in turn. A step is what SimCSE's device part does
(`sentaug.train.step.StepRunner`, bf16 autocast, the fused capturable AdamW, gradients clipped at 1.0): the
backbone, [CLS], the MLP head, InfoNCE at 0.05, backward, the optimizer. Variants, per `--configs` arch/batch:

* `padded`: every text padded to `--length` ([2B, length] and a ready [2B, 1, 1, length] mask: today's step).
* `packed<L>`: the texts packed first-fit-decreasing into rows of L tokens, each text its own block of a
  block-diagonal [R, 1, L, L] mask, positions restarting at each text, [CLS] gathered from its row; R the most
  rows any of the batches needs (a run would keep one graph per row count). Same model, same FLOPs per real token,
  fewer padded ones. `--check` compares its [CLS] vectors with the padded ones (fp32, dropout off) first.
* `seeds<k>` (arch/batch with `--seeds`): k copies of the model stacked (`torch.func.stack_module_state`) and
  stepped as one through `torch.func.vmap` (randomness "different": each copy its own dropout), each copy's
  gradient clipped on its own; `seeds<k>_eager_attention` the same with eager attention (SDPA may have no batching
  rule under vmap). Reported per copy-step: its throughput against `padded` at the same batch.

Reported per variant: median step ms over `--steps` replays after capture (CUDA events), tokens per step (executed
and real), real tokens/s, model FLOP utilisation of the executed FLOPs (FlopCounterMode over one eager step) and
of the real tokens' share of them, against the measured bf16 matrix rate; peak memory.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_runs import ROOT, Clock, attempt, load_lines, make_backbone, median_ms, versions, write  # noqa: E402

TEMPERATURE, CLIP = 0.05, 1.0


# ---------------------------------------------------------------- inputs
def sentence_ids(lines: list[str], backbone: str, length: int) -> list[list[int]]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(backbone)
    return tok(lines, truncation=True, max_length=length)["input_ids"]


def padded(texts: list[list[int]], width: int, pad_id: int) -> dict:
    ids = torch.full((len(texts), width), pad_id, dtype=torch.long)
    mask = torch.zeros(len(texts), width, dtype=torch.bool)
    for i, t in enumerate(texts):
        ids[i, :len(t)] = torch.tensor(t)
        mask[i, :len(t)] = True
    return {"input_ids": ids, "attention_mask": mask[:, None, None, :],
            "cls": torch.arange(len(texts)) * width}


def pack_rows(lengths: list[int], row: int) -> list[list[int]]:
    """First-fit decreasing: the texts (by index) of each row of `row` tokens."""
    rows, room = [], []
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        for r, free in enumerate(room):
            if free >= lengths[i]:
                rows[r].append(i)
                room[r] -= lengths[i]
                break
        else:
            rows.append([i])
            room.append(row - lengths[i])
    return rows


def packed(texts: list[list[int]], row: int, n_rows: int, pad_id: int, first_position: int) -> dict:
    """Rows of `row` tokens, each text a block of its own in a block-diagonal mask; [CLS]'s flat positions."""
    rows = pack_rows([len(t) for t in texts], row)
    if len(rows) > n_rows:
        raise ValueError(f"{len(rows)} rows needed, {n_rows} kept")
    ids = torch.full((n_rows, row), pad_id, dtype=torch.long)
    pos = torch.full((n_rows, row), first_position, dtype=torch.long)
    block = torch.full((n_rows, row), -1, dtype=torch.long)     # padding: a block of its own in each row
    cls = torch.zeros(len(texts), dtype=torch.long)
    for r, members in enumerate(rows):
        at = 0
        for i in members:
            n = len(texts[i])
            ids[r, at:at + n] = torch.tensor(texts[i])
            pos[r, at:at + n] = torch.arange(first_position, first_position + n)
            block[r, at:at + n] = i
            cls[i] = r * row + at
            at += n
    mask = block[:, :, None] == block[:, None, :]
    return {"input_ids": ids, "position_ids": pos, "attention_mask": mask[:, None], "cls": cls}


# ---------------------------------------------------------------- the step
class Simcse(torch.nn.Module):
    """Backbone, [CLS] gathered by flat position, SimCSE's MLP head, InfoNCE over the two dropout views."""

    def __init__(self, backbone):
        super().__init__()
        d = backbone.config.hidden_size
        self.backbone = backbone
        self.head = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.Tanh())

    def cls(self, t: dict):
        extra = {"position_ids": t["position_ids"]} if "position_ids" in t else {}
        h = self.backbone(input_ids=t["input_ids"], attention_mask=t["attention_mask"], **extra).last_hidden_state
        return h.reshape(-1, h.shape[-1])[t["cls"]]

    def forward(self, t: dict):
        z = self.head(self.cls(t)).float()
        half = z.shape[0] // 2
        logits = F.normalize(z[:half], dim=-1) @ F.normalize(z[half:], dim=-1).T / TEMPERATURE
        return F.cross_entropy(logits, torch.arange(half, device=z.device))


def load(backbone: str, device, attention: str = "sdpa"):
    from transformers import AutoModel

    torch.manual_seed(0)
    return Simcse(AutoModel.from_pretrained(backbone, attn_implementation=attention)).to(device).train()


def autocast(device):
    import contextlib

    return torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()


def single_step(model, device):
    params = [p for p in model.parameters() if p.requires_grad]
    from sentaug.train.step import adamw

    opt = adamw([{"params": params, "lr": 3e-5}], device, capturable=device.type == "cuda")

    def step(x):
        with autocast(device):
            loss = model(x.tensors)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, CLIP, foreach=device.type == "cuda")
        opt.step()
    return step, opt


def seeds_step(model, k: int, device):
    """k copies of `model` as one: stacked parameters, the step's loss vmapped over the copies (each its own
    dropout), every copy's gradient clipped on its own, one AdamW over the stacked tensors."""
    import copy

    from torch.func import functional_call, stack_module_state, vmap

    from sentaug.train.step import adamw

    copies = [copy.deepcopy(model) for _ in range(k)]
    for i, c in enumerate(copies[1:], 1):
        torch.manual_seed(i)
        c.head[0].reset_parameters()
    params, buffers = stack_module_state(copies)
    params = {n: torch.nn.Parameter(p) for n, p in params.items()}
    del copies
    opt = adamw([{"params": list(params.values()), "lr": 3e-5}], device, capturable=device.type == "cuda")

    def one(p, b, t):
        return functional_call(model, (p, b), (t,))

    def step(x):
        with autocast(device):
            losses = vmap(one, in_dims=(0, 0, None if x.layout == ("shared",) else 0),
                          randomness="different")(params, buffers, x.tensors)
        losses.sum().backward()
        grads = [p.grad for p in params.values() if p.grad is not None]     # (the unused pooler has none)
        norms = torch.stack([g.float().pow(2).flatten(1).sum(1) for g in grads]).sum(0).sqrt()   # [k]
        scale = (CLIP / (norms + 1e-6)).clamp(max=1.0)
        torch._foreach_mul_(grads, [scale.view(-1, *[1] * (g.dim() - 1)).to(g.dtype) for g in grads])
        opt.step()
    return step, opt, sum(p.numel() for p in params.values())


def time_steps(step, opt, sets: list, device, steps: int) -> dict:
    from sentaug.train.inputs import StepInputs
    from sentaug.train.step import StepRunner

    runner = StepRunner(step, opt, device, graph=device.type == "cuda")
    clock, marks = Clock(device), []
    n = 3 + 2 + steps      # eager warm-ups, the capture's step, one more, the timed ones
    for i in range(n):
        runner(sets[i % len(sets)])
        marks.append(clock.mark())
    seconds = clock.intervals(marks)[-steps:]
    return {"median_step_ms": median_ms(seconds), "path": runner.describe()["path"]}


def flops_of(step_fn_model, x) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        step_fn_model(x)
    return counter.get_total_flops()


# ---------------------------------------------------------------- sections
def check_packing(backbone: str, texts: list[list[int]], pad_id: int, first: int, row: int) -> dict:
    """[CLS] of the packed rows against the padded batch: fp32, dropout off, on the CPU."""
    model = load(backbone, "cpu").eval()
    width = max(map(len, texts))
    with torch.no_grad():
        a = model.cls(padded(texts, width, pad_id))
        rows = len(pack_rows([len(t) for t in texts], row))
        b = model.cls(packed(texts, row, rows, pad_id, first))
    return {"texts": len(texts), "rows": rows, "max_abs_diff": float((a - b).abs().max()),
            "rel_diff": float((a - b).norm() / a.norm())}


def run_config(arch: str, batch: int, args, backbone: str, ids: list[list[int]], peak: float | None) -> dict:
    from transformers import AutoTokenizer

    from sentaug.train.inputs import StepInputs

    device = torch.device(args.device)
    tok = AutoTokenizer.from_pretrained(backbone)
    first = tok.pad_token_id + 1 if arch == "roberta" else 0
    rng = np.random.default_rng(0)
    draws = [[ids[i] for i in rng.choice(len(ids), batch, replace=False)] for _ in range(args.sets)]
    views = [d + d for d in draws]          # SimCSE: every sentence twice, two dropout masks
    real = float(np.mean([sum(map(len, v)) for v in views]))
    out = {"real_tokens_per_step": round(real, 1), "variants": {}}
    variants = {"padded": lambda v: padded(v, args.length, tok.pad_token_id)}
    for row in args.rows:
        n_rows = max(len(pack_rows([len(t) for t in v], row)) for v in views)
        variants[f"packed{row}"] = lambda v, row=row, n_rows=n_rows: packed(v, row, n_rows, tok.pad_token_id, first)
    for name, make in variants.items():
        def measure(make=make):
            model = load(backbone, device)
            sets = [StepInputs(make(v)) for v in views]
            executed = sets[0].tensors["input_ids"].numel()
            flops = flops_of(lambda x: model(x.tensors).backward(), sets[0].to(device))
            model.zero_grad(set_to_none=True)
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats()
            step, opt = single_step(model, device)
            r = time_steps(step, opt, sets, device, args.steps)
            r.update(tokens_per_step=executed, real_share=round(real / executed, 3), flops_per_step=flops)
            return finish(r, flops, real / executed, peak, device)
        out["variants"][name] = attempt(measure)
        print(f"[floor] {arch}/{batch} {name}: {out['variants'][name].get('median_step_ms')} ms, "
              f"MFU {out['variants'][name].get('mfu_executed')} (real {out['variants'][name].get('mfu_real')})",
              flush=True)
        gc.collect()
        torch.cuda.empty_cache() if device.type == "cuda" else None
    if batch in args.seeds_at:
        for attention in ("sdpa", "eager"):
            name = f"seeds{args.seeds}" + ("_eager_attention" if attention == "eager" else "")

            def measure(attention=attention):
                model = load(backbone, device, attention)
                stacked = [padded(v, args.length, tok.pad_token_id) for v in views]
                if attention == "eager":        # eager attention adds the mask: 0 where seen, a large negative not
                    for t in stacked:
                        t["attention_mask"] = torch.where(t["attention_mask"], 0.0, -1e4)
                per_copy = flops_of(lambda x: model(x).backward(), {k: v.to(device) for k, v in stacked[0].items()})
                model.zero_grad(set_to_none=True)
                if device.type == "cuda":
                    torch.cuda.reset_peak_memory_stats()
                step, opt, _ = seeds_step(model, args.seeds, device)
                sets = [StepInputs(t, layout=("shared",)) for t in stacked]   # every copy its own masks, same texts
                r = time_steps(step, opt, sets, device, args.steps)
                r["copies"] = args.seeds
                r["per_copy_step_ms"] = round(r["median_step_ms"] / args.seeds, 3) if r["median_step_ms"] else None
                executed = stacked[0]["input_ids"].numel()
                return finish(r, per_copy * args.seeds, real / executed, peak, device)
            out["variants"][name] = attempt(measure)
            base = out["variants"].get("padded", {}).get("median_step_ms")
            got = out["variants"][name].get("median_step_ms")
            if base and got:
                out["variants"][name]["throughput_vs_padded"] = round(args.seeds * base / got, 2)
            print(f"[floor] {arch}/{batch} {name}: {got} ms for {args.seeds} copies "
                  f"(x{out['variants'][name].get('throughput_vs_padded')} one padded run)", flush=True)
            gc.collect()
    return out


def finish(r: dict, flops: float, real_share: float, peak: float | None, device) -> dict:
    ms = r.get("median_step_ms")
    if peak and ms:
        r["mfu_executed"] = round(flops / (ms / 1000) / peak, 4)
        r["mfu_real"] = round(r["mfu_executed"] * real_share, 4)
    if device.type == "cuda":
        r["peak_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    return r


def matrix_rate(device) -> float | None:
    if device.type != "cuda":
        return None
    a, b = (torch.randn(8192, 8192, device=device, dtype=torch.bfloat16) for _ in range(2))
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return 2 * 8192**3 * 20 / (start.elapsed_time(end) / 1000)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--size", choices=["base", "tiny"], default="base")
    p.add_argument("--configs", default="bert/64,bert/128,bert/512,roberta/512")
    p.add_argument("--rows", default="64,128", help="row lengths of the packed variants")
    p.add_argument("--seeds", type=int, default=4, help="copies of the seeds variant")
    p.add_argument("--seeds-at", default="64", help="batches the seeds variant runs at")
    p.add_argument("--length", type=int, default=32)
    p.add_argument("--sets", type=int, default=6, help="different batches of each shape, replayed in turn")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--data", default=os.environ.get("SENTAUG_MIRROR", str(ROOT.parent / "shared/data")))
    p.add_argument("--tokenizers", default=os.environ.get("SENTAUG_MODEL_MIRROR", str(ROOT.parent / "shared/models")))
    p.add_argument("--workdir", default="/tmp/sentaug-floor")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    args.rows = [int(r) for r in args.rows.split(",")]
    args.seeds_at = [int(b) for b in args.seeds_at.split(",") if b]
    device = torch.device(args.device)
    started = time.perf_counter()
    results = {"versions": versions(args.device), "args": vars(args)}
    peak = results["matrix_tflops"] = matrix_rate(device)
    lines = load_lines(args.data)
    tmp = Path(args.workdir)
    for config in args.configs.split(","):
        arch, batch = config.split("/")
        backbone = make_backbone(arch, args.size, Path(args.tokenizers), tmp)
        ids = sentence_ids(lines, backbone, args.length)
        if "lengths" not in results:
            lengths = np.array([len(i) for i in ids])
            results["lengths"] = {"lines": len(ids), "mean": round(float(lengths.mean()), 2),
                                  "real_share_padded_to_length": round(float(lengths.mean() / args.length), 3),
                                  "at_length": round(float((lengths == args.length).mean()), 3)}
        if arch not in results.setdefault("packing_check", {}):
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(backbone)
            first = tok.pad_token_id + 1 if arch == "roberta" else 0
            results["packing_check"][arch] = attempt(check_packing, backbone, ids[:48], tok.pad_token_id, first,
                                                     args.rows[-1])
            print(f"[floor] packing check {arch}: {results['packing_check'][arch]}", flush=True)
        results[config] = run_config(arch, int(batch), args, backbone, ids, peak)
        results["seconds"] = round(time.perf_counter() - started, 1)
        write(args.out, results)


if __name__ == "__main__":
    main()
