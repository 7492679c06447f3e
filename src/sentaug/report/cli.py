"""`sentaug report <what>`: render the paper tables, figures, leaderboards, comparisons, the census and the report
pages (their handlers and arguments); `sentaug describe` (what a run is) and `sentaug augment-cosine` (the census's
first step); added to the command line by `sentaug.cli`. Handlers import lazily.

One flag per concept: `--paper-file` is the papers/ file that declares the output (papers/<paper>.yaml, or
papers/leaderboard.yaml for a board); `--spec`, its former spelling in `page` and `leaderboard`, still works.
"""
from __future__ import annotations

from ..cli_args import forward_args, hidden_alias, load_spec, model_arg, out_arg, spec_arg


def cmd_report_table(a):
    from .tables import render_table

    render_table(a.paper_file, a.table, a.inputs, a.out, scale=a.scale)


def cmd_report_figure(a):
    from .figures import render_figure

    render_figure(a.paper_file, a.figure, a.inputs, a.out, scale=a.scale)


def cmd_report_page(a):
    from .pages import render_page

    render_page(a.kind, a.name, a.out, a.scale, a.inputs, spec_file=a.paper_file, csv=a.csv, png=a.png)


def cmd_report_leaderboard(a):
    from .leaderboard import render_leaderboard

    render_leaderboard(a.paper_file, a.board, a.inputs, a.out, a.figure, scale=a.scale)


def cmd_report_compare(a):
    from .compare import render_comparison

    render_comparison(a.name, a.inputs, a.out, scale=a.scale)


def cmd_report_census(a):
    from .census import render_census

    render_census(a.inputs, a.out, scale=a.scale)


def cmd_report_front_page(a):
    from .front_page import render_front_page

    render_front_page(a.data, a.out, a.page, build_flags=a.build_flags)


def cmd_augment_cosine(a):
    from .census import embedding_stats

    embedding_stats(a.cache, a.model, a.out, max_lines=a.max_lines or None, batch_size=a.batch_size,
                    device=a.device)


def cmd_describe_spec(a):
    from .describe import describe_spec_cli

    describe_spec_cli(load_spec(a.spec), a.out, a.paper)


def cmd_describe_model_size(a):
    from .describe import describe_model_size_cli

    describe_model_size_cli(load_spec(a.spec), a.model, a.out)


def result_args(parser, inputs: str, out: str) -> None:
    """--inputs, --scale and --out, which every report command that renders result files takes."""
    parser.add_argument("--inputs", required=True, help=inputs)
    parser.add_argument("--scale", required=True, help="the scale the results were built at (recorded in the output)")
    out_arg(parser, out)


