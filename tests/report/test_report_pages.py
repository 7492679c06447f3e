"""Snakemake's report (`snakemake --report`) lists every declared table and figure, one category per paper, and
loads nothing from outside; each report page shows its output's numbers and provenance (devices, versions, data
digests computed by hand here)."""
import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

from sentaug.report.pages import render_page, rst_escape
from sentaug.report.provenance import collect, folder_digest
from sentaug.workflow import Workflow

ROOT = Path(__file__).resolve().parents[2]


def _json_var(page: str, name: str) -> dict:
    match = re.search(rf"var {name} = (\{{.*?\}});\n", page)
    assert match, f"no '{name}' in the report"
    return json.loads(match.group(1))


def test_the_report_lists_every_declared_table_and_figure_per_paper(tmp_path, cfg):
    """Built from fake pages (the report only needs the marked files): one entry per declared table and figure
    in its paper's category, and each backbone's leaderboard, each with its caption."""
    wf = Workflow(cfg, results=str(tmp_path / "R"))
    for page in wf.report_pages().values():
        Path(page).parent.mkdir(parents=True, exist_ok=True)
        Path(page).write_text("<html><body>fake page</body></html>")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    report = tmp_path / "report.html"
    run = subprocess.run([sys.executable, "-m", "snakemake", "--nolock", "--config", f"results={tmp_path}/R",
                          "--report", str(report)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    html = report.read_text()
    categories, results = _json_var(html, "categories"), _json_var(html, "results")
    expected = {}
    for name, paper in wf.papers.items():
        short = paper.get("short", name)
        for kind, key in (("Tables", "tables"), ("Figures", "figures")):
            for item in paper.get(key, {}):
                page = f"{tmp_path}/R/report/{key}/{name}/{item}.html"
                expected.setdefault(short, {}).setdefault(kind, []).append(page)
    boards = ("leaderboard", "leaderboard-bert-base-uncased")
    expected["Leaderboard"] = {"Tables": [f"{tmp_path}/R/report/{board}.html" for board in boards]}
    assert {c: {s: sorted(f) for s, f in sub.items()} for c, sub in categories.items()} == \
        {c: {s: sorted(f) for s, f in sub.items()} for c, sub in expected.items()}
    assert len(results) == sum(len(p.get("tables", {})) + len(p.get("figures", {})) for p in wf.papers.values()) + 2
    table4 = results[f"{tmp_path}/R/report/tables/sda/table4.html"]
    assert table4["labels"] == {"output": "table4", "kind": "table", "scale": "demo"}
    assert "STS test sets, Spearman x100" in table4["caption"]
    bert = results[f"{tmp_path}/R/report/leaderboard-bert-base-uncased.html"]
    assert bert["labels"] == {"output": "leaderboard-bert-base-uncased", "kind": "table", "scale": "demo"}
    assert "Backbone tiny-bert (stand-in for bert-base-uncased)" in bert["caption"]
    # offline: no script, stylesheet or image is fetched from elsewhere
    assert not re.search(r"<(script|img|iframe)[^>]+src=[\"']https?:", html)
    assert not re.search(r"<link[^>]+href=[\"']https?:", html)


def test_rst_escape_keeps_captions_literal():
    assert rst_escape("p_sc *x* `y` a|b") == r"p\_sc \*x\* \`y\` a\|b"


def _run(root: Path, method: str, seed: int, device: str) -> Path:
    run = root / "runs" / method / f"seed{seed}"
    run.mkdir(parents=True)
    (run / "train_summary.json").write_text(json.dumps({
        "spec": {"method": method, "seed": seed, "backbone": "tiny", "batch_size": 32}, "steps": 80,
        "device": device, "train_seconds": 9.5, "versions": {"torch": "2.13.0+cpu", "sentaug": "0.1.0"}}))
    return run


def test_provenance_reads_the_runs_and_hashes_the_data(tmp_path):
    data = tmp_path / "data"
    (data / "sts" / "A").mkdir(parents=True)
    (data / "sts" / "A" / "x.txt").write_bytes(b"one\n")
    (data / "sts" / "y.txt").write_bytes(b"two\n")
    (data / "sick").mkdir()
    (data / "sick" / "z.txt").write_bytes(b"")
    results = []
    for seed, device in ((1, "cpu"), (2, "cuda:0")):
        run = _run(tmp_path, "simcse", seed, device)
        f = tmp_path / "eval" / f"seed{seed}.json"
        f.parent.mkdir(exist_ok=True)
        f.write_text(json.dumps({"model": str(run), "data": str(data), "avg": 1.0, "versions": {"torch": "2.13.0"}}))
        results.append(str(f))
    info = collect(results)
    assert info["devices"] == {"cpu": 1, "cuda:0": 1}
    assert info["evaluation_versions"] == {json.dumps({"torch": "2.13.0"}): 2}
    assert {r["seed"] for r in info["runs"].values()} == {1, 2}

    def sha(b: bytes) -> str:
        return hashlib.sha256(b).hexdigest()

    # by hand: sha256 over "relative path<TAB>file sha256\n", sorted by path
    sts = sha(f"A/x.txt\t{sha(b'one' + bytes([10]))}\ny.txt\t{sha(b'two' + bytes([10]))}\n".encode())
    assert info["data"][str(data)]["sts"] == {"sha256": sts, "files": 2, "bytes": 8}
    assert folder_digest(data / "sick") == {"sha256": sha(f"z.txt\t{sha(b'')}\n".encode()), "files": 1, "bytes": 0}



def test_provenance_hashes_only_the_folders_a_record_read(tmp_path):
    """An STS record's data root: its suite's folders (sts, sick), not a corpus downloaded beside them later (a
    page rendered before and after that download was once different); a record that names no suite: all."""
    data = tmp_path / "data"
    for folder in ("sts", "sick", "wiki"):
        (data / folder).mkdir(parents=True)
        (data / folder / "a.txt").write_bytes(folder.encode())
    sts = tmp_path / "sts.json"
    sts.write_text(json.dumps({"suite": "sts", "data": str(data), "avg": 1.0}))
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"stats": "sts", "data": str(data)}))
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"data": str(data)}))
    assert sorted(collect([str(sts)])["data"][str(data)]) == ["sick", "sts"]
    assert sorted(collect([str(stats)])["data"][str(data)]) == ["sick", "sts"]      # (cnsd: not downloaded)
    assert sorted(collect([str(sts), str(bare)])["data"][str(data)]) == ["sick", "sts", "wiki"]

