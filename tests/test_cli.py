"""The command line's own behaviour: progress bars in a job's log file."""
import os
import pty
import subprocess
import sys

import pytest

from sentaug.cli import LOG_PROGRESS_INTERVAL_S

# What a handler does: tqdm imported after the command line started, its bar drawn on stderr.
BAR_INTERVAL = ("import sys; from sentaug.cli import space_progress_in_logs; space_progress_in_logs(); "
                "from tqdm.auto import tqdm; print(tqdm(range(3)).mininterval)")


def bar_interval(stderr, **env) -> float:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TQDM_")} | env
    run = subprocess.run([sys.executable, "-c", BAR_INTERVAL], stdout=subprocess.PIPE, stderr=stderr,
                         env=environ, text=True, check=True)
    return float(run.stdout)


def test_a_bar_in_a_log_file_is_redrawn_every_30_s(tmp_path):
    with open(tmp_path / "job.log", "w") as log:
        assert bar_interval(log) == LOG_PROGRESS_INTERVAL_S == 30


def test_a_bar_on_a_terminal_keeps_tqdms_tenth_of_a_second():
    leader, follower = pty.openpty()
    try:
        assert bar_interval(follower) == pytest.approx(0.1)   # tqdm's own default
    finally:
        os.close(leader), os.close(follower)


def test_an_interval_the_user_set_wins(tmp_path):
    with open(tmp_path / "job.log", "w") as log:
        assert bar_interval(log, TQDM_MININTERVAL="2.5") == 2.5
