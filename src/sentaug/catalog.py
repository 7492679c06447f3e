"""`sentaug list tables|figures|methods|augmentations|parts`: what the workflow can build, each target's path, and
whether it is built and at which scale.

Everything is read from the configuration (config.yaml, papers/*.yaml) and from the outputs themselves, never
from a record of its own: a table's or figure's CSV holds its scale in a column; a run folder's path names its
scale (results/runs/<scale>/...); an augmentation cache's path names its corpus, which names the scales that
train on it. Tables and figures have one path at every scale (the last scale built wins), runs and caches one
per scale.
"""
from __future__ import annotations

import datetime
from pathlib import Path

KINDS = ("tables", "figures", "methods", "augmentations", "parts")
NOT_BUILT = "not built"


def _date(path: Path) -> str:
    return datetime.datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")


def output_state(target: Path) -> str:
    """Whether a table or figure (`target`: its .tex or .pdf) is built, at which scale and when: its CSV's
    `scale` column (a table not built at that scale says so in a `skipped` column)."""
    import pandas as pd

    csv = target.with_suffix(".csv")
    if not target.exists():
        return NOT_BUILT
    if not csv.exists():
        return f"built {_date(target)} (scale not recorded)"
    frame = pd.read_csv(csv, nrows=1)
    scale = frame["scale"].iat[0] if "scale" in frame.columns and len(frame) else "?"
    if "skipped" in frame.columns and isinstance(frame["skipped"].iat[0], str):
        return f"{scale}: skipped, {frame['skipped'].iat[0]} ({_date(target)})"
    return f"{scale} ({_date(target)})"


def table_rows(wf) -> list[dict]:
    """Every paper table, the leaderboards and the configuration's comparisons."""
    rows = [{"name": f"{p}/{t}", "what": spec.get("caption", ""),
             "path": wf.paths.path("table", paper=p, table=t, ext="tex")}
            for p, paper in wf.papers.items() for t, spec in paper.get("tables", {}).items()]
    rows += [{"name": board, "what": f"leaderboard on {backbone}",
              "path": wf.paths.path("board_table", board=board, ext="tex")}
             for board, backbone in wf.leaderboards.items()]
    rows += [{"name": f"compare/{name}", "what": "your comparison (config key comparisons)",
              "path": wf.paths.path("comparison", name=name, ext="tex")} for name in wf.comparisons]
    return [{**r, "built": output_state(Path(r["path"]))} for r in rows]


def figure_rows(wf) -> list[dict]:
    rows = [{"name": f"{p}/{f}", "what": spec.get("caption", ""),
             "path": wf.paths.path("figure", paper=p, figure=f, ext="pdf")} for p, paper in wf.papers.items()
            for f, spec in paper.get("figures", {}).items()]
    rows += [{"name": board, "what": f"leaderboard on {backbone}",
              "path": wf.paths.path("board_figure", board=board, ext="pdf")}
             for board, backbone in wf.leaderboards.items()]
    return [{**r, "built": output_state(Path(r["path"]))} for r in rows]


def _scales_of(found: dict[str, int]) -> str:
    return ", ".join(f"{scale} ({n} run{'s' * (n != 1)})" for scale, n in sorted(found.items())) or NOT_BUILT


def method_rows(wf) -> list[dict]:
    """Every declared method: what it trains with, where its runs go, and the scales it has runs at (a run is
    built when its folder holds train_summary.json; variants `<method>~key=value` count with their method)."""
    runs: dict[str, dict[str, int]] = {}
    for run in wf.paths.found("run"):
        if not run["seed"].isdigit() or not Path(wf.paths.path("run", **run), "train_summary.json").is_file():
            continue        # <run>.partial: an unfinished run
        method = run["method"].split("~")[0]
        runs.setdefault(method, {}).setdefault(run["scale"], 0)
        runs[method][run["scale"]] += 1
    rows = []
    for name, method in wf.config["methods"].items():
        positive = method.get("positive", {})
        what = positive.get("source", "?") + (f": {positive['augmentation']}" if positive.get("augmentation") else "")
        negatives = method.get("negatives", "in_batch")
        if isinstance(negatives, dict):
            what += f"; negatives: {negatives.get('source')}"
        what += "".join(f"; +{o['name']}" for o in method.get("objectives") or [])   # {name: ..., weight: ...}
        rows.append({"name": name, "what": what,
                     "path": wf.paths.path("run", scale="<scale>", paper="<paper>", backbone="<backbone>", method=name,
                                     seed="<S>"),
                     "built": _scales_of(runs.get(name, {}))})
    return rows


