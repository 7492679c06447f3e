"""Progress bars in a job's log: spaced out where stderr is not a terminal (`space_progress_in_logs`), in every
command (`sentaug.cli`) and in the job server's forks (`sentaug.job_server`)."""
from __future__ import annotations

import os
import sys

# Seconds between two redraws of a progress bar whose stream is not a terminal (a job's log file).
LOG_PROGRESS_INTERVAL_S = 30


def space_progress_in_logs() -> None:
    """Redraw progress bars every LOG_PROGRESS_INTERVAL_S seconds when stderr is not a terminal.

    A job's stderr is its log file, where tqdm's redraws (up to ten a second) pile up: 90 KB of them for one
    small-scale GLUE evaluation, one per step of a paper-scale training. tqdm takes its defaults from TQDM_*
    variables when it is first imported, which no handler has done yet (they import lazily), and child
    processes (torchrun's, worker pools) inherit them. A minimum interval the user set wins. The maximum
    follows the minimum: below it (tqdm's 10 s), tqdm's monitor thread redraws a bar that has not been drawn
    for that long with its old count, a frame that says nothing new."""
    if not sys.stderr.isatty():
        minimum = os.environ.setdefault("TQDM_MININTERVAL", str(LOG_PROGRESS_INTERVAL_S))
        os.environ.setdefault("TQDM_MAXINTERVAL", minimum)
