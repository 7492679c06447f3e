"""NVIDIA's Multi-Process Service for training runs sharing a GPU (`scales.<scale>.runs_per_gpu` > 1).

Without it, processes on one GPU take turns in time slices; under MPS their kernels run side by side. On one
H200 (2026-11-26, benchmarks/gpu_concurrency.py, BERT-base at batch 64, each step one CUDA graph) four runs
trained 61.1 steps/s together without MPS and 83.0 with it (one run alone: 41.6): docs/cost-and-gpus.md.

One control daemon serves the GPUs of a machine, or of a SLURM job (its GPUs are its own): its pipe and log
folders live beside the GPU slots (`sentaug.train.gpu_share.slot_folder()`/mps). `start` runs it where
`nvidia-cuda-mps-control` exists and a GPU is visible, once (a lock: the runs of a group start together), and
points this process and its children at it through CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY, which
must be set before CUDA starts. Locally the workflow's onstart hook starts it and onsuccess/onerror stop it;
inside a SLURM job the group's first training run starts it (no hooks run there) and it ends with the job.
$SENTAUG_MPS=0 turns it off; a daemon that does not come up is said, and the runs go on without it.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

CONTROL = "nvidia-cuda-mps-control"
ENV_SWITCH = "SENTAUG_MPS"
PIPE, LOG = "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"


def wanted() -> bool:
    return os.environ.get(ENV_SWITCH, "1") != "0"


def folder() -> Path:
    from .gpu_share import slot_folder

    return slot_folder() / "mps"


def _control(command: str, env: dict, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([CONTROL], input=command + "\n", env=env, capture_output=True, text=True, timeout=timeout)


def running(where: Path | None = None) -> bool:
    """Whether a control daemon answers on `where`'s pipe folder."""
    where = where or folder()
    env = {**os.environ, PIPE: str(where / "pipe"), LOG: str(where / "log")}
    try:       # (an empty pipe folder: no daemon ever started there, and no client call that could wait)
        return any((where / "pipe").iterdir()) and _control("get_server_list", env, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def start(where: Path | None = None, log=sys.stderr) -> bool:
    """Start the daemon for this machine's (or SLURM job's) visible GPUs unless it runs, and point this process
    and its children at it. False (nothing changed) where MPS is off, absent, or would not start."""
    from .gpu_share import visible_gpus

    if not wanted() or shutil.which(CONTROL) is None or not visible_gpus():
        return False
    where = where or folder()
    (where / "pipe").mkdir(parents=True, exist_ok=True)
    (where / "log").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, PIPE: str(where / "pipe"), LOG: str(where / "log")}
    with open(where / "start.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # the runs of a group start at once: one of them starts it
        if not running(where):
            try:
                done = subprocess.run([CONTROL, "-d"], env=env, capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.SubprocessError) as e:
                done = subprocess.CompletedProcess([CONTROL], 1, "", str(e))
            if done.returncode != 0 or not running(where):
                print(f"[mps] {CONTROL} -d did not start ({(done.stderr or done.stdout).strip()[:200] or 'no answer'}):"
                      f" runs share the GPU without MPS", file=log, flush=True)
                return False
            print(f"[mps] control daemon started for GPUs {','.join(visible_gpus())} ({where})", file=log, flush=True)
    os.environ[PIPE], os.environ[LOG] = env[PIPE], env[LOG]
    return True


def stop(where: Path | None = None, log=sys.stderr) -> bool:
    """Quit the daemon `start` began on `where` (the runs using it have ended); True if one was running."""
    where = where or folder()
    if shutil.which(CONTROL) is None or not running(where):
        return False
    env = {**os.environ, PIPE: str(where / "pipe"), LOG: str(where / "log")}
    _control("quit", env)
    for key in (PIPE, LOG):
        if os.environ.get(key, "").startswith(str(where)):
            del os.environ[key]
    print(f"[mps] control daemon stopped ({where})", file=log, flush=True)
    return True


def start_for_local_run(workflow, runs_per_gpu: int) -> bool:
    """The workflow's onstart hook: start the daemon for a local run whose training runs share GPUs."""
    if runs_per_gpu <= 1 or not workflow.local_exec or workflow.remote_exec:
        return False
    return start()


def stop_for_local_run(workflow, runs_per_gpu: int) -> bool:
    """The workflow's onsuccess and onerror hooks: stop what `start_for_local_run` started."""
    if runs_per_gpu <= 1 or not workflow.local_exec or workflow.remote_exec:
        return False
    return stop()
