"""Training speed on one GPU (issues 14 and 43): our trainer, its CUDA-graph step beside its eager one, against a
plain reference loop, in one run.

    python benchmarks/gpu_training.py --device cuda --size base --isolate --out $OUT/gpu_training.json
    python benchmarks/gpu_training.py --device cpu --size tiny --out results/bench/gpu_training_cpu.json

Sections (`--sections`, default all but knn), each printed as it finishes and written to `--out`; with
`--isolate` each runs in a process of its own under its own time limit (`--caps`, within `--budget`), so that a
crash or a timeout keeps the other sections' figures:

* `matmul`: the device's measured matrix rate (bf16 8192^3 on a GPU, fp32 on the CPU), MFU's denominator.
* `step`: a SimCSE step of BERT-base- and RoBERTa-base-sized models (random weights from their configs, the
  real tokenizers; `--configs`, default bert/64 and roberta/512), sentences of at least `--length` tokens (every
  batch [2B, length]), `--warmup` + `--steps` steps. Our trainer (`sentaug.train.trainer.train`, the corpus
  pre-tokenized) with the step captured as one CUDA graph (`graph`) and run eagerly (`eager`), timed by marks
  after each step (CUDA events: the device's timeline); a plain reference loop (Hugging Face model, tokenizer
  per batch, default AdamW) in fp32 and under bf16 autocast. Reported: steps/s and ratios, model FLOP
  utilisation (FlopCounterMode over forward and backward), peak memory, the model alone (forward + loss +
  backward on ready tensors) and the optimizer alone, host-device synchronisations between two log lines
  (`--sync-mode error`: CUDA's sync debug mode stops the run at the first one, then the step is re-timed in
  `warn` mode to count them), the graph run against the eager one (losses every 10 steps and the final STS-B
  dev: `agreement`) and, on the graph's own inputs with the learning rate at 0, two replays (`replays`: the
  weights must not move, the gradients must differ: fresh dropout masks at every replay).
* `overhead`: step time of retrieval, CARDS, VaSCL, AugCSE and MLM over SimCSE, graph and eager.
* `dev_eval`: the STS-B dev evaluation (1,500 pairs): ours against the algorithm it replaced, ours in bf16, and
  one write of the best model.
* `methods`: every method declared in config.yaml trains `--method-steps` steps (bf16, the default step path:
  a CUDA graph on a GPU) with its caches (stand-ins: words shuffled), token files and retrieval index, in
  `--method-workers` processes at once; every logged loss must be finite; each run's step path is reported.
* `compile`: torch.compile of the backbone (`--compile-mode`, default reduce-overhead, dynamic=False) on
  BERT b64, its compile time and step time.
* `knn`: exact top-64 of `--knn-n` x `--knn-dim` random unit vectors with torch and, where installed, faiss.

The projected wiki1m epoch (15,625 steps of BERT-base at batch 64 and 125 dev evaluations) is derived at the
end from the fastest path. Data: `--data` laid out like ../shared/data (sts/STSBenchmark/sts-dev.csv,
wiki/wiki1m_head.txt), `--tokenizers` like ../shared/models. What to carry to a GPU machine:
benchmarks/gpu_notes.md; the whole device check: benchmarks/gpu_device_check.sh.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_runs import (ROOT, Clock, agreement, attempt, autocast, load_lines, long_lines,  # noqa: E402
                      make_backbone, median_ms, replays, spec_for, stand_in_cache, stand_in_triplets, timed_train,
                      token_files, versions, write)

OVERHEAD = ["simcse", "simcse_retrieval", "cards", "vascl", "augcse", "simcse_mlm"]
SECTIONS = ["matmul", "step", "dev_eval", "overhead", "methods", "compile", "knn"]     # the order they run in
DEFAULT_SECTIONS = [s for s in SECTIONS if s != "knn"]
EPOCH_STEPS, EPOCH_EVALS = 15_625, 125      # wiki1m at batch 64, dev evaluation every 125 steps


# ---------------------------------------------------------------- the reference loop, the model alone
def reference_loop(backbone: str, lines: list[str], batch: int, args, mixed: bool, steps: int) -> dict:
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
    for step in range(args.warmup + steps):
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
    seconds = clock.intervals(marks)[args.warmup - 1:]
    peak = round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.type == "cuda" else None
    return {"median_step_ms": median_ms(seconds), "peak_memory_gib": peak}


def model_alone(backbone: str, lines: list[str], batch: int, args) -> dict:
    """Forward + InfoNCE + backward of our encoder on ready device tensors (what the step cannot do without),
    its FLOPs (FlopCounterMode), then the fused optimizer step alone on those gradients."""
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoModel, AutoTokenizer

    from sentaug.models.encoder import SentenceEncoder
    from sentaug.objectives.infonce.module import InfoNCE

    device = torch.device(args.device)
    tok = AutoTokenizer.from_pretrained(backbone)
    encoder = SentenceEncoder(AutoModel.from_pretrained(backbone).to(device), pooler="cls").to(device).train()
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
    opt = torch.optim.AdamW(encoder.parameters(), lr=3e-5, **({"fused": True} if device.type == "cuda" else {}))
    marks = []
    for _ in range(args.warmup + args.steps):
        opt.step()
        marks.append(clock.mark())
    return {"flops_per_step": counter.get_total_flops(), "median_model_ms": median_ms(fwd_bwd),
            "median_optimizer_ms": median_ms(clock.intervals(marks)[args.warmup - 1:]),
            "width": int(enc["input_ids"].shape[1])}


def matmul_rate(device: torch.device) -> dict:
    n, dtype = (8192, torch.bfloat16) if device.type == "cuda" else (1024, torch.float32)
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    clock, marks = Clock(device), []
    for _ in range(13):
        a @ b
        marks.append(clock.mark())
    seconds = float(np.median(clock.intervals(marks)[2:]))
    return {"dtype": str(dtype).removeprefix("torch."), "n": n, "tflops": round(2 * n**3 / seconds / 1e12, 2)}


# ---------------------------------------------------------------- our trainer, as the sections run it
def ours(spec, corpus, caches, backbone, args, tmp, step_mode="auto", **kw) -> dict:
    """`timed_train` with this run's settings; on a GPU a synchronisation found in `--sync-mode error` is
    reported, then the run is timed again counting them (`warn`)."""
    run = attempt(timed_train, spec, corpus, caches, backbone, args.device, args.data, tmp, args.warmup,
                  step_mode=step_mode, sync_mode=args.sync_mode if args.device.startswith("cuda") else "warn", **kw)
    if "error" in run and "synchroniz" in run["error"]:
        again = attempt(timed_train, spec, corpus, caches, backbone, args.device, args.data, tmp, args.warmup,
                        step_mode=step_mode, sync_mode="warn", **kw)
        again["sync_error"] = run
        return again
    return run


# ---------------------------------------------------------------- sections
def section_step(args, tmp: Path, config: dict, lines: list[str], results: dict, save) -> dict:
    out = results["step"] = {}
    peak = results.get("matmul", {}).get("tflops")
    for arch, batch in (c.split("/") for c in args.configs.split(",")):
        batch = int(batch)
        backbone = make_backbone(arch, args.size, args.tokenizers, tmp)
        long = long_lines(lines, backbone, args.length)
        corpus = tmp / f"corpus-{arch}.txt"
        corpus.write_text("\n".join(long) + "\n", encoding="utf-8")
        spec = spec_for(config, "simcse", args.length, arch, batch_size=batch, max_steps=args.warmup + args.steps)
        tokens = token_files([str(corpus)], backbone, spec, tmp)
        variants = args.variants.split(",")
        row = {"n_sentences": len(long)}
        if "model" in variants:
            row["model"] = attempt(model_alone, backbone, long, batch, args)
        if "graph" in variants:
            row["graph"] = ours(spec, str(corpus), None, backbone, args, tmp, tokens=tokens, keep_runner=True)
            runner = row["graph"].pop("_runner", None)
            if runner is not None:
                row["replays"] = attempt(replays, runner)
            del runner
            gc.collect()        # the kept run's model and graph hold GPU memory until their cycles are collected
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
        if "graph_compiled" in variants:    # the backbone's kernels fused by torch.compile, inside the same graph
            row["graph_compiled"] = ours(spec, str(corpus), None, backbone, args, tmp, tokens=tokens,
                                         compile_backbone=True)
        if "eager" in variants:
            row["eager"] = ours(spec, str(corpus), None, backbone, args, tmp, step_mode="eager", tokens=tokens)
        if "graph" in row and "eager" in row:
            row["agreement"] = agreement(row["graph"], row["eager"])
        if "reference" in variants:
            ref_steps = min(args.steps, 20)
            row["reference_fp32"] = attempt(reference_loop, backbone, long, batch, args, False, ref_steps)
            if args.device.startswith("cuda"):
                row["reference_autocast"] = attempt(reference_loop, backbone, long, batch, args, True, ref_steps)
        timed = {k: v["median_step_ms"] for k, v in row.items() if isinstance(v, dict) and v.get("median_step_ms")}
        ours_paths = [k for k in ("graph", "graph_compiled", "eager") if k in timed]
        best = min((timed[k], k) for k in ours_paths) if ours_paths else (None, None)
        row["fastest"] = best[1]
        row["steps_per_s"] = {k: round(1000 / v, 2) for k, v in timed.items()}
        if best[0]:
            row["speedup_of_fastest"] = {k: round(v / best[0], 2) for k, v in timed.items() if k != best[1]}
        model = row.get("model", {}).get("median_model_ms")
        if peak and "flops_per_step" in row.get("model", {}):
            flops = row["model"]["flops_per_step"]
            row["mfu"] = {k: round(flops / (v / 1000) / (peak * 1e12), 3) for k, v in timed.items()}
            if model:
                row["mfu"]["model_alone"] = round(flops / (model / 1000) / (peak * 1e12), 3)
        out[f"{arch}/b{batch}"] = row
        save()      # a later config that crashes or runs out of time keeps this one's figures
        print(f"[step] {arch} b{batch}: {timed} ms; MFU {row.get('mfu')}; paths "
              f"{ {k: row[k].get('step_path', {}).get('path') for k in ours_paths} }; syncs/step "
              f"{ {k: row[k].get('syncs_per_step') for k in ours_paths} }; agreement "
              f"{row.get('agreement', {}).get('within_tolerance')}", flush=True)
    return out


def method_assets(config: dict, methods, args, tmp: Path, lines: list[str], backbone: str):
    """Corpus, stand-in caches and (for retrieved negatives) the index each method needs."""
    from sentaug.index.neighbours import build_index

    corpus = tmp / "corpus" / "wiki1m_head.txt"
    corpus.parent.mkdir(exist_ok=True)
    if not corpus.exists():
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = tmp / "index" / "k64.npz"
    if not index.exists() and any(config["methods"][m].get("negatives", "in_batch") != "in_batch" for m in methods):
        build_index(str(corpus), backbone, "cls_before_pooler", 64, index, device=args.device)
    from sentaug import config as sc

    def caches(spec):
        return [stand_in_cache(lines, tmp / "caches" / aug / f"seed{seed}.parquet", seed, aug.startswith("clear"))
                for aug, seed in sc.method_caches(spec)]

    return str(corpus), str(index), caches


def examples_of(spec: dict, corpus: str, tmp: Path, lines: list[str]) -> str:
    """What a method trains on: NLI triplets for the `nli` positive source (stand-ins), else the corpus."""
    if spec["positive"]["source"] == "nli":
        return stand_in_triplets(lines, tmp / "nli" / "triplets.csv")
    return corpus


def texts_of_run(examples: str, caches: list[str]) -> list[str]:
    """The files a run's token files are made of (a triplet file has none: its texts are tokenized per batch)."""
    return [p for p in [examples, *caches] if not p.endswith(".csv")]


