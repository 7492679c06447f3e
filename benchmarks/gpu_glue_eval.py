"""GLUE fine-tuning and the evaluation embeddings on the fast path (issue 49 item 1), beside the paths they
replace, in one process; one JSON.

    python benchmarks/gpu_glue_eval.py --device cuda --size base --data .gpu/data --tokenizers .gpu/models \
        --out $OUT/glue_eval.json                                         # < 90 s on an H200
    python benchmarks/gpu_glue_eval.py --device cpu --size tiny --out results/bench/glue_eval_cpu.json

A random BERT (`--size`: base, 12 x 768, or tiny, 2 x 128; built from its config with the real
bert-base-uncased tokenizer from `--tokenizers`), or `--model DIR` for sections b and c.

* `glue`: GLUE `--task` (RTE: pairs, long) at batch 32, R-drop off and on (on: with switch-case 0.1, as CARDS
  Table 6). The new path (`sentaug.evaluate.glue_steps.fine_tune`: inputs tokenized once, length buckets, bf16,
  one CUDA graph per bucket on a GPU) for `--glue-steps` steps, and the plain loop it replaced (a tokenizer call
  per batch, fp32, eager, the default AdamW, one host wait per step for the loss) for 3 + `--plain-steps`
  steps. Per-step times from marks after each step (CUDA events: the device's timeline); the new path's median
  and mean over its graph-replayed steps (where none was: every step after the first), per bucket width too;
  the plain loop's median over its steps after 3. The speed-up and a 3-epoch fine-tuning of the task, projected.
* `embedding`: STS-B dev (every distinct sentence) and the transfer task `--transfer-task` (MR) embedded with
  `sentaug.models.encoder.embed` in bf16 (GPU default: length-sorted batches of up to 32,768 tokens) and in fp32
  (same batches), each timed twice (the second is reported, the first kept); STS-B dev Spearman of each and the
  transfer task's test accuracy (SentEval protocol, `--mode fast`, its classifier run in a process of its own
  per precision, on a GPU machine while the glue section runs); the differences, and whether they are within
  0.1 point.
* `startup`: what an evaluation job pays before its first sentence: a fresh `python` that imports what `sentaug
  evaluate` imports (the command line, the STS and transfer suites: torch, transformers, scikit-learn) and loads
  the model onto the device (CUDA's start included). Python's start, the imports, the model load and the exit,
  measured twice per model (the first may find files not yet cached), in seconds of wall time and of CPU time;
  `--startup-model [NAME=]DIR` adds models (e.g. MiniLM). Beside each, a client's start-up (`client_total_s`):
  a job whose command the model's evaluation process runs (sentaug.evaluate.service) starts Python and the
  command line only. It runs first, before this process starts CUDA or any worker process (a stage limit on a GPU
  machine twice ended it before its first figure, 2026-11-28: now each child has its own limit,
  `--startup-timeout`, stdin closed, and reports each phase to stderr as it ends, so that a child that hangs says
  where; each figure is written to the JSON as soon as it is measured).

Data (`--data`, laid out like the data mirror): glue/<TASK>/train.tsv, sts/STSBenchmark/sts-dev.csv,
transfer/MR/rt-polarity.{pos,neg} (for MR; other tasks their SentEval files). `--tokenizers`: a folder holding
bert-base-uncased-tokenizer/.
"""
from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_runs import ROOT, Clock, attempt, make_backbone, median_ms, versions, write  # noqa: E402

from sentaug.evaluate import glue  # noqa: E402
from sentaug.evaluate.glue_steps import fine_tune  # noqa: E402
from sentaug.models.encoder import embed, embedding_precision, load_pretrained  # noqa: E402

WITHIN = 0.1          # points: bf16 against fp32 on STS and transfer
PLAIN_WARMUP = 3
SECTIONS = ("embedding", "glue", "startup")


