"""The bill, from the front page's data (`sentaug.pricing.report_data`): device-hours per backbone and method
and in all, projected for the paper scale and taken by what was built. The front page shows the totals
(`bill_totals`); the bill's own report page (`bill_page_html`) the table they sum.

Device jobs only: training, GLUE fine-tuning and evaluations (the suites' embeddings, analyses and retrieval
indexes). The CPU jobs (data, augmentations, tables, figures) are not counted.
"""
from __future__ import annotations

import html
from collections import defaultdict

from .pages import STYLE

KINDS = {"train": "training", "glue": "GLUE", "eval": "evaluations"}
PRETRAINED = "(pretrained)"      # the method column of a job on an untrained backbone


def hours(h: float | None) -> str:
    """Device-hours as the front page and the bill's page print them (one format, so that the two agree); none
    (no job of the kind, or none that recorded its time) as a dash."""
    if not h:
        return "–"
    return f"{h:,.2f}" if h >= 1 else f"{h:.3f}"


def _group(job: dict) -> tuple[str, str]:
    w = job["wildcards"]
    return w.get("backbone", "–"), w.get("method", PRETRAINED)


def projected_rows(jobs: list[dict]) -> list[dict]:
    """Per backbone and method: training runs and device-hours by kind (every job, built or not, but those that do
    not fit in the device's memory: the bill leaves them out)."""
    rows = defaultdict(lambda: {"runs": 0, **{k: 0.0 for k in KINDS}})
    for job in (j for j in jobs if j.get("fits") is not False):
        row = rows[_group(job)]
        row[job["kind"]] += job["hours"]
        row["runs"] += job["kind"] == "train"
    return [{"backbone": b, "method": m, **row, "total": sum(row[k] for k in KINDS)}
            for (b, m), row in sorted(rows.items())]


def built_rows(jobs: list[dict]) -> list[dict]:
    """Per backbone and method with something built: training runs built (of all), the device-hours the built
    jobs took by kind (None where no built job of the kind recorded its time) and the devices they ran on."""
    rows = defaultdict(lambda: {"runs": 0, "built": 0, **{k: None for k in KINDS}, "devices": set()})
    for job in jobs:
        row = rows[_group(job)]
        if job["kind"] == "train":
            row["runs"] += 1
            row["built"] += job["built"]
        if job["built"] and job["hours"] is not None:
            row[job["kind"]] = (row[job["kind"]] or 0.0) + job["hours"]
            row["devices"] |= {job["device"]} if job["device"] else set()
    out = []
    for (b, m), row in sorted(rows.items()):
        if any(row[k] is not None for k in KINDS) or row["built"]:
            out.append({"backbone": b, "method": m, **row, "devices": sorted(row["devices"]),
                        "total": sum(row[k] or 0.0 for k in KINDS)})
    return out


def bill_totals(rows: list[dict]) -> dict:
    """The rows' sums: training runs (and of built_rows' the built ones and their devices), device-hours by kind
    (None where no row has any) and in all."""
    sums = {k: sum(r[k] for r in rows if r[k] is not None) if any(r[k] is not None for r in rows) else None
            for k in KINDS}
    sums["total"] = sum(r["total"] for r in rows) if any(sums[k] is not None for k in KINDS) else None
    sums["runs"] = sum(r["runs"] for r in rows)
    sums["built"] = sum(r.get("built", 0) for r in rows)
    sums["devices"] = sorted({d for r in rows for d in r.get("devices", ())})
    return sums


def projection_words(data: dict, code=html.escape, text=html.escape) -> str:
    """What the projection is, with `code` and `text` marking up a command and words (HTML by default)."""
    p = data["projected"]
    how = f"{p['calibrated']}, for" if p.get("calibrated") else "measured on"
    return (text(f"every job of the workflow at {p['scale']} scale, priced with the training-step times {how} "
                 f"one {p['device']} (") + code(f"sentaug cost all --scale {p['scale']} --device {p['step_times']}")
            + text(" details them)"))


def _table(header: list[str], rows: list[list[str]], total: list[str]) -> str:
    e = html.escape
    out = ["<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows]
    out.append("<tr class='total'>" + "".join(f"<td>{e(c)}</td>" for c in total) + "</tr>")
    return "\n".join(out + ["</table>"])


def bill_page_html(data: dict) -> str:
    """The bill's report page: the paper scale's projection and what the build took, per backbone and method."""
    e = html.escape
    scale, built_scale = data["projected"]["scale"], data["built"]["scale"]
    projected = projected_rows(data["projected"]["jobs"])
    built = built_rows(data["built"]["jobs"])
    head = ["backbone", "method", "training runs", *(f"{k} h" for k in KINDS.values()), "total h"]
    body = [f"<h1>The bill <span class='sub'>(device-hours)</span></h1>",
            f"<p class='caption'>Device-hours of the training runs, GLUE fine-tuning and evaluations. Projected: "
            f"{projection_words(data, code=lambda c: f'<code>{e(c)}</code>')}. Taken: what the jobs built at "
            f"{e(built_scale)} scale took on the devices "
            f"they ran on (training: the runs' own clocks; GLUE and evaluations: the time their result files "
            f"record). Jobs on the CPU (data, augmentations, tables, figures) are not counted.</p>",
            f"<h2>Projected, {e(scale)} scale, on {e(data['projected']['device'])}</h2>"]
    t = bill_totals(projected)
    body.append(_table(head, [[r["backbone"], r["method"], str(r["runs"]), *(hours(r[k]) for k in KINDS),
                               hours(r["total"])] for r in projected],
                       ["total", "", str(t["runs"]), *(hours(t[k]) for k in KINDS), hours(t["total"])]))
    body += [f"<p class='sub'>{e(note)}</p>" for note in data["projected"]["notes"]]
    body.append(f"<h2>Built at {e(built_scale)} scale: what it took</h2>")
    t = bill_totals(built)
    body.append(_table(["backbone", "method", "training runs built", *(f"{k} h" for k in KINDS.values()),
                        "total h", "devices"],
                       [[r["backbone"], r["method"], f"{r['built']} of {r['runs']}", *(hours(r[k]) for k in KINDS),
                         hours(r["total"]), ", ".join(r["devices"])] for r in built],
                       ["total", "", f"{t['built']} of {t['runs']}", *(hours(t[k]) for k in KINDS),
                        hours(t["total"]), ", ".join(t["devices"])]))
    style = STYLE + ("td:nth-child(2), th:nth-child(2) { text-align: left; }\n"
                     "tr.total td { font-weight: bold; border-top: 2px solid #999; }\n")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>The bill</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
