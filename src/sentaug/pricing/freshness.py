"""Whether a measured figure of a step-time table still times the code that would run: the rule the bill states
(`sentaug cost`, docs/cost-and-gpus.md).

A figure is *current* when the code that runs what it times is, file for file, the code of the commit it was
measured at: `git diff --quiet <commit> -- <paths>` against this checkout's working tree (HEAD and any change
not yet committed), for the paths of its kind (CODE). A change anywhere else (the workflow, the docs, the
benchmarks, a CPU stage) leaves it current: the device does the same work. A figure whose commit is not recorded,
or is not in this repository, or a checkout without git (an installed package) cannot be checked, and counts as
not current. The paths err on the side of more: a change to a part a step does not use still makes its figures
old.
"""
from __future__ import annotations

import subprocess
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_SRC = "src/sentaug"
# The code each kind of figure times (sentaug.pricing.step_times.Source.kind).
CODE = {
    # a training step, a method's overhead, runs sharing a GPU, a training job's start-up, the dev evaluation,
    # the best model's copy and writes, checkpoints: the trainer, the models, the methods' parts and objectives,
    # and the dev evaluation's correlations (its own code is train/dev_score.py)
    "train": (f"{_SRC}/train", f"{_SRC}/models", f"{_SRC}/parts", f"{_SRC}/objectives", f"{_SRC}/correlation.py"),
    # a GLUE fine-tuning step and a task's one-off work: GLUE's step machinery on the trainer's step runner
    "glue": (f"{_SRC}/evaluate/glue.py", f"{_SRC}/evaluate/glue_steps.py", f"{_SRC}/train/step.py",
             f"{_SRC}/models"),
    # the evaluation embedding rate and an evaluation job's start-up: the suites, the models, the command line
    "evaluation": (f"{_SRC}/evaluate", f"{_SRC}/models", f"{_SRC}/cli.py", f"{_SRC}/cli_args.py"),
    # the retrieval index's top-k
    "index": (f"{_SRC}/index", f"{_SRC}/models"),
}
UNKNOWN = "unknown"


@lru_cache(maxsize=None)
def head() -> str:
    """This checkout's HEAD (short), with "+changes" where the code of any kind differs from it; "no git
    checkout" without one."""
    sha = _git("rev-parse", "--short=7", "HEAD")
    if sha is None:
        return "no git checkout"
    paths = sorted({p for ps in CODE.values() for p in ps})
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", *paths)
    return sha.strip() + ("+changes" if dirty else "")


@lru_cache(maxsize=None)
def changed_since(commit: str, kind: str) -> tuple[str, ...] | None:
    """The paths of `kind`'s code (CODE) that differ between `commit` and this checkout; None when that cannot
    be told (no commit recorded, a commit not in this repository, no git)."""
    if not commit or commit == UNKNOWN or _git("cat-file", "-e", f"{commit}^{{commit}}") is None:
        return None
    out = _git("diff", "--name-only", commit, "--", *CODE[kind])
    if out is None:
        return None
    changed = {p for line in out.splitlines() if line.strip() for p in CODE[kind] if line.startswith(p)}
    return tuple(p for p in CODE[kind] if p in changed)


def is_current(source) -> bool:
    """Whether a figure (`step_times.Source`) was measured on the code that would run now (module docstring)."""
    return changed_since(source.commit, source.kind) == ()


def why_not_current(source) -> str:
    """What makes a figure not current, in words."""
    changed = changed_since(source.commit, source.kind)
    if changed is None:
        return f"measured at {source.commit}: cannot be checked against this checkout"
    return f"measured at {source.commit} ({source.date}); changed since: {', '.join(changed)}"


def _git(*args: str) -> str | None:
    if not (ROOT / ".git").exists():
        return None
    try:
        run = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return run.stdout if run.returncode == 0 else None
