"""Training speed on one GPU (issue 14): our trainer against a plain reference loop, in one run.

    python benchmarks/gpu_training.py --device cuda --size base --out $OUT/gpu_training.json   # the GPU run
    python benchmarks/gpu_training.py --device cpu --size tiny --out results/bench/gpu_training_cpu.json

Sections (`--sections`, default all), each printed as it finishes and written to `--out`:

* `matmul`: the device's measured matrix rate (bf16 8192^3 on a GPU, fp32 on the CPU), MFU's denominator.
* `step`: a SimCSE step of BERT-base- and RoBERTa-base-sized models (random weights from their configs, the
  real tokenizers) at each `--batches`, sentences of at least `--length` tokens (so every batch is exactly
  [2B, length]). Our trainer (`sentaug.train.trainer.train`, the corpus pre-tokenized) is timed by an
  optimizer-step hook (CUDA events: the device's timeline, no synchronisation added), the median over
  `--steps` after `--warmup`; side by side, a plain reference loop (Hugging Face model, tokenizer per batch,
  default AdamW) in fp32 and under bf16 autocast. Reported: steps/s and the ratios, model FLOP utilisation
  (FLOPs counted by torch's FlopCounterMode over forward and backward), peak memory, the model alone
  (forward + loss + backward on ready tensors) and the optimizer alone, hence the share of the step outside
  the model, the host's tokenization time per step, host-device synchronisations per step (CUDA sync debug
  mode), SDPA against eager attention, a ready 4D attention mask (`prepared_mask`: no per-forward mask check
  in transformers), and `torch.compile` of the backbone.
* `dev_eval`: the STS-B dev evaluation (1,500 pairs): ours (batches tokenized once) against the algorithm
  it replaced (re-tokenized at every call, one device wait per batch), and ours under bf16 autocast.
* `overhead`: step time of CARDS's retrieval, VaSCL, AugCSE and MLM over SimCSE, trainer timed as above.
* `methods`: every method declared in config.yaml trains `--method-steps` steps (bf16 on a GPU) with its
  caches (stand-ins: words shuffled), token files and retrieval index; every logged loss must be finite.
* `knn`: exact top-64 of `--knn-n` x `--knn-dim` random unit vectors with torch (the GPU when there is one)
  and, when importable and `--faiss-full`, faiss; torch against faiss (or a float64 product) on a sample.

The projected wiki1m epoch (15,625 steps of BERT-base at batch 64 and 125 dev evaluations) is derived at the
end. Data: `--data` laid out like ../shared/data (sts/STSBenchmark/sts-dev.csv, wiki/wiki1m_head.txt),
`--tokenizers` like ../shared/models. What to carry to a GPU machine: benchmarks/gpu_notes.md.
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import itertools
import json
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import yaml

from sentaug import config as sc
from sentaug.models.backbones import random_model
from sentaug.train import method as method_module
from sentaug.train.trainer import train

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"base": {"layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072},
         "tiny": {"layers": 2, "hidden": 128, "heads": 2, "intermediate": 512}}
TOKENIZERS = {"bert": "bert-base-uncased-tokenizer", "roberta": "roberta-base-tokenizer"}
OVERHEAD = ["simcse", "simcse_retrieval", "cards", "vascl", "augcse", "simcse_mlm"]
SECTIONS = ["matmul", "step", "dev_eval", "knn", "overhead", "methods"]     # the order they run in
EPOCH_STEPS, EPOCH_EVALS = 15_625, 125      # wiki1m at batch 64, dev evaluation every 125 steps
RUNS = itertools.count()


class Clock:
    """Marks on the device's timeline (CUDA events) or the host's (perf_counter)."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"

    def mark(self):
        if not self.cuda:
            return time.perf_counter()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def intervals(self, marks) -> list[float]:
        if not self.cuda:
            return list(np.diff(marks))
        torch.cuda.synchronize()
        return [a.elapsed_time(b) / 1000 for a, b in zip(marks, marks[1:])]

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()


def median_ms(seconds) -> float | None:
    return round(1000 * statistics.median(seconds), 3) if len(seconds) else None