# ---------------------------------------------------------------- (a) a GLUE task's step
def plain_loop(backbone: str, train, rdrop: float, switch_p: float, steps: int, device: torch.device) -> dict:
    """The fine-tuning loop before the step machinery (sentaug.evaluate.glue until issue 49), timed per step."""
    import random

    import torch.nn.functional as F
    from transformers import get_linear_schedule_with_warmup

    from sentaug.models.poolers import pool

    torch.manual_seed(1)
    net, tok = load_pretrained(backbone, device, shared=False)
    head = glue._build_head(net, 2)
    net.train(), head.train()
    params = [*net.named_parameters(), *(("head." + k, p) for k, p in head.named_parameters())]
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
    groups = [{"params": [p for k, p in params if not k.endswith(no_decay)], "weight_decay": 0.01},
              {"params": [p for k, p in params if k.endswith(no_decay)], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=2e-5)
    total = PLAIN_WARMUP + steps
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * total), total)
    labels = torch.as_tensor(train.labels, dtype=torch.long)
    rng, n = random.Random(1), len(train.labels)
    clock, losses = Clock(device), []
    marks = [clock.mark()]

    def forward(a, b):
        enc = tok(a, b, padding=True, truncation=True, max_length=128, return_tensors="pt").to(device)
        out = net(**enc, return_dict=True)
        return head(pool("cls_before_pooler", out, enc["attention_mask"])).float()

    order = torch.randperm(n, generator=torch.Generator().manual_seed(1))
    for step in range(total):
        idx = order[(step * 32) % (n - 32):(step * 32) % (n - 32) + 32].tolist()
        a, b, y = [train.text_a[i] for i in idx], [train.text_b[i] for i in idx], labels[idx].to(device)
        out1 = forward(a, b)
        loss = F.cross_entropy(out1, y)
        if rdrop:
            a = [glue.switch_case(t, switch_p, rng) for t in a]
            b = [glue.switch_case(t, switch_p, rng) for t in b]
            out2 = forward(a, b)
            loss = 0.5 * (loss + F.cross_entropy(out2, y)) + rdrop * glue.symmetric_kl(out1, out2)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for _, p in params], 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(float(loss.detach()))
        marks.append(clock.mark())
    times = clock.intervals(marks)[PLAIN_WARMUP:]
    return {"median_step_ms": median_ms(times), "mean_step_ms": round(1000 * statistics.mean(times), 3),
            "steps_timed": len(times), "first_loss": losses[0], "last_loss": losses[-1]}


def new_path(backbone: str, train, rdrop: float, switch_p: float, steps: int, device: torch.device) -> dict:
    """`fine_tune` for `steps` steps, timed per step; the graph-replayed steps' median and mean, per width too."""
    torch.manual_seed(1)
    net, tok = load_pretrained(backbone, device, shared=False)
    head = glue._build_head(net, 2)
    cfg = glue.FinetuneConfig(max_steps=steps, rdrop=rdrop, switch_case=switch_p, seed=1)
    clock = Clock(device)
    marks = [clock.mark()]
    started = time.perf_counter()
    run = fine_tune(net, head, tok, train, False, "cls_before_pooler", cfg, device, progress=False,
                    on_step=lambda step: marks.append(clock.mark()))
    wall = time.perf_counter() - started
    times = clock.intervals(marks)                     # times[k]: step k (0-based), launch to launch on the device
    steady = "graph" if any(path == "graph" for path, _ in run.trace) else "eager"     # (a failed capture: eager)
    kept = [(t, w) for k, (t, (path, w)) in enumerate(zip(times, run.trace)) if path == steady and k > 0]
    by_width = {}
    for t, w in kept:
        by_width.setdefault(int(w), []).append(t)
    out = {"median_step_ms": median_ms([t for t, _ in kept]),
           "mean_step_ms": round(1000 * statistics.mean(t for t, _ in kept), 3) if kept else None,
           "steps_timed": len(kept), "steps": steps, "wall_s": round(wall, 2),
           # what a task pays once (tokenizing, warm-up steps, a graph per bucket): its wall time past its steps
           "one_off_s": round(wall - steps * statistics.mean(t for t, _ in kept), 2) if kept else None,
           "median_ms_by_width": {w: median_ms(ts) for w, ts in sorted(by_width.items())},
           "steps_by_width": {w: len(ts) for w, ts in sorted(by_width.items())},
           "bucket_widths": list(run.widths), "batching": run.batching, "step_path": run.step_path,
           "first_loss": run.losses[0], "last_loss": run.losses[-1],
           "losses_finite": bool(np.isfinite(run.losses).all())}
    del run, net, head
    gc.collect()                   # the graphs and their memory go with the run's reference cycles
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return out


