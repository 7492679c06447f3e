"""Agreement of our augmentations with the code the papers ran, measured on stored reference cases.

Reference cases live in ``resources/reference`` (package data, each file naming its source):

* ``nlaugmenter/<folder>.json``: NL-Augmenter's own ``test.json`` of each transformation AugCSE took from it
  (GEM-benchmark/NL-Augmenter, ``nlaugmenter/transformations/<folder>/test.json``), verbatim;
* ``sda_released.json`` and ``cards_collator.json``: cases written for this project from reading SDA's released
  augmentation code and CARDS's collator (the expected values are ours, derived by hand from that code).

A `Check` ties an augmentation to the cases of one reference file, with the parameters that mirror the
reference's settings, and says how an output is compared:

* ``exact``: the reference's output is deterministic; ours must equal its (first) output;
* ``any``: the reference returns several outputs (or one drawn from several); ours must be one of them;
* a *pool* (``pool:<name>``): the reference draws at random (a colour, a city, a hyponym). Ours must make the
  same decision to change the input, and every word it replaces must be replaced from the same kind of pool
  (`POOLS`). The reference's own output is checked against the same pool too: when it falls outside, the
  pool is not what the reference used, and the case says so.

`evaluate` runs every check and returns, per augmentation, the number of cases, how many agree (output and
decision to change), and the failing cases. Cases we do not reproduce are listed with their reason in
``resources/reference/known_failures.yaml``; `evaluate` attaches the reason to each failure, and the tests
assert that the failing cases are exactly those listed. ``sentaug conformance`` writes the result as JSON
for the augmentation census.
"""
from __future__ import annotations

import difflib
import json
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Callable

from . import registry

NLAUG = "nlaugmenter"


@dataclass(frozen=True)
class Check:
    op: str                                   # our augmentation (registry name)
    reference: str                            # file under resources/reference
    classes: tuple[str, ...]                  # the reference cases' "class" values taken from the file
    compare: str = "exact"                    # exact | any | pool:<name>
    params: dict = field(default_factory=dict)
    args: Callable[[dict], dict] | None = None   # a case's own "args" -> our parameters
    note: str = ""                            # what the reference is, in one line (shown in the census)


def _nl(folder: str, op: str, cls: str | None = None, **kw) -> Check:
    return Check(op, f"{NLAUG}/{folder}.json", (cls or op,), **kw)


CHECKS: tuple[Check, ...] = (
    _nl("adjectives_antonyms_switch", "SentenceAdjectivesAntonymsSwitch"),
    _nl("auxiliary_negation_removal", "SentenceAuxiliaryNegationRemoval"),
    _nl("replace_with_hyponyms_hypernyms", "ReplaceHypernyms", compare="pool:hypernym",
        note="its candidates are ranked by a RoBERTa masked LM (CheckList), not offline: pool check"),
    _nl("replace_with_hyponyms_hypernyms", "ReplaceHyponyms", compare="pool:hyponym",
        note="its candidates are ranked by a RoBERTa masked LM (CheckList), not offline: pool check"),
    _nl("subject_object_switch", "SentenceSubjectObjectSwitch"),
    _nl("city_names_transformation", "CityNamesTransformation", compare="pool:city"),
    _nl("antonyms_substitute", "AntonymSubstitute", "AntonymsSubstitute", params={"parity": "even"},
        note="NL-Augmenter's even-parity rule (AugCSE's default flips on an odd count instead)"),
    _nl("color_transformation", "ColorTransformation", compare="pool:color"),
    _nl("summarization_transformation", "Summarization"),
    _nl("sentence_reordering", "SentenceReordering", compare="pool:reorder",
        note="AugCSE ran it without the coreference model (enable_coref=False)"),
    _nl("tense", "TenseTransformation", args=lambda a: {"to": a["to_tense"]}),
    _nl("random_deletion", "RandomDeletion", compare="pool:deletion",
        note="NL-Augmenter's binomial deletion; AugCSE's RandomDeletion is nlpaug's: pool check"),
    _nl("yoda_transform", "YodaPerturbation"),
    _nl("contraction_expansions", "ContractionExpansions",
        note="AugCSE keeps the first output (num_generation=1)"),
    _nl("discourse_marker_substitution", "DiscourseMarkerSubstitution", compare="pool:marker"),
    _nl("gender_swap", "GenderSwap"),
    _nl("geo_names_transformation", "GeoNamesTransformation", compare="any",
        note="one of the reference's outputs, drawn"),
    _nl("numeric_to_word", "NumericToWord"),
    _nl("synonym_substitution", "SynonymSubstitution", compare="pool:synonym"),
    _nl("formality_change", "Casual2Formal"),
)