def autocast(device: torch.device, enabled: bool = True):
    if device.type == "cuda" and enabled:
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


# ---------------------------------------------------------------- set-up
def make_backbone(arch: str, size: str, tokenizers: Path, tmp: Path) -> str:
    from transformers import AutoTokenizer

    out = tmp / f"{arch}-{size}"
    if not out.exists():
        tok = AutoTokenizer.from_pretrained(tokenizers / TOKENIZERS[arch])
        random_model(arch, SIZES[size], tok, seed=0).save_pretrained(out)
        tok.save_pretrained(out)
    return str(out)


def long_lines(lines: list[str], backbone: str, length: int) -> list[str]:
    """Lines of at least `length` tokens (truncated to it in training: every batch is [2B, length])."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(backbone)
    ids = tok(lines, add_special_tokens=True)["input_ids"]
    return [t for t, i in zip(lines, ids) if len(i) >= length]


def token_files(texts: list[str], backbone: str, spec: dict, tmp: Path) -> list[str]:
    """Token files of the run's corpus and caches (the paper-scale path); none for a version without them."""
    try:
        from sentaug.models.tokens import build_token_file
    except ImportError:
        return []
    from sentaug.workflow import token_key
    if "tokens" not in inspect.signature(train).parameters:
        return []
    key = token_key(spec["max_seq_length"], spec.get("add_tokens") or ())
    out = []
    for src in texts:
        path = tmp / "tokens" / Path(backbone).name / key / f"{Path(src).parent.name}_{Path(src).stem}.npz"
        if not path.exists():
            build_token_file(src, backbone, spec["max_seq_length"], path, spec.get("add_tokens") or (), progress=False)
        out.append(str(path))
    return out


def stand_in_cache(lines: list[str], path: Path, seed: int, deletion: bool) -> str:
    import pandas as pd

    if not path.exists():
        rng = random.Random(f"{path.parent.name}:{seed}")
        aug = [" ".join(rng.sample(t.split(), len(t.split()))) for t in lines]
        if deletion:     # CLEAR's caches carry the added [DEL] token
            aug = [a.replace(a.split()[0], "[DEL]", 1) if a.split() else a for a in aug]
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"original": lines, "augmented": aug, "changed": [a != t for a, t in zip(aug, lines)],
                      "flag": [""] * len(lines)}).to_parquet(path)
    return str(path)


def spec_for(config: dict, method: str, args, **kw) -> dict:
    spec = sc.train_spec(config, None, "bert-base-uncased", method, seed=1, scale="paper")
    spec.update(max_seq_length=args.length, save_steps=10**9, **kw)
    spec["eval_steps"] = spec["max_steps"]
    return spec


