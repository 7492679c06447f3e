"""Every distinct paper-scale training setting of the bill, timed at its real shape on this GPU: the measured
`settings` of the step-time table that `sentaug cost` reads.

    python benchmarks/gpu_calibrate.py --settings benchmarks/paper_settings.json --device cuda \
        --data .gpu/data --tokenizers .gpu/models --budget 140 --out $OUT/calibration.json
    python benchmarks/gpu_calibrate.py --device cpu --tiny --budget 60 --out /tmp/calibration.json   # a try

The settings (`sentaug.pricing.cost.step_setting`: backbone, batch, length and the work a method adds) and one
representative run's resolved spec each come from benchmarks/paper_settings.py, largest projected hours first,
so that a budget that runs out leaves the smallest ones extrapolated. Each is the real trainer on its spec
(`gpu_runs.timed_train`: the default step path, a CUDA graph on a GPU), with a randomly initialised backbone of
the setting's shape (BERT-base, RoBERTa-base, RoBERTa-large; Chinese RoBERTa-wwm is BERT-base-shaped and timed
with the English BERT vocabulary), the wiki1m head as corpus, stand-in caches, an index and NLI triplets, for
`--warmup` + `--steps` steps: the median of the timed steps is the setting's step time. Also recorded: each run's
start-up (wall time before its first step) and peak memory.

The bill's GLUE fine-tunings of backbones not measured elsewhere (CARDS Table 6's DeBERTa-v2-xxlarge, 1.5B
parameters, with R-drop and switch-case and without) come first, built in memory at their real shape (random
weights; the BERT vocabulary stands in for DeBERTa's SentencePiece one): GLUE's step
(`sentaug.evaluate.glue_steps.fine_tune`, a CUDA graph per batch shape) on RTE's pairs, every batch padded to
the widest bucket (128 tokens): the step the bill prices every GLUE step at. `--tiny` shrinks every backbone to 2
layers and every batch to 8 (a CPU try of the script, not a measurement).
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_runs import ROOT, TOKENIZERS, attempt, load_lines, stand_in_cache, timed_train, token_files  # noqa: E402
from gpu_runs import versions  # noqa: E402
from gpu_training import examples_of, texts_of_run  # noqa: E402

TINY = {"layers": 2, "hidden": 128, "intermediate": 512}


def backbone_for(shape: dict, tokenizers: Path, tmp: Path, tiny: bool) -> str:
    """A random backbone of `shape` (its arch's tokenizer; BERT-shaped Chinese RoBERTa with BERT's), saved once."""
    from transformers import AutoTokenizer

    from sentaug.models.backbones import random_model

    arch = "roberta" if shape["arch"] == "roberta" else "bert"
    size = dict(TINY if tiny else {k: shape[k] for k in ("layers", "hidden", "intermediate")})
    size["heads"] = max(1, size["hidden"] // 64)
    out = tmp / "backbones" / f"{arch}-{size['layers']}x{size['hidden']}"
    if not out.exists():
        tok = AutoTokenizer.from_pretrained(tokenizers / TOKENIZERS[arch])
        random_model(arch, size, tok, seed=0).save_pretrained(out)
        tok.save_pretrained(out)
    return str(out)


def index_for(corpus: str, backbone: str, tmp: Path, device: str, k: int = 64) -> str:
    from sentaug.index.neighbours import build_index

    out = tmp / "index" / f"{Path(backbone).name}-k{k}.npz"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        build_index(corpus, backbone, "cls_before_pooler", k, out, device=device)
    return str(out)


DEBERTA_XXLARGE = dict(hidden_size=1536, num_hidden_layers=48, num_attention_heads=24, intermediate_size=6144,
                       max_position_embeddings=512, relative_attention=True, position_buckets=256,
                       norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"],
                       layer_norm_eps=1e-7, max_relative_positions=-1, position_biased_input=False, type_vocab_size=0)


def glue_backbone(shape: dict, tokenizers: Path, device, tiny: bool):
    """(model, tokenizer) of a GLUE backbone's shape with random weights, made on the device."""
    from transformers import AutoTokenizer, DebertaV2Config, DebertaV2Model

    from sentaug.models.backbones import random_model

    arch = shape["arch"]
    tok = AutoTokenizer.from_pretrained(tokenizers / TOKENIZERS["roberta" if arch == "roberta" else "bert"])
    torch.manual_seed(0)
    with torch.device(device):
        if arch == "deberta":
            kw = dict(DEBERTA_XXLARGE)
            if tiny:
                kw.update(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512)
            model = DebertaV2Model(DebertaV2Config(vocab_size=len(tok), pad_token_id=tok.pad_token_id, **kw))
        else:
            size = dict(TINY if tiny else {k: shape[k] for k in ("layers", "hidden", "intermediate")})
            size["heads"] = max(1, size["hidden"] // 64)
            model = random_model(arch, size, tok, seed=0)
    return model.to(device), tok


def calibrate_glue(row: dict, args) -> dict:
    """GLUE's step on `row`'s backbone at batch 32, every batch padded to 128 tokens (one shape, one graph)."""
    from sentaug.evaluate import glue
    from sentaug.evaluate.glue_steps import fine_tune
    from gpu_runs import Clock, median_ms

    device = torch.device(args.device)
    started = time.perf_counter()
    model, tok = glue_backbone(row["shape"], args.tokenizers, device, args.tiny)
    built = time.perf_counter() - started
    head = glue._build_head(model, 2)
    train = glue.read_glue(str(args.data), "RTE", "train")
    steps = args.warmup + args.glue_steps
    cfg = glue.FinetuneConfig(max_steps=steps, rdrop=1.0 if row["rdrop"] else 0.0,
                              switch_case=0.1 if row.get("switch_case") else 0.0, seed=1, batching="order")
    clock = Clock(device)
    marks = [clock.mark()]
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    run = fine_tune(model, head, tok, train, False, "cls_before_pooler", cfg, device, progress=False,
                    on_step=lambda step: marks.append(clock.mark()))
    times = clock.intervals(marks)
    # the path the run settled on: graph replays, or (CPU; a capture that failed, as DeBERTa's does on an H200:
    # its relative positions are copied from the host inside the step) its eager steps after the warm-up
    steady = "graph" if any(path == "graph" for path, _ in run.trace) else "eager"
    kept = [t for k, (t, (path, width)) in enumerate(zip(times, run.trace)) if path == steady and k >= args.warmup]
    return {"ms": median_ms(kept), "steps_timed": len(kept), "width": int(run.trace[-1][1]),
            "path": run.step_path.get("path"), "why": run.step_path.get("why"), "rdrop": row["rdrop"],
            "shape": row["shape"],
            "switch_case": bool(row.get("switch_case")), "build_s": round(built, 1),
            "wall_s": round(time.perf_counter() - started, 1), "jobs": row["jobs"],
            "hours_projected": round(row["hours"], 3),
            "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.type == "cuda" else None}


def calibrate(row: dict, args, tmp: Path, lines: list[str], corpus: str) -> dict:
    from sentaug import config as sc

    spec = dict(row["spec"])
    steps = args.warmup + args.steps
    spec.update(max_steps=steps, eval_steps=steps, save_steps=10**9, language="en")
    if args.tiny:
        spec["batch_size"] = min(spec["batch_size"], 8)
    backbone = backbone_for(row["shape"], args.tokenizers, tmp, args.tiny)
    caches = [stand_in_cache(lines, tmp / "caches" / aug / f"seed{seed}.parquet", seed, aug.startswith("clear"))
              for aug, seed in sc.method_caches(spec)]
    examples = examples_of(spec, corpus, tmp, lines)
    index = index_for(corpus, backbone, tmp, args.device) if spec["negatives"]["source"] == "retrieved" else None
    tokens = token_files(texts_of_run(examples, caches), backbone, spec, tmp)
    started = time.perf_counter()
    run = timed_train(spec, examples, caches, backbone, args.device, str(args.data), tmp, args.warmup, index=index,
                      tokens=tokens, sync_window=(0, 0))
    return {"ms": run["median_step_ms"], "steps_timed": run["steps_timed"], "path": run["step_path"]["path"],
            "startup_s": round(run["wall_s"] - run["train_seconds"], 2),
            "wall_s": round(time.perf_counter() - started, 2),
            "peak_memory_gib": run["peak_memory_gib"], "method": spec["method"], "runs": row["runs"],
            "hours_projected": round(row["hours"], 3)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--settings", type=Path, default=ROOT / "benchmarks" / "paper_settings.json")
    p.add_argument("--device", default="cuda")
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--tokenizers", type=Path, default=ROOT.parent / "shared" / "models")
    p.add_argument("--workdir", type=Path, default=Path("/tmp/sentaug-calibrate"))
    p.add_argument("--warmup", type=int, default=5, help="steps before the timed ones (3 eager, the capture, one)")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--budget", type=float, default=140.0, help="seconds; no setting starts past it")
    p.add_argument("--only", help="comma-separated setting keys (default: all, largest hours first)")
    p.add_argument("--skip-done", type=Path, help="an earlier run's JSON: its measured settings and GLUE steps "
                                                  "are not timed again")
    p.add_argument("--glue-steps", type=int, default=6, help="timed GLUE steps (after --warmup)")
    p.add_argument("--tiny", action="store_true", help="2-layer backbones (a CPU try, not a measurement)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    started = time.perf_counter()
    settings = json.loads(args.settings.read_text(encoding="utf-8"))
    rows = settings["training"]
    if args.only:
        rows = [r for r in rows if r["key"] in set(args.only.split(","))]
    done = json.loads(args.skip_done.read_text()) if args.skip_done and args.skip_done.exists() else {}
    rows = [r for r in rows if not (done.get("settings") or {}).get(r["key"], {}).get("ms")]
    args.workdir.mkdir(parents=True, exist_ok=True)
    lines = load_lines(str(args.data))
    corpus = args.workdir / "corpus" / "wiki1m_head.txt"
    corpus.parent.mkdir(exist_ok=True)
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = {"args": {k: str(v) for k, v in vars(args).items()}, "versions": versions(args.device),
           "settings_made": settings["made"], "settings_commit": settings["commit"], "glue": {}, "settings": {}}
    if not args.only:       # GLUE on the backbones no other benchmark times (BERT-base's: gpu_glue_eval.py)
        for row in settings["glue"]:
            key = f"{row['backbone']}/rdrop" if row["rdrop"] else row["backbone"]
            if row["shape"]["arch"] not in ("bert", "roberta") and not (done.get("glue") or {}).get(key, {}).get("ms"):
                out["glue"][key] = attempt(calibrate_glue, row, args)
                print(f"[calibrate] GLUE {key}: {out['glue'][key].get('ms')} ms at width "
                      f"{out['glue'][key].get('width')} ({out['glue'][key].get('path')}) "
                      f"{out['glue'][key].get('error', '')}", flush=True)
                args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
                gc.collect()
                if args.device.startswith("cuda"):
                    torch.cuda.empty_cache()
    last = 0.0
    for row in rows:
        elapsed = time.perf_counter() - started
        if elapsed + last > args.budget:         # the next one would not finish in time: left to extrapolation
            out["settings"][row["key"]] = {"skipped": f"budget ({args.budget:.0f} s) reached"}
            continue
        t0 = time.perf_counter()
        out["settings"][row["key"]] = attempt(calibrate, row, args, args.workdir, lines, str(corpus))
        last = time.perf_counter() - t0
        r = out["settings"][row["key"]]
        print(f"[calibrate] {row['key']}: {r.get('ms')} ms ({r.get('path')}; start-up {r.get('startup_s')} s) "
              f"{r.get('error', '')}", flush=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")     # kept if stopped later
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    hours = {k: r["hours"] for r in rows for k in [r["key"]]}
    timed = [k for k, r in out["settings"].items() if r.get("ms")]
    out["measured_share_of_hours"] = round(sum(hours[k] for k in timed) / max(sum(hours.values()), 1e-9), 4)
    out["seconds"] = round(time.perf_counter() - started, 1)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"[calibrate] {len(timed)} of {len(rows)} settings timed ({out['measured_share_of_hours']:.0%} of the "
          f"projected hours) in {out['seconds']} s", flush=True)


if __name__ == "__main__":
    main()