# --------------------------------------------------------------------------------------------------
# Reference files
# --------------------------------------------------------------------------------------------------
def reference_root():
    return resources.files("sentaug") / "resources" / "reference"


@lru_cache(maxsize=None)
def load_reference(name: str) -> dict:
    path = reference_root() / name
    if not path.is_file():
        raise FileNotFoundError(f"reference cases {path} are missing from the sentaug package")
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def known_failures() -> dict[str, dict[str, str]]:
    """{augmentation: {case input: reason}} from ``known_failures.yaml``."""
    import yaml

    path = reference_root() / "known_failures.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return {op: dict(cases or {}) for op, cases in (data or {}).items()}


def cases(check: Check) -> list[dict]:
    """The reference's cases for `check`: input sentence, expected outputs, our parameters."""
    out = []
    for c in load_reference(check.reference)["test_cases"]:
        if c.get("class") not in check.classes:
            continue
        outputs = c["outputs"]
        outputs = outputs if isinstance(outputs, list) else [outputs]
        params = dict(check.params)
        if check.args and c.get("args"):
            params.update(check.args(c["args"]))
        params.update(c.get("params") or {})
        out.append({"input": c["inputs"]["sentence"], "expected": [o["sentence"] for o in outputs],
                    "params": params, "seed": c.get("seed", 0)})
    return out