# ---------------------------------------------------------------- timing our trainer
def timed_train(spec: dict, corpus: str, caches, backbone: str, args, tmp: Path, index=None, tokens=(),
                compile_backbone: bool = False, sync_window=(2, 5)) -> dict:
    """Run the real trainer; per-step times from an optimizer-step hook, host tokenization per step,
    synchronisations per step (CUDA) in `sync_window` (steps excluded from the timing)."""
    import torch.optim.optimizer as optim_hooks

    device = torch.device(args.device)
    clock, marks, tokenize, widths = Clock(device), [], {}, []
    original = method_module.Method._tokenize

    def timed_tokenize(self, texts):
        start = time.perf_counter()
        enc = original(self, texts)
        tokenize[len(marks)] = tokenize.get(len(marks), 0.0) + time.perf_counter() - start
        widths.append(int(enc["input_ids"].shape[1]))
        return enc

    def hook(optimizer, a, k):
        marks.append(clock.mark())
        if device.type == "cuda" and len(marks) in sync_window:
            torch.cuda.set_sync_debug_mode("warn" if len(marks) == sync_window[0] else 0)

    kw = {"index": index} if index else {}
    if tokens:
        kw["tokens"] = tokens
    if compile_backbone:
        kw["compile_backbone"] = True
    out = tmp / "runs" / f"{spec['method']}-{next(RUNS)}"
    handle = optim_hooks.register_optimizer_step_post_hook(hook)
    method_module.Method._tokenize = timed_tokenize
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            train(spec, corpus, caches, backbone, args.data, str(out), device=args.device, **kw)
    finally:
        handle.remove()
        method_module.Method._tokenize = original
        if device.type == "cuda":
            torch.cuda.set_sync_debug_mode(0)
    wall = time.perf_counter() - started
    steps = clock.intervals(marks)          # steps[i]: from the end of step i + 1 to the end of step i + 2
    skip = set(range(sync_window[0] - 1, sync_window[1])) if device.type == "cuda" else set()
    timed = [s for i, s in enumerate(steps) if i + 1 >= args.warmup and i not in skip]
    log = [json.loads(r) for r in (out / "train_log.jsonl").read_text().splitlines()]
    syncs = sum("synchroniz" in str(w.message) for w in caught)
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    return {"median_step_ms": median_ms(timed), "steps_timed": len(timed), "wall_s": round(wall, 2),
            "tokenize_ms_per_step": median_ms([tokenize.get(i, 0.0) for i in range(args.warmup, len(marks))]),
            "batch_width": statistics.median(widths) if widths else None,
            "syncs_per_step": syncs / (sync_window[1] - sync_window[0]) if device.type == "cuda" else None,
            "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.type == "cuda" else None,
            "losses": [r["loss"] for r in log], "parts": [r.get("parts", {}) for r in log],
            "stsb_dev": [r["stsb_dev"] for r in log if "stsb_dev" in r]}


