"""A second `snakemake` in a folder where another one holds the lock: Snakemake's LockException says only that
the directory cannot be locked, whether the other run is alive or was killed and left its lock behind. Its
message here starts with which it is, as far as this machine can tell (its processes, from /proc):

    LockException:
    A Snakemake run holds this folder's lock: process 4242, started 06:43:00 (snakemake results/tables/...).
    Wait for it to end, or stop it (kill 4242); then run again. ...

or that no Snakemake process runs in this folder, so the lock is stale: `--unlock` removes it. A run on another
machine that shares the folder (a cluster's login nodes) cannot be seen from here: the message says so.
(docs/troubleshooting.md)
"""
from __future__ import annotations

import datetime
import os
from pathlib import Path

_CLOCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def snakemake_processes(folder: str | os.PathLike, proc: str | os.PathLike = "/proc") -> list[dict]:
    """The Snakemake processes of this machine whose working directory is `folder` (not this process nor its
    parents): each one's pid, command line and start time. None when the machine has no /proc to read."""
    proc, folder = Path(proc), os.path.realpath(folder)
    if not (proc / "self").exists():
        return None
    mine = {os.getpid(), os.getppid()}
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        words = [w.decode(errors="replace") for w in words if w]
        if cwd != folder or not any(Path(w).name == "snakemake" or w == "snakemake" for w in words[:3]):
            continue
        if any(w in ("--nolock", "--dry-run", "-n", "--unlock") for w in words):   # holds no lock
            continue
        if len(words) > 1 and Path(words[0]).name.startswith("python"):    # the interpreter of a script's #!
            words = words[1:]
        found.append({"pid": int(entry.name), "command": " ".join(words),
                      "started": _started(entry)})
    return sorted(found, key=lambda p: p["pid"])


def _started(entry: Path) -> str | None:
    """When a process started (local time), from its start tick and the machine's boot time."""
    try:
        ticks = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return datetime.datetime.fromtimestamp(boot + ticks / _CLOCK).strftime("%Y-%m-%d %H:%M:%S")


def lock_answer(folder: str | os.PathLike, processes: list[dict] | None) -> str:
    """What to do about the lock of `folder`, given the Snakemake processes running in it (None: unknown)."""
    if processes is None:
        return (f"Another Snakemake run may hold the lock of {folder}, or a killed one left it: see whether one runs "
                f"(ps -ef | grep snakemake); if none does, the lock is stale: add --unlock to the same command, then "
                f"run it again.")
    if processes:
        first = processes[0]
        others = f" (and {len(processes) - 1} more)" if len(processes) > 1 else ""
        when = f", started {first['started']}" if first["started"] else ""
        return (f"A Snakemake run holds the lock of this folder: process {first['pid']}{when} "
                f"({first['command']}){others}. It is alive: wait for it to end, or stop it (kill {first['pid']}), "
                f"then run again. Two runs in one folder may build the same files; a second checkout, or "
                f"--config results=<another folder>, runs beside it.")
    return (f"No Snakemake process runs in {folder} on this machine, so the lock is stale (left by a run that "
            f"was killed): add --unlock to the same command (it removes the lock and runs nothing), then run it "
            f"again; finished jobs are not rerun. (A run on another machine sharing this folder would not show "
            f"here.)")


def explain_locks(workflow=None) -> bool:
    """Make Snakemake's LockException start with `lock_answer` for this folder (called by the Snakefile, in the
    main process). True if installed."""
    try:
        import snakemake.exceptions as exceptions
    except ImportError:
        return False
    base = exceptions.LockException
    if getattr(base, "sentaug_hint", False):
        return True

    class LockException(base):
        sentaug_hint = True

        def __init__(self):
            super().__init__()
            folder = os.getcwd()
            answer = lock_answer(folder, snakemake_processes(folder))
            self.args = (f"{answer}\n{self.args[0] if self.args else ''}",) + tuple(self.args[1:])

    LockException.__name__ = LockException.__qualname__ = "LockException"
    exceptions.LockException = LockException
    return True
