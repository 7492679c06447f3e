"""Snakemake's job-rate limiter, dropped from a local run's scheduler (an `onstart` hook)."""
from __future__ import annotations


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
