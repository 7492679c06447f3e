"""The jobs Snakemake plans for a set of targets, as its dry run reports them through its public interfaces: the
command line (`snakemake -n`, with whatever targets, profile and configuration a user would give it) and the job
records it logs for logger plugins (snakemake_interface_logger_plugins' LogEvent.JOB_INFO: each job's rule,
wildcards, input, output, threads and resources, the profile's included). The dry run runs in a process of its
own (`python -m sentaug.workflow.planned`), so none of the Snakefile's names reach the caller's.

`sentaug cost` prices these jobs (sentaug.pricing.bill); the SLURM tests read the resources each job asks for.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..choices import Answer, Mistake

ANSWERED = 3        # the dry run's exit status when a user's mistake was answered (the answer in <out.json>)


@dataclass(frozen=True)
class PlannedJob:
    rule: str
    wildcards: dict
    input: tuple[str, ...]
    output: tuple[str, ...]
    threads: int
    resources: dict

    @property
    def key(self) -> str:
        """`<rule>:<wildcard>=<value>,...`: one job of the DAG."""
        return f"{self.rule}:" + ",".join(f"{k}={v}" for k, v in sorted(self.wildcards.items()))


def planned_jobs(snakemake_args: list[str], workdir: str | os.PathLike, forceall: bool = False) -> list[PlannedJob]:
    """The jobs of `snakemake <snakemake_args> --dry-run` run in `workdir`: those that would run, or with
    `forceall` every job of the targets' DAG. A failed dry run is an error with the end of Snakemake's message."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "jobs.json"
        run = subprocess.run([sys.executable, "-m", __name__, str(out), *snakemake_args, "--dry-run", "--nolock",
                              *(["--forceall"] if forceall else [])], cwd=workdir, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        if run.returncode == ANSWERED:      # a mistake in the user's names: its answer alone
            raise Mistake(out.read_text(encoding="utf-8"))
        if run.returncode != 0 or not out.is_file():
            message = [line for line in run.stdout.splitlines() if line.strip()][-12:]
            raise ValueError("Snakemake's dry run failed: " + "\n".join(message))
        records = json.loads(out.read_text(encoding="utf-8"))
    return [PlannedJob(r["rule"], r["wildcards"], tuple(r["input"]), tuple(r["output"]), r["threads"], r["resources"])
            for r in records]


def planned_and_new(snakemake_args: list[str], workdir: str | os.PathLike) -> tuple[list[PlannedJob], set[str]]:
    """Every job of the targets' DAG, and the keys of those Snakemake would run (the others are built). Where no
    job's output exists yet every job runs, and the second dry run is left out."""
    every = planned_jobs(snakemake_args, workdir, forceall=True)
    if not any((Path(workdir) / f).exists() for job in every for f in job.output):
        return every, {job.key for job in every}
    return every, {job.key for job in planned_jobs(snakemake_args, workdir)}


class _JobRecords(logging.Handler):
    """Keeps the job records Snakemake logs (what its logger plugins receive)."""

    def __init__(self):
        super().__init__()
        self.jobs: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        from snakemake_interface_logger_plugins.common import LogEvent

        if getattr(record, "event", None) != LogEvent.JOB_INFO:
            return
        resources = dict(record.resources.items()) if hasattr(record.resources, "items") else {}
        self.jobs.append({"rule": record.rule_name, "wildcards": dict(record.wildcards or {}),
                          "input": [str(f) for f in record.input], "output": [str(f) for f in record.output],
                          "threads": record.threads,
                          "resources": {k: v if isinstance(v, (int, float, str)) else str(v)
                                        for k, v in resources.items() if not k.startswith("_")}})


def main(argv: list[str]) -> int:
    """`python -m sentaug.workflow.planned <out.json> <snakemake arguments>`: run Snakemake's command line in this
    process and write the jobs it logs to <out.json> (nothing when it fails; a user's mistake answered: its
    answer, with exit status ANSWERED)."""
    from snakemake.cli import main as snakemake_main

    out, args = argv[0], argv[1:]
    records = _JobRecords()
    logging.getLogger().addHandler(records)     # Snakemake's own logger hands its records up to this one
    try:
        snakemake_main(args)
        code = 0
    except Answer as e:
        Path(out).write_text(e.message, encoding="utf-8")
        return ANSWERED
    except SystemExit as e:
        code = e.code or 0
    if code == 0:
        Path(out).write_text(json.dumps(records.jobs), encoding="utf-8")
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
