"""What the Snakefile asks of the running Snakemake process, beside the paths of `sentaug.workflow`: the
environment its jobs inherit, the job server they start in, its local scheduler's settings, and the digest of the
code each rule runs.
"""
from __future__ import annotations

import ast
import atexit
import csv
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

from .io import sha256_file

PACKAGE = "sentaug"
_JOB_SERVER: list = []      # (process, its socket's folder) of the job server this process started


def drop_local_job_rate_limit(workflow) -> bool:
    """Drop Snakemake's job-rate limiter (`--max-jobs-per-timespan`) from a local run's scheduler, once it
    exists (an `onstart` hook: rules/common.smk); True if dropped.

    Why: in Snakemake 9.27 every pass of the scheduler loop arms a timer that runs the loop again after the
    limit's timespan, whatever woke it, so each job that starts or finishes adds a pass per timespan for the
    rest of the build. At the CLI's default (100/1s) a demo build's main process spent a third of a core
    re-selecting jobs (py-spy: job_selector, update_input_sizes; 4,543 passes in its first two minutes, and
    growing). A local run gains nothing from the limit (its cores bound it); the scheduler without one (as in
    a dry run) arms no timer. Cluster runs keep the limit: it spaces their submissions."""
    scheduler = getattr(workflow, "scheduler", None)
    if not workflow.local_exec or getattr(scheduler, "job_rate_limiter", None) is None:
        return False
    scheduler.job_rate_limiter = None
    return True


def share_gpus(workflow, runs_per_gpu: int, rule: str = "train"):
    """Let `runs_per_gpu` jobs of `rule` share one GPU (config `scales.<scale>.runs_per_gpu`); returns the value
    of the rule's `group:` directive. Snakemake has no setting for it, so this arranges it in each of the
    three places a job passes through (docs/cost-and-gpus.md):

    * On a cluster (the main process): the rule's jobs form a group, `runs_per_gpu` of them per group
      (`--group-components <rule>=k`, unless given on the command line or in the profile): each group is one
      SLURM job. A group adds its jobs' numeric resources up; the GPU is the string resource `gres` instead
      (sentaug.workflow.Paths.train_job_resources), so the SLURM job asks for one GPU, not k.
    * Inside that SLURM job (remote execution): the SLURM plugin starts Snakemake there with `--jobs 1` and its
      jobstep executor waits for each job's `srun` before it starts the next, and an `srun` step holds the
      job's GPU for itself (snakemake-executor-plugin-slurm#469): the k runs would run one after another.
      There the rule is made local (its jobs run in the SLURM job itself, all at once, on its GPU) and up
      to k jobs may run at a time.
    * Locally: at most k x the visible GPUs training jobs at once (resource `gpu_runs`, unless given with
      --resources), each pinned to one GPU with a free slot (sentaug.train.gpu_share, told k through the
      environment the jobs inherit).

    The group's components are set when Snakemake first asks for a job's group: the command line's group
    settings replace the workflow's after the Snakefile is read."""
    from .train.gpu_share import ENV_RUNS_PER_GPU, visible_gpus

    if runs_per_gpu <= 1:
        return None
    os.environ[ENV_RUNS_PER_GPU] = str(runs_per_gpu)     # the jobs inherit it
    if workflow.remote_exec:
        workflow.localrules(rule)
        workflow.register_resource("_nodes", runs_per_gpu)
        return None
    if workflow.resource_settings.nodes is None:        # local execution (a cluster run sets --jobs: nodes)
        gpus = visible_gpus()
        if gpus and "gpu_runs" not in workflow.global_resources:
            workflow.register_resource("gpu_runs", runs_per_gpu * len(gpus))

    def group(wildcards) -> str:
        settings = workflow.group_settings
        if rule not in settings.group_components:
            settings.group_components = {**settings.group_components, rule: runs_per_gpu}
        return rule

    return group


