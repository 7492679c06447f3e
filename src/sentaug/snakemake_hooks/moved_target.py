"""Rule moved_target: a target asked for under results/ when `--config results=DIR` put every output under DIR
answers with where it is now, in one line, instead of Snakemake's MissingRuleException."""
from __future__ import annotations

import os
import re

from ..choices import Answer

# A wildcard pattern that matches no path: rule moved_target's when no output moved.
NO_PATH = "(?!)"


def moved_target_pattern(results: str) -> str:
    """The paths under `results/` that no rule makes when `--config results=` moved every output to `results`
    (those not under it), as the wildcard pattern of rule moved_target; NO_PATH when nothing moved."""
    results = os.path.normpath(results)
    if results == "results":
        return NO_PATH
    inside = results.removeprefix("results" + os.sep) if results.startswith("results" + os.sep) else None
    return f"(?!{re.escape(inside)}/).+" if inside else ".+"


def moved_target(results: str, path: str):
    """Rule moved_target's input function: `results/<path>` was asked for, but `--config results=` put every
    output under `results`. Ends the run with the one-line answer (sentaug.choices.Answer: Snakemake would
    wrap any other exception raised here in a traceback)."""
    results = os.path.normpath(results)
    raise Answer(f"results/{path}: with --config results={results} every output is under {results}/: ask for "
                 f"{results}/{path}")
