"""CPU runs of two versions of the trainer give the same model and log, bit for bit.

    python benchmarks/cpu_parity.py --before /tmp/base/src --after src [--methods simcse,cards,...]

`--before` and `--after` are `src` folders of two checkouts (e.g. `git archive <commit> src | tar -x -C
/tmp/base`). Each method trains a few steps on the CPU with the same spec, corpus (the first lines of
wiki1m's head), stand-in caches (words shuffled), retrieval index and random tiny BERT (real
bert-base-uncased vocabulary), once per version, in separate processes; then every tensor of the saved
models and every logged number are compared for equality. `--tokens` also gives the `after` run token files
of its corpus and caches (the pre-tokenized path). Exit status 1 if anything differs.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = os.environ.get("SENTAUG_MIRROR", str(ROOT.parent / "shared/data"))
MODELS = os.environ.get("SENTAUG_MODEL_MIRROR", str(ROOT.parent / "shared/models"))
METHODS = "simcse,sda_pi,cards,simcse_retrieval,vascl,augcse,simcse_mlm,clear_subs_del_word,clear_double_mlm"


def _worker(args) -> None:
    from sentaug.train.trainer import train

    job = json.loads(Path(args.worker).read_text())
    kwargs = {"index": job["index"]} if job["index"] else {}
    if job.get("tokens"):
        kwargs["tokens"] = job["tokens"]
    train(job["spec"], job["corpus"], job["caches"], job["backbone"], job["dev"], job["out"], **kwargs)


def _setup(tmp: Path, corpus_src: str, lines: int, tokenizer_dir: str):
    import pandas as pd
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from sentaug.index.neighbours import build_index

    text = Path(corpus_src).read_text(encoding="utf-8").splitlines()[:lines]
    corpus = tmp / "corpus.txt"
    corpus.write_text("\n".join(text) + "\n", encoding="utf-8")
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    torch.manual_seed(0)
    bb = tmp / "backbone"
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=128)).save_pretrained(bb)
    tok.save_pretrained(bb)
    dev = tmp / "data/sts/STSBenchmark"
    dev.mkdir(parents=True)
    rows = [f"g\tf\t2020\t{i:04d}\t{(i * 7) % 6}.0\t{text[i]}\t{text[(i * 3 + 1) % len(text)]}" for i in range(60)]
    (dev / "sts-dev.csv").write_text("\n".join(rows) + "\n")
    index = tmp / "index.npz"
    build_index(str(corpus), str(bb), "cls_before_pooler", 8, index)

    def cache(name: str, seed: int) -> str:
        rng = random.Random(f"{name}:{seed}")
        aug = [" ".join(rng.sample(t.split(), len(t.split()))) if i % 3 else t for i, t in enumerate(text)]
        if name.startswith("clear_"):
            aug = [a.replace(a.split()[0], "[DEL]", 1) if a.split() else a for a in aug]
        path = tmp / f"{name}_{seed}.parquet"
        pd.DataFrame({"original": text, "augmented": aug, "changed": [a != t for a, t in zip(aug, text)],
                      "flag": [""] * len(text)}).to_parquet(path)
        return str(path)

    return str(corpus), str(bb), str(tmp / "data"), str(index), cache


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", help="src folder of the reference version")
    p.add_argument("--after", default=str(ROOT / "src"), help="src folder of the version under test")
    p.add_argument("--methods", default=METHODS)
    p.add_argument("--corpus", default=os.path.join(DATA, "wiki/wiki1m_head.txt"))
    p.add_argument("--tokenizer", default=os.path.join(MODELS, "bert-base-uncased-tokenizer"))
    p.add_argument("--lines", type=int, default=400)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--tokens", action="store_true", help="the `after` run reads token files of its texts")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return _worker(args)
    import yaml
    from safetensors.torch import load_file

    from sentaug import config as sc
    from sentaug.models.tokens import build_token_file  # noqa: F401  (the `after` version's)
    from sentaug.workflow import token_key

    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        corpus, backbone, dev, index, cache = _setup(tmp, args.corpus, args.lines, args.tokenizer)
        for method in args.methods.split(","):
            spec = sc.train_spec(config, None, "bert-base-uncased", method, seed=1, scale="demo")
            spec.update(max_steps=args.steps, batch_size=16, eval_steps=max(1, args.steps // 2), save_steps=1000,
                        learning_rate=1e-3)
            if spec["negatives"]["source"] == "retrieved":
                spec["negatives"]["k"] = 8
            for o in spec["objectives"]:
                if o["name"] == "virtual_augmentation":
                    o["neighbours"] = 4
            caches = [cache(a, s) for a, s in sc.method_caches(spec)]
            tokens = []
            if args.tokens:
                key = token_key(spec["max_seq_length"], spec.get("add_tokens") or ())
                for src in [corpus, *caches]:
                    out = tmp / "tokens" / key / (Path(src).stem + ".npz")
                    if not out.exists():
                        build_token_file(src, backbone, spec["max_seq_length"], out, spec.get("add_tokens") or (),
                                         progress=False)
                    tokens.append(str(out))
            runs = {}
            for name, src in (("before", args.before), ("after", args.after)):
                job = {"spec": spec, "corpus": corpus, "caches": caches, "backbone": backbone, "dev": dev,
                       "index": index if spec["negatives"]["source"] == "retrieved" else None,
                       "out": str(tmp / method / name), "tokens": tokens if name == "after" else []}
                (tmp / f"{method}_{name}.json").write_text(json.dumps(job))
                env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "OMP_NUM_THREADS": "2"}
                subprocess.run([sys.executable, __file__, "--worker", str(tmp / f"{method}_{name}.json")],
                               env=env, check=True, capture_output=True)
                runs[name] = Path(job["out"])
            a, b = (load_file(str(runs[n] / "model.safetensors")) for n in ("before", "after"))
            same_weights = a.keys() == b.keys() and all(a[k].equal(b[k]) for k in a)
            logs = [(runs[n] / "train_log.jsonl").read_text().splitlines() for n in ("before", "after")]
            strip = lambda rows: [{k: v for k, v in json.loads(r).items() if k != "elapsed_s"} for r in rows]
            same_log = strip(logs[0]) == strip(logs[1])
            print(f"{method:>24}: weights {'identical' if same_weights else 'DIFFER'}, "
                  f"log {'identical' if same_log else 'DIFFERS'} ({len(logs[0])} records, {len(a)} tensors)")
            if not (same_weights and same_log):
                failures.append(method)
    if failures:
        print("differ:", ", ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
