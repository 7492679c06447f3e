"""Training runs as the GPU benchmarks start them: random BERT-/RoBERTa-base-sized backbones with the real
tokenizers, wiki1m lines long enough that every batch is [2B, length], stand-in caches, token files, and the
real trainer timed step by step (`timed_train`). Used by gpu_training.py and gpu_concurrency.py.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import random
import shutil
import statistics
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import torch

from sentaug import config as sc
from sentaug.models.backbones import random_model
from sentaug.train import step as step_module
from sentaug.train.trainer import train

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"base": {"layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072},
         "tiny": {"layers": 2, "hidden": 128, "heads": 2, "intermediate": 512}}
TOKENIZERS = {"bert": "bert-base-uncased-tokenizer", "roberta": "roberta-base-tokenizer"}
PAPER_BACKBONE = {"bert": "bert-base-uncased", "roberta": "roberta-base"}
RUNS = itertools.count()
LOSS_TOLERANCE, DEV_TOLERANCE = 0.02, 1.0   # graph against eager: relative loss, STS-B dev points (bf16)


def write(path, results: dict) -> None:
    """A benchmark's results as JSON (numpy and torch scalars as numbers, anything else as its text)."""
    Path(path).write_text(json.dumps(results, indent=2, default=lambda v: v.item() if hasattr(v, "item") else str(v)))


def versions(device: str) -> dict:
    """The software and machine a benchmark ran on."""
    import os
    import platform

    import transformers

    out = {"commit": commit(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version(),
           "cpus": os.cpu_count(), "threads": torch.get_num_threads(), "loadavg": os.getloadavg()}
    if device.startswith("cuda"):
        out["gpu"] = torch.cuda.get_device_name()
    return out


def commit() -> str:
    """The commit measured: on a GPU machine what benchmarks/gpu_device_prepare.sh wrote to .gpu/COMMIT
    (benchmarks/gpu_env.sh sets SENTAUG_COMMIT from it: the copy of the tree there may carry an older .git, whose
    HEAD is not the code that runs), else git's HEAD, with "+changes" where the tree differs from it."""
    import os
    import subprocess

    if os.environ.get("SENTAUG_COMMIT"):
        return os.environ["SENTAUG_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return head.stdout.strip() + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


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
    """Token files of the run's corpus and caches (the paper-scale path)."""
    from sentaug.models.tokens import build_token_file
    from sentaug.workflow import token_key

    key = token_key(spec["max_seq_length"], spec.get("add_tokens") or ())
    out = []
    for src in texts:
        path = tmp / "tokens" / Path(backbone).name / key / f"{Path(src).parent.name}_{Path(src).stem}.npz"
        if not path.exists():
            build_token_file(src, backbone, spec["max_seq_length"], path, spec.get("add_tokens") or (), progress=False)
        out.append(str(path))
    return out


def stand_in_cache(lines: list[str], path: Path, seed: int, deletion: bool) -> str:
    """A cache whose augmentation shuffles each line's words (CLEAR's caches carry its added [DEL] token)."""
    import pandas as pd

    if not path.exists():
        rng = random.Random(f"{path.parent.name}:{seed}")
        aug = [" ".join(rng.sample(t.split(), len(t.split()))) for t in lines]
        if deletion:
            aug = [a.replace(a.split()[0], "[DEL]", 1) if a.split() else a for a in aug]
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"original": lines, "augmented": aug, "changed": [a != t for a, t in zip(aug, lines)],
                      "flag": [""] * len(lines)}).to_parquet(path)
    return str(path)


def stand_in_triplets(lines: list[str], path: Path) -> str:
    """NLI triplets in nli_for_simcse.csv's layout (sent0, sent1, hard_neg) for the `nli` positive source: each
    line, its words shuffled, and the next line (SNLI/MNLI are not offline)."""
    import csv

    if not path.exists():
        rng = random.Random("triplets")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["sent0", "sent1", "hard_neg"])
            for a, b in zip(lines, lines[1:] + lines[:1]):
                writer.writerow([a, " ".join(rng.sample(a.split(), len(a.split()))), b])
    return str(path)


def spec_for(config: dict, method: str, length: int, arch: str = "bert", **kw) -> dict:
    """The paper-scale spec of `method` on the arch's paper backbone, `length` tokens, no checkpoints, one dev
    evaluation at the end; `kw` overrides (batch_size, max_steps, ...)."""
    spec = sc.train_spec(config, None, PAPER_BACKBONE[arch], method, seed=1, scale="paper")
    spec.update(max_seq_length=length, save_steps=10**9, **kw)
    if "eval_steps" not in kw:
        spec["eval_steps"] = spec["max_steps"]
    return spec


class KeptRunners:
    """Keeps every `StepRunner` a run makes (to replay its captured graph after the run)."""

    def __init__(self):
        self.runners: list = []

    @contextlib.contextmanager
    def watching(self):
        original = step_module.StepRunner.__init__
        kept = self.runners

        def init(runner, *a, **k):
            original(runner, *a, **k)
            kept.append(runner)

        step_module.StepRunner.__init__ = init
        try:
            yield self
        finally:
            step_module.StepRunner.__init__ = original


