"""The report's front page (sentaug.report.front_page, bill_page): one line per paper with the median |Δ| of its
built tables, the bill's rows and totals, each against a hand computation; the report imports nothing of the
workflow. Then `make report` on fake report pages, rendered headless in Chromium at common screen widths: the
front page's own content lies beside nothing of Snakemake's workflow graph, and the bill's totals on it are the
bill's table's."""
import ast
import copy
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from sentaug.report.bill_page import bill_totals, built_rows, projected_rows
from sentaug.report.front_page import front_page_rst, paper_rows
from sentaug.report.tables import write_table

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
WIDTHS = (1280, 1400, 1920)


def _job(kind, backbone, method, hours, built=False, device=None):
    wildcards = {"backbone": backbone, **({"method": method} if method else {})}
    return {"kind": kind, "rule": kind, "wildcards": wildcards, "hours": hours, "built": built, "device": device}


def test_the_bills_rows_are_per_backbone_and_method_and_its_totals_their_sums():
    projected = [_job("train", "bert", "simcse", 0.5), _job("train", "bert", "simcse", 0.25),
                 _job("glue", "bert", "simcse", 0.125), _job("eval", "bert", None, 0.0625),
                 _job("train", "roberta", "vascl", 2.0), _job("eval", "roberta", "vascl", 0.5)]
    rows = projected_rows(projected)
    assert [(r["backbone"], r["method"], r["runs"], r["train"], r["glue"], r["eval"], r["total"]) for r in rows] == [
        ("bert", "(pretrained)", 0, 0, 0, 0.0625, 0.0625), ("bert", "simcse", 2, 0.75, 0.125, 0, 0.875),
        ("roberta", "vascl", 1, 2.0, 0, 0.5, 2.5)]
    totals = bill_totals(rows)
    assert (totals["runs"], totals["train"], totals["glue"], totals["eval"], totals["total"]) == \
        (3, 2.75, 0.125, 0.5625, 3.4375)
    # built: a run that took 0.1 h on cpu, one not built, an evaluation whose file records no time
    built = [_job("train", "bert", "simcse", 0.1, True, "cpu"), _job("train", "bert", "simcse", None),
             _job("eval", "bert", "simcse", None, True), _job("train", "roberta", "vascl", None)]
    rows = built_rows(built)
    assert [(r["backbone"], r["method"], r["built"], r["runs"], r["train"], r["eval"], r["devices"]) for r in rows] \
        == [("bert", "simcse", 1, 2, 0.1, None, ["cpu"])]       # nothing of roberta built: no row
    totals = bill_totals(rows)
    assert (totals["built"], totals["runs"], totals["train"], totals["glue"], totals["total"]) == (1, 2, 0.1, None, 0.1)


def _table_csv(results: Path, paper: str, table: str, diffs: list[float | None]) -> None:
    """A table's CSV as sentaug.report.tables writes it: one cell per difference (None: no paper number)."""
    write_table(results / "tables" / paper / f"{table}.tex",
                [{"block": "", "row": f"row{i}", "column": "avg", "reproduced": 50.0, "sd": None, "n": 1,
                  "paper": None if d is None else 50.0 - d, "paper_sd": None, "diff": d, "added": False}
                 for i, d in enumerate(diffs)], "demo", "")


def _papers(results: Path) -> dict:
    tables = {t: {"csv": f"{results}/tables/x/{t}.csv", "page": f"{results}/report/tables/x/{t}.html"}
              for t in ("table10", "table2", "table3", "table4")}
    return {"x": {"short": "X", "tables": tables, "figures": {}}}