def start_job_server(workflow, enabled: bool, log: str) -> bool:
    """Start the fork server that runs this local run's `python -m sentaug.cli` jobs with the heavy modules
    imported once (sentaug.job_server), where the scale enables it (`scales.<scale>.job_server`); an `onstart`
    hook (rules/common.smk). True if started. The jobs find it through $SENTAUG_JOB_SERVER, which they
    inherit; until it has imported (a few seconds) they run as before, each in its own process. Not on a
    cluster: each job there is a process of its own on its node. `stop_job_server` (onsuccess, onerror, and at
    exit) ends it; it also ends by itself when this process does."""
    from .job_server import ENV_SOCKET

    if not enabled or not workflow.local_exec or workflow.remote_exec or _JOB_SERVER:
        return False
    folder = tempfile.mkdtemp(prefix="sentaug-jobs-")
    os.environ[ENV_SOCKET] = os.path.join(folder, "socket")
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as err:
        _JOB_SERVER.append((subprocess.Popen([sys.executable, "-m", "sentaug.job_server", os.environ[ENV_SOCKET]],
                                             stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                             start_new_session=True), folder))
    atexit.register(stop_job_server)
    return True


def stop_job_server() -> None:
    """End the job server of `start_job_server`, if any (the forks still running end with it)."""
    from .job_server import ENV_SOCKET

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


def announce_first_table(tables: str, then: str, interval_s: float = 2.0) -> None:
    """Print the path of the first table this run writes (a table built at this scale, not one saying it is not),
    and what to open when the run is done (`then`): an `onstart` hook, so a long build says early where its
    results are. A daemon thread looks at the CSV files under `tables` every `interval_s` seconds."""
    folder = Path(tables)
    before = {p: p.stat().st_mtime_ns for p in folder.glob("**/*.csv")}

    def watch():
        while True:
            time.sleep(interval_s)
            for csv_file in sorted(folder.glob("**/*.csv")):
                try:
                    new = before.get(csv_file) != csv_file.stat().st_mtime_ns
                except FileNotFoundError:
                    continue
                if new and _table_built(csv_file):
                    tex = csv_file.with_suffix(".tex")
                    print(f"\nFirst table written: {tex if tex.exists() else csv_file} (numbers in "
                          f"{csv_file.name}); when the build is done: {then}\n", file=sys.stderr, flush=True)
                    return
                before[csv_file] = csv_file.stat().st_mtime_ns

    threading.Thread(target=watch, name="announce_first_table", daemon=True).start()


def _table_built(csv_file: Path) -> bool:
    """A table's CSV has a row built at this scale (a table not built here has only rows saying why: `skipped`)."""
    try:
        with csv_file.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, csv.Error, UnicodeDecodeError):
        return False
    return any(not row.get("skipped") for row in rows)


def export_job_environment(src: Path, python: str) -> None:
    """Make jobs import this checkout's `src` and run `python` from the interpreter running Snakemake (e.g.
    .venv/bin/snakemake without an activated venv). Snakemake passes its environment to every job (also to
    SLURM jobs: sbatch --export=ALL); with --software-deployment-method conda the rule's environment is put in
    front of this PATH, and SENTAUG_ROOT (the checkout) is where envs/*.yaml install sentaug from."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    os.environ["SENTAUG_ROOT"] = str(Path(src).resolve().parent)
    os.environ["PATH"] = os.pathsep.join([str(Path(python).parent), os.environ.get("PATH", "")])


# A wildcard pattern that matches no path: rule moved_target's when no output moved.
NO_PATH = "(?!)"


def moved_target_pattern(results: str) -> str:
    """The paths under `results/` that no rule makes when `--config results=` moved every output to `results`
    (those not under it), as the wildcard pattern of rule moved_target; NO_PATH when nothing moved."""
    import re

    results = os.path.normpath(results)
    if results == "results":
        return NO_PATH
    inside = results.removeprefix("results" + os.sep) if results.startswith("results" + os.sep) else None
    return f"(?!{re.escape(inside)}/).+" if inside else ".+"


def moved_target(results: str, path: str):
    """Rule moved_target's input function: `results/<path>` was asked for, but `--config results=` put every
    output under `results`. Ends the run with the one-line answer (sentaug.choices.Answer: Snakemake would
    wrap any other exception raised here in a traceback)."""
    from .choices import Answer

    results = os.path.normpath(results)
    raise Answer(f"results/{path}: with --config results={results} every output is under {results}/: ask for "
                 f"{results}/{path}")


def code_digest(src: Path, *entries: str, skip: tuple[str, ...] = ()) -> str:
    """A digest of everything of the package a rule's jobs run (`code_files`), given to the rule as a
    parameter: Snakemake reruns a job whose parameters changed, so editing a module reruns the jobs that run
    it, and no others. A module counts by its syntax tree without docstrings: a comment, a docstring or a
    re-wrapped line reruns nothing, and neither does a checkout that only touches files (the digest reads
    content, not times). A data file counts by its bytes."""
    return _code_digest(Path(src).resolve(), entries, tuple(skip))


def code_files(src: Path, *entries: str, skip: tuple[str, ...] = ()) -> list[str]:
    """The files of the package a rule's jobs run. Each entry is a path under `src/sentaug`: a module, a data
    file, or a folder standing for every file in it; or the absolute path of a plugin's module (outside the
    package, `augmentation_module`). A module brings everything it runs (`module_closure`). `skip` leaves out
    paths under `src/sentaug` that the jobs never read (the bundled demo data, when a download goes to the
    official source)."""
    return [str(f) for f in _code_files(Path(src).resolve(), entries, tuple(skip))]


def augmentation_module(name: str) -> str:
    """The module that registers augmentation `name`, as a path under `src/sentaug`, or for a plugin (an
    augmentation from outside the package) the absolute path of its module: the registry imports its modules
    by name, which `module_closure` cannot follow, so a cache's rule names it."""
    import sys

    module = plugin_module(name)
    if module is not None:
        return str(Path(sys.modules[module].__file__).resolve())
    from .augment import registry

    return registry.get(name).fn.__module__.removeprefix(f"{PACKAGE}.").replace(".", "/") + ".py"


