#!/usr/bin/env python
"""Workflow budgets (issue 10), measured on purpose, never in the tests:

  dry run   `snakemake -n` over the whole paper-scale DAG (every declared table and figure): at most 10 s.
            Measured twice: as this machine is, and with SLURM's controller probe answered at once (see
            failing_scontrol: a stopped SLURM costs every Snakemake start 10 s).
  demo      `make demo` from an empty results/ on 2 cores (issue 45): everything `rule all` builds, and the report,
            within 30 min; the paper tables first, within 15 min. On a fresh clone (--make-demo CLONE): the
            times to the first table, the last table and the report.

    .venv/bin/python benchmarks/workflow_budget.py --dry-run              # median of 3 paper-scale dry runs
    .venv/bin/python benchmarks/workflow_budget.py --demo --cores 2       # a full demo build (long)
    .venv/bin/python benchmarks/workflow_budget.py --demo --targets results/tables/sda/table4.tex  # a subset
    .venv/bin/python benchmarks/workflow_budget.py --make-demo /tmp/demo-clone --out benchmarks/results/demo.json
    .venv/bin/python benchmarks/workflow_budget.py --log snakemake.log       # where a build's time went

Each run uses its own results folder (--results, default a fresh temporary one), so nothing already built
counts. The demo build reports the wall time, the job count, the finishing time of the last table and of the
whole build (from Snakemake's log), and writes everything as JSON (--out).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRY_RUN_BUDGET_S = 10
TABLES_BUDGET_S = 15 * 60
ALL_BUDGET_S = 30 * 60


def snakemake(args: list[str], results: str, config: tuple[str, ...] = (),
              path_first: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    if path_first:
        env["PATH"] = path_first + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", *args, "--config", f"results={results}", *config]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)


def job_count(stdout: str) -> int:
    m = re.search(r"^total\s+(\d+)\s*$", stdout, flags=re.M)
    return int(m[1]) if m else 0


def failing_scontrol(folder: str) -> str:
    """A folder holding an `scontrol` that fails at once. The SLURM executor plugin runs `scontrol show config`
    when Snakemake imports it (every run, any executor); where SLURM's client is installed but no controller
    answers (this machine with its one-node cluster stopped) that call waits out its 10 s timeout. Put first
    on PATH, the stub gives the plugin the answer it gets quickly on a workstation without SLURM (no scontrol)
    or a cluster whose controller is up."""
    stub = Path(folder) / "scontrol"
    stub.write_text("#!/bin/sh\nexit 1\n")
    stub.chmod(0o755)
    return folder


def dry_run(repeats: int, results: str, path_first: str | None = None) -> dict:
    times, jobs = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        run = snakemake(["-n", "--quiet", "rules", "--nolock"], results, config=("scale=paper",),
                        path_first=path_first)
        times.append(time.perf_counter() - start)
        if run.returncode != 0:
            raise SystemExit(run.stdout[-2000:] + run.stderr[-2000:])
        jobs = job_count(run.stdout)
    median = statistics.median(times)
    return {"what": "paper-scale dry run", "jobs": jobs, "seconds": [round(t, 2) for t in times],
            "median_s": round(median, 2), "budget_s": DRY_RUN_BUDGET_S, "within_budget": median <= DRY_RUN_BUDGET_S}


def finish_times(log: str) -> dict:
    """Seconds from the first log timestamp to each finished table / figure job and to the last job."""
    stamps, finished = [], {}
    current = None
    for line in log.splitlines():
        m = re.match(r"\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]", line)
        if m:
            current = datetime.strptime(m[1], "%a %b %d %H:%M:%S %Y")
            stamps.append(current)
        m = re.match(r"Finished jobid: \d+ \(Rule: (\w+)\)", line)
        if m and current is not None:
            finished.setdefault(m[1], []).append(current)
    if not stamps:
        return {}
    t0 = stamps[0]
    last = {rule: max(ts) for rule, ts in finished.items()}
    out = {"last_job_s": (max(stamps) - t0).total_seconds()}
    for rule in ("table", "figure"):
        if rule in last:
            out[f"last_{rule}_s"] = (last[rule] - t0).total_seconds()
    return out


STAMP = re.compile(r"\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]")


def job_times(log: str) -> list[dict]:
    """Every job of a Snakemake log with its rule, its message (or output), and its start and end in seconds
    from the first timestamp (the log's 1 s resolution). A job starts at the stamp before its `Job N: ...` or
    `localrule X:` block and ends at the stamp before `Finished jobid: N (Rule: X)`."""
    jobs: dict[int, dict] = {}
    t0 = current = None
    pending_rule = None                # `localrule X:` (a rule without a message): its jobid comes a few lines on
    for line in log.splitlines():
        m = STAMP.match(line)
        if m:
            current = datetime.strptime(m[1], "%a %b %d %H:%M:%S %Y")
            t0 = t0 or current
            continue
        if current is None:
            continue
        at = (current - t0).total_seconds()
        if m := re.match(r"Job (\d+): (.*)", line):
            jobs.setdefault(int(m[1]), {"jobid": int(m[1]), "what": m[2], "start_s": at})
        elif m := re.match(r"(?:local)?rule (\w+):$", line):
            pending_rule = {"rule": m[1], "start_s": at}
        elif pending_rule and (m := re.match(r"\s+(output|jobid): (.*)", line)):
            if m[1] == "output":
                pending_rule["what"] = m[2]
            else:
                jobs.setdefault(int(m[2]), {"jobid": int(m[2]), **pending_rule})
                pending_rule = None
        elif m := re.match(r"Finished jobid: (\d+) \(Rule: (\w+)\)", line):
            job = jobs.setdefault(int(m[1]), {"jobid": int(m[1]), "what": "", "start_s": at})
            job.update(rule=m[2], end_s=at, seconds=at - job["start_s"])
    return sorted((j for j in jobs.values() if "end_s" in j), key=lambda j: j["end_s"])


def by_rule(jobs: list[dict]) -> list[dict]:
    """Jobs grouped by rule: count, total, median and longest seconds, most total first."""
    groups: dict[str, list[float]] = {}
    for j in jobs:
        groups.setdefault(j["rule"], []).append(j["seconds"])
    rows = [{"rule": r, "jobs": len(s), "total_s": sum(s), "median_s": statistics.median(s), "max_s": max(s)}
            for r, s in groups.items()]
    return sorted(rows, key=lambda r: -r["total_s"])


def log_profile(log: str, top: int = 15) -> dict:
    """Where a build's time went (job_times grouped by rule, the longest jobs) and when the first and last
    table, the last figure and the last job finished."""
    jobs = job_times(log)
    tables = [j["end_s"] for j in jobs if j["rule"] in ("table", "census", "leaderboard", "compare")]
    figures = [j["end_s"] for j in jobs if j["rule"] == "figure"]
    return {"jobs": len(jobs), "job_seconds": sum(j["seconds"] for j in jobs),
            "first_table_s": min(tables, default=None), "last_table_s": max(tables, default=None),
            "last_figure_s": max(figures, default=None), "last_job_s": max((j["end_s"] for j in jobs), default=None),
            "by_rule": by_rule(jobs),
            "longest": sorted(jobs, key=lambda j: -j["seconds"])[:top]}


def print_profile(profile: dict) -> None:
    print(f"{profile['jobs']} jobs, {profile['job_seconds']:.0f} job-seconds; first table at "
          f"{profile['first_table_s']} s, last table at {profile['last_table_s']} s, last figure at "
          f"{profile['last_figure_s']} s, last job at {profile['last_job_s']} s")
    print(f"{'rule':34} {'jobs':>5} {'total s':>8} {'median s':>8} {'max s':>6}")
    for r in profile["by_rule"]:
        print(f"{r['rule']:34} {r['jobs']:5d} {r['total_s']:8.0f} {r['median_s']:8.1f} {r['max_s']:6.0f}")
    print("longest jobs:")
    for j in profile["longest"]:
        print(f"  {j['seconds']:5.0f} s  {j['rule']}: {j['what']}")


def demo_build(cores: int, targets: list[str], results: str) -> dict:
    start = time.perf_counter()
    run = snakemake(["--cores", str(cores), "--nolock", *targets], results, config=("scale=demo",))
    wall = time.perf_counter() - start
    log = run.stdout + run.stderr
    rec = {"what": "demo build", "cores": cores, "targets": targets or ["all"], "returncode": run.returncode,
           "wall_s": round(wall, 1), "jobs": job_count(log), **finish_times(log),
           "budget_tables_s": TABLES_BUDGET_S, "budget_all_s": ALL_BUDGET_S}
    if "last_table_s" in rec:
        rec["tables_within_budget"] = rec["last_table_s"] <= TABLES_BUDGET_S
    rec["all_within_budget"] = wall <= ALL_BUDGET_S
    if run.returncode != 0:
        rec["error_tail"] = log[-3000:]
    return rec


def make_demo(clone: Path, log_file: Path | None = None) -> dict:
    """`make demo` in `clone` (a fresh clone, its .venv in place, results/ empty), timed from its start: the first
    table written, the last table, the last figure, the end of the build and the report (the end of make demo);
    the CPU time of everything it ran; the load average before and after; where the build's time went
    (log_profile). Each line of its output is kept with the second it came (`log_file`)."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True,
                            text=True).stdout.strip()
    load_before, cpu_before = os.getloadavg(), resource.getrusage(resource.RUSAGE_CHILDREN)
    start, stamped, loads = time.perf_counter(), [], []
    with subprocess.Popen(["make", "demo"], cwd=clone, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace") as proc:
        for line in proc.stdout:
            stamped.append((time.perf_counter() - start, line.rstrip("\n")))
            if not loads or stamped[-1][0] - loads[-1][0] >= 30:      # the 1-minute load every 30 s or so
                loads.append((stamped[-1][0], os.getloadavg()[0]))
    wall = time.perf_counter() - start
    cpu_after, load_after = resource.getrusage(resource.RUSAGE_CHILDREN), os.getloadavg()
    if log_file:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log_file.write_text("".join(f"{t:8.1f} {line}\n" for t, line in stamped))

    def first(pattern, last=False):
        hits = [round(t, 1) for t, line in stamped if re.search(pattern, line)]
        return (hits[-1] if last else hits[0]) if hits else None

    table_rules = r"Finished jobid: \d+ \(Rule: (table|census|leaderboard|compare)\)"
    return {"what": "make demo on a fresh clone", "date": datetime.now().isoformat(timespec="seconds"),
            "commit": commit, "cores": os.cpu_count(), "returncode": proc.returncode, "wall_s": round(wall, 1),
            "cpu_s": round((cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime), 1),
            "loadavg_before": [round(x, 2) for x in load_before], "loadavg_after": [round(x, 2) for x in load_after],
            "loadavg_1min_during": {"median": round(statistics.median(x for _, x in loads), 2),
                                    "max": round(max(x for _, x in loads), 2)},
            "first_table_announced_s": first(r"^First table written"),
            "first_table_s": first(table_rules), "last_paper_table_s": first(r"\(Rule: table\)", last=True),
            "last_table_s": first(table_rules, last=True),
            "last_figure_s": first(r"Finished jobid: \d+ \(Rule: figure\)", last=True),
            "build_done_s": first(r"steps \(100%\) done", last=True),
            "report_s": first(r"^Report written", last=True) or round(wall, 1),
            "budget_tables_s": TABLES_BUDGET_S, "budget_all_s": ALL_BUDGET_S,
            "tables_within_budget": (first(r"\(Rule: table\)", last=True) or 0) <= TABLES_BUDGET_S,
            "all_within_budget": wall <= ALL_BUDGET_S,
            "profile": log_profile("\n".join(line for _, line in stamped))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="time the paper-scale dry run")
    ap.add_argument("--demo", action="store_true", help="time a demo build from an empty results folder")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--targets", nargs="*", default=[], help="a subset of the demo build (default: rule all)")
    ap.add_argument("--results", help="results folder (default: a new temporary folder per measurement)")
    ap.add_argument("--out", type=Path, help="write the measurements as JSON")
    ap.add_argument("--log", type=Path, help="where a build's time went, from its Snakemake log (no build)")
    ap.add_argument("--make-demo", type=Path, metavar="CLONE",
                    help="time `make demo` in CLONE (a fresh clone with .venv in place); its output, stamped, is "
                         "written beside --out")
    a = ap.parse_args(argv)
    if a.make_demo:
        record = make_demo(a.make_demo.resolve(), a.out.with_suffix(".log") if a.out else None)
        print(json.dumps({k: v for k, v in record.items() if k != "profile"}))
        print_profile(record["profile"])
        if a.out:
            a.out.write_text(json.dumps(record, indent=2) + "\n")
        return
    if a.log:
        profile = log_profile(a.log.read_text(encoding="utf-8", errors="replace"))
        print_profile(profile)
        if a.out:
            a.out.parent.mkdir(parents=True, exist_ok=True)
            a.out.write_text(json.dumps(profile, indent=2) + "\n")
        return
    if not (a.dry_run or a.demo):
        a.dry_run = True
    records = []
    if a.dry_run:
        with tempfile.TemporaryDirectory(prefix="sentaug-dry-") as tmp:
            records.append(dry_run(a.repeats, a.results or tmp))
            print(json.dumps(records[-1]))
            with tempfile.TemporaryDirectory(prefix="sentaug-stub-") as stub:
                records.append({**dry_run(a.repeats, a.results or tmp, path_first=failing_scontrol(stub)),
                                "what": "paper-scale dry run, SLURM's controller probe answered at once"})
            print(json.dumps(records[-1]))
    if a.demo:
        results = a.results or tempfile.mkdtemp(prefix="sentaug-demo-")
        records.append(demo_build(a.cores, a.targets, results))
        print(json.dumps({k: v for k, v in records[-1].items() if k != "error_tail"}))
        if "error_tail" in records[-1]:
            print(records[-1]["error_tail"], file=sys.stderr)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(records, indent=2) + "\n")


if __name__ == "__main__":
    main()
