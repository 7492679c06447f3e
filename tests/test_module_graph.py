"""The package's modules import one another without a circle: each module's imports (at module level or inside
a function, as `sentaug.snakemake_hooks.code_digest` follows them) form a graph with no cycle, found from the
source alone."""
import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def import_graph(src: Path) -> dict[str, set[str]]:
    """module -> the package modules it imports (`from . import sub` imports `sub`, not its package)."""
    files = {}
    for f in sorted((src / "sentaug").rglob("*.py")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph: dict[str, set[str]] = {}
    for module, f in files.items():
        package = module.split(".") if f.name == "__init__.py" else module.split(".")[:-1]
        graph[module] = set()
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                    if node.level else node.module
                subs = [f"{base}.{a.name}" for a in node.names]
                names = [s for s in subs if s in files] + ([base] if any(s not in files for s in subs) else [])
            else:
                continue
            graph[module] |= {n for n in names if n in files and n != module}
    return graph


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


def test_the_circle_finder_on_a_hand_made_graph():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_the_command_line_and_what_it_serves_import_no_circle():
    graph = import_graph(SRC)
    assert {"sentaug.cli", "sentaug.docgen", "sentaug.job_server", "sentaug.config.spec", "sentaug.parts.registry"} \
        <= set(graph)
    assert "sentaug.docgen" in graph["sentaug.cli"] and "sentaug.cli" not in graph["sentaug.docgen"]
    assert circles(graph) == []