def plugin_module(name: str) -> str | None:
    """The module (dotted name) that registers augmentation `name` when a plugin does, None for sentaug's own."""
    from .augment import registry

    module = registry.get(name).fn.__module__
    return None if module.split(".")[0] == PACKAGE else module


def module_closure(module: Path) -> tuple[Path, ...]:
    """`module` and what it runs of its top-level package (and of sentaug, for a plugin's module), found from
    the source without importing anything: the package modules it imports, at module level or inside a function
    (the command line's handlers import lazily), the `__init__.py` of every package on the way (Python runs
    them on import), and the package data it opens by a constant path (`resources.files("sentaug") /
    "resources" / "wordlists"`: that folder). A module named by a string at run time
    (`importlib.import_module(name)`) is not followed."""
    module = Path(module).resolve()
    return _module_closure(module, _package_root(module))


@lru_cache(maxsize=None)
def _code_digest(src: Path, entries: tuple[str, ...], skip: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for f in _code_files(src, entries, skip):
        h.update(f"{_digest_name(f, src)}\0{_file_digest(f)}\0".encode())
    return h.hexdigest()[:16]


def _digest_name(path: Path, src: Path) -> str:
    """A file as the digest names it: relative to `src` (sentaug/...), or a plugin's relative to the folder of its
    top-level package (my_plugin/...): where it is installed does not matter."""
    if path.is_relative_to(src):
        return path.relative_to(src).as_posix()
    return path.relative_to(_package_root(path).parent).as_posix()


@lru_cache(maxsize=None)
def _code_files(src: Path, entries: tuple[str, ...], skip: tuple[str, ...]) -> tuple[Path, ...]:
    root = src / PACKAGE
    files: set[Path] = set()
    for entry in entries:
        for path in _files(root / entry):      # an absolute entry (a plugin's module) stays itself
            files |= set(_module_closure(path, root)) if path.suffix == ".py" else {path}
    return tuple(sorted(f for f in files if not any(f.is_relative_to(root / s) for s in skip)))


def _package_root(module: Path) -> Path:
    """The folder of the top-level package holding `module` (src/sentaug for ours), or the module itself when it
    is a top-level module."""
    root = module
    while (root.parent / "__init__.py").is_file():
        root = root.parent
    return root


@lru_cache(maxsize=None)
def _module_closure(module: Path, host: Path) -> tuple[Path, ...]:
    """The closure of `module` within its own top-level package and the `host` package (sentaug's folder), which
    a plugin imports the registry from."""
    roots = {r.stem: r for r in (host, _package_root(module))}
    closure: set[Path] = set()
    todo = [module]
    while todo:
        path = todo.pop()
        if path in closure:
            continue
        closure.add(path)
        if path.suffix == ".py":
            modules, data = _references(path, tuple(roots.items()))
            todo += modules
            for d in data:
                closure.update(_files(d))
    return tuple(sorted(closure))


def _files(path: Path) -> list[Path]:
    """A file, or every file under a folder (compiled caches left out)."""
    if not path.is_dir():
        return [path]
    return sorted(f for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)


@lru_cache(maxsize=None)
def _syntax_tree(path: Path) -> ast.Module:
    """The module's syntax tree without its docstrings (what it does, not what it says)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            node.body = node.body[1:]
    return tree


@lru_cache(maxsize=None)
def _file_digest(path: Path) -> str:
    if path.suffix != ".py":
        return sha256_file(path)
    return hashlib.sha256(ast.dump(_syntax_tree(path)).encode()).hexdigest()


@lru_cache(maxsize=None)
def _references(path: Path, roots: tuple[tuple[str, Path], ...]) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(package modules, package data paths) that the module at `path` refers to, parents' `__init__.py`
    included, in the top-level packages `roots` ((name, folder) pairs; a top-level module is its own file).
    Cached: every closure that reaches a module reads its references (a paper-scale dry run's 40 digests walked
    580 syntax trees; the package has 92 modules)."""
    by_name = dict(roots)
    top, root = next((n, r) for n, r in roots if path.is_relative_to(r))
    parts = [top, *path.relative_to(root).with_suffix("").parts] if root != path else [top]
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-2] + [parts[-2]]
    names = {".".join(package[:i]) for i in range(1, len(package) + 1)}      # the packages on the way
    data: list[Path] = []
    inner: set[int] = set()                 # nested divisions of a path already read whole
    lazy = _lazy_attribute_nodes(_syntax_tree(path)) if path.name == "__init__.py" else set()
    for node in ast.walk(_syntax_tree(path)):
        if id(node) in lazy:
            continue
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)   # `from . import wordnet` names a module
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and id(node) not in inner:
            found = _package_data(_division_chain(node, inner), by_name)
            if found is not None:
                data.append(found)
    modules = tuple(f for name in names if (f := _module_file(name, by_name)) is not None and f != path)
    return modules, tuple(data)