def test_a_papers_line_is_the_median_abs_delta_over_the_cells_of_its_built_tables(tmp_path):
    _table_csv(tmp_path, "x", "table2", [1.5, -3.0, 0.5, None])       # |Δ| 1.5, 3, 0.5: median 1.5
    _table_csv(tmp_path, "x", "table10", [-2.0, 4.0])                 # 2, 4: median 3
    write_table(tmp_path / "tables/x/table3.tex", [{"skipped": "no MNLI offline", "diff": None}], "demo", "")
    (row,) = paper_rows({"papers": _papers(tmp_path)})                # table4: never built
    assert [(t["name"], t["state"], t["median"]) for t in row["tables"]] == [
        ("table2", "built", 1.5), ("table3", "skipped", None), ("table4", "missing", None), ("table10", "built", 3.0)]
    assert (row["cells"], row["median"]) == (5, statistics.median([1.5, 3.0, 0.5, 2.0, 4.0])) == (5, 2.0)


def test_the_front_page_is_clean_rst_linking_to_each_papers_entries(tmp_path):
    from docutils.core import publish_parts
    from jinja2 import Environment

    _table_csv(tmp_path, "x", "table2", [1.0, -3.0])
    data = {"scale": "demo", "papers": _papers(tmp_path), "bill_page": f"{tmp_path}/report/bill.demo.html",
            "build": {"stand_ins": {"bert-base-uncased": "tiny-bert", "roberta-base": "tiny-roberta",
                                    "all-mpnet-base-v2": "tiny-bert"}, "corpus": "demo_corpus", "data": "demo",
                      "seeds": [1, 2]},
            "projected": {"scale": "paper", "device": "Test GPU", "step_times": "testgpu", "notes": [],
                          "jobs": [_job("train", "bert-base-uncased", "simcse", 1.5)]},
            "built": {"scale": "demo", "jobs": [_job("train", "tiny-bert", "simcse", 0.01, True, "cpu")]}}
    rst = front_page_rst(data)
    # as Snakemake renders it: Jinja, then docutils
    body = publish_parts(Environment().from_string(rst).render(snakemake={"config": {"scale": "demo"}}),
                         writer="html")["html_body"]
    assert "system-message" not in body
    assert "<strong>Scale demo</strong>: stand-in backbones tiny-bert for all-mpnet-base-v2, bert-base-uncased; " \
           "tiny-roberta for roberta-base; corpus demo_corpus (the bundled demo data); 2 seeds (1, 2)." in body
    assert "<strong>Built</strong>: 1 of 4 tables, 0 of 0 figures, 1 of 1 training run." in body
    assert f"href=\"javascript:app.showResultInfo('{tmp_path}/report/tables/x/table2.html')\">table2</a> (2.00)" in body
    assert "href=\"javascript:app.showCategory('X')\">X</a>" in body
    assert f"href=\"javascript:app.showResultInfo('{tmp_path}/report/bill.demo.html')\">The full bill</a>" in body


def test_the_report_imports_nothing_of_the_workflow():
    """The bill reaches the report as data (sentaug.pricing.report_data): no module of sentaug.report imports
    sentaug.workflow, at the top or inside a function."""
    found = []
    for path in sorted((ROOT / "src/sentaug/report").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [("." * node.level) + (node.module or "")] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.name}: {n}" for n in names
                      if n.startswith(("sentaug.workflow", "..workflow")) or n == ".." and any(
                          a.name == "workflow" for a in node.names)]
    assert found == []


# -- the report, built and laid out ------------------------------------------------------------------------------
# After layout (Chromium's virtual time runs the report's scripts and timers), the boxes of every element of the
# front page's text and of the drawn workflow graph, written into the page for --dump-dom.
LAYOUT_PROBE = """<script>
setTimeout(function () {
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const text = document.querySelector('.prose');
  const graph = document.querySelector('#rulegraph canvas, #rulegraph svg');
  const out = {width: document.documentElement.clientWidth, graph: graph ? box(graph) : null,
               text: text ? [text, ...text.querySelectorAll('*')].map(el => [el.tagName, box(el)]) : []};
  const pre = document.createElement('pre');
  pre.id = 'layout-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 5000);
</script>"""


