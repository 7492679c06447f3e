"""The digest of the code each rule's jobs run (`code_digest`, a rule's `code` parameter): Snakemake reruns a
job whose parameters changed, so editing a module reruns the jobs that run it, and no others."""
from __future__ import annotations

import ast
import hashlib
from functools import lru_cache
from pathlib import Path

from ..io import sha256_file

PACKAGE = "sentaug"


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
    module = plugin_module(name)
    if module is not None:
        return plugin_file(module)
    from ..augment import registry

    return registry.get(name).fn.__module__.removeprefix(f"{PACKAGE}.").replace(".", "/") + ".py"


def plugin_file(module: str) -> str:
    """The absolute path of an imported plugin module (a code digest's entry for it)."""
    import sys

    return str(Path(sys.modules[module].__file__).resolve())


def part_plugin_modules(spec: dict) -> list[str]:
    """The modules (dotted names) of the plugins that register a part of the run `spec` (`sentaug.parts`), in
    the order of its parts: its training job imports them (`sentaug train --module`) and digests their code."""
    from ..parts import compose

    modules = [type(part).__module__ for part in compose(spec).parts]
    return list(dict.fromkeys(m for m in modules if m.split(".")[0] != PACKAGE))


def plugin_module(name: str) -> str | None:
    """The module (dotted name) that registers augmentation `name` when a plugin does, None for sentaug's own."""
    from ..augment import registry

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
