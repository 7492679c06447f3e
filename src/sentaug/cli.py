"""The `sentaug` command line: one subcommand per stage of the workflow (the Snakemake rules call them), and
commands for people: `sentaug list` (what can be built, and what is), `sentaug evaluate` (a model of your own on
the papers' suites), `sentaug docs` (docs/cli.md and docs/results.md, generated).

Each stage's commands live in its package, as `<stage>/cli.py` (`sentaug.data.cli`, `sentaug.augment.cli`,
`sentaug.index.cli`, `sentaug.train.cli`, `sentaug.evaluate.cli`, `sentaug.report.cli`); what every command shares
(one flag per concept) in `sentaug.cli_args`. Heavy libraries
(torch, spaCy, transformers) are imported inside the handlers so that `sentaug --help` and the light stages
start fast.
"""
from __future__ import annotations

import errno
import os
import sys

from . import __version__
from .catalog import add_list_command
from .augment.cli import add_augment_commands
from .choices import Answer
from .cli_args import Parser, group_commands
from .data.cli import add_data_commands
from .docgen import add_docs_commands
from .evaluate.cli import add_analysis_commands, add_evaluate_commands, load_named_modules
from .index.cli import add_index_commands
from .plugins import PluginError
from .progress import space_progress_in_logs
from .report.cli import add_census_embedding_command, add_describe_commands, add_report_commands
from .train.cli import add_train_commands
from .pricing.bill import add_cost_command

DESCRIPTION = ("Reproduce and compare contrastive sentence embeddings trained with data augmentation (VaSCL, "
               "CARDS, CLEAR, AugCSE, SDA). The Snakemake workflow runs these commands; `sentaug list tables` "
               "shows what it can build.")
# The commands a person types, first in `sentaug --help`; the others are what the workflow's rules run (each one
# stage of the workflow, every argument given), under a heading of their own.
FOR_PEOPLE = ("list", "evaluate", "cost", "download", "docs")
FOR_MAINTAINERS = ("generate-docs",)


def cmd_report_leaderboard_progress(a):
    """`sentaug report leaderboard-progress`: here, as it asks the workflow for the board's result files and the
    report imports nothing of the workflow."""
    from . import config as sc
    from .report.leaderboard import board_progress
    from .workflow import Workflow

    config = {**sc.load_yaml(a.config), "scale": a.scale}
    sc.validate(config)    # as the Snakefile does: a bad key or scale is named, not a KeyError deep in a path
    print(board_progress(Workflow(config, results=a.results), a.board), end="")


def build_parser() -> Parser:
    p = Parser(prog="sentaug", description=DESCRIPTION,
               epilog="`sentaug COMMAND -h` describes a command; `sentaug docs cli` lists them all; `sentaug report "
                      "leaderboard-progress --board B --scale S` shows a leaderboard while its runs go.")
    p.add_argument("--version", action="version", version=f"sentaug {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_list_command(sub)
    add_evaluate_commands(sub)
    add_cost_command(sub)
    # the commands the workflow's rules run, stage by stage
    add_data_commands(sub)
    add_augment_commands(sub)
    add_index_commands(sub)
    add_train_commands(sub)
    add_describe_commands(sub)
    add_census_embedding_command(sub)
    add_analysis_commands(sub)
    add_report_commands(sub, leaderboard_progress=cmd_report_leaderboard_progress)
    add_docs_commands(sub, build_parser)
    rules = [name for name in sub.choices if name not in (*FOR_PEOPLE, *FOR_MAINTAINERS)]
    group_commands(p, {"commands for people": list(FOR_PEOPLE), "commands the workflow's rules run": rules,
                       "commands that write docs/ (make docs-cli, make docs-results)": list(FOR_MAINTAINERS)})
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        load_named_modules(argv)      # the suites of `sentaug evaluate --module M` become commands
    except PluginError as e:
        print(f"sentaug {argv[0]}: error: {e}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    space_progress_in_logs()
    try:
        args.func(args)
    except (FileNotFoundError, ValueError, PluginError, Answer) as e:
        # Bad input (a plugin that fails to import too) is reported in one line that names the file, key or
        # module; tracebacks are for bugs. (An Answer comes from the Snakefile: `sentaug cost` resolves its DAG.)
        print(f"sentaug {args.command}: error: {e.message if isinstance(e, Answer) else e}", file=sys.stderr)
        return 2
    except BrokenPipeError:      # the reader stopped reading (`sentaug list tables | head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise
        # A full disk (or quota, or file-size limit): outputs are written atomically, so none was left behind.
        print(f"sentaug {args.command}: error: {e}; no output was written", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    from .evaluate.service import run as in_models_process
    from .job_server import forward

    status = in_models_process(sys.argv[1:], main)   # an evaluation: its model's one process (scales on GPUs)
    if status is None:
        # a local run's job server runs it with the heavy modules imported (this module's `main`: it names itself)
        status = forward(sys.argv[1:], __spec__.name)
    sys.exit(main() if status is None else status)
