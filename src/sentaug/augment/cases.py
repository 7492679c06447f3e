"""An augmentation's own test cases, kept beside its code in NL-Augmenter's `test.json` format (each transformation
there has its folder with the cases its tests run), so that a plugin (docs/extending.md) states what it does on
sentences its author chose:

    {"type": "negation",
     "test_cases": [{"class": "negation", "args": {"remove": false}, "seed": 0,
                     "inputs": {"sentence": "The cat is on the mat."},
                     "outputs": [{"sentence": "The cat is not on the mat."}]}]}

`class` is the registry name, `args` its parameters (default: its defaults), `seed` the cache's seed (default 0):
the output is what a cache built with that seed holds for the sentence as its corpus's first line, and must equal
the first listed output; for an anchored augmentation `outputs` may also give the `anchor`. A needs-parse
augmentation gets the sentence parsed by `spacy_model`.
"""
from __future__ import annotations

import json
import os

from ..data.corpus import Line
from . import registry
from .cache import apply_chunk
from .parse import worker_nlp


def check_cases(path: str | os.PathLike, modules=(), spacy_model: str = "en_core_web_sm") -> list[str]:
    """One message per case of the test.json at `path` whose output differs from the expected one ([] when all
    agree), after importing `modules` (plugins not installed)."""
    registry.load_modules(modules)
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)["test_cases"]
    failures = []
    for n, case in enumerate(cases, 1):
        aug = registry.get(case["class"])
        text = case["inputs"]["sentence"]
        x = worker_nlp(spacy_model)(text) if aug.needs_parse else text
        got = apply_chunk(aug, aug.resolve(case.get("args")), [x], [Line(text, "")], case.get("seed", 0), 0)[0]
        expected = case["outputs"][0]
        anchor, got = got if aug.anchored else (None, got)
        if got != expected["sentence"] or ("anchor" in expected and anchor != expected["anchor"]):
            failures.append(f"{path} case {n} ({aug.name}, {text!r}): expected {expected!r}, got "
                            f"{({'anchor': anchor, 'sentence': got} if aug.anchored else got)!r}")
    return failures
