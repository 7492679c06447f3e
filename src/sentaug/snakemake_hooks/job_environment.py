"""What a local run's jobs start in: this checkout's package and interpreter (`export_job_environment`), and the
fork server that runs them with the heavy modules imported once (`start_job_server`, `sentaug.job_server`)."""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_JOB_SERVER: list = []      # (process, its socket's folder) of the job server this process started


def export_job_environment(src: Path, python: str) -> None:
    """Make jobs import this checkout's `src` and run `python` from the interpreter running Snakemake (e.g.
    .venv/bin/snakemake without an activated venv). Snakemake passes its environment to every job (also to
    SLURM jobs: sbatch --export=ALL); with --software-deployment-method conda the rule's environment is put in
    front of this PATH, and SENTAUG_ROOT (the checkout) is where envs/*.yaml install sentaug from."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    os.environ["SENTAUG_ROOT"] = str(Path(src).resolve().parent)
    os.environ["PATH"] = os.pathsep.join([str(Path(python).parent), os.environ.get("PATH", "")])


def start_job_server(workflow, enabled: bool, log: str) -> bool:
    """Start the fork server that runs this local run's `python -m sentaug.cli` jobs with the heavy modules
    imported once (sentaug.job_server), where the scale enables it (`scales.<scale>.job_server`); an `onstart`
    hook (rules/common.smk). True if started. The jobs find it through $SENTAUG_JOB_SERVER, which they
    inherit; until it has imported (a few seconds) they run as before, each in its own process. Not on a
    cluster: each job there is a process of its own on its node. `stop_job_server` (onsuccess, onerror, and at
    exit) ends it; it also ends by itself when this process does."""
    from ..evaluate import suites
    from ..job_server import ENV_SOCKET, PRELOAD

    if not enabled or not workflow.local_exec or workflow.remote_exec or _JOB_SERVER:
        return False
    # and the code of every registered evaluation suite (a plugin's of config key suites.modules too), after the
    # built-in suites' declarations: a fork's registry lists them first, as the jobs' own processes do
    preload = list(dict.fromkeys([*PRELOAD, *suites.BUILT_IN,
                                  *(suite.module for suite in suites.registered().values())]))
    folder = tempfile.mkdtemp(prefix="sentaug-jobs-")
    os.environ[ENV_SOCKET] = os.path.join(folder, "socket")
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as err:
        _JOB_SERVER.append((subprocess.Popen([sys.executable, "-m", "sentaug.job_server", os.environ[ENV_SOCKET],
                                              *preload],
                                             stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                             start_new_session=True), folder))
    atexit.register(stop_job_server)
    return True


def stop_job_server() -> None:
    """End the job server of `start_job_server`, if any (the forks still running end with it)."""
    from ..job_server import ENV_SOCKET

    while _JOB_SERVER:
        process, folder = _JOB_SERVER.pop()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(ENV_SOCKET, None)
