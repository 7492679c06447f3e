"""One process for the evaluations of one model: the jobs of `sentaug evaluate <suite> --model M ...` that run at
once (or one soon after another) on a machine hand their commands to one process, which loads M once (CUDA's
start, the imports and the weights: the start-up the bill counts once per model) and runs them one after the
other, as `sentaug evaluate suites` runs several suites in one process (the same result files, byte for byte:
tests/evaluate/test_evaluate_suites.py).

Set `SENTAUG_EVALUATION_SERVICE=1` in a job's environment (the workflow does at scales on GPUs:
sentaug.snakemake_hooks.share_evaluation_processes) and `python -m sentaug.cli evaluate <suite> --model M ...`
does this, before it imports anything heavy:

* it asks M's process (a Unix socket in Linux's abstract namespace: no file, no path length limit, gone with
  its process; named after M's resolved path, the device asked for, the Python that runs and the user) to run
  its command, passing its standard streams, its working
  folder and its environment; the process runs it with the job's streams, folder and thread count, and answers
  with the exit status, which the job exits with;
* where no process serves M, the first job to take M's lock becomes it: it runs its own command, then serves the
  others' until none has come for LINGER_S seconds, then ends (its own job with it). The lock is a file in the
  machine's temporary folder (`sentaug-evaluation-<uid>/`). The others wait for the lock
  or the socket (a model loading) for up to WAIT_S seconds;
* a command for another model, or from another interpreter, path or environment (but for the thread count, the
  temporary folder and what bash sets: sentaug.job_server.decline_reason), is declined and runs in its job's own
  process, as does every command where the variable is unset. A serving process that dies before it answers
  leaves its jobs to run their commands themselves (outputs are written atomically: nothing half-written stays).

Commands run one at a time: jobs of one model wait for their turn (they hold no GPU memory of their own).
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

ENV = "SENTAUG_EVALUATION_SERVICE"
LINGER_S = float(os.environ.get("SENTAUG_EVALUATION_LINGER_S", 60))   # serving on after the last command
WAIT_S = 1800.0              # the longest a job waits for its model's process (loading, another job's command)
RETRY_S = 0.2
DECLINED = -1
NOT_SUITES = ("suites", "mteb")       # the commands of `sentaug evaluate` that are no suite's


def served(argv: list[str]) -> tuple[str, str] | None:
    """(model, device) of a command a model's process may run: `evaluate <suite> ...` naming its --model; None for
    any other command (`evaluate suites`, whose suites share a process already, among them)."""
    # every command of `evaluate` but these two is a suite's (checked by name without importing the registry,
    # whose plugins the serving process imports as the command names them: --module)
    if len(argv) < 2 or argv[0] != "evaluate" or argv[1] in NOT_SUITES or argv[1].startswith("-"):
        return None
    found = {}
    for i, word in enumerate(argv):
        for flag in ("--model", "--device"):
            if word == flag and i + 1 < len(argv):
                found[flag] = argv[i + 1]
            elif word.startswith(flag + "="):
                found[flag] = word.split("=", 1)[1]
    if "--model" not in found:
        return None
    model = found["--model"]
    return (str(Path(model).resolve()) if Path(model).exists() else model), found.get("--device", "auto")


def address(model: str, device: str, folder: str | None = None) -> tuple[str, Path]:
    """(the abstract socket the process of `model` on `device` listens on, the file of its lock)."""
    key = hashlib.sha1(f"{model}\0{device}\0{sys.executable}".encode()).hexdigest()[:16]
    base = Path(folder or tempfile.gettempdir()) / f"sentaug-evaluation-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    return f"\0sentaug-evaluation-{os.getuid()}-{key}", base / f"{key}.lock"


def run(argv: list[str], main) -> int | None:
    """The job's side (sentaug.cli's `__main__`, `main` its entry point): the exit status of `argv` run by its
    model's process, or by this one as that process; None where no such process is to be used (the caller runs
    the command itself)."""
    if os.environ.get(ENV, "") in ("", "0"):
        return None
    model = served(argv)
    if model is None:
        return None
    sock, lock_file = address(*model)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        status = ask(sock, argv)
        if status == DECLINED:
            return None
        if status is not None:
            return status
        lock = _try_lock(lock_file)
        if lock is not None:
            return lead(argv, sock, lock, main)
        time.sleep(RETRY_S)
    print(f"sentaug: no evaluation process for {model[0]} answered in {WAIT_S:g} s: running here", file=sys.stderr)
    return None


def ask(sock: str, argv: list[str]) -> int | None:
    """The exit status of `argv` run by the process at `sock`; DECLINED when it will not run it; None when none
    answers (none serves there, or it ended before it answered)."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(sock)
    except OSError:
        return None
    from ..job_server import HEADER

    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
                          "executable": sys.executable, "path": sys.path}).encode()
    try:
        socket.send_fds(conn, [HEADER.pack(len(request)) + request], [0, 1, 2])
        reply = conn.makefile("r", encoding="utf-8")
        first = reply.readline().split()
        if first == ["declined"]:
            return DECLINED
        if first != ["run"]:
            return None
        last = reply.readline().split()
    except OSError:
        return None
    finally:
        conn.close()
    if len(last) == 2 and last[0] == "exit":
        return int(last[1])
    print("sentaug: the evaluation process ended before the job did: running here", file=sys.stderr)
    return None