def add_report_commands(sub, leaderboard_progress) -> None:
    """`report` and one subcommand per kind of output, under the command line's subparsers `sub`.
    `leaderboard_progress` handles `report leaderboard-progress`, which asks the workflow for the board's result
    files: the command line passes it, as the report imports nothing of the workflow."""
    r = sub.add_parser("report", help="render a paper table, figure, leaderboard, comparison, census or report page "
                                      "from result files")
    rs = r.add_subparsers(dest="what", required=True, metavar="WHAT")
    # a paper's tables and figures take the same arguments
    for kind, made, example, points, out, func in (
            ("table", ".tex and .csv (cells beside the paper's)", "table4", '"rows": {"<row index>": [result files]}',
             ".tex path; the .csv is written beside it", cmd_report_table),
            ("figure", ".pdf, .png and the .csv behind it", "figure2", '"panels": [[point, ...], ...]',
             ".pdf path; the .png and .csv are written beside it", cmd_report_figure)):
        p = rs.add_parser(kind, help=f"one paper {kind} from its result files: {made}")
        p.add_argument("--paper-file", required=True, help=f"papers/<paper>.yaml, which declares the {kind}")
        p.add_argument(f"--{kind}", required=True, help=f"the {kind}'s name in that file, e.g. {example}")
        result_args(p, inputs=f'JSON {{{points}, "meta": {{...}}}}', out=out)
        p.set_defaults(func=func)
    pg = rs.add_parser("page", help="one self-contained HTML page (output, caption, numbers, provenance): an entry "
                                    "of the Snakemake report")
    pg.add_argument("--kind", required=True, choices=["table", "figure", "leaderboard", "census"])
    pg.add_argument("--name", required=True, help="the table's or figure's name (a leaderboard's: its board)")
    hidden_alias(pg.add_argument("--paper-file", "--spec", dest="paper_file",
                                 help="papers/<paper>.yaml (or papers/leaderboard.yaml)"), "--spec")
    pg.add_argument("--csv", help="the output's CSV")
    pg.add_argument("--png", help="the figure's PNG")
    result_args(pg, inputs='JSON {"results": [result files or run folders], "meta": {...}}', out=".html")
    pg.set_defaults(func=cmd_report_page)
    lb = rs.add_parser("leaderboard", help="every method on equal terms: means and paired differences to the "
                                           "baseline with t intervals over seeds")
    hidden_alias(lb.add_argument("--paper-file", "--spec", dest="paper_file", required=True,
                                 help="papers/leaderboard.yaml"), "--spec")
    lb.add_argument("--board", required=True, help="leaderboard (the first backbone's) or leaderboard-<backbone>")
    result_args(lb, inputs='JSON {"rows": [...], "meta": {...}} (Workflow.leaderboard_points)',
                out=".tex path; the .csv and .md are written beside it")
    lb.add_argument("--figure", required=True, help=".pdf path; the .png is written beside it")
    lb.set_defaults(func=cmd_report_leaderboard)
    cp = rs.add_parser("compare", help="a comparison (config key comparisons): the configuration's methods beside "
                                       "SimCSE and the papers' main methods, as the leaderboard computes its cells")
    cp.add_argument("--name", required=True, help="the comparison's name (config key comparisons.<name>)")
    result_args(cp, inputs=('JSON {"spec": {...}, "rows": [...], "meta": {...}} '
                                 '(Workflow.comparisons, comparison_points, comparison_meta)'),
                out=".tex path; the .csv and .md are written beside it")
    cp.set_defaults(func=cmd_report_compare)
    lp = rs.add_parser("leaderboard-progress", help="a board from whichever result files exist now (pending cells "
                                                    "say how many seeds are written), as Markdown on stdout")
    lp.add_argument("--board", default="leaderboard", help="leaderboard (the first backbone's) or "
                                                           "leaderboard-<backbone>")
    lp.add_argument("--scale", required=True, help="the scale whose result files to read")
    lp.add_argument("--config", default="config.yaml", help="the workflow's configuration (default: config.yaml)")
    lp.add_argument("--results", default="results", help="the results folder (default: results)")
    lp.set_defaults(func=leaderboard_progress)
    ce = rs.add_parser("census", help="augmentation census table (share changed, edit distance, length, cosine)")
    result_args(ce, inputs=('JSON {"rows": {name: {"stats": cache stats JSON, "embedding": augment-cosine JSON}}, '
                                 '"meta": {...}}'),
                out=".tex path; the .csv is written beside it")
    ce.set_defaults(func=cmd_report_census)
    fp = rs.add_parser("front-page", help="the report's front page (RST) and the bill's page (HTML), from the data "
                                          "`sentaug cost all --front-page` writes")
    fp.add_argument("--data", required=True, help="<results>/report/bill.<scale>.json")
    out_arg(fp, "the front page (.rst), which the Snakefile's `report:` takes")
    fp.add_argument("--page", required=True, help="the bill's page (.html): its full table")
    fp.add_argument("--build-flags", default="", metavar="FLAGS",
                    help="the build's --config/--configfile flags, added to each command the front page gives for "
                         "what is not built yet")
    fp.set_defaults(func=cmd_report_front_page)


def add_describe_commands(sub) -> None:
    """`describe spec` and `describe model-size` under the command line's subparsers `sub`."""
    de = sub.add_parser("describe", help="what a run is, as JSON (the tables that are configuration)")
    des = de.add_subparsers(dest="what", required=True, metavar="WHAT")
    dsp = des.add_parser("spec", help="the resolved training spec, and its recipe's rows in docs/fidelity.md")
    spec_arg(dsp, "resolved training spec")
    dsp.add_argument("--paper", help="the run's paper component (a paper, simcse, leaderboard): the record names "
                                     "its section of docs/fidelity.md")
    out_arg(dsp, "JSON")
    dsp.set_defaults(func=cmd_describe_spec)
    dm = des.add_parser("model-size", help="parameters in training and at inference")
    spec_arg(dm, "resolved training spec")
    model_arg(dm, "the backbone folder (its config.json is read)", alias=True)
    out_arg(dm, "JSON")
    dm.set_defaults(func=cmd_describe_model_size)


def add_census_embedding_command(sub) -> None:
    """`augment-cosine`, the census's first step, under the command line's subparsers `sub`."""
    ac = sub.add_parser("augment-cosine", help="cosine original/augmented and token length change of one cache "
                                               "under a backbone (mean pooling)")
    ac.add_argument("--cache", required=True, help="augmentation cache (parquet)")
    model_arg(ac, "the backbone folder (Hugging Face layout)")
    out_arg(ac, "JSON")
    ac.add_argument("--max-lines", type=int, default=2000, help="cosine sample size (0: every line)")
    forward_args(ac)
    ac.set_defaults(func=cmd_augment_cosine)
