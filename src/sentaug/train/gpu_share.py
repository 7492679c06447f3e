"""Several training runs on one GPU (`scales.<scale>.runs_per_gpu`): which GPU a run takes.

A node with N GPUs runs up to runs_per_gpu x N training jobs at once (Snakemake counts them: resource
`gpu_runs`, sentaug.snakemake_hooks.share_gpus). Each job, before anything touches CUDA, takes a free slot:
one of runs_per_gpu lock files per visible GPU, held (flock) until the process ends, however it ends, and
sets CUDA_VISIBLE_DEVICES to that GPU alone. Where one GPU or none is visible (a SLURM job that was given
one GPU for its group of runs, a CPU machine), there is nothing to choose and nothing is locked.

The slots live under $SENTAUG_GPU_SLOTS (default: <tmp>/sentaug-gpu-slots-<uid>), one folder per SLURM job
when inside one (its GPUs are its own), else one per machine.
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV_RUNS_PER_GPU = "SENTAUG_RUNS_PER_GPU"     # set for the jobs by sentaug.snakemake_hooks.share_gpus
_held: list = []                              # the open lock file of this process's slot (kept to its end)


def visible_gpus() -> list[str]:
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES names them (without starting CUDA): that
    variable when set, else the indexes nvidia-smi lists, else none."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [d.strip() for d in env.split(",") if d.strip() and d.strip() != "-1"]
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(l for l in out.stdout.splitlines() if l.startswith("GPU "))]


def slot_folder() -> Path:
    root = Path(os.environ.get("SENTAUG_GPU_SLOTS") or Path(tempfile.gettempdir()) / f"sentaug-gpu-slots-{os.getuid()}")
    return root / (f"slurm-{os.environ['SLURM_JOB_ID']}" if os.environ.get("SLURM_JOB_ID") else "local")


def take_slot(runs_per_gpu: int, gpus: list[str] | None = None, folder: Path | None = None,
              wait: bool = True, wait_s: float = 0.5, log=sys.stderr) -> str | None:
    """Take a free slot on the least busy visible GPU, pin this process to that GPU, and return its name.
    Waits while every slot is taken (`wait`; else returns None). With at most one GPU visible there is
    nothing to choose: it says so (with the SLURM job, when in one, and the time: which runs shared a GPU,
    and when, is in the jobs' logs) and returns None."""
    gpus = visible_gpus() if gpus is None else gpus
    if len(gpus) <= 1:
        job = f" of SLURM job {os.environ['SLURM_JOB_ID']}" if os.environ.get("SLURM_JOB_ID") else ""
        print(f"[gpu-share] up to {runs_per_gpu} runs share GPU {gpus[0] if gpus else '(none)'}{job}; "
              f"started at {time.time():.3f}", file=log, flush=True)
        return None
    folder = folder or slot_folder()
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        # least busy first: a GPU's free slots are counted by trying its locks
        for slot in range(runs_per_gpu):
            for gpu in gpus:
                handle = open(folder / f"gpu{gpu}-slot{slot}.lock", "a+")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    continue
                _held.append(handle)
                os.environ["CUDA_VISIBLE_DEVICES"] = gpu
                print(f"[gpu-share] GPU {gpu}, slot {slot + 1} of {runs_per_gpu} (of GPUs {','.join(gpus)}); "
                      f"started at {time.time():.3f}", file=log, flush=True)
                return gpu
        if not wait:
            return None
        time.sleep(wait_s)


def pin_from_environment() -> str | None:
    """`take_slot` when the workflow shares GPUs ($SENTAUG_RUNS_PER_GPU > 1); called by `sentaug train`
    before it imports torch."""
    runs = int(os.environ.get(ENV_RUNS_PER_GPU) or 1)
    if runs <= 1:
        return None
    from .mps import start as start_mps

    start_mps()       # runs sharing a GPU run side by side under MPS where it exists (started once: see there)
    return take_slot(runs)
