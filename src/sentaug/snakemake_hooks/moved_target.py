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


# Rule misplaced_target: a paper's table or figure asked for without its paper's folder
# (`results/tables/table3.tex`, which no rule makes) is answered with the papers' paths of that name.
OUTPUT_KINDS = {"tables": "table", "figures": "figure"}


def misplaced_target_pattern(taken: list[str]) -> str:
    """The {name} wildcard of rule misplaced_target: a file name directly under <results>/tables or
    <results>/figures that is none of `taken` (the leaderboards' and the census's, which other rules make)."""
    import re as _re

    names = "|".join(_re.escape(t) for t in taken)
    return rf"(?!(?:{names})\.)[^/.]+" if names else r"[^/.]+"


def misplaced_target(results: str, kind: str, name: str, ext: str, papers: dict) -> None:
    """Rule misplaced_target's input function: `<results>/<kind>/<name>.<ext>` names no paper. Answers with
    the paths of the papers that declare `name` (sentaug.choices.Answer: the message alone), else with the
    closest names and where to list them all."""
    from ..choices import did_you_mean

    what = OUTPUT_KINDS[kind]
    asked = f"{results}/{kind}/{name}.{ext}"
    where = [p for p, paper in papers.items() if name in (paper.get(kind) or {})]
    if where:
        raise Answer(f"{asked}: a paper's {what} is under the paper's folder, {results}/{kind}/<paper>/{name}.{ext}; "
                     f"{len(where)} {'paper declares' if len(where) == 1 else 'papers declare'} {what} '{name}': "
                     + ", ".join(f"{results}/{kind}/{p}/{name}.{ext}" for p in where))
    every = [f"{p}/{n}" for p, paper in papers.items() for n in (paper.get(kind) or {})]
    guess = did_you_mean(name, [n.split("/")[1] for n in every])
    examples = [n for n in every if guess and n.endswith(f"/{guess}")] or every[:3]
    raise Answer(f"{asked}: no paper declares a {what} '{name}'"
                 + (f" (did you mean '{guess}'?)" if guess else "")
                 + f"; a paper's {what} is {results}/{kind}/<paper>/<{what}>.{ext}, e.g. "
                 + ", ".join(f"{results}/{kind}/{n}.{ext}" for n in examples)
                 + f" (`.venv/bin/sentaug list {kind}` lists them all)")
