"""docs/results.md is generated from the tables built (results/tables/<paper>/<table>.csv): every cell beside the
paper's, at the scale each table was last built, with the date, machine and commit its CSV records."""
import json
import re

import pandas as pd
import pytest

from sentaug.docgen import results_markdown
from sentaug.report.provenance import build_stamp
from sentaug.report.tables import render_table
from tests.test_cli import ROOT

STS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]


def _section(page: str, title: str) -> str:
    return page.split(f"### {title}\n")[1].split("\n### ")[0]


@pytest.fixture()
def built(tmp_path, monkeypatch):
    """SDA Table 4 rendered from result files at scale small (SimCSE-BERT over two seeds), Table 5 written as
    skipped at demo scale, CARDS Table 3 from before the CSV recorded its build."""
    monkeypatch.chdir(ROOT)
    results = tmp_path / "results"
    files = {}
    for name, base in {"pre": 40.0, "s1": 70.0, "s2": 73.0}.items():
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps({c: base + i for i, c in enumerate(STS)}))
    rows = {str(i): [str(files["pre"])] for i in range(10)} | {"1": [str(files["s1"]), str(files["s2"])]}
    render_table("papers/sda.yaml", "table4", json.dumps({"rows": rows}), str(results / "tables/sda/table4.tex"),
                 "small")
    render_table("papers/sda.yaml", "table5", json.dumps({"rows": {}, "meta": {"skipped": ["no Chinese pipeline"]}}),
                 str(results / "tables/sda/table5.tex"), "demo")
    render_table("papers/cards.yaml", "table3", json.dumps({"rows": {str(i): [str(files["pre"])] for i in range(8)}}),
                 str(results / "tables/cards/table3.tex"), "demo")
    old = results / "tables/cards/table3.csv"
    pd.read_csv(old).drop(columns=["built", "machine", "commit"]).to_csv(old, index=False)
    return results_markdown("config.yaml", str(results)), results


def test_each_cell_beside_the_papers_at_the_scale_built_with_date_machine_and_commit(built):
    page, results = built
    assert "Built: 3 of 34 tables, at scale demo, small." in page
    table4 = _section(page, "SDA table4")
    stamp = pd.read_csv(results / "tables/sda/table4.csv").iloc[0]
    assert f"Scale **small**, built {stamp['built']} on {stamp['machine']}, commit {stamp['commit']}." in table4
    assert stamp["machine"] == build_stamp()["machine"] and re.fullmatch(r"[0-9a-f]{12}(-dirty)?", stamp["commit"])
    # SimCSE-BERT-base: seeds 70 + i and 73 + i: mean 71.5 + i, sample sd 3 / sqrt(2) = 2.12; the paper's row below
    assert "| SimCSE-BERT-base (n=2) | 71.50 ± 2.12 | 72.50 ± 2.12 | 73.50 ± 2.12 |" in table4
    simcse = table4.split("| SimCSE-BERT-base (n=2) |")[1].splitlines()[1]
    assert simcse == "| ↳ paper | 68.40 | 82.41 | 74.38 | 80.91 | 78.56 | 76.85 | 72.23 | 76.25 |"
    assert "| BERT-base (first-last avg.) (n=1) | 40.00 | 41.00 |" in table4      # one seed: no sd
    assert "| *BERT models* |" in table4 and "| *RoBERTa models* |" in table4


def test_skipped_unbuilt_and_older_tables_say_so(built):
    page, _ = built
    table5 = _section(page, "SDA table5")
    assert "Scale **demo**" in table5 and "Skipped at this scale: no Chinese pipeline." in table5
    table2 = _section(page, "SDA table2")
    assert "Not built." in table2 and "| test, paper | 3108 | 1500 | 3750 | 3000 | 1186 | 1379 | 4927 | 1300 |" in table2
    assert "built before the CSV recorded date, machine and commit" in _section(page, "CARDS table3")


def test_every_relative_link_of_the_readme_and_docs_resolves():
    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            path = (page.parent / target).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 130
    for page in (ROOT / "docs").glob("*.md"):     # the map of docs/ names every page
        assert f"(docs/{page.name})" in readme, page.name