def section_overhead(args, tmp: Path, config: dict, lines: list[str], results: dict, save) -> dict:
    backbone = make_backbone("bert", args.size, args.tokenizers, tmp)
    corpus, index, caches = method_assets(config, OVERHEAD, args, tmp, lines, backbone)
    out = results["overhead"] = {}
    for m in OVERHEAD:
        spec = spec_for(config, m, args.length, batch_size=64, max_steps=args.warmup + args.overhead_steps)
        c = caches(spec)
        tokens = token_files([corpus, *c], backbone, spec, tmp)
        out[m] = {mode: ours(spec, corpus, c, backbone, args, tmp, step_mode=step_mode, index=index, tokens=tokens)
                  for mode, step_mode in (("graph", "auto"), ("eager", "eager"))}
        save()
    for mode in ("graph", "eager"):
        base = out["simcse"][mode].get("median_step_ms")
        for m, row in out.items():
            if base and row[mode].get("median_step_ms"):
                row[mode]["overhead"] = round(row[mode]["median_step_ms"] / base - 1, 3)
    for m, row in out.items():
        print(f"[overhead] {m:>18}: graph {row['graph'].get('median_step_ms')} ms "
              f"({row['graph'].get('overhead')}), eager {row['eager'].get('median_step_ms')} ms "
              f"({row['eager'].get('overhead')}); path {row['graph'].get('step_path', {}).get('path')}", flush=True)
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
    from sentaug.models.encoder import SentenceEncoder

    device = torch.device(args.device)
    backbone = make_backbone("bert", args.size, args.tokenizers, tmp)
    model, tok = AutoModel.from_pretrained(backbone).to(device), AutoTokenizer.from_pretrained(backbone)
    evaluator = DevEvaluator(args.data)
    clock = Clock(device)

    def timed(fn, repeats=4):
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
    encoder = SentenceEncoder(model, pooler="cls").to(device)
    out["best_checkpoint_write_ms"] = timed(lambda: encoder.save(tmp / "best", tok) or 0.0, repeats=3)["median_ms"]
    out["best_snapshot_on_device_ms"] = timed(lambda: encoder.snapshot() and 0.0, repeats=3)["median_ms"]
    print(f"[dev_eval] ours {out['ours']['median_ms']} ms, before {out['before']['median_ms']} ms "
          f"({out['speedup']}x); best model written in {out['best_checkpoint_write_ms']} ms, kept on the device in "
          f"{out['best_snapshot_on_device_ms']} ms", flush=True)
    return out


