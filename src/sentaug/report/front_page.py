"""The report's front page (`make report`), from the data `sentaug cost all --front-page` writes
(`sentaug.pricing.report_data`): report/workflow.rst, then what was built (scale, data, backbones, commit), one
line per paper (how far its built tables are from the paper's numbers, linking to them), what is not built yet
(each table and figure with the command that builds it) and the bill's totals
(`sentaug.report.bill_page`, whose own page holds the full table).

Rule report_front_page writes it to <results>/report/front.<scale>.rst, which the Snakefile's `report:` takes
when it exists. Snakemake renders it as reStructuredText through Jinja, then shows it above the workflow graph
(report/style.css). A link opens an entry of the report as Snakemake's own links do (its `rst_links`).
"""
from __future__ import annotations

import csv
import json
import re
import statistics
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from ..io import atomic_path
from .bill_page import KINDS, bill_page_html, bill_totals, built_rows, hours, projected_rows, projection_words
from .pages import rst_escape

ROOT = Path(__file__).resolve().parents[3]
STATIC_PAGE = ROOT / "report" / "workflow.rst"
ORIGINS = {"demo": "the bundled demo data", "official": "the official data sets"}


def result_link(text: str, page: str) -> str:
    """An RST link that opens the report's entry of `page` (a report page's path, as its rule writes it)."""
    return f"`{rst_escape(text)} <javascript:app.showResultInfo('{quote(page)}')>`__"


def category_link(text: str, category: str) -> str:
    return f"`{rst_escape(text)} <javascript:app.showCategory('{quote(category)}')>`__"


def read_table(csv_file: str | Path) -> dict:
    """A paper table's CSV (sentaug.report.tables) as the front page counts it: `state` built, skipped (not
    built at this scale) or missing; the |Δ| of its cells against the paper's numbers; its build stamp."""
    path = Path(csv_file)
    if not path.is_file():
        return {"state": "missing", "deltas": []}
    with open(path, newline="", encoding="utf-8") as f:
        records = list(csv.DictReader(f))
    if any(r.get("skipped") for r in records):
        return {"state": "skipped", "deltas": []}
    stamp = records[0] if records else {}
    return {"state": "built", "deltas": [abs(float(r["diff"])) for r in records if r.get("diff")],
            **{k: stamp.get(k) for k in ("commit", "built", "machine")}}