@pytest.fixture(scope="module")
def built_report(tmp_path_factory, shipped_config):
    """`make report` on fake report pages (the report only needs the marked files) and two paper tables with
    known differences: (results folder, report.html)."""
    from sentaug.workflow import Workflow

    tmp = tmp_path_factory.mktemp("report")
    results, report = tmp / "R", tmp / "report.html"
    for page in Workflow(copy.deepcopy(shipped_config), results=str(results)).report_pages().values():
        Path(page).parent.mkdir(parents=True, exist_ok=True)
        Path(page).write_text("<html><body>fake page</body></html>")
    _table_csv(results, "sda", "table4", [1.0, -2.0, 4.0])
    _table_csv(results, "vascl", "table1", [0.5, 3.0])
    run = subprocess.run(["make", "--no-print-directory", "report", f"PYTHON={sys.executable}",
                          f"SNAKEMAKE={sys.executable} -m snakemake", f"SNAKEFLAGS=--nolock --config results={results}",
                          f"REPORT={report}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert f"Report written: open {report} in a browser" in run.stdout
    return results, report


def test_make_report_renders_the_front_page_from_the_bills_data(built_report):
    results, report = built_report
    data = json.loads((results / "report/bill.demo.json").read_text())
    assert (data["scale"], data["projected"]["scale"], data["built"]["scale"]) == ("demo", "paper", "demo")
    front = (results / "report/front.demo.rst").read_text()
    line = lambda short: re.search(rf"\* - (?:`{short} <javascript[^\n]*|{short})\n     - (.*)\n     - (.*)\n",
                                   front).groups()
    assert line("SDA") == ("1 of 6", "2.00 (3 cells)")          # table4's |Δ| 1, 2, 4
    assert line("VaSCL") == ("1 of 5", "1.75 (2 cells)")        # table1's 0.5, 3
    assert line("CLEAR") == ("0 of 3", "–")
    assert "`CLEAR <javascript" not in front                     # nothing of it built: no category to open
    # what is not built yet, counted, each with the command that builds it at the build's settings
    assert "- **Not built yet**: 32 tables and 13 figures, each listed below with the command that builds it." in front
    assert (f"``.venv/bin/snakemake {results}/tables/clear/table1.tex --cores all --config results={results}``"
            in front)
    assert "table2 (not built)" in front and f"{results}/report/tables/sda/table4.html" in front
    page = report.read_text()
    assert "What was built" in page and "How far from the papers" in page and "The full bill" in page
    assert "bill.demo.html" in page and "Docutils System Messages" not in page
    # the runs the bill counts are the training jobs Snakemake's own dry run of `all` lists, at either scale
    for scale, part in (("demo", data["built"]), ("paper", data["projected"])):
        dry = subprocess.run([sys.executable, "-m", "snakemake", "all", "-n", "--nolock", "--config",
                              f"results={results}", f"scale={scale}"], cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        trains = re.search(r"^train\s+(\d+)\s*$", dry.stdout, re.M)      # its job stats: a count per rule
        assert dry.returncode == 0 and trains, (dry.stdout + dry.stderr)[-3000:]
        assert sum(1 for job in part["jobs"] if job["kind"] == "train") == int(trains.group(1))


# Clicks the front page's link to SDA's table4, then writes what the report shows (the entry's caption, in its menu).
CLICK_PROBE = """<script>
setTimeout(function () {
  document.querySelector('.prose a[href*="sda/table4.html"]').click();
  setTimeout(function () {
    const pre = document.createElement('pre');
    pre.id = 'layout-probe';
    pre.textContent = JSON.stringify(document.querySelector('#app').textContent);
    document.body.appendChild(pre);
  }, 1000);
}, 5000);
</script>"""


def _rendered(report: Path, width: int, tmp: Path, probe: str = LAYOUT_PROBE) -> tuple:
    """(what `probe` wrote, the DOM) of `report` in a window `width` px wide."""
    probed = tmp / f"probed-{width}.html"
    head, body_end, tail = report.read_text().rpartition("</body>")    # the page's own (scripts hold others)
    probed.write_text(head + probe + body_end + tail)
    run = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          f"--window-size={width},1000", "--virtual-time-budget=20000", "--dump-dom",
                          probed.as_uri()], capture_output=True, text=True, timeout=300)
    match = re.search(r'<pre id="layout-probe">(.*?)</pre>', run.stdout, re.S)
    assert match, run.stderr[-2000:]
    return json.loads(html.unescape(match.group(1))), run.stdout


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium (Debian: apt-get install chromium)")
@pytest.mark.parametrize("width", WIDTHS)
def test_no_part_of_the_front_page_lies_under_the_workflow_graph(built_report, width, tmp_path):
    layout, _ = _rendered(built_report[1], width, tmp_path)
    graph = layout["graph"]
    assert graph and graph[2] - graph[0] > 100 and graph[3] - graph[1] > 100, "the workflow graph was not drawn"
    text = [(tag, box) for tag, box in layout["text"] if box[2] > box[0] and box[3] > box[1]]
    assert len(text) > 100 and {"TABLE", "H1", "A"} <= {tag for tag, _ in text}
    assert [(tag, box) for tag, box in text if _overlap(box, graph)] == []
    # nothing cut off: not on the right, and not above the top (a page taller than the window, centred in it,
    # starts above the top, where no scrolling reaches)
    assert [(tag, box) for tag, box in text if box[2] > layout["width"] + 0.5 or min(box[:2]) < 0] == []
    assert graph[1] >= 0


def _cells(row_html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row_html, re.S)]


@pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium (Debian: apt-get install chromium)")
def test_the_front_pages_bill_totals_are_the_sums_of_the_bills_table(built_report, tmp_path):
    """What a reader sees: the front page's bill (the table after "The bill", in the rendered DOM) and the bill's
    page's table (its rows summed, within their rounding, and its total row)."""
    results, report = built_report
    _, dom = _rendered(report, 1400, tmp_path)
    front = dom[dom.index(">The bill<"):]
    header, projected, taken = [_cells(r) for r in re.findall(r"<tr[^>]*>(.*?)</tr>",
                                                                 front[:front.index("</table>")], re.S)]
    assert header == ["device-hours", "training", "GLUE", "evaluations", "total"]
    assert projected[0].startswith("projected, paper scale") and taken[0].startswith("taken by this build")
    bill = (results / "report/bill.demo.html").read_text()
    table, built = [bill[i:bill.index("</table>", i)] for i in (m.start() for m in re.finditer("<table>", bill))]
    rows = [_cells(r) for r in re.findall(r"<tr>(.*?)</tr>", table, re.S)][1:]
    total = _cells(re.search(r"<tr class='total'>(.*?)</tr>", table, re.S).group(1))
    assert total[3:7] == projected[1:5]                                   # the front page's totals: the total rows
    assert _cells(re.search(r"<tr class='total'>(.*?)</tr>", built, re.S).group(1))[3:7] == taken[1:5]
    for column in range(3, 7):                                           # training, GLUE, evaluations, total
        sums = sum(float(r[column].replace(",", "")) for r in rows if r[column] != "–")
        rounding = sum(0.005 if float(r[column].replace(",", "")) >= 1 else 0.0005 for r in rows if r[column] != "–")
        assert abs(float(total[column].replace(",", "")) - sums) <= rounding + 0.005
    assert sum(int(r[2]) for r in rows) == int(total[2]) == int(re.search(r"\((\d+) training runs\)", projected[0])[1])


@pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium (Debian: apt-get install chromium)")
def test_a_papers_table_link_opens_its_entry_in_the_report(built_report, tmp_path):
    shown, _ = _rendered(built_report[1], 1400, tmp_path, CLICK_PROBE)
    assert "SDA table4: STS test sets, Spearman x100" in shown          # the entry's caption (rule report_table)