def section_methods(args, tmp: Path, config: dict, lines: list[str], started: float) -> dict:
    """Every declared method for a few steps; `--method-workers` processes share them (the assets are made
    once, here, before they start)."""
    backbone = make_backbone("bert", args.size, args.tokenizers, tmp)
    methods = list(config["methods"])
    corpus, index, caches = method_assets(config, methods, args, tmp, lines, backbone)
    if args.method_shard:
        i, n = map(int, args.method_shard.split("/"))

        def save(done):       # after every method: a shard stopped at its limit keeps what it ran
            write(args.out, {"methods": done})

        return run_methods(methods[i::n], args, tmp, config, lines, corpus, index, caches, backbone, started, save)
    if args.method_workers <= 1:
        return summarise_methods(run_methods(methods, args, tmp, config, lines, corpus, index, caches, backbone,
                                             started))
    for m in methods:      # every cache and token file made once, before processes that share them start
        spec = spec_for(config, m, args.length, max_steps=args.method_steps)
        token_files(texts_of_run(examples_of(spec, corpus, tmp, lines), caches(spec)), backbone, spec, tmp)
    procs = []
    for i in range(args.method_workers):
        part = tmp / f"methods_{i}.json"
        cmd = [sys.executable, __file__, *shared_flags(args, tmp), "--sections", "methods",
               "--method-shard", f"{i}/{args.method_workers}", "--out", str(part)]
        if args.deadline is not None:
            cmd += ["--deadline", str(max(1.0, args.deadline - (time.perf_counter() - started)))]
        procs.append((part, subprocess.Popen(cmd)))
    merged = {}
    for part, proc in procs:     # a shard still running 30 s past the deadline is stopped; its methods so far count
        limit = None if args.deadline is None else max(1.0, args.deadline + 30 - (time.perf_counter() - started))
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if part.exists():
            merged.update(json.loads(part.read_text()).get("methods", {}))
    for m in methods:
        merged.setdefault(m, {"finite": None, "skipped": "not reached by its worker process in the time"})
    return summarise_methods({m: merged[m] for m in methods})


