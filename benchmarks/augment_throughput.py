"""Throughput of the spaCy parse and of SDA's rules on real Wikipedia lines, and Table 3's shares.

    .venv/bin/python benchmarks/augment_throughput.py --out results/benchmarks/augment_throughput.json

Measures, on the corpus (default: the first 11,914 lines of SimCSE's wiki1m):
* parse: `sentaug parse` (DocBin written, NER excluded) with 1 and 2 worker processes;
* each SDA rule over the cached parse, in one process, as `build_cache(parse=...)` runs it (reading the
  DocBin included) and the rule alone on Docs already in memory;
* each rule parsing on the fly (`build_cache` without a cached parse) with 1 and 2 worker processes;
* the share of lines each rule changes (defaults and the documented variants) next to SDA Table 3.
Rates are whole-run rates (start-up included) and marginal rates: (N - n0) / (t(N) - t(n0)) from a second
run on the first n0 = --small lines, i.e. without the fixed cost of loading spaCy, starting processes,
hashing the corpus. Projection to 1M lines on a 16-core node: fixed cost + 1M / (16 x the marginal
1-process rate x the parallel efficiency measured with the most workers here: an assumption, spaCy's CPU
parse being embarrassingly parallel over chunks), plus the rules over the cached parse in one process.
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

from sentaug.augment import registry
from sentaug.augment.cache import build_cache
from sentaug.augment.parse import load_parse, parse_corpus
from sentaug.io import write_json

PAPER_SHARES = {"punctuation_insertion": 62.61, "affirmative_auxiliary": 77.91, "double_negation": 46.66}
VARIANTS = [("punctuation_insertion", {}), ("punctuation_insertion", {"mode": "first"}),
            ("affirmative_auxiliary", {}), ("affirmative_auxiliary", {"verb_groups": True}),
            ("double_negation", {}), ("double_negation", {"copulas": False})]


def timed(fn, *a, **kw):
    t = time.perf_counter()
    res = fn(*a, **kw)
    return res, time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="/work/shared/data/wiki/wiki1m_head.txt")
    ap.add_argument("--limit", type=int, default=None, help="use only the first N lines")
    ap.add_argument("--workers", default="1,2", help="process counts to time, comma-separated")
    ap.add_argument("--model", default="en_core_web_sm")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--small", type=int, default=500, help="lines of the run that measures fixed costs")
    ap.add_argument("--skip-on-the-fly", action="store_true", help="skip parse+augment per rule (slow)")
    ap.add_argument("--out", required=True, help="JSON file")
    a = ap.parse_args(argv)
    workers = [int(w) for w in a.workers.split(",")]

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
               "python": sys.version.split()[0], "platform": platform.platform(), "parse": {}, "rules": {},
               "shares": []}
        parse_path = tmp / "parse.spacy"
        for w in workers:
            _, s0 = timed(parse_corpus, small, tmp / "small.spacy", model=a.model, workers=w)
            meta, s = timed(parse_corpus, corpus, parse_path, model=a.model, workers=w)
            n = meta["n"]
            res["parse"][str(w)] = {"seconds": round(s, 2), "sent_per_s": round(n / s, 1),
                                    "small_run_seconds": round(s0, 2), "marginal_sent_per_s": marginal(n, s, s0)}
            print(f"parse  workers={w}: {n / s:8.1f} sent/s ({s:.1f} s for {n} lines), marginal "
                  f"{res['parse'][str(w)]['marginal_sent_per_s']} sent/s", flush=True)
        res["n"], res["pipeline"] = n, {k: meta[k] for k in ("pipeline", "pipeline_version", "spacy_version")}

        docs = list(load_parse(parse_path).docs())
        for name in PAPER_SHARES:
            aug = registry.get(name)
            params = aug.resolve({})
            _, s_mem = timed(lambda: [aug.fn(d, random.Random(f"{a.seed}:{i}"), **params) for i, d in enumerate(docs)])
            _, s_cached = timed(build_cache, name, corpus, tmp / f"{name}.parquet", seed=a.seed, parse=parse_path)
            _, s0 = timed(build_cache, name, small, tmp / f"{name}.small.parquet", seed=a.seed,
                          parse=tmp / "small.spacy")
            r = {"rule_only_sent_per_s": round(n / s_mem, 1), "cached_parse_sent_per_s": round(n / s_cached, 1),
                 "cached_parse_marginal_sent_per_s": marginal(n, s_cached, s0), "cached_parse_small_run_seconds": round(s0, 2)}
            print(f"{name:22s} rule only {n / s_mem:8.1f} sent/s; over cached parse {n / s_cached:8.1f} sent/s",
                  flush=True)
            if not a.skip_on_the_fly:
                for w in workers:
                    _, s = timed(build_cache, name, corpus, tmp / f"{name}.fly.parquet", seed=a.seed,
                                 workers=w, spacy_model=a.model)
                    r[f"parse_and_augment_sent_per_s_workers{w}"] = round(n / s, 1)
                    print(f"{name:22s} parse+augment workers={w}: {n / s:8.1f} sent/s", flush=True)
            res["rules"][name] = r

        for name, params in VARIANTS:
            st = build_cache(name, corpus, tmp / "share.parquet", seed=a.seed, params=params, parse=parse_path)
            res["shares"].append({"augmentation": name, "params": st["params"], "share_changed": st["share_changed"],
                                  "paper": PAPER_SHARES[name], "mean_token_edit_distance": st["mean_token_edit_distance"],
                                  "mean_length_change": st["mean_length_change"]})
            print(f"share {name:22s} {st['params']}: {st['share_changed']:6.2f} % (Table 3: {PAPER_SHARES[name]} %)",
                  flush=True)

    # Projection: 1M lines, 16 cores.
    p1 = res["parse"].get("1", {}).get("marginal_sent_per_s")
    wmax = max(workers)
    eff = res["parse"][str(wmax)]["marginal_sent_per_s"] / (wmax * p1) if p1 and wmax > 1 else 1.0
    if p1:
        parse_16 = res["parse"][str(wmax)]["small_run_seconds"] + 1e6 / (16 * p1 * min(eff, 1.0))
        rules_1m = {k: round(v["cached_parse_small_run_seconds"] + 1e6 / v["cached_parse_marginal_sent_per_s"], 1)
                    for k, v in res["rules"].items()}
        res["projection_1M_16_cores"] = {
            "parallel_efficiency_assumed": round(min(eff, 1.0), 3),
            "parse_seconds": round(parse_16, 1),
            "rule_seconds_over_cached_parse_one_process": rules_1m,
            "total_minutes_parse_plus_three_rules": round((parse_16 + sum(rules_1m.values())) / 60, 1)}
        print(f"projection 1M lines, 16 cores: parse {parse_16 / 60:.1f} min (efficiency {eff:.2f}), "
              f"rules {', '.join(f'{k} {v / 60:.1f} min' for k, v in rules_1m.items())}")
    write_json(a.out, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
