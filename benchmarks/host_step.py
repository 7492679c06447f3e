"""The host's part of a training step at corpus scale: what `StepPreparer` (the prefetching workers' job) costs per
step on one CPU thread, per method, on a corpus of `--lines` lines (default 1M, wiki1m's size).

    python benchmarks/host_step.py --lines 1000000 --out benchmarks/results/host-step-1m.json
    python benchmarks/host_step.py --lines 20000 --steps 20        # a quick look

The corpus is the wiki1m head (`--data`) repeated to `--lines` lines, each line made distinct by a number at its
end (every text is looked up in the token table, as in a real corpus of distinct sentences); token files of the
corpus and the caches are built first (`sentaug tokenize`'s code), caches are stand-ins (each line's words
shuffled) and the retrieval index holds random neighbours: what they hold does not change the host's work.
Times are the process's CPU time (one thread: torch's and the tokenizer's pools off, as in a forked worker), so
a busy machine slows the run, not the figures. Reported per method: the median host time per step, split into
the batch's order (`EpochOrder`), its texts (`TrainingData.batch`) and the rest of `Method.prepare` (token lookups,
switch-case, negatives, masks, noise). Run with PYTHONPATH at an older checkout's src (one without `EpochOrder`),
it times that code's order, a permutation drawn at every step.
The tokenizers are the methods' paper backbones' (`--tokenizers`, as in ../shared/models).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_runs import ROOT, SIZES, TOKENIZERS, make_backbone, spec_for, stand_in_cache  # noqa: E402

METHODS = {"simcse": "bert", "sda_pi": "roberta", "cards": "roberta", "simcse_mlm": "bert", "vascl": "roberta",
           "augcse": "bert"}


def corpus_of(head: list[str], lines: int, path: Path) -> list[str]:
    texts = [f"{head[i % len(head)]} {i // len(head)}" for i in range(lines)]
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return texts


def stand_in_index(corpus: Path, n: int, k: int, out: Path) -> str:
    """An index in `build_index`'s format whose neighbours are random rows (the host's work is the same)."""
    from sentaug.index.neighbours import json_path, pack_sentences
    from sentaug.intermediates import file_digest
    from sentaug.io import sha256_file, write_json

    rng = np.random.default_rng(0)
    texts = corpus.read_text(encoding="utf-8").splitlines()
    data, offsets = pack_sentences(texts)
    with open(out, "wb") as f:
        np.savez(f, neighbours=rng.integers(0, n, size=(n, k), dtype=np.int32),
                 scores=np.ones((n, k), dtype=np.float32), row_of_line=np.arange(n, dtype=np.int64),
                 line_of_row=np.arange(n, dtype=np.int64), sentence_bytes=data, sentence_offsets=offsets)
    write_json(json_path(out), {"k": k, "n": n, "corpus": str(corpus), "corpus_sha256": sha256_file(corpus),
                                **file_digest(out, "index")})
    return str(out)


def time_method(method: str, arch: str, config: dict, corpus: Path, texts: list[str], index: str, tmp: Path,
                args) -> dict:
    from gpu_runs import token_files

    from sentaug import config as sc
    from sentaug.models.encoder import SentenceEncoder
    from sentaug.models.tokens import TokenTable
    from sentaug.objectives.mlm.module import mlm_capacity
    from sentaug.train import inputs
    from sentaug.train.inputs import FixedShape
    from sentaug.train.method import Method
    from sentaug.train.sources import training_data
    from sentaug.train.trainer import load_backbone

    spec = spec_for(config, method, 32, arch, max_steps=10**6)
    if args.batch_size:
        spec["batch_size"] = args.batch_size
    caches = [stand_in_cache(texts, tmp / "caches" / aug / f"seed{seed}.parquet", seed, aug.startswith("clear"))
              for aug, seed in sc.method_caches(spec)]
    backbone = make_backbone(arch, "tiny", args.tokenizers, tmp)       # the host's work does not depend on its size
    started = time.process_time()
    tokens = token_files([str(corpus), *caches], backbone, spec, tmp)
    tokenized_s = time.process_time() - started
    data = training_data(spec, str(corpus), caches)
    model, tokenizer, lm_head = load_backbone(backbone, spec, torch.device("cpu"))
    torch.manual_seed(0)
    encoder = SentenceEncoder(model, pooler=spec["pooler"], head=spec.get("head"),
                              head_only_train=spec["mlp_only_train"])
    method_ = Method(spec, encoder, tokenizer, data, lm_head, index, [TokenTable.load(t) for t in tokens])
    mlm = method_.objectives["mlm"] if "mlm" in method_.objectives else None
    shape = FixedShape(spec["max_seq_length"], mlm_capacity(spec["batch_size"], spec["max_seq_length"],
                                                            mlm.probability) if mlm else None)
    order = epoch_order(inputs, len(data), spec["batch_size"], spec["seed"])
    parts = {"order": [], "texts": [], "prepare": []}
    first = 1000        # a step inside the epoch: the epoch's permutation is drawn at its first step only
    order(0)
    for step in range(first, first + args.warmup + args.steps):
        t0 = time.process_time()
        idx = order(step)
        t1 = time.process_time()
        batch = data.batch(idx, step)
        t2 = time.process_time()
        method_.prepare(batch, step, shape)
        t3 = time.process_time()
        if step >= first + args.warmup:
            for name, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2)):
                parts[name].append(dt)
    t0 = time.process_time()
    epoch_order(inputs, len(data), spec["batch_size"], spec["seed"])(0)
    epoch_draw = time.process_time() - t0
    med = {k: round(1000 * statistics.median(v), 3) for k, v in parts.items()}
    total = [sum(x) for x in zip(*parts.values())]
    row = {"method": method, "backbone": arch, "batch_size": spec["batch_size"], "lines": len(data),
           "median_ms": round(1000 * statistics.median(total), 3), "parts_median_ms": med,
           "epoch_permutation_ms": round(1000 * epoch_draw, 1),
           "epoch_permutation_per_step_ms": round(1000 * epoch_draw / -(-len(data) // spec["batch_size"]), 4),
           "token_lookups": {"from_files": method_.batch_tokenizer.hits, "tokenized": method_.batch_tokenizer.misses},
           "token_files_s": round(tokenized_s, 1)}
    print(f"{method:>12} ({arch}, b{spec['batch_size']}): {row['median_ms']:7.3f} ms/step {med}", flush=True)
    return row


def epoch_order(inputs, n: int, batch_size: int, seed: int):
    """The code's batch order: `EpochOrder`, or (older code) `batch_order` drawing a permutation per step."""
    if hasattr(inputs, "EpochOrder"):
        return inputs.EpochOrder(n, batch_size, seed)
    return lambda step: inputs.batch_order(n, batch_size, seed, step)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    p.add_argument("--tokenizers", type=Path, default=ROOT.parent / "shared" / "models")
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=64, help="0: each method's paper-scale batch size")
    p.add_argument("--warmup", type=int, default=300,
                   help="steps before the timed ones (the words of texts drawn per step are tokenized once, then "
                        "looked up)")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    torch.set_num_threads(1)       # one prefetching worker's thread
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    head = [t for t in (args.data / "wiki" / "wiki1m_head.txt").read_text(encoding="utf-8").splitlines() if t]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        corpus = tmp / "corpus" / "wiki1m.txt"
        corpus.parent.mkdir()
        texts = corpus_of(head, args.lines, corpus)
        methods = args.methods.split(",")
        index = stand_in_index(corpus, len(texts), 64, tmp / "k64.npz") if "cards" in methods else None
        for m in methods:
            rows.append(time_method(m, METHODS[m], config, corpus, texts, index, tmp, args))
    record = {"lines": args.lines, "batch_size": args.batch_size or "paper", "steps": args.steps,
              "threads": torch.get_num_threads(),
              "torch": torch.__version__, "cpu": _cpu(), "rows": rows}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def _cpu() -> str:
    try:
        return next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


if __name__ == "__main__":
    main()