# ---------------------------------------------------------------- reference loop, model alone, optimizer alone
def reference_loop(backbone: str, lines: list[str], batch: int, args, mixed: bool) -> dict:
    """A plain SimCSE loop: tokenizer per batch, HF model, [CLS] + MLP, InfoNCE, default AdamW."""
    from transformers import AutoModel, AutoTokenizer

    device = torch.device(args.device)
    tok, model = AutoTokenizer.from_pretrained(backbone), AutoModel.from_pretrained(backbone).to(device).train()
    d = model.config.hidden_size
    head = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.Tanh()).to(device)
    opt = torch.optim.AdamW([*model.parameters(), *head.parameters()], lr=3e-5)
    clock, marks = Clock(device), []
    target = torch.arange(batch, device=device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    for step in range(args.warmup + args.steps):
        start = step * batch % len(lines)
        texts = (lines * 2)[start:start + batch]
        enc = tok(texts + texts, padding=True, truncation=True, max_length=args.length, return_tensors="pt").to(device)
        with autocast(device, mixed):
            z = head(model(**enc).last_hidden_state[:, 0])
            logits = F.normalize(z[:batch].float(), dim=-1) @ F.normalize(z[batch:].float(), dim=-1).T / 0.05
            loss = F.cross_entropy(logits, target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        marks.append(clock.mark())
    steps = clock.intervals(marks)[args.warmup - 1:]
    peak = round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.type == "cuda" else None
    del model, head, opt
    return {"median_step_ms": median_ms(steps), "peak_memory_gib": peak}


def model_alone(backbone: str, lines: list[str], batch: int, args, attn: str | None = None) -> dict:
    """Forward + InfoNCE + backward of our encoder on ready device tensors (what the step cannot do without),
    its FLOPs (FlopCounterMode), then the fused optimizer step alone on those gradients."""
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoModel, AutoTokenizer

    from sentaug.models.encoder import SentenceEncoder
    from sentaug.objectives import InfoNCE

    device = torch.device(args.device)
    tok = AutoTokenizer.from_pretrained(backbone)
    model = AutoModel.from_pretrained(backbone, **({"attn_implementation": attn} if attn else {}))
    encoder = SentenceEncoder(model.to(device), pooler="cls").to(device).train()
    texts = (lines * 2)[:batch]
    enc = tok(texts + texts, padding=True, truncation=True, max_length=args.length, return_tensors="pt").to(device)
    loss_fn, clock, marks = InfoNCE(0.05), Clock(device), []

    def one():
        with autocast(device):
            z = encoder(enc["input_ids"], enc["attention_mask"])
            loss = loss_fn(z[:batch], z[batch:])
        loss.backward()

    with FlopCounterMode(display=False) as counter:
        one()
    for _ in range(args.warmup + args.steps):
        encoder.zero_grad(set_to_none=True)
        one()
        marks.append(clock.mark())
    fwd_bwd = clock.intervals(marks)[args.warmup - 1:]
    fused = {"fused": True} if device.type == "cuda" else {}
    opt = torch.optim.AdamW(encoder.parameters(), lr=3e-5, **fused)
    marks = []
    for _ in range(args.warmup + args.steps):
        opt.step()
        marks.append(clock.mark())
    optimizer = clock.intervals(marks)[args.warmup - 1:]
    return {"attn_implementation": model.config._attn_implementation, "flops_per_step": counter.get_total_flops(),
            "median_model_ms": median_ms(fwd_bwd), "median_optimizer_ms": median_ms(optimizer),
            "width": int(enc["input_ids"].shape[1])}


def matmul_rate(device: torch.device) -> dict:
    n, dtype = (8192, torch.bfloat16) if device.type == "cuda" else (1024, torch.float32)
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    clock, marks = Clock(device), []
    for _ in range(13):
        a @ b
        marks.append(clock.mark())
    seconds = statistics.median(clock.intervals(marks)[2:])
    return {"dtype": str(dtype).removeprefix("torch."), "n": n, "tflops": round(2 * n**3 / seconds / 1e12, 2)}


@contextlib.contextmanager
def prepared_mask():
    """The encoder hands the backbone a ready [B, 1, 1, T] boolean mask, which transformers 5 passes to SDPA
    as it is, instead of the [B, T] padding mask whose `.all()` check (transformers' masking_utils) makes the
    host wait for the device once per forward. The same outputs, bit for bit, on the CPU (BERT and RoBERTa,
    transformers 5.23); SDPA only (eager attention adds the mask)."""
    from sentaug.models import encoder as encoder_module

    original = encoder_module.SentenceEncoder.represent

    def represent(self, input_ids, attention_mask, **kw):
        hidden = self.pooler in encoder_module.NEEDS_HIDDEN_STATES
        outputs = self.backbone(input_ids=input_ids, attention_mask=attention_mask[:, None, None, :].bool(),
                                output_hidden_states=hidden, return_dict=True, **kw)
        return encoder_module.pool(self.pooler, outputs, attention_mask)

    encoder_module.SentenceEncoder.represent = represent
    try:
        yield
    finally:
        encoder_module.SentenceEncoder.represent = original


def attempt(fn, *a, **kw) -> dict:
    """A variant's result, or the error that stopped it (the other measurements still run)."""
    try:
        return fn(*a, **kw)
    except Exception as e:
        print(f"[variant] {fn.__name__} failed: {type(e).__name__}: {e}", flush=True)
        return {"error": f"{type(e).__name__}: {e}"}


# ---------------------------------------------------------------- sections
def section_step(args, tmp: Path, config: dict, lines: list[str], results: dict) -> dict:
    out = {}
    peak = results.get("matmul", {}).get("tflops")
    for arch in args.archs.split(","):
        backbone = make_backbone(arch, args.size, args.tokenizers, tmp)
        long = long_lines(lines, backbone, args.length)
        corpus = tmp / f"corpus-{arch}.txt"
        corpus.write_text("\n".join(long) + "\n", encoding="utf-8")
        for batch in map(int, args.batches.split(",")):
            spec = spec_for(config, "simcse", args, batch_size=batch, max_steps=args.warmup + args.steps)
            row = {"n_sentences": len(long)}
            row["model"] = model_alone(backbone, long, batch, args)
            row["ours"] = timed_train(spec, str(corpus), None, backbone, args, tmp,
                                      tokens=token_files([str(corpus)], backbone, spec, tmp))
            row["reference_fp32"] = reference_loop(backbone, long, batch, args, mixed=False)
            first = arch == "bert" and batch == min(map(int, args.batches.split(",")))
            if first:      # variants tried once: eager attention, torch.compile (a failure is recorded)
                row["model_eager_attention"] = attempt(model_alone, backbone, long, batch, args, attn="eager")
            if args.device.startswith("cuda"):
                row["reference_autocast"] = reference_loop(backbone, long, batch, args, mixed=True)
            if first and args.device.startswith("cuda"):   # Hugging Face's mask check, bypassed (exact: see below)
                with prepared_mask():
                    row["ours_4d_mask"] = attempt(timed_train, spec, str(corpus), None, backbone, args, tmp,
                                                  tokens=token_files([str(corpus)], backbone, spec, tmp))
            if first and args.compile:
                row["ours_compiled"] = attempt(timed_train, spec, str(corpus), None, backbone, args, tmp,
                                               tokens=token_files([str(corpus)], backbone, spec, tmp),
                                               compile_backbone=True)
            ours, model = row["ours"]["median_step_ms"], row["model"]["median_model_ms"]
            row["steps_per_s"] = {k: round(1000 / v["median_step_ms"], 2) for k, v in row.items()
                                  if isinstance(v, dict) and "median_step_ms" in v}
            row["speedup_vs_reference"] = {k: round(v["median_step_ms"] / ours, 2) for k, v in row.items()
                                           if k.startswith("reference")}
            row["share_outside_model"] = round(1 - model / ours, 3)
            row["tokenize_share"] = round(row["ours"]["tokenize_ms_per_step"] / ours, 3)
            if peak:
                flops = row["model"]["flops_per_step"]
                row["mfu"] = {k: round(flops / (v["median_step_ms"] / 1000) / (peak * 1e12), 3)
                              for k, v in row.items() if isinstance(v, dict) and "median_step_ms" in v}
                row["mfu"]["model_alone"] = round(flops / (model / 1000) / (peak * 1e12), 3)
            out[f"{arch}/b{batch}"] = row
            print(f"[step] {arch} b{batch}: ours {ours:.2f} ms ({row['steps_per_s']['ours']} steps/s), "
                  f"reference {row['speedup_vs_reference']} x slower, outside model {row['share_outside_model']:.0%}, "
                  f"tokenize {row['tokenize_share']:.1%}, MFU {row.get('mfu', {}).get('ours')}", flush=True)
    return out


def legacy_dev_eval(model, tok, evaluator, batch_size: int = 128) -> float:
    """The dev evaluation before issue 14: tokenize to sort, tokenize each batch again, wait for each batch."""
    from sentaug.evaluate.sts import _corr, cosine

    sentences = evaluator.sentences
    lengths = [len(i) for i in tok(sentences, add_special_tokens=True)["input_ids"]]
    order = np.argsort(-np.asarray(lengths), kind="stable")
    device = next(model.parameters()).device
    out = np.empty((len(sentences), model.config.hidden_size), dtype=np.float32)
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(sentences), batch_size):
            idx = order[start:start + batch_size]
            enc = tok([sentences[i] for i in idx], padding=True, return_tensors="pt").to(device)
            out[idx] = model(**enc).last_hidden_state[:, 0].float().cpu().numpy()
    return _corr(cosine(out[evaluator._i1], out[evaluator._i2]), evaluator.pairs.gold)["spearman"]


def section_dev_eval(args, tmp: Path) -> dict:
    from transformers import AutoModel, AutoTokenizer

    from sentaug.evaluate.sts import DevEvaluator

    device = torch.device(args.device)
    backbone = make_backbone("bert", args.size, args.tokenizers, tmp)
    model, tok = AutoModel.from_pretrained(backbone).to(device), AutoTokenizer.from_pretrained(backbone)
    evaluator = DevEvaluator(args.data)
    clock = Clock(device)

    def timed(fn, repeats=5):
        scores, seconds = [], []
        for _ in range(repeats):
            clock.sync()
            start = time.perf_counter()
            scores.append(fn())
            clock.sync()
            seconds.append(time.perf_counter() - start)
        return {"median_ms": median_ms(seconds[1:] if repeats > 1 else seconds),
                "first_ms": round(1000 * seconds[0], 1), "score": scores[-1]}

    out = {"n_sentences": len(evaluator.sentences), "ours": timed(lambda: evaluator(model, tok)),
           "before": timed(lambda: legacy_dev_eval(model, tok, evaluator))}
    if device.type == "cuda":
        with autocast(device):
            out["ours_bf16"] = timed(lambda: evaluator(model, tok))
    out["speedup"] = round(out["before"]["median_ms"] / out["ours"]["median_ms"], 2)
    # the trainer writes the best model after every evaluation that improves on it: what one write costs
    from sentaug.models.encoder import SentenceEncoder

    encoder = SentenceEncoder(model, pooler="cls").to(device)
    out["best_checkpoint_write_ms"] = timed(lambda: encoder.save(tmp / "best", tok) or 0.0, repeats=3)["median_ms"]
    print(f"[dev_eval] ours {out['ours']['median_ms']} ms, before {out['before']['median_ms']} ms "
          f"({out['speedup']}x); scores {out['ours']['score']:.4f} / {out['before']['score']:.4f}", flush=True)
    return out


def method_assets(config: dict, methods, args, tmp: Path, lines: list[str], backbone: str):
    """Corpus, stand-in caches and (for retrieved negatives) the index each method needs."""
    from sentaug.index.neighbours import build_index

    corpus = tmp / "corpus" / "wiki1m_head.txt"
    corpus.parent.mkdir(exist_ok=True)
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = tmp / "index" / "k64.npz"
    if not index.exists() and any(config["methods"][m].get("negatives", "in_batch") != "in_batch" for m in methods):
        build_index(str(corpus), backbone, "cls_before_pooler", 64, index, device=args.device)

    def caches(spec):
        return [stand_in_cache(lines, tmp / "caches" / aug / f"seed{seed}.parquet", seed, aug.startswith("clear"))
                for aug, seed in sc.method_caches(spec)]

    return str(corpus), str(index), caches


def section_overhead(args, tmp: Path, config: dict, lines: list[str]) -> dict:
    backbone = make_backbone("bert", args.size, args.tokenizers, tmp)
    corpus, index, caches = method_assets(config, OVERHEAD, args, tmp, lines, backbone)
    out = {}
    for m in OVERHEAD:
        spec = spec_for(config, m, args, batch_size=64, max_steps=args.warmup + args.steps)
        c = caches(spec)
        tokens = token_files([corpus, *c], backbone, spec, tmp)
        out[m] = timed_train(spec, corpus, c, backbone, args, tmp, index=index, tokens=tokens)
    base = out["simcse"]["median_step_ms"]
    for m, row in out.items():
        row["overhead"] = round(row["median_step_ms"] / base - 1, 3)
        print(f"[overhead] {m:>18}: {row['median_step_ms']:8.2f} ms/step {row['overhead']:+.1%}", flush=True)
    return out


def past_deadline(args, started: float) -> bool:
    return args.deadline is not None and time.perf_counter() - started > args.deadline


def section_methods(args, tmp: Path, config: dict, lines: list[str], started: float) -> dict:
    backbone = make_backbone("bert", args.size, args.tokenizers, tmp)
    methods = list(config["methods"])
    corpus, index, caches = method_assets(config, methods, args, tmp, lines, backbone)
    out = {}
    for m in methods:
        if past_deadline(args, started):
            out[m] = {"finite": None, "skipped": "deadline"}
            continue
        spec = spec_for(config, m, args, max_steps=args.method_steps)
        start = time.perf_counter()
        try:
            c = caches(spec)
            run = timed_train(spec, corpus, c, backbone, args, tmp, index=index,
                              tokens=token_files([corpus, *c], backbone, spec, tmp))
            values = run["losses"] + [v for p in run["parts"] for v in p.values()] + run["stsb_dev"]
            out[m] = {"finite": all(math.isfinite(v) for v in values), "last_loss": run["losses"][-1],
                      "stsb_dev": run["stsb_dev"][-1], "batch_size": spec["batch_size"],
                      "median_step_ms": run["median_step_ms"]}
        except Exception as e:           # reported, and the other methods still run
            out[m] = {"finite": False, "error": f"{type(e).__name__}: {e}"}
        out[m]["seconds"] = round(time.perf_counter() - start, 1)
        print(f"[methods] {m:>26}: {'ok' if out[m]['finite'] else 'FAILED'} "
              f"{out[m].get('last_loss', out[m].get('error'))}", flush=True)
    failed = [m for m, r in out.items() if r["finite"] is False]
    skipped = [m for m, r in out.items() if r["finite"] is None]
    return {"methods": out, "all_finite": not failed and not skipped, "failed": failed, "skipped": skipped}


def section_knn(args) -> dict:
    from sentaug.index.neighbours import exact_topk

    device = torch.device(args.device)
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(args.knn_n, args.knn_dim, device=device, generator=g)
    x = F.normalize(x, dim=1).cpu().numpy()
    clock = Clock(device)
    clock.sync()
    start = time.perf_counter()
    ids, scores = exact_topk(x, 64, device=device, backend="torch")
    out = {"n": args.knn_n, "dim": args.knn_dim, "k": 64, "torch_s": round(time.perf_counter() - start, 2),
           "torch_device": str(device)}
    try:
        import faiss  # noqa: F401
        have_faiss = True
    except ImportError:
        have_faiss = False
    if have_faiss and args.faiss_full:
        start = time.perf_counter()
        f_ids, f_scores = exact_topk(x, 64, backend="faiss")
        out["faiss_s"] = round(time.perf_counter() - start, 2)
        out["faiss_over_torch"] = round(out["faiss_s"] / out["torch_s"], 2)
    # a sample of rows against faiss (or a float64 product): same scores; same ids where scores are distinct
    rows = np.random.default_rng(0).choice(args.knn_n, min(1000, args.knn_n), replace=False)
    if have_faiss:
        import faiss

        index = faiss.IndexFlatIP(x.shape[1])
        index.add(x)
        ref_scores, ref_ids = index.search(x[rows], 66)     # self, 64 neighbours, the next one
        reference = "faiss"
    else:
        ref_ids, ref_scores = [], []
        for chunk in np.array_split(rows, max(1, len(rows) // 100)):
            sim = x[chunk].astype(np.float64) @ x.astype(np.float64).T
            top = np.argpartition(-sim, 66, axis=1)[:, :66]
            top = np.take_along_axis(top, np.argsort(-np.take_along_axis(sim, top, axis=1), axis=1, kind="stable"), 1)
            ref_ids.append(top)
            ref_scores.append(np.take_along_axis(sim, top, axis=1))
        ref_ids, ref_scores = np.concatenate(ref_ids), np.concatenate(ref_scores)
        reference = "float64"
    same = distinct = 0
    diff = 0.0
    for j, r in enumerate(rows):
        keep = ref_ids[j] != r
        rid, rsc = ref_ids[j][keep][:64], ref_scores[j][keep][:64]
        diff = max(diff, float(np.abs(np.sort(scores[r])[::-1] - np.sort(rsc)[::-1]).max()))
        if np.diff(ref_scores[j][keep]).max() < -1e-5:
            distinct += 1
            same += bool((ids[r] == rid).all())
    out["sample"] = {"reference": reference, "rows": len(rows), "distinct_rows": distinct,
                     "identical_on_distinct": same, "max_abs_score_diff": diff}
    print(f"[knn] {args.knn_n} x {args.knn_dim}: torch {out['torch_s']} s on {device}"
          f"{', faiss ' + str(out['faiss_s']) + ' s' if 'faiss_s' in out else ''}; sample vs {reference}: "
          f"{same}/{distinct} identical, max score diff {diff:.2e}", flush=True)
    return out


def projection(results: dict) -> dict | None:
    step = results.get("step", {}).get("bert/b64")
    dev = results.get("dev_eval")
    if not step or not dev:
        return None
    ours = EPOCH_STEPS * step["ours"]["median_step_ms"] / 1000 + EPOCH_EVALS * dev["ours"]["median_ms"] / 1000
    ref = EPOCH_STEPS * step["reference_" + ("autocast" if "reference_autocast" in step else "fp32")][
        "median_step_ms"] / 1000 + EPOCH_EVALS * dev["before"]["median_ms"] / 1000
    return {"epoch_s": round(ours, 1), "epoch_min": round(ours / 60, 2), "reference_epoch_s": round(ref, 1),
            "goal_min": 3.0, "meets_goal": ours <= 180}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--size", choices=list(SIZES), default="base")
    p.add_argument("--sections", default=",".join(SECTIONS))
    p.add_argument("--archs", default="bert,roberta")
    p.add_argument("--batches", default="64,512")
    p.add_argument("--length", type=int, default=32)
    p.add_argument("--steps", type=int, default=None, help="timed steps (default 30 on a GPU, 20 on the CPU)")
    p.add_argument("--warmup", type=int, default=6)
    p.add_argument("--method-steps", type=int, default=20)
    p.add_argument("--knn-n", type=int, default=None, help="default 1,000,000 at base size, 20,000 tiny")
    p.add_argument("--knn-dim", type=int, default=None, help="default 768 at base size, 384 tiny")
    p.add_argument("--faiss-full", action="store_true", help="also time faiss over all rows (CPU: slow)")
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                   help="also time the trainer with torch.compile (default: on a GPU)")
    p.add_argument("--data", default=os.environ.get("SENTAUG_MIRROR", str(ROOT.parent / "shared/data")))
    p.add_argument("--tokenizers", default=os.environ.get("SENTAUG_MODEL_MIRROR", str(ROOT.parent / "shared/models")))
    p.add_argument("--deadline", type=float, default=None,
                   help="seconds: sections (and methods) not started by then are recorded as skipped")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    args.tokenizers = Path(args.tokenizers)
    cuda = args.device.startswith("cuda")
    args.steps = args.steps or (30 if cuda else 20)
    args.compile = cuda if args.compile is None else args.compile
    args.knn_n = args.knn_n or (1_000_000 if args.size == "base" else 20_000)
    args.knn_dim = args.knn_dim or (768 if args.size == "base" else 384)
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    lines = [t for t in (Path(args.data) / "wiki/wiki1m_head.txt").read_text(encoding="utf-8").splitlines() if t]
    results = {"args": {k: str(v) for k, v in vars(args).items()}, "versions": versions(args.device)}
    sections = args.sections.split(",")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in SECTIONS:
            if name not in sections:
                continue
            if past_deadline(args, started):
                results.setdefault("skipped", []).append(name)
                continue
            t0 = time.perf_counter()
            if name == "matmul":
                results[name] = matmul_rate(torch.device(args.device))
                print(f"[matmul] {results[name]}", flush=True)
            elif name == "step":
                results[name] = section_step(args, tmp, config, lines, results)
            elif name == "dev_eval":
                results[name] = section_dev_eval(args, tmp)
            elif name == "overhead":
                results[name] = section_overhead(args, tmp, config, lines)
            elif name == "methods":
                results[name] = section_methods(args, tmp, config, lines, started)
            elif name == "knn":
                results[name] = section_knn(args)
            results.setdefault("section_seconds", {})[name] = round(time.perf_counter() - t0, 1)
            results["projection"] = projection(results)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            write(args.out, results)
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    write(args.out, results)
    print(f"[done] {results['total_seconds']} s; projection {results['projection']}")
    if "methods" in results and results["methods"]["failed"]:
        sys.exit(1)


def write(path, results: dict) -> None:
    Path(path).write_text(json.dumps(results, indent=2, default=lambda v: v.item() if hasattr(v, "item") else str(v)))


def versions(device: str) -> dict:
    import transformers

    out = {"torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version(),
           "cpus": os.cpu_count(), "threads": torch.get_num_threads(), "loadavg": os.getloadavg()}
    if device.startswith("cuda"):
        out["gpu"] = torch.cuda.get_device_name()
    return out


if __name__ == "__main__":
    main()
