"""Render a paper table (declared in papers/<paper>.yaml) from result files: LaTeX + CSV.

Each reproduced cell is the mean ± sample standard deviation over seeds, shown next to the number the
paper reports (± `paper_sd` where a row gives the paper's own standard deviations) and the difference.
Tables built below paper scale say so in their caption. Optional table keys: `headers` (printed instead of
the column keys), `format` (Python format spec of the cells, default ".2f") and `digits` (rounding of the
CSV values, default 2; null keeps 6 significant digits, e.g. for learning rates).
"""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from ..config import ADDED_NOTE, add_table_rows, iter_rows, load_yaml
from ..intermediates import read_result
from ..io import atomic_path
from .kinds import table_kind


def summarise(values: list[float]) -> tuple[float, float]:
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else math.nan
    return mean, sd


def load_result(entry):
    """One seed's result: a JSON file, a run folder (its train_summary.json) or {name: either}."""
    if isinstance(entry, dict):
        return {name: load_result(path) for name, path in entry.items()}
    path = Path(entry)
    return read_result(path / "train_summary.json" if path.is_dir() else path)


def table_rows(paper: dict, table_name: str, inputs: dict) -> list[dict]:
    """One record per (row, column): reproduced mean/sd over the row's result files, paper value, diff.
    A cell the kind reads as None in every file (not built at this scale) has no reproduced value. `inputs`
    maps a row index to its result files, or, for a row whose columns read different files (an augmentation
    share with one augmentation per column), "<row index>/<column>" to that column's files."""
    table = paper["tables"][table_name]
    kind = table_kind(table["kind"])
    columns = table["columns"]
    digits = table.get("digits", 2)

    def rnd(x):
        if x is None or math.isnan(x):
            return None
        return float(f"{x:.6g}") if digits is None else round(x, digits)   # None: 6 significant digits

    records = []
    for i, row in enumerate(iter_rows(table)):
        shared = [kind.row_cells(load_result(e), columns, row) for e in inputs[str(i)]] if str(i) in inputs else None
        paper_sd = row.get("paper_sd") or [None] * len(columns)
        for column, reported, reported_sd in zip(columns, row["paper"], paper_sd):
            cells = shared if shared is not None else \
                [kind.row_cells(load_result(e), columns, row) for e in inputs[f"{i}/{column}"]]
            values = [float(c[column]) for c in cells if c[column] is not None]
            record = {"block": row.get("block", ""), "row": row["label"], "column": column,
                      "reproduced": None, "sd": None, "n": len(values), "paper": reported,
                      "paper_sd": reported_sd, "diff": None, "added": bool(row.get("added"))}
            if values:
                mean, sd = summarise(values)
                record.update(reproduced=rnd(mean), sd=rnd(sd),
                              diff=rnd(mean - reported) if reported is not None else None)
            records.append(record)
    return records


def unbuilt_columns(records: list[dict]) -> list[str]:
    """Columns with no reproduced value in any row (not built at this scale)."""
    columns = list(dict.fromkeys(r["column"] for r in records))
    return [c for c in columns if all(r["reproduced"] is None for r in records if r["column"] == c)]


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("†", r"$^\dagger$")):
        text = text.replace(a, b)
    return text


def _fmt(x, sd=None, spec: str = ".2f") -> str:
    if x is None:
        return "--"
    return f"{x:{spec}}" + (f" $\\pm$ {sd:{spec}}" if sd is not None else "")


def scale_note(scale: str, meta: dict, escape=lambda text: text) -> str:
    """What a table built below paper scale was computed with (`meta`: Workflow.table_meta) and whether it
    compares with the paper: only a table counted from the official data files alone does (data statistics)."""
    stand_ins = ", ".join(f"{v} for {k}" for k, v in sorted(meta.get("stand_ins", {}).items()))
    used = ([f"stand-in backbones: {stand_ins}"] if stand_ins else []) + (
        [f"corpus: {meta['corpus']}"] if meta.get("corpus") else []) + (
        [f"slices of the official data files, the rest of each left out: {'; '.join(meta['slices'])}"]
        if meta.get("slices") else [])
    if not used and meta.get("data") == "official":
        return f"Built at scale {scale} from the official data files, as the paper's."
    return (f"Built at scale {scale}, below paper scale" + (f" ({escape('; '.join(used))})" if used else "")
            + ": not comparable with the paper's numbers.")


def unbuilt_note(scale: str, records: list[dict], columns: list[str], meta: dict, escape=lambda text: text,
                 mark: str = "–") -> str:
    """The caption's sentence on the columns not built at this scale (`unbuilt_columns`), or nothing."""
    unbuilt = unbuilt_columns(records)
    if not unbuilt:
        return ""
    return (f"Not built at scale {scale} ({mark}): {', '.join(escape(c) for c in unbuilt)}"
            + (f" ({escape(meta['unbuilt_reason'])})" if meta.get("unbuilt_reason") else "")
            + ("; avg is over the columns built" if "avg" in columns and "avg" not in unbuilt else "") + ". ")


def quoted_note(meta: dict) -> str:
    """The caption's sentence on the rows a paper quotes from another (`recipe: <name>` in papers/<paper>.yaml;
    `meta["quoted"]`: Workflow.table_meta): at paper scale each is trained with the recipe behind the quoted number."""
    return " ".join(f"Rows quoted from {q['source']} ({', '.join(q['rows'])}): trained at paper scale with "
                    f"{q['source'].split(' (')[0]}'s own recipe, not this paper's." for q in meta.get("quoted", []))


