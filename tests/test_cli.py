"""The command line's own behaviour: progress bars in a job's log file; a command line for people (--version, a
one-line help per command, one flag per thing with the former spellings hidden, defaults for --pooler and --data,
`sentaug list`, docs/cli.md in sync with the parser)."""
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from sentaug.progress import LOG_PROGRESS_INTERVAL_S

ROOT = Path(__file__).resolve().parents[1]

# What a handler does: tqdm imported after the command line started, its bar drawn on stderr.
BAR_INTERVALS = ("from sentaug.cli import space_progress_in_logs; space_progress_in_logs(); "
                "from tqdm.auto import tqdm; bar = tqdm(range(3)); print(bar.mininterval, bar.maxinterval)")


def bar_intervals(stderr, **env) -> tuple[float, float]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TQDM_")} | env
    run = subprocess.run([sys.executable, "-c", BAR_INTERVALS], stdout=subprocess.PIPE, stderr=stderr,
                         env=environ, text=True, check=True)
    return tuple(float(x) for x in run.stdout.split())


def test_a_bar_in_a_log_file_is_redrawn_every_30_s(tmp_path):
    with open(tmp_path / "job.log", "w") as log:
        assert bar_intervals(log) == (LOG_PROGRESS_INTERVAL_S, LOG_PROGRESS_INTERVAL_S) == (30, 30)


def test_a_bar_on_a_terminal_keeps_tqdms_intervals():
    leader, follower = pty.openpty()
    try:
        assert bar_intervals(follower) == pytest.approx((0.1, 10))   # tqdm's own defaults
    finally:
        os.close(leader), os.close(follower)


def test_an_interval_the_user_set_wins(tmp_path):
    with open(tmp_path / "job.log", "w") as log:
        assert bar_intervals(log, TQDM_MININTERVAL="60") == (60, 60)   # the maximum follows it


# -- a command line for people -----------------------------------------------------------------------------------

def _commands():
    from sentaug.cli import build_parser
    from sentaug.docgen import _commands as walk

    return list(walk(build_parser()))


