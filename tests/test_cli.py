"""The command line's own behaviour: progress bars in a job's log file."""
import os
import pty
import subprocess
import sys

import pytest

from sentaug.cli import LOG_PROGRESS_INTERVAL_S

# What a handler does: tqdm imported after the command line started, its bar drawn on stderr.
BAR_INTERVALS = ("from sentaug.cli import space_progress_in_logs; space_progress_in_logs(); "
                "from tqdm.auto import tqdm; bar = tqdm(range(3)); print(bar.mininterval, bar.maxinterval)")


def bar_intervals(stderr, **env) -> tuple[float, float]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TQDM_")} | env
    run = subprocess.run([sys.executable, "-c", BAR_INTERVALS], stdout=subprocess.PIPE, stderr=stderr,
                         env=environ, text=True, check=True)
    return tuple(float(x) for x in run.stdout.split())


def test_a_bar_in_a_log_file_is_redrawn_every_30_s(tmp_path):
    with open(tmp_path / "job.log", "w") as log:
        assert bar_intervals(log) == (LOG_PROGRESS_INTERVAL_S, LOG_PROGRESS_INTERVAL_S) == (30, 30)


def test_a_bar_on_a_terminal_keeps_tqdms_intervals():
    leader, follower = pty.openpty()
    try:
        assert bar_intervals(follower) == pytest.approx((0.1, 10))   # tqdm's own defaults
    finally:
        os.close(leader), os.close(follower)


def test_an_interval_the_user_set_wins(tmp_path):
    with open(tmp_path / "job.log", "w") as log:
        assert bar_intervals(log, TQDM_MININTERVAL="60") == (60, 60)   # the maximum follows it