# --------------------------------------------------------------------------------------------------
# Pools: what a random replacement may be drawn from
# --------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def replacements(before: str, after: str) -> list[tuple[str, str]]:
    """(old phrase, new phrase) for every block of words `after` changed in `before` (punctuation spacing
    ignored)."""
    a, b = _tokens(before), _tokens(after)
    sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return [(" ".join(a[i1:i2]), " ".join(b[j1:j2])) for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal"]


def _wordnet_related(word: str, relation: str) -> set[str]:
    from . import wordnet

    wn = wordnet.wordnet()
    out = set()
    for s in wn.synsets(word.replace(" ", "_"), "n"):
        related = s.hyponyms() + s.instance_hyponyms() if relation == "hyponym" else \
            s.hypernyms() + s.instance_hypernyms()
        out |= {lemma.name().replace("_", " ") for r in related for lemma in r.lemmas()}
    return out


def _synset_heads(word: str) -> set[str]:
    from . import wordnet

    wn = wordnet.wordnet()
    return {s.name().split(".")[0].replace("_", " ") for s in wn.synsets(word)}


def _pool_words(kind: str) -> Callable[[str, str], bool]:
    """A predicate on one replaced block (old, new) for the word-replacing pools."""
    if kind in ("hyponym", "hypernym"):
        return lambda old, new: " " not in old and new.lower() in {w.lower() for w in _wordnet_related(old, kind)}
    if kind == "synonym":
        # NL-Augmenter writes the head word of a synset of the original word (any inflection of it)
        return lambda old, new: all(n.lower() in {h.lower() for o in old.split() for h in _synset_heads(o)}
                                    for n in [new]) if new else False
    from .augcse import data as D

    if kind == "color":
        colors = {c.lower() for c in D.colors()}
        return lambda old, new: new.lower() in colors and old.lower() in colors
    if kind == "city":
        pop, scarce = set(D.populous_cities()), set(D.scarce_cities())
        return lambda old, new: old in pop and new in scarce
    if kind == "marker":
        cls = D.marker_classes()
        return lambda old, new: old.lower() in cls and cls.get(new.lower()) == cls[old.lower()]
    raise KeyError(kind)


def _sentences(text: str) -> list[str]:
    from .parse import worker_nlp

    return sorted(s.text.strip() for s in worker_nlp(_SPACY_MODEL[0])(text).sents if s.text.strip())


def in_pool(kind: str, before: str, after: str) -> bool:
    """Whether `after` is a change of `before` that the reference's random draw could have made."""
    if after == before:
        return False
    if kind == "reorder":
        return _sentences(after) == _sentences(before)
    if kind == "deletion":
        a, b = before.split(), after.split()
        it = iter(a)
        return len(b) < len(a) and all(w in it for w in b)
    ok = _pool_words(kind)
    blocks = replacements(before, after)
    return bool(blocks) and all(ok(old, new) for old, new in blocks)


def same_targets(kind: str, before: str, ours: str, theirs: str) -> bool:
    """For pools where which words change is deterministic (colours, cities, markers): the same ones."""
    if kind not in ("color", "city", "marker"):
        return True
    return [o for o, _ in replacements(before, ours)] == [o for o, _ in replacements(before, theirs)]


# --------------------------------------------------------------------------------------------------
# Running the checks
# --------------------------------------------------------------------------------------------------
_SPACY_MODEL = ["en_core_web_sm"]


def run_case(aug: registry.Augmentation, text: str, params: dict, seed: int = 0):
    from .parse import worker_nlp

    x = worker_nlp(_SPACY_MODEL[0])(text) if aug.needs_parse else text
    params = {k: v for k, v in params.items() if k in aug.params}
    out = aug(x, random.Random(seed), **params)
    return out[1] if isinstance(out, tuple) else out


def judge(check: Check, case: dict, got: str) -> dict:
    """Agreement of one output with the reference case."""
    src, expected = case["input"], case["expected"]
    ref_changed = expected[0] != src
    decision = (got != src) == ref_changed
    kind = check.compare
    if kind == "exact":
        agree = got == expected[0]
    elif kind == "any":
        agree = got in expected
    else:
        pool = kind.split(":", 1)[1]
        if not ref_changed:
            agree = got == src
        else:
            agree = decision and in_pool(pool, src, got) and same_targets(pool, src, got, expected[0])
    return {"input": src, "expected": expected if kind == "any" else expected[0], "got": got,
            "agree": bool(agree), "decision_agrees": bool(decision)}


def evaluate(checks=CHECKS, only: set[str] | None = None, spacy_model: str = "en_core_web_sm") -> dict:
    """{augmentation: {reference, compare, params, n, agree, agreement, decision_agreement, failures}}.
    A case that raises (a model that is not available offline) counts as a failure with the error."""
    _SPACY_MODEL[0] = spacy_model
    known = known_failures()
    result: dict[str, dict] = {}
    for check in checks:
        if only and check.op not in only:
            continue
        aug = registry.get(check.op)
        ref = load_reference(check.reference)
        src = ref.get("source", {})
        entry = result.setdefault(check.op, {
            "reference": f"{src.get('repository', '?')}:{src.get('path', check.reference)}@{src.get('commit', '?')[:12]}",
            "compare": check.compare, "params": dict(check.params), "note": check.note,
            "n": 0, "agree": 0, "decision_agree": 0, "failures": []})
        for case in cases(check):
            try:
                got = run_case(aug, case["input"], case["params"], case["seed"])
                verdict = judge(check, case, got)
            except Exception as e:   # noqa: BLE001 - reported per case, never fatal
                verdict = {"input": case["input"], "expected": case["expected"][0], "got": None,
                           "agree": False, "decision_agrees": False, "error": f"{type(e).__name__}: {e}"[:300]}
            entry["n"] += 1
            entry["agree"] += verdict["agree"]
            entry["decision_agree"] += verdict["decision_agrees"]
            if not verdict["agree"]:
                verdict["reason"] = known.get(check.op, {}).get(case["input"], "")
                entry["failures"].append(verdict)
    for entry in result.values():
        n = entry["n"]
        entry["agreement"] = round(100 * entry["agree"] / n, 2) if n else None
        entry["decision_agreement"] = round(100 * entry["decision_agree"] / n, 2) if n else None
    return result


def conformance_cli(out: str, only: list[str] | None = None, spacy_model: str = "en_core_web_sm") -> dict:
    """``sentaug conformance``: write `evaluate`'s result (with the versions it ran under) to `out`."""
    import spacy

    from ..io import write_json

    result = evaluate(only=set(only) if only else None, spacy_model=spacy_model)
    write_json(out, {"spacy_version": spacy.__version__, "spacy_model": spacy_model, "augmentations": result})
    return result
