"""One training run at paper length, timed end to end beside its projection: unsupervised SimCSE on a BERT-base-
sized backbone (random weights), one epoch of a 1M-line corpus at batch 64 (15,625 steps) with its 125 STS-B dev
evaluations and its checkpoints, through the command a workflow job runs (`python -m sentaug.cli train`).

    python benchmarks/gpu_paper_run.py --data .gpu/data --tokenizers .gpu/models --out $OUT/paper_run.json
    python benchmarks/gpu_paper_run.py --tiny --lines 2000 --steps 40 --out /tmp/paper_run.json   # a CPU try

The corpus is the wiki1m head (`--data`/wiki/wiki1m_head.txt) repeated to `--lines` lines when the real wiki1m
is not at hand; its token file is written by `sentaug tokenize` first (not timed: a job of its own in the
workflow). The spec is the bill's own for that run (benchmarks/paper_settings.json, `paper_run`), whose
projection (step-time table, start-up estimate, dev evaluations, checkpoint writes) is reported beside the
measured time: the process's wall time from its start to its exit, and its parts from the run's own log
(start-up before the first step, steps, dev evaluations).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_runs import ROOT, SIZES, TOKENIZERS  # noqa: E402


def corpus_of(head: Path, lines: int, out: Path) -> tuple[Path, int]:
    """`lines` lines: the head's, then its lines again with their words shuffled (a seeded draw per line, redrawn
    while the line was seen before), so that the token file holds about as many distinct lines as the real
    wiki1m does and its lookup costs what a real run's does. Returns the file and its distinct lines."""
    import random

    texts = [t for t in head.read_text(encoding="utf-8").splitlines() if t]
    out.parent.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    with open(out, "w", encoding="utf-8") as f:
        for i in range(lines):
            line, words, draw = texts[i % len(texts)], texts[i % len(texts)].split(), random.Random(i)
            for _ in range(8 if i >= len(texts) else 0):
                if line not in seen:
                    break
                line = " ".join(draw.sample(words, len(words)))
            seen.add(line)
            f.write(line + "\n")
    return out, len(seen)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--settings", type=Path, default=ROOT / "benchmarks" / "paper_settings.json")
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--tokenizers", type=Path, default=ROOT.parent / "shared" / "models")
    p.add_argument("--workdir", type=Path, default=Path("/tmp/sentaug-paper-run"))
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--steps", type=int, help="stop after this many steps (a try; default: the spec's epoch)")
    p.add_argument("--tiny", action="store_true", help="a 2-layer backbone (a CPU try, not a measurement)")
    p.add_argument("--train-args", default="", help="extra `sentaug train` flags, e.g. --compile")
    p.add_argument("--timeout", type=float, default=None, help="seconds before the run is stopped")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    from transformers import AutoTokenizer

    from sentaug.models.backbones import random_model

    settings = json.loads(a.settings.read_text(encoding="utf-8"))["paper_run"]
    spec = dict(settings["spec"])
    if a.steps:
        spec["max_steps"] = a.steps
    work = a.workdir
    corpus, distinct = corpus_of(a.data / "wiki" / "wiki1m_head.txt", a.lines, work / "corpus" / "wiki1m.txt")
    backbone = work / ("bert-tiny" if a.tiny else "bert-base")
    if not backbone.exists():
        tok = AutoTokenizer.from_pretrained(a.tokenizers / TOKENIZERS["bert"])
        random_model("bert", SIZES["tiny" if a.tiny else "base"], tok, seed=0).save_pretrained(backbone)
        tok.save_pretrained(backbone)
    (work / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    cli = [sys.executable, "-m", "sentaug.cli"]
    tokens = work / "tokens" / "wiki1m.npz"
    t0 = time.perf_counter()
    subprocess.run([*cli, "tokenize", "--texts", str(corpus), "--model", str(backbone), "--max-length",
                    str(spec["max_seq_length"]), "--out", str(tokens)], env=env, check=True)
    tokenize_s = time.perf_counter() - t0
    out_dir = work / "run"
    cmd = [*cli, "train", "--spec", str(work / "spec.json"), "--corpus", str(corpus), "--model", str(backbone),
           "--dev-data", str(a.data), "--out", str(out_dir), "--tokens", str(tokens), *a.train_args.split()]
    started = time.perf_counter()
    with open(work / "train.log", "w") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            proc.wait(timeout=a.timeout)
        except subprocess.TimeoutExpired:     # stopped: how far it got is in its partial log
            proc.kill()
            proc.wait()
    wall = time.perf_counter() - started
    result = {"command": " ".join(cmd[2:]), "lines": a.lines, "distinct_lines": distinct,
              "tokenize_s": round(tokenize_s, 1),
              "wall_s": round(wall, 1), "returncode": proc.returncode,
              "stderr_tail": (work / "train.log").read_text(errors="replace")[-3000:]}
    partial = Path(f"{out_dir}.partial") / "train_log.jsonl"
    if proc.returncode != 0 and partial.exists():
        log = [json.loads(r) for r in partial.read_text().splitlines() if r.strip()]
        if log:
            result["stopped_at"] = {"step": log[-1]["step"], "elapsed_s": log[-1]["elapsed_s"],
                                    "dev_evaluations": sum("stsb_dev" in r for r in log)}
    if proc.returncode == 0:
        summary = json.loads((out_dir / "train_summary.json").read_text(encoding="utf-8"))
        log = [json.loads(r) for r in (out_dir / "train_log.jsonl").read_text().splitlines()]
        evals = [r for r in log if "stsb_dev" in r]
        result.update({"steps": summary["steps"], "train_seconds": summary["train_seconds"],
                       "steps_per_second": summary["steps_per_second"], "step_path": summary["step_path"],
                       "dev_evaluations": len(evals), "best_stsb_dev": summary["best_stsb_dev"],
                       "log_elapsed": [[r["step"], r["elapsed_s"]] for r in log],
                       "eval_steps": spec["eval_steps"], "save_steps": spec["save_steps"],
                       "startup_and_end_s": round(wall - summary["train_seconds"], 1),
                       "device": summary["device"], "versions": summary["versions"]})
    result["projection_s"] = settings["projection_s"]
    result["projection_parts"] = settings["projection_parts"]
    result["measured_over_projected"] = round(wall / settings["projection_s"], 3)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"[paper run] {result.get('steps')} steps in {result['wall_s']} s end to end "
          f"(train loop {result.get('train_seconds')} s, {result.get('dev_evaluations')} dev evaluations); "
          f"projected {settings['projection_s']} s: x{result['measured_over_projected']}", flush=True)


if __name__ == "__main__":
    main()