def augmentation_rows(wf) -> list[dict]:
    """The declared augmentations (config key augmentations: a cache per corpus and seed), then every registered
    operation no declaration uses yet (plugins included), which a configuration of your own can declare."""
    from . import config as sc
    from .augment import registry

    registry.load_modules(sc.augment_modules(wf.config))
    corpora: dict[str, list[str]] = {}    # corpus -> the scales training on it
    for scale, settings in wf.config["scales"].items():
        for key in ("corpus", "corpus_zh"):
            if settings.get(key):
                corpora.setdefault(settings[key], []).append(scale)
    rows, used = [], set()
    for name, declared in wf.config["augmentations"].items():
        used.add(declared["op"])
        built = sorted({f"{'/'.join(corpora.get(c['corpus'], ['?']))} ({c['corpus']})"
                        for c in wf.paths.found("cache", augmentation=name)})
        params = ", ".join(f"{k}={v}" for k, v in declared.items() if k != "op")
        rows.append({"name": name, "what": declared["op"] + (f" ({params})" if params else ""),
                     "path": wf.paths.path("cache", corpus="<corpus>", augmentation=name, seed="<S>"),
                     "built": ", ".join(built) or NOT_BUILT})
    for op in registry.names():
        if op not in used:
            aug = registry.get(op)
            origin = "" if aug.origin == registry.BUILT_IN else f"plugin {aug.fn.__module__}; "
            rows.append({"name": op, "what": f"{origin}{aug.family}: {aug.description}",
                         "path": "(an operation: declare it under augmentations: to build a cache)", "built": "-"})
    return rows


def part_rows(wf) -> list[dict]:
    """Every registered method part (sentaug.parts; plugins included), by kind, with its settings and defaults:
    what a method of your own can name."""
    from . import config as sc
    from . import parts

    parts.load_modules(sc.part_modules(wf.config))
    rows = []
    for kind, k in parts.KINDS.items():
        for name in parts.names(kind):
            part = parts.get(kind, name)
            settings = ", ".join(f"{s}={p.default}" for s, p in {**k.common, **part.params}.items())
            origin = "" if part.origin == "sentaug" else f"plugin {part.__module__}; "
            rows.append({"name": name, "what": f"{k.noun}; {origin}{part.description}"
                                               + (f" ({settings})" if settings else ""),
                         "path": f"{k.key}: " + (f"[{{{k.field}: {name}}}]" if k.many else f"{{{k.field}: {name}}}"),
                         "built": "-"})
    return rows


ROWS = {"tables": table_rows, "figures": figure_rows, "methods": method_rows, "augmentations": augmentation_rows,
        "parts": part_rows}


def format_rows(rows: list[dict], width: int = 60) -> str:
    """Aligned columns NAME, BUILT, PATH, then WHAT cut to `width` characters."""
    cut = [{**r, "what": r["what"] if len(r["what"]) <= width else r["what"][:width - 3] + "..."} for r in rows]
    keys = ("name", "built", "path", "what")
    widths = {k: max([len(k)] + [len(str(r[k])) for r in cut]) for k in keys[:-1]}
    lines = ["  ".join(k.upper().ljust(widths.get(k, 0)) for k in keys).rstrip()]
    lines += ["  ".join(str(r[k]).ljust(widths.get(k, 0)) for k in keys).rstrip() for r in cut]
    return "\n".join(lines)


def cmd_list(a):
    from . import config as sc
    from .workflow import Workflow

    if not Path(a.config).is_file():
        raise FileNotFoundError(f"{a.config}: no configuration here (run `sentaug list` in the checkout, or give "
                                f"--config)")
    config = sc.load_yaml(a.config)
    sc.validate(config)       # a bad key is named, as the Snakefile names it
    wf = Workflow(config, results=a.results)
    print(format_rows(ROWS[a.what](wf)))


def add_list_command(sub) -> None:
    ls = sub.add_parser("list", help="what the workflow can build (tables, figures, methods, augmentations): "
                                     "each target's path, and the scale it is built at; or the parts a method "
                                     "can name (parts)")
    ls.add_argument("what", choices=KINDS, metavar="KIND", help=", ".join(KINDS))
    ls.add_argument("--config", default="config.yaml", help="the workflow's configuration (default: config.yaml)")
    ls.add_argument("--results", default="results", help="the results folder (default: results)")
    ls.set_defaults(func=cmd_list)
