"""The package's modules import one another without a circle, and its packages stand in layers: each module's
imports (at module level or inside a function, as `sentaug.snakemake_hooks.code_digest` follows them, and
`importlib.import_module` of a module named by a constant) form a graph with no cycle, found from the source
alone; collapsed to the top-level packages and modules under sentaug it has no loop either, and no package
imports one of a layer above its own (`LAYERS`)."""
import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# The top-level packages and modules of sentaug, bottom layer first: a module may import its own layer's and those
# below, never one above. The order is the work's: what every stage uses (files, choices, declared settings, the
# command line's arguments), the data, the models that embed it, the augmentations of it (some run models), the
# retrieval indexes, the method's parts (their interface, registry and sources) and the objectives that are parts
# too, the configuration that composes them, training, then the evaluation of trained models and the report of
# the results, and on top what runs it all: the workflow, the pricing of its jobs (which reads its DAG), the
# Snakefile's hooks, the listings and docs, the command line. (The parts registry imports the objectives by
# listing their folder, as it imports plugins: a name found at run time, which this graph does not follow.)
LAYERS = (
    ("sentaug", "io", "choices", "progress", "plugins", "params", "intermediates", "correlation", "cli_args",
     "job_server"),
    ("data",),
    ("models",),
    ("augment",),
    ("index",),
    ("parts",),
    ("objectives",),
    ("config",),
    ("train",),
    ("evaluate",),
    ("report",),
    ("workflow",),
    ("pricing",),
    ("snakemake_hooks", "catalog", "docgen"),
    ("cli",),
)
# Imports allowed against the layers, (importer, imported) -> why. None today.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def import_graph(src: Path, package: str = "sentaug") -> dict[str, set[str]]:
    """module -> the package modules it imports (`from . import sub` imports `sub`, not its package), and those
    it imports by `importlib.import_module` (or `__import__`) of a constant name: a string, an f-string of
    constants, or a module-level name bound to a string."""
    files = {}
    for f in sorted((src / package).rglob("*.py")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph: dict[str, set[str]] = {}
    for module, f in files.items():
        package_parts = module.split(".") if f.name == "__init__.py" else module.split(".")[:-1]
        tree = ast.parse(f.read_text(encoding="utf-8"))
        constants = _string_constants(tree)
        graph[module] = set()
        for node in ast.walk(tree):          # every node: imports inside functions too
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package_parts[:len(package_parts) - node.level + 1]
                                + ([node.module] if node.module else [])) if node.level else node.module
                subs = [f"{base}.{a.name}" for a in node.names]
                names = [s for s in subs if s in files] + ([base] if any(s not in files for s in subs) else [])
            elif isinstance(node, ast.Call) and _imports_by_name(node) and node.args:
                name = _constant_string(node.args[0], constants)
                if name is not None and name.startswith("."):      # import_module(".sub", __package__)
                    level = len(name) - len(name.lstrip("."))
                    name = ".".join(package_parts[:len(package_parts) - level + 1] + [name.lstrip(".")])
                names = [name] if name else []
            else:
                continue
            graph[module] |= {n for n in names if n in files and n != module}
    return graph


def _imports_by_name(call: ast.Call) -> bool:
    """`importlib.import_module(...)`, `import_module(...)` or `__import__(...)`."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return name in ("import_module", "__import__")


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """The module-level names bound once to a string: `CLI = "sentaug.cli"`."""
    bound: dict[str, list] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
    return {k: v[0].value for k, v in bound.items()
            if len(v) == 1 and isinstance(v[0], ast.Constant) and isinstance(v[0].value, str)}


def _constant_string(node: ast.expr, constants: dict[str, str]) -> str | None:
    """The string `node` always is, or None when it depends on the run."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = [_constant_string(v.value if isinstance(v, ast.FormattedValue) else v, constants)
                 for v in node.values]
        return None if None in parts else "".join(parts)
    return None


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                on.discard(group[-1])
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def unit(module: str) -> str:
    """The top-level package or module under sentaug that `module` belongs to ("sentaug" for the package's own
    `__init__`): sentaug.train.trainer -> train."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph collapsed to the top-level packages and modules (`unit`), without self-imports."""
    collapsed: dict[str, set[str]] = {unit(m): set() for m in graph}
    for m, imported in graph.items():
        collapsed[unit(m)] |= {unit(d) for d in imported if unit(d) != unit(m)}
    return collapsed


def loops_with_edges(graph: dict[str, set[str]]) -> list[str]:
    """Each loop of the package graph, with the module imports that make each of its edges."""
    found = []
    for group in circles(package_graph(graph)):
        edges = [f"{m} -> {d}" for m in sorted(graph) for d in sorted(graph[m])
                 if unit(m) in group and unit(d) in group and unit(m) != unit(d)]
        found.append(f"{{{', '.join(group)}}}: " + "; ".join(edges))
    return found


