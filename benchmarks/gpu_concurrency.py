"""Several training runs on one GPU (issue 44): runs per hour with k = 1, 2, 4, 8 concurrent training processes.

    python benchmarks/gpu_concurrency.py --device cuda --configs bert/64:300,roberta/512:60 --ks 1,2,4,8 \
        --out $OUT/concurrency.json

For each config (arch/batch:steps) and each k, k processes start together, each training SimCSE (the real
trainer, its default step path: one CUDA graph per step on a GPU) for `steps` steps with a dev evaluation every
125 steps, as at paper scale. The host waits for the device where it writes a log line (every 10 steps), so the
host's clock right after a log line is on the device's timeline; the aggregate throughput is the steps all k
processes completed inside the window where all of them were training, over that window's length. Reported per
k: aggregate steps/s and its ratio to k = 1; runs per hour (k over a run's mean `train_seconds`: evaluations,
writes and start-up included) and its ratio to k = 1; each process's own steps/s and peak GPU memory; and the
k = 1 run's `train_seconds`, against which the bill's projection (`sentaug cost`) is checked. The window ends at
each run's last log line, before its final evaluation and write: with `--skip` past the capture, k = 1 is a
steady run, the baseline packing is judged against (a cold one flatters k > 1). With `--mps` the
processes run under NVIDIA MPS, started and stopped as the workflow does it (sentaug.train.mps).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_runs import ROOT, load_lines, long_lines, make_backbone, spec_for, token_files  # noqa: E402

EVAL_STEPS = 125


def worker(job: dict) -> None:
    """One training run; writes the host time right after each log line's wait, and its summary."""
    from sentaug.train.trainer import LOG_EVERY, train

    marks: list[tuple[int, float]] = []

    def on_step(step):
        # step - 1 was a log step: its wait for the device is over, so this clock reading is past its end
        if (step - 1) % LOG_EVERY == 0 and step > 1:
            marks.append((step - 1, time.time()))

    dev = torch.device(job["device"])
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    summary = train(job["spec"], job["corpus"], None, job["backbone"], job["data"], job["out"], device=job["device"],
                    tokens=job["tokens"], on_step=on_step)
    # the window ends at the last log line's mark: the final evaluation and the best model's write after it are
    # the run's end, not its steady state (a one-run baseline that holds them is a slow baseline)
    Path(job["result"]).write_text(json.dumps({
        "marks": marks, "finished": time.time(), "train_seconds": summary["train_seconds"], "steps": summary["steps"],
        "step_path": summary["step_path"],
        "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if dev.type == "cuda" else None}))


def common_window(results: list[dict], skip: int) -> dict:
    """Steps completed by all processes while all of them were past `skip` steps and not yet done."""
    starts = [next(t for s, t in r["marks"] if s >= skip) for r in results]
    ends = [r["marks"][-1][1] for r in results]
    lo, hi = max(starts), min(ends)
    if hi <= lo:
        return {"window_s": 0.0, "aggregate_steps_per_s": None}

    def steps_at(marks, t):     # linear between the marks around t
        for (s0, t0), (s1, t1) in zip(marks, marks[1:]):
            if t0 <= t <= t1:
                return s0 + (s1 - s0) * (t - t0) / max(t1 - t0, 1e-9)
        return marks[-1][0] if t > marks[-1][1] else marks[0][0]

    done = sum(steps_at(r["marks"], hi) - steps_at(r["marks"], lo) for r in results)
    return {"window_s": round(hi - lo, 2), "aggregate_steps_per_s": round(done / (hi - lo), 2)}


def run_k(config: str, k: int, args, tmp: Path, cfg: dict, lines: list[str]) -> dict:
    arch, rest = config.split("/")
    batch, steps = map(int, rest.split(":"))
    backbone = make_backbone(arch, args.size, Path(args.tokenizers), tmp)
    corpus = tmp / f"corpus-{arch}.txt"
    if not corpus.exists():
        corpus.write_text("\n".join(long_lines(lines, backbone, args.length)) + "\n", encoding="utf-8")
    spec = spec_for(cfg, "simcse", args.length, arch, batch_size=batch, max_steps=steps, eval_steps=args.eval_steps)
    tokens = token_files([str(corpus)], backbone, spec, tmp)
    procs, results = [], []
    for i in range(k):
        job = {"spec": {**spec, "seed": 1 + i}, "corpus": str(corpus), "backbone": backbone, "data": args.data,
               "tokens": tokens, "device": args.device, "out": str(tmp / "conc" / f"{config}-{k}-{i}"),
               "result": str(tmp / "conc" / f"{arch}-{batch}-{k}-{i}.json")}
        Path(job["result"]).parent.mkdir(parents=True, exist_ok=True)
        Path(job["result"]).unlink(missing_ok=True)
        spec_file = Path(job["result"]).with_suffix(".job")
        spec_file.write_text(json.dumps(job))
        log = open(spec_file.with_suffix(".log"), "w")     # a file: a full pipe would stall the process
        procs.append((job, log, subprocess.Popen([sys.executable, __file__, "--worker", str(spec_file)],
                                                 stdout=subprocess.DEVNULL, stderr=log,
                                                 env={**os.environ, "TQDM_DISABLE": "1"})))
    errors = []
    for job, log, proc in procs:
        proc.wait()
        log.close()
        if proc.returncode == 0 and Path(job["result"]).exists():
            results.append(json.loads(Path(job["result"]).read_text()))
        else:
            errors.append(Path(log.name).read_text().strip().splitlines()[-8:])
    row = {"k": k, "steps": steps, "processes_ok": len(results), "errors": errors}
    if len(results) == k:
        row.update(common_window(results, args.skip))
        row["per_process_steps_per_s"] = [round((r["marks"][-1][0] - r["marks"][0][0]) /
                                                max(r["marks"][-1][1] - r["marks"][0][1], 1e-9), 2) for r in results]
        row["peak_memory_gib"] = [r["peak_memory_gib"] for r in results]
        row["train_seconds"] = [r["train_seconds"] for r in results]
        # runs of this length finished per hour with k at once (evaluations, writes and start-up included)
        row["runs_per_hour"] = round(k * 3600 / (sum(row["train_seconds"]) / k), 1)
        row["step_path"] = sorted({r["step_path"]["path"] for r in results})
    print(f"[concurrency] {config} k={k}: {row.get('aggregate_steps_per_s')} steps/s over {row.get('window_s')} s; "
          f"peak {row.get('peak_memory_gib')} GiB; errors {len(errors)}", flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--size", choices=["base", "tiny"], default="base")
    p.add_argument("--configs", default="bert/64:300,roberta/512:60", help="arch/batch:steps, comma-separated")
    p.add_argument("--ks", default="1,2,4,8", help="concurrent processes; per config as bert=1,2,4,8;roberta=1,2,4")
    p.add_argument("--length", type=int, default=32)
    p.add_argument("--skip", type=int, default=20, help="steps of each run before its window may start (past the "
                   "capture: a steady window)")
    p.add_argument("--eval-steps", type=int, default=EVAL_STEPS, help="dev evaluation every this many steps")
    p.add_argument("--data", default=os.environ.get("SENTAUG_MIRROR", str(ROOT.parent / "shared/data")))
    p.add_argument("--tokenizers", default=os.environ.get("SENTAUG_MODEL_MIRROR", str(ROOT.parent / "shared/models")))
    p.add_argument("--workdir", default=None)
    p.add_argument("--budget", type=float, default=None, help="seconds: no new k is started after them")
    p.add_argument("--mps", action="store_true", help="run the processes under NVIDIA MPS (sentaug.train.mps)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--out")
    args = p.parse_args()
    if args.worker:
        return worker(json.loads(Path(args.worker).read_text()))
    if args.mps:
        from sentaug.train import mps

        mps_folder = Path(tempfile.mkdtemp(prefix="sentaug-mps-"))
        args.mps = mps.start(mps_folder)          # the workers inherit its pipe folder; False if it did not start
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    lines = load_lines(args.data)
    per_arch = dict(part.split("=") for part in args.ks.split(";")) if "=" in args.ks else {}
    results, started = {"args": vars(args)}, time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(args.workdir or scratch)
        for config in args.configs.split(","):
            ks = per_arch.get(config.split("/")[0], args.ks if not per_arch else "1")
            rows = []
            for k in map(int, ks.split(",")):
                if args.budget is not None and time.perf_counter() - started > args.budget:
                    rows.append({"k": k, "skipped": "budget"})
                    continue
                rows.append(run_k(config, k, args, tmp, cfg, lines))
                base = rows[0].get("aggregate_steps_per_s")
                if base and rows[-1].get("aggregate_steps_per_s"):
                    rows[-1]["vs_one_run"] = round(rows[-1]["aggregate_steps_per_s"] / base, 2)
                if rows[0].get("runs_per_hour") and rows[-1].get("runs_per_hour"):
                    rows[-1]["runs_per_hour_vs_one"] = round(rows[-1]["runs_per_hour"] / rows[0]["runs_per_hour"], 2)
                results[config] = rows
                Path(args.out).write_text(json.dumps(results, indent=2))
    if args.mps:
        mps.stop(mps_folder)
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    Path(args.out).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