def timed_train(spec: dict, corpus: str, caches, backbone: str, device: str, data: str, tmp: Path, warmup: int,
                index=None, tokens=(), compile_backbone=False, step_mode: str = "auto", sync_window=(11, 19),
                sync_mode: str = "warn", keep_runner: bool = False) -> dict:
    """Run the real trainer. Per-step times from marks after each step (CUDA events: the device's timeline, no
    synchronisation added), the median over the steps after `warmup`; host-device synchronisations counted
    (sync_mode "warn") or forbidden ("error": a synchronisation stops the run with its traceback) between the
    marks of the steps in `sync_window` (after the graph's capture, between two log lines)."""
    dev = torch.device(device)
    clock, marks, seen = Clock(dev), [], {}
    caught: list = []

    def on_step(step):
        marks.append(clock.mark())
        if dev.type == "cuda" and step in sync_window:
            seen[step] = len(caught)        # warnings so far: the window's are those between its two marks
            torch.cuda.set_sync_debug_mode(sync_mode if step == sync_window[0] else 0)

    out = tmp / "runs" / f"{spec['method']}-{next(RUNS)}"
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    kept = KeptRunners()
    started = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as recorded, kept.watching():
            warnings.simplefilter("always")
            caught = recorded
            summary = train(spec, corpus, caches, backbone, data, str(out), device=device, index=index,
                            tokens=tokens, compile_backbone=compile_backbone, step_mode=step_mode, on_step=on_step)
    finally:
        if dev.type == "cuda":
            torch.cuda.set_sync_debug_mode(0)
    wall = time.perf_counter() - started
    steps = clock.intervals(marks)          # steps[i]: from the end of step i + 1 to the end of step i + 2
    window = set(range(sync_window[0], sync_window[1]))
    timed = [s for i, s in enumerate(steps) if i + 1 >= warmup]
    log = [json.loads(r) for r in (out / "train_log.jsonl").read_text().splitlines()]
    in_window = caught[seen.get(sync_window[0], 0):seen.get(sync_window[1], 0)]
    syncs = sum("synchronizing CUDA operation" in str(w.message) for w in in_window)
    elsewhere = sorted({str(w.message)[:200] for w in caught if "synchroniz" in str(w.message)})
    shutil.rmtree(out, ignore_errors=True)
    result = {"median_step_ms": median_ms(timed), "steps_timed": len(timed), "wall_s": round(wall, 2),
              "train_seconds": summary["train_seconds"], "step_path": summary["step_path"],
              "token_lookups": summary["token_lookups"],
              "syncs_per_step": syncs / len(window) if dev.type == "cuda" and window else None, "sync_mode": sync_mode,
              "sync_window_steps": [sync_window[0] + 1, sync_window[1]], "warnings_naming_a_sync": elsewhere[:4],
              "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if dev.type == "cuda" else None,
              "losses": [r["loss"] for r in log], "parts": [r.get("parts", {}) for r in log],
              "stsb_dev": [r["stsb_dev"] for r in log if "stsb_dev" in r]}
    if keep_runner:
        result["_runner"] = next((r for r in kept.runners if r.graph is not None), None)
    return result


def replays(runner) -> dict:
    """Two replays of a run's captured step on its last inputs with every learning rate at 0: the weights must
    not move (the scheduler's rates reach the graph) and the gradients must differ (dropout draws fresh masks
    at every replay; `rel_grad_diff`: the norm of their difference over the first's)."""
    params = [p for group in runner.optimizer.param_groups for p in group["params"]]
    for group in runner.optimizer.param_groups:
        if isinstance(group["lr"], torch.Tensor):
            group["lr"].fill_(0.0)           # in place: the graph reads this tensor
        else:
            group["lr"] = 0.0                # (a CPU stand-in of the graph runs the step again in Python)
    before = torch.cat([p.detach().flatten().float() for p in params])
    grads = []
    for _ in range(2):
        runner.graph.replay()
        grads.append(torch.cat([p.grad.detach().flatten().float() for p in params if p.grad is not None]))
    after = torch.cat([p.detach().flatten().float() for p in params])
    diff = (grads[0] - grads[1]).abs()
    return {"weights_unchanged_at_lr_0": bool(torch.equal(before, after)),
            "grads_differ_between_replays": bool(diff.max() > 0),
            "max_abs_grad_diff": float(diff.max()), "grad_norm": float(grads[0].norm()),
            "rel_grad_diff": float(diff.norm() / grads[0].norm()),
            "share_of_grads_that_differ": round(float((diff > 0).float().mean()), 4)}


def agreement(graph: dict, eager: dict) -> dict:
    """The graph run against the eager run of the same seed: logged losses and the final STS-B dev."""
    if "error" in graph or "error" in eager:
        return {"error": "a run failed"}
    pairs = list(zip(graph["losses"], eager["losses"]))
    rel = max(abs(a - b) / max(abs(b), 1e-12) for a, b in pairs)
    dev = abs(graph["stsb_dev"][-1] - eager["stsb_dev"][-1])
    return {"losses_graph": graph["losses"], "losses_eager": eager["losses"],
            "max_abs_loss_diff": max(abs(a - b) for a, b in pairs), "max_rel_loss_diff": rel,
            "stsb_dev_graph": graph["stsb_dev"][-1], "stsb_dev_eager": eager["stsb_dev"][-1],
            "stsb_dev_diff": dev, "tolerance": {"rel_loss": LOSS_TOLERANCE, "stsb_dev_points": DEV_TOLERANCE},
            "within_tolerance": rel <= LOSS_TOLERANCE and dev <= DEV_TOLERANCE}


def attempt(fn, *a, **kw) -> dict:
    """A variant's result, or the error that stopped it with the end of its traceback (the other measurements
    still run)."""
    try:
        return fn(*a, **kw)
    except Exception as e:
        tb = traceback.format_exc().strip().splitlines()
        print(f"[variant] {getattr(fn, '__name__', fn)} failed: {type(e).__name__}: {e}", flush=True)
        return {"error": f"{type(e).__name__}: {e}"[:2000], "traceback": tb[-24:]}


def load_lines(data: str) -> list[str]:
    return [t for t in (Path(data) / "wiki/wiki1m_head.txt").read_text(encoding="utf-8").splitlines() if t]