def _natural(name: str) -> list:
    """table2 before table10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def paper_rows(data: dict) -> list[dict]:
    """Per paper: its tables (each read_table's summary, name and page) and the median |Δ| over the cells of its
    built tables."""
    rows = []
    for paper in data["papers"].values():
        tables = [{"name": name, "page": t["page"], "target": str(Path(t["csv"]).with_suffix(".tex")),
                   **read_table(t["csv"])}
                  for name, t in sorted(paper["tables"].items(), key=lambda kv: _natural(kv[0]))]
        for t in tables:
            t["median"] = statistics.median(t["deltas"]) if t["deltas"] else None
        deltas = [d for t in tables for d in t["deltas"]]
        rows.append({"short": paper["short"], "tables": tables, "cells": len(deltas),
                     "median": statistics.median(deltas) if deltas else None,
                     "figures": sum(Path(f["output"]).is_file() for f in paper["figures"].values()),
                     "figures_missing": [(name, f["output"]) for name, f in sorted(paper["figures"].items(),
                                                                                   key=lambda kv: _natural(kv[0]))
                                         if not Path(f["output"]).is_file()],
                     "figures_declared": len(paper["figures"])})
    return rows


def _list_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """An RST list-table of cells already in RST."""
    out = [".. list-table::", "   :header-rows: 1", "   :widths: auto", ""]
    for row in [header, *rows]:
        out.append("   * - " + row[0])
        out += [f"     - {cell}" for cell in row[1:]]
    return out + [""]


def _section(title: str) -> list[str]:
    return ["", title, "-" * len(title), ""]


def _stand_ins(stand_ins: dict) -> str:
    by_stand_in = {}
    for paper_backbone, stand_in in sorted(stand_ins.items()):
        by_stand_in.setdefault(stand_in, []).append(paper_backbone)
    return "; ".join(f"{s} for {', '.join(b)}" for s, b in sorted(by_stand_in.items()))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def built_section(data: dict, papers: list[dict]) -> list[str]:
    """The scale, its data and backbones; how many tables, figures and training runs are built; the commits and
    machines the tables were built from (their CSVs' build stamps)."""
    build, scale = data["build"], data["scale"]
    tables = [t for p in papers for t in p["tables"]]
    built = [t for t in tables if t["state"] == "built"]
    skipped = sum(t["state"] == "skipped" for t in tables)
    runs = [j for j in data["built"]["jobs"] if j["kind"] == "train"]
    figures = sum(p["figures"] for p in papers), sum(p["figures_declared"] for p in papers)
    backbones = ("the papers' backbones" if build.get("compares_with_papers")
                 else f"stand-in backbones {_stand_ins(build['stand_ins'])}")
    origin = ORIGINS.get(build["data"], build["data"])
    seeds = build["seeds"]
    e = rst_escape
    lines = [f"- **Scale {e(scale)}**: " + e(f"{backbones}; corpus {build['corpus']} ({origin}); "
                                           f"{_plural(len(seeds), 'seed')} ({', '.join(map(str, seeds))})."),
             f"- **Built**: {len(built)} of {_plural(len(tables), 'table')}"
             + (f" ({skipped} not built at this scale)" if skipped else "")
             + f", {figures[0]} of {_plural(figures[1], 'figure')}, {sum(j['built'] for j in runs)} of "
               f"{_plural(len(runs), 'training run')}."]
    missing = not_built(papers)
    if missing["tables"] or missing["figures"]:
        lines.append(f"- **Not built yet**: {_plural(len(missing['tables']), 'table')} and "
                     f"{_plural(len(missing['figures']), 'figure')}, each listed below with the command that "
                     f"builds it.")
    commits = Counter(t["commit"] for t in built if t.get("commit"))
    if commits:
        stamps = sorted(t["built"] for t in built if t.get("built"))
        machines = sorted({t["machine"] for t in built if t.get("machine")})
        which = ", ".join(_source(c) + (f" ({_plural(n, 'table')})" if len(commits) > 1 else "")
                          for c, n in commits.most_common())
        when = stamps[0] if stamps[0] == stamps[-1] else f"{stamps[0]} to {stamps[-1]}"
        word = "From release" if all(_is_release(c) for c in commits) else "From commit"
        lines.append(f"- **{word}** {which}: tables built {rst_escape(when)} on "
                     f"{rst_escape('; '.join(machines))}.")
    return _section("What was built") + lines


def _is_release(commit: str) -> bool:
    """A build stamp's `commit` of a copy without git history: its release's version (`v0.1.0`), or `unknown`
    as copies stamped before the version was recorded say."""
    return commit == "unknown" or bool(re.fullmatch(r"v\d+(\.\d+)*\S*", commit))


def _source(commit: str) -> str:
    """A build stamp's commit as the front page names it: the commit, or the release of a copy without git."""
    if commit == "unknown":
        from .. import __version__

        commit = f"v{__version__}"
    return f"``{commit}``" + (" (a copy without git history)" if _is_release(commit) else "")


def not_built(papers: list[dict]) -> dict:
    """The paper tables and figures not built yet (their files missing; a table skipped at this scale is built:
    its CSV says why), each with its target's path."""
    return {"tables": [(p["short"], t["name"], t["target"]) for p in papers for t in p["tables"]
                       if t["state"] == "missing"],
            "figures": [(p["short"], name, output) for p in papers for name, output in p["figures_missing"]]}


def command(target: str, flags: str = "") -> str:
    """The command that builds `target` at the build's settings (`flags`: its --config / --configfile)."""
    return f".venv/bin/snakemake {target} --cores all" + (f" {flags}" if flags else "")


def not_built_section(papers: list[dict], flags: str = "") -> list[str]:
    """Every table and figure not built yet, with the command that builds it and only what it needs; then
    `make report` again shows it."""
    missing = not_built(papers)
    rows = [[rst_escape(paper), rst_escape(name), f"``{command(target, flags)}``"]
            for kind in ("tables", "figures") for paper, name, target in missing[kind]]
    if not rows:
        return []
    return (_section("Not built yet")
            + ["Each command builds that output and only what it needs; ``make report`` (with the same "
               "``SNAKEFLAGS``) then adds its page. ``make demo`` (or ``make small``) builds them all.", ""]
            + _list_table(["paper", "output", "command"], rows))


def papers_section(papers: list[dict]) -> list[str]:
    rows = []
    for p in papers:
        built = [t for t in p["tables"] if t["state"] == "built"]
        links = " · ".join((rst_escape(t["name"]) + " (not built)" if t["state"] == "missing" else
                            result_link(t["name"], t["page"])
                            + (f" ({t['median']:.2f})" if t["median"] is not None else
                               " (not built at this scale)" if t["state"] == "skipped" else ""))
                           for t in p["tables"])
        shown = built or p["figures"]       # a paper with nothing built has no category in the report
        rows.append([category_link(p["short"], p["short"]) if shown else rst_escape(p["short"]),
                     f"{len(built)} of {len(p['tables'])}",
                     f"{p['median']:.2f} ({p['cells']} cells)" if p["median"] is not None else "–", links or "–"])
    return (_section("How far from the papers")
            + [rst_escape("The median |Δ| of a paper's cells: the absolute difference between each number built "
                          "and the paper's, over every cell of its built tables (each table's own in brackets). Open a "
                          "paper's tables from its name, or one table from the list."), ""]
            + _list_table(["paper", "tables built", "median \\|Δ\\| (cells)", "tables (median \\|Δ\\|)"], rows))


def bill_section(data: dict) -> list[str]:
    projected = bill_totals(projected_rows(data["projected"]["jobs"]))
    built = bill_totals(built_rows(data["built"]["jobs"]))
    header = ["device-hours", *KINDS.values(), "total"]
    on = f" on {', '.join(built['devices'])}" if built["devices"] else ""
    rows = [[f"projected, {data['projected']['scale']} scale ({_plural(projected['runs'], 'training run')})",
             *(hours(projected[k]) for k in KINDS), hours(projected["total"])],
            [f"taken by this build, {data['built']['scale']} scale ({built['built']} runs built{on})",
             *(hours(built[k]) for k in KINDS), hours(built["total"])]]
    return (_section("The bill")
            + _list_table(header, [[rst_escape(c) for c in row] for row in rows])
            + ["Projected: " + projection_words(data, code=lambda c: f"``{c}``", text=rst_escape)
               + ". Taken: on the devices the built jobs ran on. Jobs on the CPU (data, augmentations, tables, "
               "figures) are not counted. " + result_link("The full bill", data["bill_page"])
               + ", per backbone and method.", ""])


def front_page_rst(data: dict, static_page: Path = STATIC_PAGE, build_flags: str = "") -> str:
    papers = paper_rows(data)
    lines = [static_page.read_text(encoding="utf-8").rstrip(), "", *built_section(data, papers),
             *papers_section(papers), *not_built_section(papers, build_flags), *bill_section(data)]
    return "\n".join(lines).rstrip() + "\n"


def render_front_page(data_file: str, out: str, page: str, build_flags: str = "") -> None:
    """CLI entry: the front page (`out`, RST) and the bill's page (`page`, HTML) from the front page's data;
    `build_flags` (the build's --config) go into the commands that build what is missing."""
    data = json.loads(Path(data_file).read_text(encoding="utf-8"))
    with atomic_path(page) as tmp:
        tmp.write_text(bill_page_html(data), encoding="utf-8")
    with atomic_path(out) as tmp:
        tmp.write_text(front_page_rst(data, build_flags=build_flags), encoding="utf-8")