def upward_imports(graph: dict[str, set[str]], layers=LAYERS, allowed=ALLOWED_UPWARD) -> list[str]:
    """Each import of a module from a layer above its own, naming both modules and both layers; a package or
    module in no layer is reported too (a new one must be given its place)."""
    rank = {name: i for i, layer in enumerate(layers) for name in layer}
    found = [f"{m}: its package '{unit(m)}' is in no layer of LAYERS" for m in sorted(graph) if unit(m) not in rank]
    for m in sorted(graph):
        for d in sorted(graph[m]):
            if unit(m) in rank and unit(d) in rank and rank[unit(m)] < rank[unit(d)] and (m, d) not in allowed:
                found.append(f"{m} (layer {rank[unit(m)]}, {unit(m)}) imports {d} (layer {rank[unit(d)]}, "
                             f"{unit(d)}), a layer above")
    return found


def test_the_circle_finder_on_a_hand_made_graph():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_the_command_line_and_what_it_serves_import_no_circle():
    graph = import_graph(SRC)
    assert {"sentaug.cli", "sentaug.docgen", "sentaug.job_server", "sentaug.config.spec", "sentaug.parts.registry"} \
        <= set(graph)
    assert "sentaug.docgen" in graph["sentaug.cli"] and "sentaug.cli" not in graph["sentaug.docgen"]
    assert "sentaug.evaluate.service" in graph["sentaug.cli"]     # imported under `if __name__ == "__main__"`
    assert circles(graph) == []


def test_the_packages_import_no_loop():
    assert loops_with_edges(import_graph(SRC)) == []


def test_no_package_imports_a_layer_above_its_own():
    assert upward_imports(import_graph(SRC)) == []


def test_every_top_level_package_and_module_has_one_layer():
    names = [name for layer in LAYERS for name in layer]
    assert len(names) == len(set(names))
    graph = import_graph(SRC)
    assert set(names) == {unit(m) for m in graph}
    for (importer, imported), why in ALLOWED_UPWARD.items():     # an exception says why, and is still needed
        assert why and imported in graph[importer], (importer, imported)


# The test of the tests: a made-up package with an upward import, a circle, and imports the walk must follow.
def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "src"


MADE_UP_LAYERS = (("sentaug", "io"), ("data",), ("train",), ("cli",))


def test_an_upward_import_inside_a_function_is_found_and_named(tmp_path):
    src = _write(tmp_path, {
        "sentaug/__init__.py": "", "sentaug/io.py": "", "sentaug/cli.py": "from .data import load\n",
        "sentaug/data/__init__.py": "def load():\n    from ..train.loop import run\n",
        "sentaug/train/__init__.py": "", "sentaug/train/loop.py": "from ..io import *\n"})
    graph = import_graph(src)
    assert graph["sentaug.data"] == {"sentaug.train.loop"} and graph["sentaug.train.loop"] == {"sentaug.io"}
    assert upward_imports(graph, MADE_UP_LAYERS) == [
        "sentaug.data (layer 1, data) imports sentaug.train.loop (layer 2, train), a layer above"]
    assert upward_imports(graph, MADE_UP_LAYERS, {("sentaug.data", "sentaug.train.loop"): "why"}) == []
    assert upward_imports(graph, MADE_UP_LAYERS[1:])[:2] == [
        "sentaug: its package 'sentaug' is in no layer of LAYERS", "sentaug.io: its package 'io' is in no layer "
        "of LAYERS"]


@pytest.mark.parametrize("call", [
    'importlib.import_module("sentaug.cli")', "importlib.import_module(CLI)", 'import_module(f"sentaug.{NAME}")',
    'importlib.import_module(".cli", __package__)', '__import__("sentaug.cli")'])
def test_a_circle_through_importlib_is_found_and_named(tmp_path, call):
    src = _write(tmp_path, {
        "sentaug/__init__.py": "", "sentaug/cli.py": "from . import server\n",
        "sentaug/server.py": f'import importlib\nfrom importlib import import_module\nCLI = "sentaug.cli"\n'
                             f'NAME = "cli"\n\ndef run():\n    return {call}.main()\n'})
    graph = import_graph(src)
    assert graph["sentaug.server"] == {"sentaug.cli"}
    assert circles(graph) == [["sentaug.cli", "sentaug.server"]]
    assert loops_with_edges(graph) == ["{cli, server}: sentaug.cli -> sentaug.server; sentaug.server -> sentaug.cli"]
    assert upward_imports(graph, (("sentaug", "server"), ("cli",))) == [
        "sentaug.server (layer 0, server) imports sentaug.cli (layer 1, cli), a layer above"]


def test_a_name_known_only_at_run_time_is_not_followed(tmp_path):
    src = _write(tmp_path, {
        "sentaug/__init__.py": "", "sentaug/cli.py": "from . import server\n",
        "sentaug/server.py": "import importlib\n\ndef run(request):\n"
                             "    return importlib.import_module(request['main']).main()\n"})
    assert import_graph(src)["sentaug.server"] == set()


def test_a_loop_between_packages_is_found_though_their_modules_make_no_circle(tmp_path):
    src = _write(tmp_path, {
        "sentaug/__init__.py": "", "sentaug/a/__init__.py": "", "sentaug/b/__init__.py": "",
        "sentaug/a/x.py": "from ..b import y\n", "sentaug/b/y.py": "", "sentaug/b/z.py": "from ..a import w\n",
        "sentaug/a/w.py": ""})
    graph = import_graph(src)
    assert circles(graph) == []
    assert loops_with_edges(graph) == ["{a, b}: sentaug.a.x -> sentaug.b.y; sentaug.b.z -> sentaug.a.w"]
