"""Where a build's time went, stage by stage, from Snakemake's own records of the jobs it ran.

    python benchmarks/build_stages.py [WORKDIR] [--since ISO-TIME] [--markdown]

Snakemake keeps, for every output it wrote, a record under `<workdir>/.snakemake/metadata/` with the rule and the
job's start and end times. A job with several outputs has a record for each; they are counted once. Printed per
rule: jobs, job-seconds (the sum of their wall times: what the stage costs on one core), the median and longest
job; and the build's span, first start to last end (what it took on the machine's cores). `--since` keeps only
jobs that started after that moment (one sitting of a build resumed across several).
"""
from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path


def jobs(workdir: str | Path, since: float = 0.0) -> list[dict]:
    """One record per job run from `workdir` (rule, start, end), the jobs that started at or after `since`."""
    seen, out = set(), []
    # a long output path's record sits in nested folders (Snakemake splits its encoded name)
    for f in sorted(p for p in (Path(workdir) / ".snakemake" / "metadata").rglob("*") if p.is_file()):
        try:
            meta = json.loads(f.read_text())
        except (OSError, ValueError):
            continue            # a record being written, or not a record
        start, end = meta.get("starttime"), meta.get("endtime")
        if start is None or end is None or meta.get("incomplete") or start < since:
            continue
        key = (meta["rule"], meta.get("job_hash"), round(start, 1))     # its outputs' start times differ by ms
        if key not in seen:
            seen.add(key)
            out.append({"rule": meta["rule"], "start": start, "end": end})
    return out


def stages(records: list[dict]) -> list[dict]:
    """Per rule: jobs, job-seconds, median and longest job, by job-seconds, most first."""
    by_rule = defaultdict(list)
    for r in records:
        by_rule[r["rule"]].append(r["end"] - r["start"])
    rows = [{"rule": rule, "jobs": len(t), "job_s": sum(t), "median_s": statistics.median(t), "max_s": max(t)}
            for rule, t in by_rule.items()]
    return sorted(rows, key=lambda r: -r["job_s"])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workdir", nargs="?", default=".")
    p.add_argument("--since", help="only jobs started after this time (ISO 8601, UTC unless it says)")
    p.add_argument("--markdown", action="store_true", help="a Markdown table (docs/performance.md)")
    a = p.parse_args(argv)
    since = 0.0
    if a.since:
        t = datetime.fromisoformat(a.since)
        since = (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()
    records = jobs(a.workdir, since)
    if not records:
        raise SystemExit(f"{a.workdir}: no finished jobs recorded in .snakemake/metadata")
    rows = stages(records)
    start = min(r["start"] for r in records)
    span = max(r["end"] for r in records) - start
    total = sum(r["job_s"] for r in rows)
    if a.markdown:
        print("| stage | jobs | job-minutes | median job (s) | longest job (s) |\n|---|---|---|---|---|")
        for r in rows:
            print(f"| `{r['rule']}` | {r['jobs']} | {r['job_s'] / 60:.1f} | {r['median_s']:.1f} | {r['max_s']:.0f} |")
        print(f"| all | {len(records)} | {total / 60:.1f} | | |")
    else:
        for r in rows:
            print(f"{r['rule']:34s} {r['jobs']:5d} jobs {r['job_s'] / 60:8.1f} job-min  "
                  f"median {r['median_s']:7.1f} s  max {r['max_s']:7.0f} s")
        print(f"{'all':34s} {len(records):5d} jobs {total / 60:8.1f} job-min")
    first = datetime.fromtimestamp(start, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"\nspan: {span / 60:.1f} min from {first}")


if __name__ == "__main__":
    main()