def run_methods(methods, args, tmp, config, lines, corpus, index, caches, backbone, started, save=None) -> dict:
    out = {}
    for m in methods:
        if past_deadline(args, started):
            out[m] = {"finite": None, "skipped": "deadline"}
            continue
        spec = spec_for(config, m, args.length, max_steps=args.method_steps)
        start = time.perf_counter()
        try:
            c, examples = caches(spec), examples_of(spec, corpus, tmp, lines)
            run = timed_train(spec, examples, c, backbone, args.device, args.data, tmp, 1, index=index,
                              tokens=token_files(texts_of_run(examples, c), backbone, spec, tmp), sync_window=(0, 0))
            values = run["losses"] + [v for p in run["parts"] for v in p.values()] + run["stsb_dev"]
            out[m] = {"finite": all(math.isfinite(v) for v in values), "last_loss": run["losses"][-1],
                      "stsb_dev": run["stsb_dev"][-1], "batch_size": spec["batch_size"],
                      "median_step_ms": run["median_step_ms"], "step_path": run["step_path"],
                      "peak_memory_gib": run["peak_memory_gib"]}
        except Exception as e:           # reported, and the other methods still run
            out[m] = {"finite": False, "error": f"{type(e).__name__}: {e}"[:1500]}
        out[m]["seconds"] = round(time.perf_counter() - start, 1)
        if save:
            save(out)
        print(f"[methods] {m:>26}: {'ok' if out[m]['finite'] else 'FAILED'} "
              f"{out[m].get('step_path', {}).get('path', '')} {out[m].get('last_loss', out[m].get('error'))}",
              flush=True)
    return out