def _lazy_attribute_nodes(tree: ast.Module) -> set[int]:
    """The nodes of a package's module-level `__getattr__` (PEP 562): importing the package, or any module in it,
    does not run it; only asking the package for the attribute does (`from sentaug.evaluate import evaluate`, the
    Python API, which no rule's command does). Following its imports would put the API's whole closure into every
    evaluation job's digest."""
    return {id(node) for fn in tree.body if isinstance(fn, ast.FunctionDef) and fn.name == "__getattr__"
            for node in ast.walk(fn)}


def _division_chain(node: ast.BinOp, inner: set[int]) -> list[ast.expr]:
    """The operands of `a / b / c` in order, marking the nested divisions as read."""
    if isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Div):
        inner.add(id(node.left))
        return _division_chain(node.left, inner) + [node.right]
    return [node.left, node.right]


def _package_data(operands: list[ast.expr], roots: dict[str, Path]) -> Path | None:
    """The path under a package of `roots` that `resources.files("sentaug[.sub]") / "a" / "b" / name` opens, up
    to its last constant part ("a/b"), if it exists; None for any other division."""
    head, *rest = operands
    if not (isinstance(head, ast.Call) and _called_name(head.func) == "files" and head.args
            and isinstance(head.args[0], ast.Constant) and isinstance(head.args[0].value, str)
            and roots.get(head.args[0].value.split(".")[0], Path("-")).is_dir()):
        return None
    top, *subpackages = head.args[0].value.split(".")
    root = roots[top]
    path = root.joinpath(*subpackages)
    for part in rest:
        if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
            break
        path = path / part.value
    return path if path.exists() and path != root else None


def _called_name(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _module_file(name: str, roots: dict[str, Path]) -> Path | None:
    """The file of module `name` of a package in `roots` (`sentaug.a.b` -> a/b.py or a/b/__init__.py), None
    outside them."""
    parts = name.split(".")
    root = roots.get(parts[0])
    if root is None or root.is_file():          # another package's, or a top-level module (itself)
        return root if root is not None and len(parts) == 1 else None
    base = root.joinpath(*parts[1:])
    for candidate in ([base.with_suffix(".py")] if len(parts) > 1 else []) + [base / "__init__.py"]:
        if candidate.is_file():
            return candidate
    return None
