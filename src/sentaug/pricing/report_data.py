"""What the report's front page shows, as data. `sentaug cost all --front-page` writes it, since only the
workflow can resolve the DAG and price it; rule report_front_page renders it (`sentaug.report.front_page`, which
imports nothing of the workflow). One JSON object:

- `scale` and `build`: the build's scale, data origin, corpus, seeds and stand-in backbones (Workflow.scale_meta);
- `papers`: per paper, its short name (the report's category for it), its tables (each one's CSV and report
  page) and its figures (each one's output and report page);
- `projected`: the paper scale's bill, every device job of it built or not: the device whose step times price
  it, `calibrated` (what its step times are where they are calibrated from datasheet rates, not measured: a
  device without a measured table; else null), the bill's notes (among them what prices its new hours: figures
  measured on the code that runs, on older code, calibrated, estimates; `provenance` in hours), and per job its
  kind (train, glue or eval), rule, wildcards, device-hours and `fits` (false: its measured peak memory does not
  fit in the device's, and the bill leaves it out; null: not known);
- `built`: the build's own bill: per device job whether it is built and, for a built one, what it took.
"""
from __future__ import annotations

from pathlib import Path

from ..io import write_json
from .prices import GPU_KINDS

# (`bill`: a sentaug.pricing.bill.Bill, whose command writes this page's data: imported from there, not here)


def projected_jobs(bill: "Bill") -> list[dict]:
    """Every device job of `bill` with its projected device-hours (a training run with its measured gain of
    sharing a GPU, as Bill.training_hours counts it)."""
    return [{"kind": j.kind, "rule": j.rule, "wildcards": j.wildcards, "hours": j.hours, "fits": j.fits}
            for j in bill.jobs.values() if j.kind in GPU_KINDS]


def built_jobs(bill: "Bill") -> list[dict]:
    """Every device job of `bill`: built or not, and what a built one took (hours and device; None where its
    output records none)."""
    return [{"kind": j.kind, "rule": j.rule, "wildcards": j.wildcards, "built": j.built,
             "hours": None if j.actual_s is None else j.actual_s / 3600, "device": j.actual_device}
            for j in bill.jobs.values() if j.kind in GPU_KINDS]


def papers(W) -> dict:
    pages = W.report_pages()
    out = {}
    for p, paper in W.papers.items():
        tables = {t: {"csv": str(Path(W.table_output(p, t)).with_suffix(".csv")), "page": pages[W.table_output(p, t)]}
                  for t in paper.get("tables", {})}
        figures = {f: {"output": W.figure_output(p, f), "page": pages[W.figure_output(p, f)]}
                   for f in paper.get("figures", {})}
        out[p] = {"short": paper.get("short", p), "tables": tables, "figures": figures}
    return out


def provenance_note(provenance: dict) -> str | None:
    """What prices a bill's new device-hours (Bill.provenance), in one line; None when nothing is new."""
    total = provenance["total"]
    if not total:
        return None
    share = lambda key: f"{provenance[key] / total:.0%}"      # noqa: E731
    calibrated = (f", {share('calibrated')} from figures calibrated from datasheet rates, not measured"
                  if provenance.get("calibrated") else "")
    return (f"Of the new device-hours, {share('current')} are priced from figures measured on the code that runs, "
            f"{share('older')} from figures measured on older code{calibrated} and {share('estimated')} from "
            f"estimates (sentaug cost says which)")


def report_data(bill: "Bill", paper: "Bill") -> dict:
    """The front page's data: `bill` is the build's (its scale), `paper` the paper scale's (the same bill when the
    build is at paper scale)."""
    W = bill.workflow
    provenance = paper.provenance()
    return {"scale": bill.scale, "build": {**W.scale_meta(), "seeds": list(W.seeds)}, "papers": papers(W),
            "bill_page": W.paths.report_bill_page(),
            "projected": {"scale": paper.scale, "device": paper.times.device, "step_times": paper.times.name,
                          "calibrated": paper.times.calibrated,
                          "notes": [*paper.notes, *filter(None, [provenance_note(provenance)])],
                          "provenance": {k: provenance[k] for k in ("current", "older", "calibrated", "estimated",
                                                                    "total")},
                          "jobs": projected_jobs(paper)},
            "built": {"scale": bill.scale, "jobs": built_jobs(bill)}}


def write_report_data(bill: "Bill", paper: "Bill") -> str:
    path = bill.workflow.paths.report_bill_data_file()
    write_json(path, report_data(bill, paper))
    return path
