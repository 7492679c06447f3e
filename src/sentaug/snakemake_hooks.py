"""What the Snakefile asks of the running Snakemake process, beside the paths of `sentaug.workflow`: the
environment its jobs inherit, its local scheduler's settings, and the package modules that are rule inputs.
"""
from __future__ import annotations

import os
from pathlib import Path


def drop_local_job_rate_limit(workflow) -> bool:
    """Drop Snakemake's job-rate limiter (`--max-jobs-per-timespan`) from a local run's scheduler, once it
    exists (an `onstart` hook: rules/common.smk); True if dropped.

    Why: in Snakemake 9.27 every pass of the scheduler loop arms a timer that runs the loop again after the
    limit's timespan, whatever woke it, so each job that starts or finishes adds a pass per timespan for the
    rest of the build. At the CLI's default (100/1s) a demo build's main process spent a third of a core
    re-selecting jobs (py-spy: job_selector, update_input_sizes; 4,543 passes in its first two minutes, and
    growing). A local run gains nothing from the limit (its cores bound it); the scheduler without one (as in
    a dry run) arms no timer. Cluster runs keep the limit: it spaces their submissions."""
    scheduler = getattr(workflow, "scheduler", None)
    if not workflow.local_exec or getattr(scheduler, "job_rate_limiter", None) is None:
        return False
    scheduler.job_rate_limiter = None
    return True


def export_job_environment(src: Path, python: str) -> None:
    """Make jobs import this checkout's `src` and run `python` from the interpreter running Snakemake (e.g.
    .venv/bin/snakemake without an activated venv). Snakemake passes its environment to every job (also to
    SLURM jobs: sbatch --export=ALL); with --software-deployment-method conda the rule's environment is put in
    front of this PATH."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    os.environ["PATH"] = os.pathsep.join([str(Path(python).parent), os.environ.get("PATH", "")])


def code_files(src: Path, *modules: str) -> list[str]:
    """The package modules a rule runs, as inputs: editing one reruns the jobs that depend on it.

    A folder stands for every file in it (Python modules and their data files)."""
    files = []
    for m in modules:
        path = Path(src) / "sentaug" / m
        if path.is_dir():
            files += sorted(str(f) for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
        else:
            files.append(str(path))
    return files
