"""The report of whatever is built: whether this Snakemake process writes a report (`snakemake --report FILE`,
whose default target is then rule report_built: the pages already written, so that a partial build reports
what it holds instead of failing on the first page not built), and the command-line flags of this run's
configuration, for the front page's commands that build what is missing."""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path


def reporting(argv: list[str] | None = None) -> bool:
    """Whether the command line asks Snakemake for a report (`--report FILE`, `--report=FILE`, `--reporter`)."""
    argv = sys.argv[1:] if argv is None else argv
    return any(a in ("--report", "--reporter") or a.startswith(("--report=", "--reporter=")) for a in argv)


def build_flags(workflow) -> str:
    """This run's `--configfile` and `--config` flags, as a user would type them again (relative paths where the
    file is inside the working directory), so that a command the report prints builds at the same settings."""
    settings = workflow.config_settings
    words = []
    files = [_relative(f) for f in settings.configfiles or ()]
    files = [f for f in files if f != "config.yaml"]      # the Snakefile's own configfile is read anyway
    if files:
        words += ["--configfile", *files]
    config = dict(settings.config or {})
    if config:
        words += ["--config", *(f"{k}={v}" for k, v in config.items())]
    return shlex.join(words)


def _relative(path) -> str:
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return os.fspath(path)