def test_pages_show_the_outputs_numbers_and_provenance(tmp_path):
    paper = tmp_path / "x.yaml"
    paper.write_text("""
short: X
tables:
  t1: {kind: sts, caption: "STS.", columns: [STS12, avg], rows: []}
figures:
  figure1: {caption: "A sweep.", panels: [{kind: bars, title: "(a)", y: {label: s, metric: sts.avg}, series: []}]}
""")
    csv = tmp_path / "t1.csv"
    pd.DataFrame([{"scale": "demo", "block": "BERT", "row": "SimCSE", "column": c, "reproduced": v, "sd": 0.5,
                   "n": 2, "paper": p, "diff": round(v - p, 2)} for c, v, p in (("STS12", 41.25, 68.4),
                                                                                  ("avg", 39.5, 76.25))]).to_csv(csv)
    run = _run(tmp_path, "simcse", 1, "cpu")
    out = tmp_path / "page.html"
    meta = {"short": "X", "seeds": 2, "corpus": "demo_corpus", "stand_ins": {"roberta-base": "tiny-roberta"}}
    render_page("table", "t1", str(out), "demo", json.dumps({"results": [str(run)], "meta": meta}),
                spec_file=str(paper), csv=str(csv))
    page = out.read_text()
    assert "41.25 ± 0.50<br><span class='sub'>paper 68.40 · Δ -27.15</span>" in page
    assert "<td class=\"block\" colspan=\"3\">BERT</td>" in page
    assert "cpu (1 runs)" in page and "2.13.0+cpu" in page and "below paper scale" in page
    assert hashlib.sha256(csv.read_bytes()).hexdigest() in page
    png = tmp_path / "figure1.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    render_page("figure", "figure1", str(out), "demo", json.dumps({"results": [], "meta": {}}), spec_file=str(paper),
                csv=str(csv), png=str(png))
    embedded = re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", out.read_text()).group(1)
    assert base64.b64decode(embedded) == png.read_bytes()
    assert "http" not in out.read_text()