def summarise_methods(out: dict) -> dict:
    failed = [m for m, r in out.items() if r.get("finite") is False]
    skipped = [m for m, r in out.items() if r.get("finite") is None]
    paths = {}
    for m, r in out.items():
        paths.setdefault(r.get("step_path", {}).get("path", "none"), []).append(m)
    return {"methods": out, "all_finite": not failed and not skipped, "failed": failed, "skipped": skipped,
            "n": len(out), "by_path": {k: len(v) for k, v in paths.items()},
            "eager_methods": {m: out[m]["step_path"]["why"] for m in paths.get("eager", [])}}


def section_compile(args, tmp: Path, config: dict, lines: list[str]) -> dict:
    backbone = make_backbone("bert", args.size, args.tokenizers, tmp)
    long = long_lines(lines, backbone, args.length)
    corpus = tmp / "corpus-bert.txt"
    corpus.write_text("\n".join(long) + "\n", encoding="utf-8")
    spec = spec_for(config, "simcse", args.length, "bert", batch_size=64, max_steps=args.warmup + args.steps)
    run = ours(spec, str(corpus), None, backbone, args, tmp, tokens=token_files([str(corpus)], backbone, spec, tmp),
               compile_backbone=args.compile_mode)
    run["mode"] = args.compile_mode
    print(f"[compile] {args.compile_mode}: {run.get('median_step_ms')} ms/step, run {run.get('wall_s')} s "
          f"(compile included) {run.get('error', '')}", flush=True)
    return run


def section_knn(args) -> dict:
    from sentaug.index.neighbours import exact_topk

    device = torch.device(args.device)
    g = torch.Generator(device=device).manual_seed(0)
    x = F.normalize(torch.randn(args.knn_n, args.knn_dim, device=device, generator=g), dim=1).cpu().numpy()
    Clock(device).sync()
    start = time.perf_counter()
    ids, scores = exact_topk(x, 64, device=device, backend="torch")
    out = {"n": args.knn_n, "dim": args.knn_dim, "k": 64, "torch_s": round(time.perf_counter() - start, 2)}
    rows = np.random.default_rng(0).choice(args.knn_n, min(200, args.knn_n), replace=False)
    sim = x[rows].astype(np.float64) @ x.astype(np.float64).T
    sim[np.arange(len(rows)), rows] = -np.inf
    ref = -np.sort(-sim, axis=1)[:, :64]
    out["max_abs_score_diff_vs_float64"] = float(np.abs(ref - scores[rows]).max())
    print(f"[knn] {args.knn_n} x {args.knn_dim}: torch {out['torch_s']} s; vs float64 "
          f"{out['max_abs_score_diff_vs_float64']:.1e}", flush=True)
    return out


