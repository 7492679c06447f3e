"""A fork server for the jobs of a local Snakemake run: one process imports the heavy modules once (torch,
transformers' model classes, spaCy, matplotlib, the package's stages), and each job's `python -m sentaug.cli ...`
hands its command to it and waits while a fork of it runs the command.

Why: a demo job's work is small beside its start-up. `sentaug evaluate sts` on a tiny model took 5.2 CPU-s, 4 of
them importing torch and transformers' model code (which pulls in torch._dynamo, sympy, scipy.optimize and
torch.distributed.tensor); a demo build starts about 470 such processes. A fork starts with all of it imported.

What the fork runs is what the job's own process would run: the `main` of the job's entry module (the module run
as `python -m`, `sentaug.cli`, which names itself in the request) with the job's arguments, in its
working directory, with its environment, its stdin, stdout and stderr (passed over the socket), its thread
count (OMP_NUM_THREADS, applied to torch and to the BLAS and OpenMP libraries already loaded), in a session of its
own. The server takes a job only when it would import the same code: the same interpreter, sys.path and
environment (but for what bash sets and the thread count); otherwise the job runs in its own process, as it
does when no server is running (`SENTAUG_JOB_SERVER` unset), when the server is still importing, or when the
connection fails. A signal to the job's process (Snakemake stopping it) goes to the fork's process group; a
job process that dies takes its fork with it.

    python -m sentaug.job_server SOCKET [MODULE ...]   # serve until SIGTERM or the parent process's end; import
                                                       # the MODULEs (default PRELOAD) first

Started and stopped by the Snakefile's onstart / onsuccess / onerror hooks (sentaug.snakemake_hooks) for local
runs at scales that set `job_server: true`.
"""
from __future__ import annotations

import gc
import importlib
import json
import os
import selectors
import signal
import socket
import struct
import sys
import tempfile
import time

ENV_SOCKET = "SENTAUG_JOB_SERVER"