def test_version_is_written_once_and_the_release_files_agree():
    """pyproject.toml takes the version from sentaug.__version__; CITATION.cff, the CHANGELOG's newest release
    and its release notes name that version and one date."""
    import re
    import tomllib

    import yaml

    from sentaug import __version__
    from sentaug.cli import main

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "sentaug.__version__"}
    out = subprocess.run([sys.executable, "-m", "sentaug.cli", "--version"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=True).stdout
    assert out.strip() == f"sentaug {__version__}"
    with pytest.raises(SystemExit):
        main(["--version"])
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    released = re.search(r"^## (\S+) \((\d{4}-\d\d-\d\d)\)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert (citation["version"], str(citation["date-released"])) == (__version__, released[2])
    assert released[1] == __version__
    notes = (ROOT / "docs" / "releases" / f"v{__version__}.md").read_text()
    assert notes.startswith(f"# sentaug {__version__} ({released[2]})")


def test_every_command_has_a_one_line_help_and_the_overview_shows_it_whole():
    import re

    commands = _commands()
    assert len(commands) >= 30 and all(text and "\n" not in text for _, _, text in commands)
    top = subprocess.run([sys.executable, "-m", "sentaug.cli", "--help"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "80"}, check=True).stdout
    flat = " ".join(top.split())
    assert flat.split("options:")[0].rstrip().endswith("shows what it can build.")
    # the commands a person types first, under their own heading, then the rules' (and the docs' generator)
    sections, heading = {}, None
    for line in top.splitlines():
        if line and not line.startswith(" "):
            heading = line.rstrip(":")
        elif re.match(r"  [a-z]", line):
            sections.setdefault(heading, []).append(line.split()[0])
    top_level = [p[0] for p, _, _ in commands if len(p) == 1]
    assert list(sections) == ["commands for people", "commands the workflow's rules run",
                                  "commands that write docs/ (make docs-cli, make docs-results)"]
    assert sections["commands for people"] == ["list", "evaluate", "cost", "download", "docs"]
    assert sections["commands that write docs/ (make docs-cli, make docs-results)"] == ["generate-docs"]
    assert sorted(sum(sections.values(), [])) == sorted(top_level)     # each under exactly one
    for path, _, text in commands:
        if len(path) == 1:      # each command's help, whole, beside its name
            assert re.search(rf"\b{re.escape(path[0])} +{re.escape(' '.join(text.split()))}", flat), path


def test_one_flag_per_thing_the_former_spellings_hidden_but_working():
    from sentaug.cli import build_parser

    parser = build_parser()
    helps = {path: sub.format_help() for path, sub, _ in _commands()}
    assert not [p for p, h in helps.items() if "--backbone" in h]          # a model folder is --model everywhere
    assert "--triplets NAME=SET" in helps["evaluate", "nli"] and "--set" not in helps["evaluate", "nli"]
    assert "--paper-file" in helps["report", "page"] and "--spec" not in helps["report", "page"]
    old = {("train", "--spec", "{}", "--corpus", "c", "--backbone", "B", "--dev-data", "d", "--out", "o"): ("model", "B"),
           ("index", "--corpus", "c", "--backbone", "B", "--k", "4", "--out", "o.npz"): ("model", "B"),
           ("tokenize", "--texts", "t", "--backbone", "B", "--max-length", "32", "--out", "o"): ("model", "B"),
           ("describe", "model-size", "--spec", "{}", "--backbone", "B", "--out", "o"): ("model", "B"),
           ("parse", "--corpus", "c", "--out", "o", "--model", "en_x"): ("spacy_model", "en_x"),
           ("evaluate", "nli", "--model", "M", "--set", "nli=snli", "--out", "o"): ("triplets", ["nli=snli"]),
           ("report", "page", "--kind", "table", "--name", "t", "--spec", "p.yaml", "--inputs", "{}", "--scale", "demo",
            "--out", "o"): ("paper_file", "p.yaml")}
    for argv, (dest, value) in old.items():
        assert getattr(parser.parse_args(argv), dest) == value, argv


def test_spec_is_inline_json_or_a_file(tmp_path):
    from sentaug.cli_args import load_spec

    spec = {"method": "simcse", "seed": 1, "positive": {"source": "dropout"}}
    (tmp_path / "s.json").write_text(json.dumps(spec))
    (tmp_path / "s.yaml").write_text("method: simcse\nseed: 1\npositive: {source: dropout}\n")
    for given in (json.dumps(spec), str(tmp_path / "s.json"), str(tmp_path / "s.yaml")):
        assert load_spec(given) == spec, given
    with pytest.raises(FileNotFoundError, match="no such file: missing.json"):
        load_spec("missing.json")


def test_the_pooler_defaults_to_the_runs_then_simcses(tmp_path):
    from sentaug.cli_args import default_pooler

    run, backbone = tmp_path / "run", tmp_path / "backbone"
    run.mkdir(), backbone.mkdir()
    (run / "train_summary.json").write_text(json.dumps({"spec": {"eval_pooler": "avg"}}))
    assert default_pooler(run, None) == "avg"                     # what the run was selected with
    assert default_pooler(backbone, None) == "cls_before_pooler"  # a backbone: what unsupervised SimCSE evaluates
    assert default_pooler(run, "cls") == "cls"                    # given: kept


def test_docs_cli_md_is_generated_from_the_parser():
    from sentaug.cli import build_parser
    from sentaug.docgen import cli_markdown

    assert (ROOT / "docs/cli.md").read_text(encoding="utf-8") == cli_markdown(build_parser), "run `make docs-cli`"


def _listed(capsys, *argv) -> dict[str, dict]:
    """`sentaug list ...`, parsed: name -> {built, path, what}."""
    import re

    from sentaug.cli import main

    capsys.readouterr()
    assert main(["list", *argv]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert re.split(r"\s{2,}", header) == ["NAME", "BUILT", "PATH", "WHAT"]
    return {cells[0]: dict(zip(("built", "path", "what"), cells[1:]))
            for cells in (re.split(r"\s{2,}", line, maxsplit=3) for line in lines)}


def test_list_says_what_can_be_built_and_at_which_scale_it_is(tmp_path, monkeypatch, capsys):
    """Outputs written as the workflow writes them: a table rendered at scale small, one written as skipped at
    demo, runs at two scales (a variant counting with its method), caches of two corpora."""
    from sentaug.report.tables import render_table

    monkeypatch.chdir(ROOT)                 # config.yaml and papers/ of the checkout
    results = tmp_path / "results"
    sts = tmp_path / "sts.json"
    columns = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]
    sts.write_text(json.dumps(dict.fromkeys(columns, 60.0)))
    render_table("papers/sda.yaml", "table4", json.dumps({"rows": {str(i): [str(sts)] for i in range(10)}}),
                 str(results / "tables/sda/table4.tex"), "small")
    render_table("papers/sda.yaml", "table5", json.dumps({"rows": {}, "meta": {"skipped": ["no Chinese pipeline"]}}),
                 str(results / "tables/sda/table5.tex"), "demo")
    for run in ("demo/shared/tiny-bert/simcse/seed1", "small/shared/minilm/simcse/seed1",
                "small/shared/minilm/simcse/seed2", "small/shared/minilm/simcse~train.lowercase=true/seed1",
                "small/shared/minilm/sda_pi/seed1.partial"):         # not a run: unfinished
        (results / "runs" / run).mkdir(parents=True)
        (results / "runs" / run / "train_summary.json").write_text("{}")
    for cache in ("demo_corpus/sda_pi/seed1", "wiki1m_head1k/sda_pi/seed1"):
        (results / "augment" / cache).parent.mkdir(parents=True)
        (results / "augment" / f"{cache}.parquet").write_bytes(b"")

    tables = _listed(capsys, "tables", "--results", str(results))
    assert len([t for t in tables if "/" in t and not t.startswith("compare/")]) == 34
    assert tables["sda/table4"]["built"].startswith("small (20") and tables["sda/table2"]["built"] == "not built"
    assert tables["sda/table4"]["path"] == f"{results}/tables/sda/table4.tex"
    assert tables["sda/table5"]["built"].startswith("demo: skipped, no Chinese pipeline")
    assert {"leaderboard", "leaderboard-bert-base-uncased"} <= set(tables)
    figures = _listed(capsys, "figures", "--results", str(results))
    assert len([f for f in figures if "/" in f]) == 13 and figures["cards/figure2"]["built"] == "not built"
    methods = _listed(capsys, "methods", "--results", str(results))
    assert methods["simcse"]["built"] == "demo (1 run), small (3 runs)"
    assert methods["sda_pi"]["built"] == "not built" and methods["sda_pi"]["what"] == "cache: sda_pi"
    augmentations = _listed(capsys, "augmentations", "--results", str(results))
    assert augmentations["sda_pi"]["built"] == "demo (demo_corpus), small/test (wiki1m_head1k)"
    assert augmentations["sda_pi"]["what"] == "punctuation_insertion"
    assert augmentations["cards_sc_v1"]["built"] == "not built"


def test_evaluate_sts_fetches_its_data_when_none_is_given(tmp_path, minilm_path, monkeypatch, capsys):
    """Without --data: the demo STS/SICK files are installed into $SENTAUG_DATA once, then read from there; the
    scores are those of the same evaluation given that folder, under the default pooler."""
    from sentaug.cli import main
    from tests.train.test_train import write_backbone

    monkeypatch.setenv("SENTAUG_DATA", str(tmp_path / "home"))
    model = write_backbone(tmp_path / "bb", minilm_path, dropout=0.0)
    fetched = ["evaluate", "sts", "--model", model, "--origin", "demo", "--out", str(tmp_path / "fetched.json")]
    assert main(fetched) == 0
    assert f"fetching senteval (demo) into {tmp_path / 'home/demo'}" in capsys.readouterr().out
    assert (tmp_path / "home/demo/sts/STSBenchmark/sts-test.csv").is_file()
    given = ["evaluate", "sts", "--model", model, "--pooler", "cls_before_pooler", "--data",
             str(tmp_path / "home/demo"), "--out", str(tmp_path / "given.json")]
    assert main(given) == 0 and main(fetched) == 0
    assert "fetching" not in capsys.readouterr().out                           # installed once
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("fetched", "given"))
    assert a["pooler"] == "cls_before_pooler" and a["data"] == b["data"] == str(tmp_path / "home/demo")
    assert {k: a[k] for k in ("STS12", "STSBenchmark", "avg")} == {k: b[k] for k in ("STS12", "STSBenchmark", "avg")}


@pytest.mark.mirror
def test_evaluate_fetches_the_official_data_through_the_mirror(tmp_path, mirror, monkeypatch, capsys):
    from sentaug.evaluate.cli import suite_data

    monkeypatch.setenv("SENTAUG_DATA", str(tmp_path))
    monkeypatch.setenv("SENTAUG_MIRROR", str(mirror))
    home = suite_data("sts", None)
    assert home == str(tmp_path / "official")
    said = capsys.readouterr().out.splitlines()        # the message says the mirror was used
    assert said[0] == (f"fetching senteval (official) into {tmp_path / 'official'}, from the mirror {mirror} "
                       f"($SENTAUG_MIRROR) where it holds the files")
    assert said[1].startswith("senteval: ") and f"file(s) from the mirror {mirror}, checked against their pins" in said[1]
    for name in ("sts/STSBenchmark/sts-test.csv", "sick/SICK_test_annotated.txt"):
        assert (tmp_path / "official" / name).read_bytes() == (mirror / name).read_bytes()


# What each example of docs/cli.md's header means, keyed by its words before the first option: the command
# that runs it, and a key option with what it should parse to (a repeated or several-valued option: a list).
CLI_EXAMPLES = {
    "list tables": ("cmd_list", {"what": "tables"}),
    "evaluate sts": ("cmd_evaluate_sts", {"model": "MODEL", "out": "FILE.json"}),
    "evaluate cnsd": ("cmd_evaluate_cnsd", {"data": "DIR"}),
    "evaluate nli": ("cmd_evaluate_nli", {"triplets": ["nli=snli", "anli=anli_devtest"]}),
    "evaluate cola": ("cmd_evaluate_cola", {"data": "DIR"}),
    "download transfer": ("cmd_download", {"name": "transfer", "out": "DIR"}),
    "data-stats sts": ("cmd_data_stats", {"what": "sts", "data": "DIR"}),
    "augment": ("cmd_augment", {"list": True}),
    "augment punctuation_insertion": ("cmd_augment", {"name": "punctuation_insertion", "seed": 1}),
    "augment switch_case": ("cmd_augment", {"param": ["p=0.05", "version=v1"], "tokenizer": "MODEL"}),
    "augment-cosine": ("cmd_augment_cosine", {"cache": "FILE.parquet", "model": "MODEL"}),
    "report census": ("cmd_report_census", {"scale": "demo", "out": "results/tables/augmentations.tex"}),
    "conformance": ("cmd_conformance", {"out": "FILE.json"}),
    "tokenization-effects": ("cmd_tokenization_effects", {"tokenizer": "mirror:roberta-base-tokenizer"}),
    "token-pca": ("cmd_token_pca", {"model": "MODEL", "corpus": "FILE"}),
    "report leaderboard": ("cmd_report_leaderboard", {"paper_file": "papers/leaderboard.yaml", "figure": "F.pdf"}),
    "report leaderboard-progress": ("cmd_report_leaderboard_progress", {"board": "B", "scale": "S"}),
    "report page": ("cmd_report_page", {"kind": "table", "csv": "FILE"}),
    "project": ("cmd_project", {"caches": ["A.parquet", "B.parquet"], "method": "pca"}),
    "index": ("cmd_index", {"k": 64, "model": "MODEL"}),
    "train": ("cmd_train", {"spec": "JSON", "dev_data": "DIR"}),
    "nli-triplets": ("cmd_nli_triplets", {"set": "snli"}),
    "describe spec": ("cmd_describe_spec", {"spec": "JSON"}),
    "describe model-size": ("cmd_describe_model_size", {"model": "MODEL"}),
    "tokenize": ("cmd_tokenize", {"texts": "FILE.txt", "max_length": 32}),
}


def test_the_examples_of_docs_cli_md_parse_to_what_they_say():
    """Each example of the reference's header (options in brackets left out, the first of `a|b` alternatives
    taken) runs the command it names, with its key option parsed as written (CLI_EXAMPLES)."""
    import re
    import shlex

    from sentaug.cli import build_parser
    from sentaug.docgen import CLI_HEADER

    parser = build_parser()
    examples = CLI_HEADER.split("```bash\n")[1].split("```")[0].splitlines()
    seen = set()
    for line in examples:
        line = line.split("  #")[0]
        while re.search(r"\[[^\[\]]*\]", line):
            line = re.sub(r"\s*\[[^\[\]]*\]", "", line)
        argv = [word.split("|")[0] for word in shlex.split(line)]
        assert argv[0] == "sentaug"
        words = " ".join(argv[1:next((i for i, w in enumerate(argv) if w.startswith("-")), len(argv))])
        assert words in CLI_EXAMPLES, f"{line}: add what it runs and a key option to CLI_EXAMPLES"
        parsed = parser.parse_args(argv[1:])    # exits (SystemExit) on an unknown or missing argument
        handler, options = CLI_EXAMPLES[words]
        assert parsed.func.__name__ == handler, line
        assert {k: getattr(parsed, k) for k in options} == options, line
        seen.add(words)
    assert seen == set(CLI_EXAMPLES)


def test_evaluate_glue_fetches_only_the_tasks_asked_for(tmp_path, monkeypatch):
    from sentaug.evaluate.cli import suite_data

    monkeypatch.setenv("SENTAUG_DATA", str(tmp_path))
    assert suite_data("glue", None, "demo", ["CoLA,RTE"]) == str(tmp_path / "demo")
    assert sorted(p.name for p in (tmp_path / "demo/glue").iterdir()) == ["CoLA", "RTE"]
    assert suite_data("glue", str(tmp_path / "mine"), "demo", ["SST-2"]) == str(tmp_path / "mine")   # given: kept
    assert not (tmp_path / "demo/glue/SST-2").exists()