# ---------------------------------------------------------------- the run
def projection(results: dict) -> dict | None:
    step = results.get("step", {}).get("bert/b64")
    dev = results.get("dev_eval")
    if not step or not dev or not step.get("fastest"):
        return None
    fastest = step[step["fastest"]]["median_step_ms"]
    ours = EPOCH_STEPS * fastest / 1000 + EPOCH_EVALS * dev["ours"]["median_ms"] / 1000
    plain = step.get("reference_fp32", {}).get("median_step_ms")
    out = {"path": step["fastest"], "step_ms": fastest, "epoch_s": round(ours, 1), "epoch_min": round(ours / 60, 2),
           "goal_min": 3.0, "meets_goal": ours <= 180}
    if plain:
        out["plain_loop_epoch_min"] = round((EPOCH_STEPS * plain / 1000 + EPOCH_EVALS * dev["before"]["median_ms"]
                                             / 1000) / 60, 2)
    return out


def past_deadline(args, started: float) -> bool:
    return args.deadline is not None and time.perf_counter() - started > args.deadline


def shared_flags(args, tmp: Path) -> list[str]:
    """The flags a section's own process needs to measure what this one would."""
    flags = ["--device", args.device, "--size", args.size, "--configs", args.configs, "--length", str(args.length),
             "--steps", str(args.steps), "--warmup", str(args.warmup), "--method-steps", str(args.method_steps),
             "--method-workers", str(args.method_workers), "--overhead-steps", str(args.overhead_steps),
             "--variants", args.variants, "--knn-n", str(args.knn_n), "--knn-dim", str(args.knn_dim), "--sync-mode", args.sync_mode,
             "--compile-mode", args.compile_mode, "--data", args.data, "--tokenizers", str(args.tokenizers),
             "--workdir", str(tmp)]
    return flags


def run_group(cmd: list[str], limit: float):
    """Run `cmd` in a process group of its own; past `limit` seconds the whole group (the section's own worker
    processes too) is stopped. The exit status, or "timeout"."""
    import signal

    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        return proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=grace)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        return "timeout"