# Imported once by the server; a module that fails to import is left to the jobs (the server's log says so).
PRELOAD = (
    "torch", "numpy", "scipy.optimize", "sklearn.linear_model", "sklearn.cluster", "sklearn.metrics",
    "transformers", "transformers.models.auto.modeling_auto", "transformers.models.auto.tokenization_auto",
    "transformers.models.bert.modeling_bert", "transformers.models.roberta.modeling_roberta",
    "transformers.models.bart.modeling_bart", "transformers.models.mpnet.modeling_mpnet",
    "transformers.generation", "safetensors.torch", "pyarrow.parquet", "spacy", "matplotlib.pyplot",
    "sentaug.cli", "sentaug.train.trainer", "sentaug.models.backbones", "sentaug.index.neighbours",
    "sentaug.augment.cache", "sentaug.augment.parse", "sentaug.evaluate.sts", "sentaug.evaluate.transfer",
    "sentaug.evaluate.clustering", "sentaug.evaluate.intent", "sentaug.evaluate.glue",
    "sentaug.evaluate.analysis", "sentaug.evaluate.projection", "sentaug.evaluate.nli",
    "sentaug.evaluate.token_embeddings", "sentaug.report.tables", "sentaug.report.figures",
    "sentaug.report.pages", "sentaug.report.leaderboard", "sentaug.report.census", "sentaug.report.describe",
)
# Set or changed by the job's shell, read by no module at import: a job may differ from the server in these.
SHELL_VARIABLES = frozenset({"_", "PWD", "OLDPWD", "SHLVL"})
# The job's thread count, which Snakemake sets in all of these (its `threads:`): the server imports with 1, as
# every demo job runs, and a fork applies another count (apply_threads).
THREADS_VARIABLE = "OMP_NUM_THREADS"
THREAD_VARIABLES = frozenset({THREADS_VARIABLE, "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                              "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"})
SERVER_THREADS = "1"
# The job's temporary folder (Snakemake's resource tmpdir): Python's tempfile reads them again in the fork.
TEMP_VARIABLES = frozenset({"TMPDIR", "TEMP", "TMP", "TEMPDIR"})
HEADER = struct.Struct("!I")          # the request's length, before its JSON
REQUEST_TIMEOUT_S = 10
PARENT_CHECK_S = 1.0


# The job's side.
def forward(argv: list[str], entry: str) -> int | None:
    """Run `entry.main(argv)` (`entry` a module's dotted name: the command line's) in a fork of the server named
    by $SENTAUG_JOB_SERVER and return its exit status; None when no server takes it (the caller runs the command
    itself)."""
    path = os.environ.get(ENV_SOCKET)
    if not path:
        return None
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
    except OSError:
        return None            # not serving yet (still importing), or gone
    request = json.dumps({"entry": entry, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
                          "executable": sys.executable, "path": sys.path}).encode()
    try:
        socket.send_fds(conn, [HEADER.pack(len(request)) + request], [0, 1, 2])
        reply = conn.makefile("r", encoding="utf-8")
        first = reply.readline().split()
        if not first or first[0] != "pid":
            return None        # declined: run here
        _forward_signals(int(first[1]))
        last = reply.readline().split()
    except OSError:
        last = []
    if len(last) == 2 and last[0] == "exit":
        return int(last[1])
    print("sentaug: the job server ended before the job did", file=sys.stderr)
    return 1


def _forward_signals(pid: int) -> None:
    def handler(signum, frame):
        try:
            os.killpg(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)


# The server's side.
def serve(path: str, preload=PRELOAD) -> None:
    """Import `preload`, then serve jobs on the Unix socket `path` until SIGTERM or until the parent ends."""
    parent = os.getppid()
    os.environ.update({v: SERVER_THREADS for v in THREAD_VARIABLES})   # read by the libraries as they load
    environ, path_list = dict(os.environ), list(sys.path)      # what a job must match
    from .progress import space_progress_in_logs

    space_progress_in_logs()          # as every job does before its first import of tqdm (which reads it once)
    started = time.perf_counter()
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception as e:        # noqa: BLE001 (any failure: the jobs import it themselves)
            _log(f"preload {name}: {type(e).__name__}: {e}")
    _log(f"imported {len(preload)} modules in {time.perf_counter() - started:.1f} s")
    gc.freeze()                       # the imported objects stay shared with the forks (no copy on write)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.replace(path + ".tmp", path)           # the path appears once the server can serve
    wakeup_r, wakeup_w = os.pipe()
    os.set_blocking(wakeup_w, False)
    signal.set_wakeup_fd(wakeup_w)
    stop = []
    signal.signal(signal.SIGCHLD, lambda *_: None)          # a handler, so that the wakeup fd is written
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wakeup_r, selectors.EVENT_READ, "wakeup")
    jobs: dict[int, socket.socket] = {}                     # fork pid -> its job's connection
    served = 0
    try:
        while not stop and os.getppid() == parent:
            for key, _ in selector.select(PARENT_CHECK_S):
                if key.data == "accept":
                    conn, _ = listener.accept()
                    pid = _start(conn, environ, path_list,
                                 closing=[listener, selector, wakeup_r, wakeup_w, *jobs.values()])
                    if pid is None:
                        conn.close()
                        continue
                    jobs[pid] = conn
                    served += 1
                    selector.register(conn, selectors.EVENT_READ, pid)
                elif key.data == "wakeup":
                    os.read(wakeup_r, 4096)
                elif not key.fileobj.recv(1):            # the job's process closed: it died
                    selector.unregister(key.fileobj)
                    _kill(key.data)
            _reap(jobs, selector)
    finally:
        for pid in list(jobs):
            _kill(pid)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        _log(f"served {served} jobs")


def read_request(conn: socket.socket, fds: list[int]) -> dict:
    """A job's request on `conn` (its argv, environment and folder, as JSON after a length header); the stdio
    descriptors sent with it are appended to `fds`, for the caller to close whatever happens."""
    conn.settimeout(REQUEST_TIMEOUT_S)
    data, received, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    fds += received
    if len(data) < HEADER.size:
        raise ValueError("short request")
    size = HEADER.unpack_from(data)[0]
    data = data[HEADER.size:]
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ValueError("truncated request")
        data += chunk
    return json.loads(data)


def _start(conn: socket.socket, environ: dict, path_list: list[str], closing: list) -> int | None:
    """Read a job's request and fork it; the fork's pid, None when declined or unreadable."""
    fds: list[int] = []
    try:
        request = read_request(conn, fds)
    except (OSError, ValueError) as e:
        _log(f"unreadable request: {e}")
        for fd in fds:
            os.close(fd)
        return None
    reason = decline_reason(request, environ, path_list)
    if reason or len(fds) != 3:
        _log(f"declined {' '.join(request['argv'][:1])}: {reason or 'no stdio'}")
        for fd in fds:
            os.close(fd)
        conn.sendall(b"declined\n")
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        for f in closing:
            f.close() if hasattr(f, "close") else os.close(f)
        _run_job(request, fds, environ, conn)           # never returns
    for fd in fds:
        os.close(fd)
    _log(f"forked {pid}: sentaug {' '.join(request['argv'][:2])}")
    conn.settimeout(None)
    conn.sendall(f"pid {pid}\n".encode())
    return pid


def decline_reason(request: dict, environ: dict, path_list: list[str]) -> str | None:
    """Why a job must not run in a fork of this server (it would import other code, or the same code with other
    settings), or None."""
    if request.get("executable") != sys.executable:
        return f"interpreter {request.get('executable')}"
    if request.get("path") != path_list:
        return "another sys.path"
    env = request.get("env", {})
    ignored = SHELL_VARIABLES | THREAD_VARIABLES | TEMP_VARIABLES | {ENV_SOCKET}
    differ = sorted(k for k in set(env) | set(environ)
                    if k not in ignored and env.get(k) != environ.get(k))
    if differ:
        return f"environment differs in {', '.join(differ)}"
    threads = {env.get(v, SERVER_THREADS) for v in THREAD_VARIABLES}
    if len(threads) > 1 or not threads.pop().isdigit():
        return "thread counts other than one number (" + ", ".join(sorted(THREAD_VARIABLES & set(env))) + ")"
    return None


def _run_job(request: dict, fds: list[int], environ: dict, conn: socket.socket) -> None:
    """In the fork: become the job's process (session, stdio, directory, environment, threads) and run its
    command as `python -m ENTRY` would; exits with its status."""
    code = 1
    try:
        conn.close()
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        apply_threads(request["env"].get(THREADS_VARIABLE, SERVER_THREADS))
        tempfile.tempdir = None                 # gettempdir() reads TMPDIR & co. again
        # the job names its entry module: the server serves the command line without importing it by name
        entry = sys.modules.get(request["entry"]) or importlib.import_module(request["entry"])
        sys.argv = [entry.__file__, *request["argv"]]
        code = entry.main(request["argv"])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else _print_exit(e.code))
    except KeyboardInterrupt:
        code = 128 + signal.SIGINT
    except BaseException:                       # noqa: BLE001 (as the interpreter would: traceback, status 1)
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import atexit

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:                    # noqa: BLE001 (a closed stream: nothing to flush)
                pass
        os._exit(code if isinstance(code, int) else 1)


def _print_exit(message) -> int:
    print(message, file=sys.stderr)
    return 1


def apply_threads(threads: str) -> None:
    """Give the fork the thread count a new process would take from OMP_NUM_THREADS & co.: torch's, and that of
    every BLAS and OpenMP library already loaded (libraries loaded later read the variables themselves)."""
    if threads == SERVER_THREADS:
        return
    n = int(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(n)


def _reap(jobs: dict, selector) -> None:
    """Send each finished fork's exit status to its job."""
    while jobs:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = jobs.pop(pid, None)
        if conn is None:
            continue
        if _registered(selector, conn):
            selector.unregister(conn)
        code = os.waitstatus_to_exitcode(status)
        try:
            conn.sendall(f"exit {code if code >= 0 else 128 - code}\n".encode())
        except OSError:
            pass
        conn.close()


def _registered(selector, conn) -> bool:
    try:
        selector.get_key(conn)
        return True
    except KeyError:
        return False


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] job server: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    serve(sys.argv[1], preload=tuple(sys.argv[2:]) or PRELOAD)