def section_glue(args, backbone: str, device: torch.device) -> dict:
    train = glue.read_glue(args.data, args.task, "train")
    steps_per_epoch = -(-len(train.labels) // 32)
    out = {"task": args.task, "n_train": len(train.labels), "batch_size": 32, "max_seq_length": 128}
    for name, rdrop, switch_p in (("rdrop_off", 0.0, 0.0), ("rdrop_on", 1.0, 0.1)):
        row = {"rdrop": rdrop, "switch_case": switch_p,
               "new": attempt(new_path, backbone, train, rdrop, switch_p, args.glue_steps, device),
               "plain": attempt(plain_loop, backbone, train, rdrop, switch_p, args.plain_steps, device)}
        new, plain = row["new"].get("mean_step_ms"), row["plain"].get("mean_step_ms")
        if new and plain:
            row["speedup_median"] = round(row["plain"]["median_step_ms"] / row["new"]["median_step_ms"], 2)
            row["speedup_mean"] = round(plain / new, 2)
            epochs = 3 * steps_per_epoch
            row["three_epochs_s"] = {"new": round(epochs * new / 1000, 1), "plain": round(epochs * plain / 1000, 1)}
        out[name] = row
        print(f"[glue] {args.task} {name}: new {row['new'].get('median_step_ms')} ms (median), "
              f"{row['new'].get('mean_step_ms')} ms (mean) on {row['new'].get('step_path', {}).get('path')}; "
              f"plain {row['plain'].get('median_step_ms')} ms; x{row.get('speedup_median')}", flush=True)
    return out


# ---------------------------------------------------------------- (b) the evaluation embeddings
def score_transfer_task(data: str, task: str, sentences: list[str], vectors: np.ndarray) -> float:
    """The task's test accuracy x100 by the SentEval protocol (`--mode fast`), from its sentences' vectors."""
    from sentaug.data.transfer import load_transfer
    from sentaug.evaluate.transfer import score_transfer

    loaded = load_transfer(data, (task,))
    row = {s: i for i, s in enumerate(sentences)}
    return float(score_transfer(loaded, lambda ss: vectors[[row[s] for s in ss]], "fast", "senteval")[task])


def section_embedding(args, backbone: str, device: torch.device, pool: ProcessPoolExecutor) -> tuple[dict, dict]:
    """Timings and STS-B dev scores now; the transfer accuracies as futures (scored in other processes)."""
    from sentaug.data.senteval import read_split
    from sentaug.data.transfer import load_transfer
    from sentaug.evaluate.sts import _corr, cosine
    from sentaug.evaluate.transfer import all_sentences

    net, tok = load_pretrained(backbone, device, shared=False)
    pairs = read_split(args.data, "STSBenchmark", "dev")
    sts_sentences = list(dict.fromkeys([*pairs.s1, *pairs.s2]))
    row = {s: i for i, s in enumerate(sts_sentences)}
    i1, i2 = [row[s] for s in pairs.s1], [row[s] for s in pairs.s2]
    task_sentences = all_sentences(load_transfer(args.data, (args.transfer_task,)))
    clock = Clock(device)
    out, futures = {"n_sentences": {"stsb_dev": len(sts_sentences), args.transfer_task: len(task_sentences)}}, {}
    for precision in ("bf16", "fp32"):
        res = {}
        with embedding_precision(precision):
            for name, sentences in (("stsb_dev", sts_sentences), (args.transfer_task, task_sentences)):
                seconds = []
                for _ in range(2):
                    clock.sync()
                    start = time.perf_counter()
                    vectors = embed(net, tok, sentences, poolers=(args.pooler,))[args.pooler]
                    seconds.append(time.perf_counter() - start)
                res[f"{name}_s"] = round(seconds[1], 3)
                res[f"{name}_first_s"] = round(seconds[0], 3)
                if name == "stsb_dev":
                    res["stsb_dev_spearman"] = _corr(cosine(vectors[i1], vectors[i2]), pairs.gold)["spearman"]
                else:
                    futures[precision] = pool.submit(score_transfer_task, args.data, name, sentences, vectors)
        res["sentences_per_s"] = round((len(sts_sentences) + len(task_sentences))
                                       / (res["stsb_dev_s"] + res[f"{args.transfer_task}_s"]), 1)
        out[precision] = res
        print(f"[embedding] {precision}: STS-B dev {res['stsb_dev_s']} s, {args.transfer_task} "
              f"{res[f'{args.transfer_task}_s']} s; STS-B dev Spearman {res['stsb_dev_spearman']:.2f}", flush=True)
    out["speedup"] = round(out["bf16"]["sentences_per_s"] / out["fp32"]["sentences_per_s"], 2)
    out["stsb_dev_diff"] = round(out["bf16"]["stsb_dev_spearman"] - out["fp32"]["stsb_dev_spearman"], 4)
    del net
    return out, futures


def finish_embedding(out: dict, futures: dict, task: str) -> dict:
    for precision, future in futures.items():
        try:
            out[precision][f"{task}_accuracy"] = future.result()
        except Exception as e:        # the timings stand without it
            out[precision][f"{task}_accuracy_error"] = f"{type(e).__name__}: {e}"[:500]
    if all(f"{task}_accuracy" in out[p] for p in ("bf16", "fp32")):
        out[f"{task}_diff"] = round(out["bf16"][f"{task}_accuracy"] - out["fp32"][f"{task}_accuracy"], 4)
        out["within"] = WITHIN
        out["within_0_1_point"] = abs(out["stsb_dev_diff"]) <= WITHIN and abs(out[f"{task}_diff"]) <= WITHIN
    print(f"[embedding] bf16 - fp32: STS-B dev {out['stsb_dev_diff']}, {task} {out.get(f'{task}_diff')}; "
          f"within {WITHIN}: {out.get('within_0_1_point')}", flush=True)
    return out


# ---------------------------------------------------------------- (c) an evaluation job's start-up
STARTUP = r"""
import json, sys, time
t0, c0 = time.time(), time.process_time()
say = lambda what: print(f"[startup child] {what} at {time.time() - t0:.2f} s", file=sys.stderr, flush=True)
import sentaug.cli, sentaug.evaluate.sts, sentaug.evaluate.transfer   # what `sentaug evaluate` imports
t1, c1 = time.time(), time.process_time()
say("imports done")
import torch
from sentaug.models.encoder import load_pretrained
model, tokenizer = load_pretrained(sys.argv[1], sys.argv[2])
if sys.argv[2].startswith("cuda"):
    torch.cuda.synchronize()
t2, c2 = time.time(), time.process_time()
say("model on the device")
print(json.dumps({"t0": t0, "t1": t1, "t2": t2, "c0": c0, "c1": c1, "c2": c2}), flush=True)
"""
# A job whose command the model's evaluation process runs: Python and the command line, nothing more.
CLIENT = r"""
import json, time
t0 = time.time()
import sentaug.cli, sentaug.evaluate.service
print(json.dumps({"t0": t0, "t1": time.time()}), flush=True)
"""


def _child(code: str, argv: list[str], timeout: float) -> tuple[dict, float, float, float]:
    """Run `python -c code argv` (stdin closed, at most `timeout` s): its last JSON line, spawn and end times and
    its CPU seconds; a child past its limit is killed and its stderr (the phases it reached) kept in the error."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
           "TOKENIZERS_PARALLELISM": "false"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    spawned = time.time()
    try:
        done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        reached = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        raise RuntimeError(f"no answer in {timeout:g} s; it reached: {reached.strip()[-600:] or 'nothing'}") from None
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-800:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return json.loads(done.stdout.strip().splitlines()[-1]), spawned, ended, cpu


def startup_once(model: str, device: str, timeout: float = 120.0) -> dict:
    t, spawned, ended, cpu = _child(STARTUP, [model, device], timeout)
    c, c_spawned, c_ended, c_cpu = _child(CLIENT, [], timeout)
    return {"python_s": round(t["t0"] - spawned, 3), "imports_s": round(t["t1"] - t["t0"], 3),
            "model_load_s": round(t["t2"] - t["t1"], 3), "exit_s": round(ended - t["t2"], 3),
            "total_s": round(ended - spawned, 3),
            # CPU time (what the start-up costs where other work shares the cores): Python's start, the imports, the
            # model load, and the whole process
            "python_cpu_s": round(t["c0"], 3), "imports_cpu_s": round(t["c1"] - t["c0"], 3),
            "model_load_cpu_s": round(t["c2"] - t["c1"], 3), "cpu_s": round(cpu, 3),
            # a client of the model's evaluation process: Python and the command line, its exit
            "client_total_s": round(c_ended - c_spawned, 3), "client_imports_s": round(c["t1"] - c["t0"], 3),
            "client_cpu_s": round(c_cpu, 3)}


def section_startup(args, models: dict[str, str], results: dict) -> dict:
    out = results.setdefault("startup", {})
    for name, path in models.items():
        out[name] = {}
        for run in ("cold", "warm"):
            print(f"[startup] {name} on {args.device}: {run} run", flush=True)
            out[name][run] = attempt(startup_once, path, args.device, args.startup_timeout)
            print(f"[startup] {name} {run}: {out[name][run]}", flush=True)
            write(args.out, results)
    return out


# ---------------------------------------------------------------- the run
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--size", choices=["base", "tiny"], default="base")
    p.add_argument("--model", default=None, help="a model folder for the embedding and start-up sections "
                                                 "(default: the random --size BERT)")
    p.add_argument("--pooler", default="cls_before_pooler", help="the embedding section's pooler (MiniLM: avg)")
    p.add_argument("--startup-model", action="append", default=[], metavar="[NAME=]DIR",
                   help="another model whose start-up is measured (repeatable)")
    p.add_argument("--startup-timeout", type=float, default=120.0, help="seconds each start-up child may take")
    p.add_argument("--sections", default=",".join(SECTIONS))
    p.add_argument("--task", default="RTE", help="GLUE task of the glue section (default: RTE)")
    p.add_argument("--glue-steps", type=int, default=None, help="new-path steps (default: 70 on a GPU, 12 on the CPU)")
    p.add_argument("--plain-steps", type=int, default=None, help="plain-loop steps after its 3 warm-up steps "
                                                                 "(default: 30 on a GPU, 8 on the CPU)")
    p.add_argument("--transfer-task", default="MR")
    p.add_argument("--data", default=os.environ.get("SENTAUG_MIRROR", str(ROOT.parent / "shared/data")))
    p.add_argument("--tokenizers", default=os.environ.get("SENTAUG_MODEL_MIRROR", str(ROOT.parent / "shared/models")))
    p.add_argument("--out", required=True)
    args = p.parse_args()
    cuda = args.device.startswith("cuda")
    args.glue_steps = args.glue_steps or (70 if cuda else 12)
    args.plain_steps = args.plain_steps or (30 if cuda else 8)
    sections = [s for s in SECTIONS if s in args.sections.split(",")]
    device = torch.device(args.device)
    warnings.filterwarnings("ignore", message=".*ignores case.*")
    started = time.perf_counter()
    results = {"args": {k: str(v) for k, v in vars(args).items()}, "versions": versions("cpu")}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        backbone = make_backbone("bert", args.size, Path(args.tokenizers), Path(tmp))
        evaluated = args.model or backbone
        if "startup" in sections:       # first: before this process starts CUDA or any worker process
            t0 = time.perf_counter()
            models = {"model" if args.model else f"bert-{args.size}": evaluated,
                      **dict(m.split("=", 1) if "=" in m else (Path(m).name, m) for m in args.startup_model)}
            section_startup(args, models, results)
            results.setdefault("section_seconds", {})["startup"] = round(time.perf_counter() - t0, 1)
        results["versions"] = versions(args.device)
        write(args.out, results)
        if sections != ["startup"]:
            timed_sections(args, sections, results, backbone, evaluated, device, cuda)
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    write(args.out, results)
    print(f"[done] {results['total_seconds']} s -> {args.out}", flush=True)


def timed_sections(args, sections, results, backbone, evaluated, device, cuda) -> None:
    """The embedding and glue sections (the classifiers of the first in worker processes: spawned, the parent
    holds CUDA and threads; the classifiers need neither)."""
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {}
        if "embedding" in sections:      # first: its classifiers run in other processes during the glue section
            t0 = time.perf_counter()
            got = attempt(section_embedding, args, evaluated, device, pool)
            results["embedding"], futures = got if isinstance(got, tuple) else (got, {})
            if not cuda and futures:     # a CPU has no cores to spare beside the timed steps
                results["embedding"], futures = finish_embedding(results["embedding"], futures,
                                                                 args.transfer_task), {}
            results.setdefault("section_seconds", {})["embedding"] = round(time.perf_counter() - t0, 1)
            write(args.out, results)
        if "glue" in sections:
            t0 = time.perf_counter()
            results["glue"] = section_glue(args, backbone, device)
            results.setdefault("section_seconds", {})["glue"] = round(time.perf_counter() - t0, 1)
            write(args.out, results)
        if futures:
            t0 = time.perf_counter()
            results["embedding"] = finish_embedding(results["embedding"], futures, args.transfer_task)
            results["section_seconds"]["transfer_scoring_wait"] = round(time.perf_counter() - t0, 1)


if __name__ == "__main__":
    main()