def _try_lock(path: Path) -> int | None:
    import fcntl

    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def lead(argv: list[str], sock: str, lock: int, main) -> int:
    """Become the model's process: run `argv`, then the commands of the jobs that come, until none has come for
    LINGER_S seconds; the exit status of `argv`."""
    from ..job_server import decline_reason
    from ..models.encoder import models_kept

    environ, path_list = dict(os.environ), list(sys.path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock)
    listener.listen(64)
    listener.settimeout(LINGER_S)
    mine, ran = served(argv), 1
    try:
        with models_kept():
            own = run_command(main, argv)
            while True:
                try:
                    conn, _ = listener.accept()
                except (socket.timeout, TimeoutError):
                    break
                with conn:
                    ran += serve_one(conn, mine, environ, path_list, decline_reason, main)
        print(f"[evaluation process] {mine[0]} on {mine[1]}: {ran} commands in this process", file=sys.stderr,
              flush=True)
    finally:
        listener.close()
        os.close(lock)
    return own


def serve_one(conn: socket.socket, mine, environ: dict, path_list: list[str], decline_reason, main) -> int:
    """Read a job's request and run its command here with its streams, folder and threads (1), or decline it
    (0)."""
    from ..job_server import THREADS_VARIABLE, read_request

    fds: list[int] = []
    try:
        request = read_request(conn, fds)
        if len(fds) != 3 or served(request["argv"]) != mine or decline_reason(request, environ, path_list):
            conn.sendall(b"declined\n")
            return 0
        conn.settimeout(None)
        conn.sendall(b"run\n")
        threads = request["env"].get(THREADS_VARIABLE)
        try:
            code = _with_streams(fds, request["cwd"], lambda: (_threads(threads), run_command(main, request["argv"]))[1])
        finally:
            _threads(environ.get(THREADS_VARIABLE))
        conn.sendall(f"exit {code}\n".encode())
        return 1
    except (OSError, ValueError, KeyError) as e:
        print(f"sentaug evaluation process: a request failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 0
    finally:
        for fd in fds:
            os.close(fd)


def _with_streams(fds: list[int], cwd: str, fn):
    """`fn()` with this process's stdin, stdout and stderr on `fds` and its working folder `cwd`; all put back."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved, here = [os.dup(i) for i in range(3)], os.getcwd()
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.chdir(cwd)
        return fn()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        for target, fd in enumerate(saved):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(here)


def _threads(n: str | None) -> None:
    """The thread count a process started with OMP_NUM_THREADS=n would take (torch's, the BLAS libraries')."""
    if not n or not n.isdigit():
        return
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(n))
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(int(n))


def run_command(main, argv: list[str]) -> int:
    """`sentaug <argv>` in this process, as `python -m sentaug.cli` would run it (`main`: its entry point, handed
    in: this module is imported by it): its exit status."""
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else _printed(e.code))
    except Exception:                   # noqa: BLE001 (as the interpreter would: traceback, status 1)
        import traceback

        traceback.print_exc()
        code = 1
    return int(code or 0)


def _printed(message) -> int:
    print(message, file=sys.stderr)
    return 1
