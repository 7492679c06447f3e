"""The one answer to a name that is not among the valid choices (a table, figure, paper, scale, method,
augmentation, suite, board, source...): what was given, the closest valid names first (difflib), then the
others, in one line.

    unknown table 'tabel4' of paper 'sda' (did you mean 'table4'?); valid: table4, table2, table3, table5, ...

Long lists are cut after `SHOWN` names, closest first, with where to see them all (`sentaug list methods`).
"""
from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterable

SHOWN = 12          # names a message lists before pointing at the full list
CLOSE = 0.6         # difflib's similarity ratio above which a name counts as a likely meant one


def _similarity(a: str, b: str) -> float:
    """difflib's ratio of two names, ignoring case (`SDA` is `sda`)."""
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def closest_first(name: str, choices: Iterable[str]) -> list[str]:
    """`choices` (duplicates dropped) with the names close to `name` first, closest first (ties in their given
    order), then the others in their given order."""
    choices = list(dict.fromkeys(str(c) for c in choices))
    scores = {c: _similarity(str(name), c) for c in choices}
    close = sorted((c for c in choices if scores[c] >= CLOSE), key=lambda c: -scores[c])   # sorted() is stable
    return close + [c for c in choices if c not in close]


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """The closest valid name to `name`, or None when none is close."""
    ordered = closest_first(name, choices)
    return ordered[0] if ordered and _similarity(str(name), ordered[0]) >= CLOSE else None


def unknown(what: str, name: str, choices: Iterable[str], where: str = "", full_list: str = "") -> str:
    """The message for `name`, not a valid `what` (`where`: of what, e.g. " of paper 'sda'"): the closest match,
    then the valid choices closest first; past SHOWN of them, `full_list` says where to see them all."""
    ordered = closest_first(name, choices)
    if not ordered:
        return f"unknown {what} '{name}'{where}: there are none"
    guess = did_you_mean(name, ordered)
    shown = ordered[:SHOWN]
    rest = len(ordered) - len(shown)
    tail = f", ... ({rest} more{': ' + full_list if full_list else ''})" if rest else ""
    return (f"unknown {what} '{name}'{where}" + (f" (did you mean '{guess}'?)" if guess else "")
            + f"; valid: {', '.join(shown)}{tail}")


class Mistake(ValueError):
    """A user's mistake (a name, a configuration value) whose message says what to do: the command line prints
    it in one line, and around what Snakemake runs of ours it becomes Snakemake's whole answer (`answered`).
    `sentaug.config.ConfigError` is one."""


class UnknownName(Mistake):
    """A name that is not among the valid choices; its message is `unknown(...)`'s."""

    def __init__(self, what: str, name: str, choices: Iterable[str], where: str = "", full_list: str = ""):
        self.what, self.name, self.choices = what, name, closest_first(name, choices)
        super().__init__(unknown(what, name, self.choices, where, full_list))


class Answer(SystemExit):
    """A mistake answered: its message, and nothing else (no traceback). A SystemExit, so that it passes the
    `except Exception` with which Snakemake wraps what an input function raises into its InputFunctionException
    (the rule, the wildcards and a traceback, the message buried in the middle)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class answered(contextlib.ContextDecorator):
    """Around what Snakemake runs of ours (the Snakefile's checks, the input functions that resolve a target's
    wildcards): a `Mistake` in the user's names or configuration becomes an `Answer`, the message alone. Other
    errors stay Snakemake's, with their traceback: bugs."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if isinstance(error, Mistake):
            raise Answer(str(error)) from None
        return False