def render_tex(paper: dict, table_name: str, records: list[dict], scale: str, meta: dict) -> str:
    table = paper["tables"][table_name]
    columns = table["columns"]
    headers = table.get("headers") or columns
    spec = table.get("format", ".2f")
    caption = f"{paper.get('short', '')} {table_name}: {table['caption']} "
    caption += ("Reproduced: mean $\\pm$ sd over seeds; paper: as reported; $\\Delta$ = reproduced $-$ paper. ")
    if not meta.get("compares_with_papers"):
        caption += scale_note(f"\\texttt{{{scale}}}", meta, _tex) + " "
    if any(r.get("added") for r in records):
        caption += _tex(ADDED_NOTE.format(key="add_rows")) + " "
    if meta.get("quoted"):
        caption += _tex(quoted_note(meta)) + " "
    caption += unbuilt_note(f"\\texttt{{{scale}}}", records, columns, meta, _tex, "--")
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + "r" * len(columns) + "}", r"\toprule",
             " & ".join(["Method"] + [_tex(c) for c in headers]) + r" \\", r"\midrule"]
    by_row: dict[tuple, list[dict]] = {}
    for r in records:
        by_row.setdefault((r["block"], r["row"]), []).append(r)
    block = None
    for (blk, label), cells in by_row.items():
        if blk and blk != block:
            if block is not None:
                lines.append(r"\midrule")
            lines.append(rf"\multicolumn{{{len(columns) + 1}}}{{l}}{{\textit{{{_tex(blk)}}}}} \\")
            block = blk
        n = max(c["n"] for c in cells)
        lines.append(" & ".join([f"{_tex(label)} (n={n})"] + [_fmt(c["reproduced"], c["sd"], spec) for c in cells])
                     + r" \\")
        if cells[0].get("added"):      # the configuration's row: the paper reports nothing to compare with
            continue
        lines.append(" & ".join([r"\quad paper"] + [_fmt(c["paper"], c.get("paper_sd"), spec) for c in cells]) + r" \\")
        lines.append(" & ".join([r"\quad $\Delta$"] + [_fmt(c["diff"], None, spec) for c in cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption.strip()}}}",
              rf"\label{{tab:{paper.get('short', 'paper').lower()}-{table_name}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_table(out: str | Path, records: list[dict], scale: str, tex: str):
    """Write `out` (.tex) and the records as a .csv beside it (with their scale, and when, where and from which
    commit they were built: `provenance.build_stamp`), both atomically."""
    import pandas as pd

    from .provenance import build_stamp

    out = Path(out)
    frame = pd.DataFrame(records)
    frame.insert(0, "scale", scale)
    for column, value in build_stamp().items():
        frame[column] = value
    with atomic_path(out.with_suffix(".csv")) as tmp:
        frame.to_csv(tmp, index=False)
    with atomic_path(out) as tmp:
        tmp.write_text(tex, encoding="utf-8")
    return frame


def render_skipped(paper: dict, table_name: str, scale: str, missing: list[str]) -> str:
    """The .tex of a table not built at this scale: its caption names every missing resource."""
    table = paper["tables"][table_name]
    caption = (f"{paper.get('short', '')} {table_name}: {table['caption']} Not built at scale "
               f"\\texttt{{{scale}}}: " + "; ".join(_tex(m) for m in missing) + ".")
    return "\n".join([r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{l}", r"\toprule",
                      r"(not built at this scale) \\", r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}",
                      rf"\label{{tab:{paper.get('short', 'paper').lower()}-{table_name}}}", r"\end{table}"]) + "\n"


def render_table(paper_file: str, table: str, inputs: str, out: str, scale: str) -> None:
    """CLI entry: `inputs` is a JSON object {"rows": {"<row index>": [result files]}, "meta": {...}}. With
    `meta.skipped` (the resources missing at this scale, `Workflow.missing_resources`) the table is written
    empty, its caption and CSV naming what is missing, and nothing is read."""
    paper = load_yaml(paper_file)
    if table not in paper.get("tables", {}):
        raise ValueError(f"{paper_file}: no table '{table}'")
    spec = json.loads(inputs)
    meta = spec.get("meta", {})
    if meta.get("added_rows"):      # rows the configuration adds (config key add_rows), as load_paper adds them
        paper["tables"][table] = add_table_rows(paper["tables"][table], meta["added_rows"],
                                                f"add_rows.{Path(paper_file).stem}/{table}")
    if meta.get("skipped"):
        records = [{"block": "", "row": "", "column": "", "reproduced": None, "sd": None, "n": 0, "paper": None,
                    "diff": None, "skipped": "; ".join(meta["skipped"])}]
        write_table(out, records, scale, render_skipped(paper, table, scale, meta["skipped"]))
        print(f"{paper.get('short', '')} {table}: not built at scale {scale}: " + "; ".join(meta["skipped"]))
        return
    records = table_rows(paper, table, spec["rows"])
    frame = write_table(out, records, scale, render_tex(paper, table, records, scale, meta))
    print(frame.pivot_table(index="row", columns="column", values="reproduced", sort=False,
                            dropna=False).to_string())