def run_isolated(args, sections: list[str], tmp: Path, results: dict) -> None:
    """Each section in a process of its own, at most its cap and never past the budget; its JSON is merged."""
    caps = dict((k, float(v)) for k, v in (c.split("=") for c in args.caps.split(",") if c))
    started = time.perf_counter()
    for name in sections:
        left = args.budget - (time.perf_counter() - started)
        limit = min(caps.get(name, left), left)
        if limit < 15:
            results.setdefault("skipped", []).append(name)
            print(f"[runner] {name} skipped: {left:.0f} s left", flush=True)
            continue
        part = tmp / f"section_{name}.json"
        cmd = [sys.executable, __file__, *shared_flags(args, tmp), "--sections", name, "--out", str(part)]
        if name == "methods":       # no method starts after this; stragglers are stopped 30 s later
            cmd += ["--deadline", str(max(1.0, limit - 45))]
        if name == "step" and "matmul" in results:
            cmd += ["--peak-tflops", str(results["matmul"]["tflops"])]
        t0 = time.perf_counter()
        print(f"[runner] {name}: limit {limit:.0f} s", flush=True)
        rc = run_group(cmd, limit)
        took = round(time.perf_counter() - t0, 1)
        if part.exists():
            got = json.loads(part.read_text())
            results.update({k: v for k, v in got.items() if k in SECTIONS})
        results.setdefault("section_seconds", {})[name] = took
        results.setdefault("section_exit", {})[name] = rc
        print(f"[runner] {name}: exit {rc} after {took} s", flush=True)
        results["projection"] = projection(results)
        write(args.out, results)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--size", choices=["base", "tiny"], default="base")
    p.add_argument("--sections", default=",".join(DEFAULT_SECTIONS))
    p.add_argument("--configs", default="bert/64,roberta/512", help="arch/batch of the step section")
    p.add_argument("--variants", default="model,graph,eager,reference",
                   help="what the step section times: model (alone), graph, graph_compiled (torch.compile's fused "
                        "kernels in the captured step), eager, reference (the plain loops)")
    p.add_argument("--length", type=int, default=32)
    p.add_argument("--steps", type=int, default=44, help="timed steps after --warmup (warmup + steps = 50: the "
                                                          "graph-eager agreement's 50 steps)")
    p.add_argument("--warmup", type=int, default=6)
    p.add_argument("--overhead-steps", type=int, default=30)
    p.add_argument("--method-steps", type=int, default=10)
    p.add_argument("--method-workers", type=int, default=1)
    p.add_argument("--method-shard", default=None, help=argparse.SUPPRESS)
    p.add_argument("--knn-n", type=int, default=None, help="default 1,000,000 at base size, 20,000 tiny")
    p.add_argument("--knn-dim", type=int, default=None, help="default 768 at base size, 384 tiny")
    p.add_argument("--sync-mode", choices=["error", "warn"], default="error")
    p.add_argument("--compile-mode", default="reduce-overhead")
    p.add_argument("--data", default=os.environ.get("SENTAUG_MIRROR", str(ROOT.parent / "shared/data")))
    p.add_argument("--tokenizers", default=os.environ.get("SENTAUG_MODEL_MIRROR", str(ROOT.parent / "shared/models")))
    p.add_argument("--deadline", type=float, default=None,
                   help="seconds: sections (and methods) not started by then are recorded as skipped")
    p.add_argument("--isolate", action="store_true", help="each section in a process of its own (--caps, --budget)")
    p.add_argument("--caps", default="step=150,overhead=120,dev_eval=45,methods=150,compile=150,knn=120")
    p.add_argument("--budget", type=float, default=540)
    p.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    p.add_argument("--peak-tflops", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    args.tokenizers = Path(args.tokenizers)
    args.knn_n = args.knn_n or (1_000_000 if args.size == "base" else 20_000)
    args.knn_dim = args.knn_dim or (768 if args.size == "base" else 384)
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    lines = load_lines(args.data)
    results = {"args": {k: str(v) for k, v in vars(args).items()}, "versions": versions(args.device)}
    if args.peak_tflops:
        results["matmul"] = {"tflops": args.peak_tflops}
    sections = [s for s in SECTIONS if s in args.sections.split(",")]
    started = time.perf_counter()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(args.workdir or scratch)
        if args.isolate:
            run_isolated(args, sections, tmp, results)
        for name in sections if not args.isolate else []:
            if past_deadline(args, started):
                results.setdefault("skipped", []).append(name)
                continue
            t0 = time.perf_counter()
            if name == "matmul":
                results[name] = matmul_rate(torch.device(args.device))
                print(f"[matmul] {results[name]}", flush=True)
            elif name == "step":
                results[name] = section_step(args, tmp, config, lines, results, lambda: write(args.out, results))
            elif name == "overhead":
                results[name] = section_overhead(args, tmp, config, lines, results, lambda: write(args.out, results))
            elif name == "dev_eval":
                results[name] = section_dev_eval(args, tmp)
            elif name == "methods":
                results[name] = section_methods(args, tmp, config, lines, started)
            elif name == "compile":
                results[name] = section_compile(args, tmp, config, lines)
            elif name == "knn":
                results[name] = section_knn(args)
            results.setdefault("section_seconds", {})[name] = round(time.perf_counter() - t0, 1)
            results["projection"] = projection(results)
            write(args.out, results)
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    results["projection"] = projection(results)
    write(args.out, results)
    print(f"[done] {results['total_seconds']} s; projection {results['projection']}", flush=True)


if __name__ == "__main__":
    main()
