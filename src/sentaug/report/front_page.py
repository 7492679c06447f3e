"""The report's front page (`make report`): report/workflow.rst followed by the bill of `all` at the scale
(sentaug.workflow.bill) beside what the built runs actually took (`train_seconds` of their summaries).

`sentaug cost all --front-page` writes it to <results>/report/front.<scale>.rst, which the Snakefile's
`report:` takes when it exists (sentaug.workflow.Paths.report_front_page)."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ..io import atomic_path
from .pages import rst_escape

ROOT = Path(__file__).resolve().parents[3]
STATIC_PAGE = ROOT / "report" / "workflow.rst"


def _wildcards(label: str) -> dict:
    return dict(part.split("=", 1) for part in label.split(":", 1)[1].split(","))


def _list_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        out.append("   * - " + rst_escape(str(row[0])))
        out += [f"     - {rst_escape(str(cell))}" for cell in row[1:]]
    return out + [""]


def run_rows(bill) -> list[list[str]]:
    """Per backbone and method: runs built of all, projected hours of all and of the built ones, the built
    ones' actual hours (and on which devices)."""
    groups = defaultdict(list)
    for job in bill.jobs.values():
        if job.kind == "train":
            w = _wildcards(job.label)
            groups[(w["backbone"], w["method"])].append(job)
    rows = []
    for (backbone, method), jobs in sorted(groups.items()):
        built = [j for j in jobs if j.built and j.actual_s is not None]
        projected_built = sum(j.projection.seconds for j in built) / 3600
        actual = sum(j.actual_s for j in built) / 3600
        devices = ", ".join(sorted({j.actual_device for j in built if j.actual_device}))
        rows.append([backbone, method, f"{len(built)} / {len(jobs)}",
                     f"{sum(j.projection.seconds for j in jobs) / 3600:.3f}",
                     f"{projected_built:.3f}" if built else "", f"{actual:.3f}" if built else "",
                     f"{actual / projected_built:.2f} ({devices})" if built and projected_built else ""])
    return rows


def front_page_rst(bill, static_page: Path = STATIC_PAGE) -> str:
    from ..workflow.bill import bill_total_hours, target_rows

    t, total = bill.times, target_rows(bill)[-1]
    lines = [static_page.read_text(encoding="utf-8").rstrip(), "", "",
             "The bill: projected and actual training time", "-" * 46, "",
             f"Projected with ``sentaug cost all --scale {bill.scale} --device {t.name}`` on "
             + rst_escape(f"{t.device} (step times: src/sentaug/resources/step_times/{t.name}.yaml, {t.table['source']}). "
                        f"Still to build: {total['new']} of {total['runs']} training runs, "
                        f"{total['train_h']:.2f} device-hours of training, {total['glue_h']:.2f} of GLUE "
                        f"fine-tuning and {total['eval_h']:.2f} of evaluation embeddings: "
                        f"{bill_total_hours(bill):.2f} in all. Built: {total['built']} runs, projected "
                        f"{total['built_projected_h']:.3f} h on {t.device}, actually "
                        f"{total['built_actual_h']:.3f} h on the devices they ran on (below; below paper "
                        f"scale a CPU, so the two differ by far)."), ""]
    lines += _list_table(["backbone", "method", "built / runs", "projected h (all)", "projected h (built)",
                          "actual h (built)", "actual / projected (device)"], run_rows(bill))
    lines += [rst_escape(note) for note in bill.notes]
    return "\n".join(lines) + "\n"


def write_front_page(bill, path: str | Path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(front_page_rst(bill), encoding="utf-8")
    return path
