"""Report pages: one self-contained HTML page per table and figure, the entries of Snakemake's report
(`snakemake --report results/report.html`; rules `report_*` in rules/report.smk mark them with report()).

A page shows the output as a reader wants it (a table as an HTML table, a figure as its PNG, embedded), its
caption, the numbers behind it (the output's CSV) and its provenance (`sentaug.report.provenance`): the scale,
backbones, seeds, the runs' devices and library versions, and content hashes of the data. Nothing is loaded
from outside the page, so the report opens offline.
"""
from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from ..config import load_yaml
from ..io import atomic_path, sha256_file
from . import provenance

STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; font-size: 14px; margin: 1.2em;
       color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
p.caption { max-width: 70em; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
td.block { font-style: italic; background: #fafafa; text-align: left; }
span.sub { color: #777; font-size: 0.85em; }
img { max-width: 100%; border: 1px solid #eee; }
table.kv td { text-align: left; }
code { font-size: 0.9em; }
"""


def _e(text) -> str:
    return html.escape("" if text is None else str(text))


def _num(x, digits: int = 2) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "–"
    return "–" if x != x else f"{x:.{digits}f}"


def paper_table_html(frame) -> str:
    """A paper table's records (block, row, column, reproduced, sd, n, paper, diff) as rows x columns, each cell
    ours ± sd over seeds with the paper's value and the difference beneath."""
    if "skipped" in frame and frame["skipped"].notna().any():
        return f"<p><b>Not built at this scale:</b> {_e(frame['skipped'].dropna().iloc[0])}</p>"
    columns = list(dict.fromkeys(frame["column"]))
    out = ["<table><tr><th>Method</th>" + "".join(f"<th>{_e(c)}</th>" for c in columns) + "</tr>"]
    block = None
    for (blk, label), cells in frame.groupby(["block", "row"], sort=False, dropna=False):
        blk = "" if blk != blk else blk
        if blk and blk != block:
            out.append(f'<tr><td class="block" colspan="{len(columns) + 1}">{_e(blk)}</td></tr>')
            block = blk
        by_column = {c["column"]: c for _, c in cells.iterrows()}
        n = int(cells["n"].max())
        row = [f"<td>{_e(label)} <span class='sub'>(n={n})</span></td>"]
        for c in columns:
            cell = by_column.get(c)
            if cell is None:
                row.append("<td></td>")
                continue
            ours = _num(cell["reproduced"]) + (f" ± {_num(cell['sd'])}" if cell["sd"] == cell["sd"] else "")
            row.append(f"<td>{ours}<br><span class='sub'>paper {_num(cell['paper'])} · Δ {_num(cell['diff'])}"
                       f"</span></td>")
        out.append("<tr>" + "".join(row) + "</tr>")
    return "\n".join(out + ["</table>"])


def leaderboard_html(records: list[dict]) -> str:
    """The board from its CSV's records: a missing cell (no Δ for the baseline, no reported gain) is NaN there
    and None in the renderer's records."""
    from .leaderboard import _table_cells

    columns, rows = _table_cells([{k: None if v != v else v for k, v in r.items()} for r in records])
    out = ["<table><tr><th>Method</th>" + "".join(f"<th>{_e(c)}</th>" for c in columns) + "</tr>"]
    for label, first, second in rows:
        out.append(f"<tr><td>{_e(label)}</td>" + "".join(
            f"<td>{_e(a)}" + (f"<br><span class='sub'>{_e(b)}</span>" if b else "") + "</td>"
            for a, b in zip(first, second)) + "</tr>")
    return "\n".join(out + ["</table>"])


def csv_html(frame, limit: int = 300) -> str:
    shown = frame.head(limit)
    more = f"<p class='sub'>first {limit} of {len(frame)} rows</p>" if len(frame) > limit else ""
    return more + shown.to_html(index=False, na_rep="", float_format=lambda x: f"{x:.4g}", border=0)


def provenance_html(info: dict, outputs: dict[str, str], meta: dict, scale: str) -> str:
    stand_ins = ", ".join(f"{v} for {k}" for k, v in sorted((meta.get("stand_ins") or {}).items())) or "none"
    rows = [("scale", scale), ("stand-in backbones", stand_ins), ("corpus", meta.get("corpus") or "none"),
            ("seeds", meta.get("seeds", "?")),
            ("runs behind this output", f"{len(info['runs'])}"),
            ("devices of the runs", ", ".join(f"{d} ({n} runs)" for d, n in info["devices"].items()) or "–"),
            ("training versions", "; ".join(f"{v} ({n} runs)" for v, n in info["training_versions"].items()) or "–"),
            ("evaluation versions", "; ".join(f"{v} ({n} files)" for v, n in info["evaluation_versions"].items())
             or "–"),
            ("models (hub commits)",
             "; ".join(f"{m} ({n})" for m, n in sorted(info.get("models", {}).items())) or "–")]
    rows = [(k, str(v)) for k, v in rows]
    rows += [(f"output sha256: {name}", f"<code>{digest}</code>") for name, digest in outputs.items()]
    for root, folders in info["data"].items():
        for folder, d in folders.items():
            where = root if Path(root).name == folder else f"{root}/{folder}"     # a file root names itself
            rows.append((f"data {where}", f"<code>{d['sha256']}</code> ({d['files']} files, {d['bytes']:,} bytes)"))
    env = info["environment"]
    rows.append(("rendered with", "; ".join(f"{k} {v}" for k, v in env["versions"].items())
                 + f"; {env['platform']}, {env['cpus']} CPUs"))
    out = ["<table class='kv'>"] + [f"<tr><td>{_e(k)}</td><td>{v if v.startswith('<code>') else _e(v)}</td></tr>"
                                    for k, v in rows] + ["</table>"]
    if info["runs"]:
        out.append("<details><summary>Runs</summary><table><tr><th>run</th><th>method</th><th>seed</th>"
                   "<th>steps</th><th>batch</th><th>device</th><th>train s</th></tr>")
        for run, r in sorted(info["runs"].items()):
            out.append(f"<tr><td><code>{_e(run)}</code></td><td>{_e(r['method'])}</td><td>{_e(r['seed'])}</td>"
                       f"<td>{_e(r['steps'])}</td><td>{_e(r['batch_size'])}</td><td>{_e(r['device'])}</td>"
                       f"<td>{_e(r['train_seconds'])}</td></tr>")
        out.append("</table></details>")
    return "\n".join(out)


def page_caption(kind: str, spec: dict | None, name: str, scale: str, meta: dict) -> str:
    """The caption of a page: the one its figure, table or leaderboard renderer writes. `spec` is the loaded
    paper or leaderboard file (none for the census)."""
    if kind == "census":
        return (f"Augmentation census at scale '{scale}': every declared augmentation on the corpus "
                f"{meta.get('corpus', '?')}: share of lines changed, edit distance, length change and the cosine "
                f"between original and augmented sentence under {meta.get('backbone', '?')}.")
    if kind == "figure":
        from .figures import caption

        return caption(spec, name, scale, meta)
    if kind == "leaderboard":
        from .leaderboard import boards, caption

        return caption(spec, scale, meta, boards(spec)[name])
    table = spec["tables"][name]
    text = f"{spec.get('short', '')} {name}: {table['caption']} Ours: mean ± sd over seeds; paper: as reported."
    if meta.get("quoted"):
        from .tables import quoted_note

        text += " " + quoted_note(meta)
    if not meta.get("compares_with_papers"):
        from .tables import scale_note

        text += " " + scale_note(f"'{scale}'", meta)
    return text


def rst_escape(text: str) -> str:
    """`text` as literal reStructuredText (the Snakemake report renders captions as RST)."""
    for ch in ("\\", "*", "`", "_", "|"):
        text = text.replace(ch, "\\" + ch)
    return text


def render_page(kind: str, name: str, out: str, scale: str, inputs: str, spec_file: str | None = None,
                csv: str | None = None, png: str | None = None) -> None:
    """CLI entry: write the page of one output. `inputs` is {"results": [files or run folders], "meta": {...}}."""
    import pandas as pd

    given = json.loads(inputs)
    meta = given.get("meta", {})
    spec = spec_file and load_yaml(spec_file)
    text = page_caption(kind, spec, name, scale, meta)
    title = {"table": "Table", "figure": "Figure", "leaderboard": "Leaderboard", "census": "Table"}[kind]
    short = meta.get("short") or ""
    if kind == "leaderboard":    # a board is named by its backbone
        from .leaderboard import boards

        name = boards(spec)[name]
    body = [f"<h1>{_e(short)} {_e(name)} <span class='sub'>({title.lower()}, scale {_e(scale)})</span></h1>",
            f"<p class='caption'>{_e(text)}</p>"]
    outputs = {}
    frame = pd.read_csv(csv) if csv else None
    if png:
        data = base64.b64encode(Path(png).read_bytes()).decode()
        body.append(f"<img alt='{_e(name)}' src='data:image/png;base64,{data}'>")
        outputs[Path(png).name] = sha256_file(png)
    if frame is not None:
        outputs[Path(csv).name] = sha256_file(csv)
        if kind == "table":
            body.append(paper_table_html(frame))
        elif kind == "leaderboard":
            body.insert(2, leaderboard_html(frame.to_dict("records")))
        elif kind == "census":
            body.append(csv_html(frame, limit=1000))
        body.append(f"<details><summary>Numbers behind this {title.lower()} ({Path(csv).name}, {len(frame)} rows)"
                    f"</summary>{csv_html(frame)}</details>")
    body.append("<h2>Provenance</h2>")
    body.append(provenance_html(provenance.collect(given.get("results", [])), outputs, meta, scale))
    page = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_e(short)} {_e(name)}</title>"
            f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    with atomic_path(out) as tmp:
        tmp.write_text(page, encoding="utf-8")
