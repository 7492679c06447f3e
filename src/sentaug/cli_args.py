"""What every `sentaug` command shares: its parser class (each subcommand's one-line help is also its
description; former spellings of a flag kept as hidden aliases), and the arguments that mean the same thing in
every command: `--model`, `--pooler` (with its default from the model), `--batch-size` and `--device`,
`--spec`, `--out`.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

POOLERS = ("cls", "cls_before_pooler", "avg", "avg_top2", "avg_first_last", "avg_emb_last")
DEFAULT_POOLER = "cls_before_pooler"      # what unsupervised SimCSE evaluates
PRECISIONS = ("auto", "fp32", "bf16")      # an embedding's arithmetic (sentaug.models.encoder.embedding_dtype)


def hidden_alias(action: argparse.Action, *spellings: str) -> argparse.Action:
    """Keep `spellings` of `action` working (rules, scripts and tests use them) but out of the help."""
    action.hidden_aliases = spellings
    return action


class Formatter(argparse.HelpFormatter):
    """argparse's formatter without hidden aliases, lines never broken at a hyphen, at a fixed width where the
    terminal is wider (docs/cli.md is generated at that width)."""

    WIDTH = 100

    def __init__(self, prog, **kwargs):
        import shutil

        kwargs.setdefault("width", min(shutil.get_terminal_size().columns - 2, self.WIDTH))
        super().__init__(prog, max_help_position=32, **kwargs)

    def _split_lines(self, text, width):       # never at a hyphen: "NL-Augmenter", "top-k" stay whole
        import textwrap

        return textwrap.wrap(self._whitespace_matcher.sub(" ", text).strip(), width, break_on_hyphens=False)

    def _fill_text(self, text, width, indent):
        import textwrap

        return textwrap.fill(self._whitespace_matcher.sub(" ", text).strip(), width, initial_indent=indent,
                             subsequent_indent=indent, break_on_hyphens=False)

    def _format_action_invocation(self, action):
        hidden = getattr(action, "hidden_aliases", ())
        if not hidden:
            return super()._format_action_invocation(action)
        shown = argparse.Action([s for s in action.option_strings if s not in hidden], action.dest,
                                nargs=action.nargs, metavar=action.metavar)
        return super()._format_action_invocation(shown)


class _Commands(argparse._SubParsersAction):
    """Subcommands whose description is their one-line help unless they give their own."""

    def add_parser(self, name, **kwargs):
        kwargs.setdefault("description", kwargs.get("help"))
        return super().add_parser(name, **kwargs)


class Parser(argparse.ArgumentParser):
    """The parser of `sentaug` and of each of its subcommands (add_subparsers makes them of this class too)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _Commands)

    def error(self, message):
        """A mistake on the command line in two lines: what was wrong (with the valid choices, closest first),
        and where the command's arguments are described (argparse's usage block, several lines, is left out)."""
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} -h` describes its arguments)\n")

    def _check_value(self, action, value):
        """A value that is not one of an argument's choices (a command, suite, scale...): the closest ones first."""
        if action.choices is not None and value not in action.choices:
            from .choices import unknown

            what = action.metavar.lower() if isinstance(action.metavar, str) else "choice"
            raise argparse.ArgumentError(action, unknown(what, value, [str(c) for c in action.choices],
                                                         full_list=f"{self.prog} --help"))


def group_commands(parser: argparse.ArgumentParser, sections: dict[str, list[str]]) -> None:
    """`parser --help` lists its commands under the headings of `sections` (heading -> command names, in order)
    instead of in one block; every command is under exactly one heading. `parser.command_sections` keeps them
    (docs/cli.md is laid out the same way)."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    by_name = {a.dest: a for a in commands._choices_actions}
    listed = [name for names in sections.values() for name in names]
    if sorted(listed) != sorted(by_name):
        raise ValueError(f"commands not under exactly one heading: {sorted(set(listed) ^ set(by_name))}")
    parser._positionals._group_actions.remove(commands)     # usage still shows COMMAND; its list is below
    for title, names in sections.items():
        parser.add_argument_group(title)._group_actions.extend(by_name[name] for name in names)
    parser.command_sections = sections


def model_arg(parser, help: str = "model folder (Hugging Face layout): a backbone or a trained run",
              alias: bool = False, metavar: str = "DIR") -> None:
    """--model DIR; `alias`: the command spelled it --backbone before, which still works."""
    if alias:
        hidden_alias(parser.add_argument("--model", "--backbone", dest="model", required=True, metavar=metavar,
                                         help=help), "--backbone")
    else:
        parser.add_argument("--model", required=True, metavar=metavar, help=help)


def pooler_arg(parser, trained: bool = True, sentence_transformers: bool = False) -> None:
    """--pooler, defaulting (`trained`) to the eval pooler of the model's train_summary.json, then
    (`sentence_transformers`) to the pooling of the folder's sentence-transformers modules, else
    cls_before_pooler (`default_pooler`, `sentaug.models.model_folder.choose_embedding`)."""
    where = "the eval_pooler of the model's train_summary.json, else " if trained else ""
    if sentence_transformers:
        where += "the pooling and normalisation of the folder's sentence-transformers modules, else "
    parser.add_argument("--pooler", choices=POOLERS, default=None,
                        help=f"sentence vector: {', '.join(POOLERS)} (default: {where}{DEFAULT_POOLER})")


def out_arg(parser, what: str) -> None:
    """--out, required: what the command writes (every command writes its outputs atomically: a file or folder
    appears whole, or not at all)."""
    parser.add_argument("--out", required=True, help=what)


def forward_args(parser, batch_size: int | None = 128, batch_help: str | None = None,
                 device_help: str = "cpu or cuda (default: cuda where there is one)") -> None:
    """--batch-size and --device: how a command that embeds sentences runs its forward passes."""
    parser.add_argument("--batch-size", type=int, default=batch_size,
                        help=batch_help or f"sentences per forward pass (default: {batch_size})")
    parser.add_argument("--device", default=None, help=device_help)


def precision_arg(parser) -> None:
    """--precision of the embeddings: auto (bf16 on a GPU, fp32 on the CPU), fp32 or bf16."""
    parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                        help="the embeddings' arithmetic: auto (bf16 on a GPU, fp32 on the CPU), fp32 or bf16")


def run_eval_pooler(model: str | Path) -> str | None:
    """The pooler a run written here was selected with (its train_summary.json's spec), or None."""
    summary = Path(model) / "train_summary.json"
    if summary.is_file():
        from .intermediates import read_result

        spec = read_result(summary, "run summary").get("spec", {})
        if spec.get("eval_pooler") in POOLERS:
            return spec["eval_pooler"]
    return None


def default_pooler(model: str | Path, pooler: str | None) -> str:
    """`pooler` if given; else the pooler a run written here was selected with, else cls_before_pooler."""
    return pooler or run_eval_pooler(model) or DEFAULT_POOLER


def spec_arg(parser, what: str) -> None:
    """--spec: `what`, as inline JSON or a file holding it (.json, .yaml)."""
    parser.add_argument("--spec", required=True, metavar="JSON|FILE",
                        help=f"{what}: inline JSON, or a .json/.yaml file holding it")


def load_spec(value: str) -> dict:
    """The value of --spec: inline JSON (it starts with '{'), else a JSON or YAML file."""
    if value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError as e:
            raise ValueError(f"--spec is not valid JSON ({e})") from e
    path = Path(value)
    if not path.is_file():
        raise FileNotFoundError(f"--spec: no such file: {path} (give a file, or inline JSON starting with '{{')")
    if path.suffix in (".yaml", ".yml"):
        import yaml

        return yaml.safe_load(path.read_text(encoding="utf-8"))
    from .intermediates import read_result

    return read_result(path, "spec file")
