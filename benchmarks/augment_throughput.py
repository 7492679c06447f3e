"""Throughput of the spaCy parse and of every declared augmentation on real Wikipedia lines.

    .venv/bin/python benchmarks/augment_throughput.py --out results/benchmarks/augment_throughput.json

Measures, on the corpus (default: the first 11,914 lines of SimCSE's wiki1m):
* parse: `sentaug parse` (DocBin written, NER excluded) with 1 and 2 worker processes;
* every augmentation declared in config.yaml (the census set, `--only` to pick some), as the `augment`
  rule runs it: `build_cache` over the cached parse (parse-based ones) or the text, in one process;
* SDA's Table 3 shares with the documented rule variants.
Rates are whole-run rates and marginal rates: (N - n0) / (t(N) - t(n0)) from a run on the first
n0 = --small lines, i.e. without the fixed cost of loading spaCy, word lists or a model, starting processes,
hashing the corpus (an untimed-as-rate first run on the n0 lines loads what is cached in the process; its
extra time is counted as that augmentation's fixed cost). `backbone:<paper backbone>` parameters resolve to
the `--scale` stand-in under --backbones (built by the workflow: `snakemake results/backbones/minilm ...`).

Projection to 1M lines on a 16-core node, as Snakemake would run it there with `workers: 16`: the parse,
then the augment jobs, each over chunks of lines in 16 processes. Each stage takes its fixed cost +
1M / (16 x its marginal 1-process rate x the parallel efficiency measured here with the most workers, for the
parse and for the slowest rule over the cached parse: an assumption, chunks being independent). Reported for
the spaCy-based caches (the issue's goal: within 15 minutes) and for all caches.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from sentaug import config as sc
from sentaug.augment import registry
from sentaug.augment.cache import build_cache
from sentaug.augment.parse import parse_corpus
from sentaug.io import write_json

ROOT = Path(__file__).resolve().parents[1]
PAPER_SHARES = {"punctuation_insertion": 62.61, "affirmative_auxiliary": 77.91, "double_negation": 46.66}
VARIANTS = [("punctuation_insertion", {}), ("punctuation_insertion", {"mode": "first"}),
            ("affirmative_auxiliary", {}), ("affirmative_auxiliary", {"verb_groups": True}),
            ("double_negation", {}), ("double_negation", {"copulas": False})]


def timed(fn, *a, **kw):
    t = time.perf_counter()
    res = fn(*a, **kw)
    return res, time.perf_counter() - t


def declared_augmentations(scale: str, backbones: Path) -> dict[str, tuple[str, dict]]:
    """config.yaml's augmentations as (registry name, params), `backbone:` params resolved."""
    cfg = sc.load_yaml(ROOT / "config.yaml")
    return {name: sc.augmentation_call(cfg, name, backbones, scale)[:2] for name in cfg["augmentations"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="/work/shared/data/wiki/wiki1m_head.txt")
    ap.add_argument("--limit", type=int, default=None, help="use only the first N lines")
    ap.add_argument("--workers", default="1,2", help="process counts to time the parse with, comma-separated")
    ap.add_argument("--model", default="en_core_web_sm")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--small", type=int, default=300, help="lines of the run that measures fixed costs")
    ap.add_argument("--scale", default="small", help="whose stand-in backbones `backbone:` parameters name")
    ap.add_argument("--backbones", default=str(ROOT / "results" / "backbones"), type=Path)
    ap.add_argument("--only", default="", help="comma-separated config augmentation names (default: all)")
    ap.add_argument("--cores", type=int, default=16, help="cores of the node the projection is for")
    ap.add_argument("--out", required=True, help="JSON file")
    a = ap.parse_args(argv)
    workers = [int(w) for w in a.workers.split(",")]
    augs = declared_augmentations(a.scale, a.backbones)
    if a.only:
        augs = {k: augs[k] for k in a.only.split(",")}

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)

        def head(n, name):
            with open(a.corpus, "rb") as f:
                (tmp / name).write_bytes(b"".join(line for _, line in zip(range(n), f)))
            return tmp / name

        corpus = head(a.limit, "corpus.txt") if a.limit else Path(a.corpus)
        small = head(a.small, "small.txt")

        def marginal(n, s, s0):
            return round((n - a.small) / (s - s0), 1) if s > s0 else None
        res = {"corpus": str(a.corpus), "limit": a.limit, "cpu_count": os.cpu_count(),
               "python": sys.version.split()[0], "platform": platform.platform(), "parse": {},
               "augmentations": {}, "shares": []}
        parse_path = tmp / "corpus.spacy"
        for w in workers:
            _, s0 = timed(parse_corpus, small, tmp / "small.spacy", model=a.model, workers=w)
            meta, s = timed(parse_corpus, corpus, parse_path, model=a.model, workers=w)
            n = meta["n"]
            res["parse"][str(w)] = {"seconds": round(s, 2), "sent_per_s": round(n / s, 1),
                                    "small_run_seconds": round(s0, 2), "marginal_sent_per_s": marginal(n, s, s0)}
            print(f"parse  workers={w}: {n / s:8.1f} sent/s ({s:.1f} s for {n} lines), marginal "
                  f"{res['parse'][str(w)]['marginal_sent_per_s']} sent/s", flush=True)
        res["n"], res["pipeline"] = n, {k: meta[k] for k in ("pipeline", "pipeline_version", "spacy_version")}

        for name, (op, params) in augs.items():
            needs_parse = registry.get(op).needs_parse
            _, first = timed(build_cache, op, small, tmp / "a.parquet", seed=a.seed, params=params,
                             parse=tmp / "small.spacy")      # loads word lists, WordNet, models: fixed cost
            _, s0 = timed(build_cache, op, small, tmp / "a.parquet", seed=a.seed, params=params,
                          parse=tmp / "small.spacy")
            st, s = timed(build_cache, op, corpus, tmp / "a.parquet", seed=a.seed, params=params,
                          parse=parse_path)
            r = {"op": op, "needs_parse": needs_parse, "seconds": round(s, 2), "sent_per_s": round(n / s, 1),
                 "small_run_seconds": round(s0, 2), "marginal_sent_per_s": (rate := marginal(n, s, s0)),
                 "fixed_seconds": round(max(first - s0, 0.0) + s0 - (a.small / rate if rate else 0.0), 2),
                 "share_changed": st["share_changed"]}
            res["augmentations"][name] = r
            write_json(a.out, res)          # partial results survive a failure further on
            print(f"{name:34s} {n / s:9.1f} sent/s whole run, marginal {r['marginal_sent_per_s']} sent/s "
                  f"({s:.1f} s; {st['share_changed']:.1f} % changed)", flush=True)

        slowest = min((k for k, v in res["augmentations"].items() if v["needs_parse"]),
                      key=lambda k: res["augmentations"][k]["sent_per_s"], default=None)
        if slowest and max(workers) > 1:    # the rules' own parallel efficiency over the cached parse
            op, params = augs[slowest]
            _, s = timed(build_cache, op, corpus, tmp / "a.parquet", seed=a.seed, params=params, parse=parse_path,
                         workers=max(workers))
            efficiency = res["augmentations"][slowest]["seconds"] / (s * max(workers))
            res["rule_workers"] = {"augmentation": slowest, "workers": max(workers), "seconds": round(s, 2),
                                   "efficiency": round(efficiency, 3)}
            print(f"{slowest} over the cached parse with {max(workers)} workers: {s:.1f} s, "
                  f"efficiency {res['rule_workers']['efficiency']}", flush=True)
        for op, params in VARIANTS:
            st = build_cache(op, corpus, tmp / "share.parquet", seed=a.seed, params=params, parse=parse_path)
            res["shares"].append({"augmentation": op, "params": st["params"], "share_changed": st["share_changed"],
                                  "paper": PAPER_SHARES[op], "mean_token_edit_distance": st["mean_token_edit_distance"],
                                  "mean_length_change": st["mean_length_change"]})
            print(f"share {op:22s} {st['params']}: {st['share_changed']:6.2f} % (Table 3: {PAPER_SHARES[op]} %)",
                  flush=True)

    p1 = res["parse"].get("1", {}).get("marginal_sent_per_s")
    if p1 and res["augmentations"]:
        wmax = max(workers)
        eff = min(res["parse"][str(wmax)]["marginal_sent_per_s"] / (wmax * p1), 1.0) if wmax > 1 else 1.0
        parse_s = res["parse"][str(wmax)]["small_run_seconds"] + 1e6 / (a.cores * p1 * eff)
        eff_rules = min(res.get("rule_workers", {}).get("efficiency", eff), 1.0)
        job_s = {k: v["fixed_seconds"] + 1e6 / (a.cores * eff_rules * (v["marginal_sent_per_s"] or v["sent_per_s"]))
                 for k, v in res["augmentations"].items()}
        spacy_s = sum(s for k, s in job_s.items() if res["augmentations"][k]["needs_parse"])
        res[f"projection_1M_{a.cores}_cores"] = {
            "parallel_efficiency_assumed": {"parse": round(eff, 3), "augment": round(eff_rules, 3)},
            "parse_seconds": round(parse_s, 1),
            "job_seconds": {k: round(v, 1) for k, v in job_s.items()},
            "spacy_based_minutes": round((parse_s + spacy_s) / 60, 1),
            "all_minutes": round((parse_s + sum(job_s.values())) / 60, 1)}
        p = res[f"projection_1M_{a.cores}_cores"]
        print(f"projection 1M lines, {a.cores} cores: parse {parse_s / 60:.1f} min (efficiency {eff:.2f}); "
              f"parse + spaCy-based caches {p['spacy_based_minutes']} min; parse + all {len(job_s)} caches "
              f"{p['all_minutes']} min; longest job {max(job_s, key=job_s.get)} {max(job_s.values()) / 60:.1f} min")
    write_json(a.out, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
