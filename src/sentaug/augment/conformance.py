"""Agreement of our augmentations with the code the papers ran, measured on stored reference cases.

Reference cases live in ``resources/reference`` (package data, each file naming its source):

* ``nlaugmenter/<folder>.json``: NL-Augmenter's own ``test.json`` of each transformation AugCSE took from it
  (GEM-benchmark/NL-Augmenter, ``nlaugmenter/transformations/<folder>/test.json``), verbatim;
* ``sda_released.json``: sentences chosen for this project with the anchor and every positive SDA's released
  augmentation functions give them (over 400 seeds of their generator), collected by running that code
  outside the project on the same spaCy; ``cards_collator.json``: sentences with apostrophes, digits and
  non-ASCII letters, with what CARDS's collator makes of them at switch probability 1 (deterministic),
  derived by hand from its code and checked by running it outside the project.

A `Check` ties an augmentation to the cases of one reference file, with the parameters that mirror the
reference's settings, and says how an output is compared:

* ``exact``: the reference's output is deterministic; ours must equal its (first) output;
* ``any``: the reference returns several outputs (or one drawn from several); ours must be one of them;
* ``each``: the reference draws among the outputs listed; ours, under each of `POOL_SEEDS` seeds, must be
  one of them (and an anchored augmentation's anchor must be the reference's);
* a case with a ``count``: the number of words the output changes, under each seed;
* a *pool* (``pool:<name>``): the reference draws at random (a colour, a city, a hyponym). Ours must make the
  same decision to change the input, and every word it replaces must be replaced from the same kind of pool
  (`_slots` says where each pool may change a line, and with what). The reference's own output is checked
  against the same pool too (``reference_in_pool``): when it falls outside, the pool is not the one the
  reference drew from.

`evaluate` runs every check and returns, per augmentation, the number of cases, how many agree (output and
decision to change), and the failing cases. Cases we do not reproduce are listed with their reason in
``resources/reference/known_failures.yaml``; `evaluate` attaches the reason to each failure, and the tests
assert that the failing cases are exactly those listed. ``sentaug conformance`` writes the result as JSON
for the augmentation census.
"""
from __future__ import annotations

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
    compare: str = "exact"                    # exact | any | each | pool:<name>
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
    *(Check(op, "sda_released.json", (op,), compare="each",
            note="SDA's released augmentation code (anchor: the spaCy-tokenised sentence)")
      for op in ("punctuation_insertion_official_code", "affirmative_auxiliary_official_code",
                 "double_negation_official_code")),
    *(Check(op, "cards_collator.json", (op,), note="CARDS's collator (data/text_augmentation.py)")
      for op in ("switch_case", "switch_case_substitution", "retokenize")),
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
        outputs = c.get("outputs", [])
        outputs = outputs if isinstance(outputs, list) else [outputs]
        params = dict(check.params)
        if check.args and c.get("args"):
            params.update(check.args(c["args"]))
        params.update(c.get("params") or {})
        out.append({"input": c["inputs"]["sentence"], "expected": [o["sentence"] for o in outputs],
                    "params": params, "seed": c.get("seed", 0), "anchor": c.get("anchor"), "deps": c.get("deps"),
                    "count": c.get("count")})
    return out


# --------------------------------------------------------------------------------------------------
# Pools: what a random replacement may be drawn from
# --------------------------------------------------------------------------------------------------
# A word-replacing pool is checked with a *frame*: the input with every place the reference may change
# (a colour name, a populous city, a discourse marker, a word) turned into an alternation of the original
# and everything the reference could put there; the spaces around punctuation are free (NL-Augmenter
# re-joins tokens). An output fits the pool when the frame matches it whole; which places changed is read
# from the groups.
_WORD_RX = re.compile(r"[A-Za-z]+")


def _wordnet_related(word: str, relation: str) -> set[str]:
    """Hyponyms (three steps down) or hypernyms (all ancestors) of any noun sense, as CheckList collects them
    before its language model ranks them."""
    from . import wordnet

    frontier = list(wordnet.wordnet().synsets(word, "n"))
    out, depth = set(), 0
    while frontier and (relation == "hypernym" or depth < 3):
        depth += 1
        frontier = [r for s in frontier for r in (s.hyponyms() + s.instance_hyponyms() if relation == "hyponym"
                                                  else s.hypernyms() + s.instance_hypernyms())]
        out |= {lemma.name().replace("_", " ") for r in frontier for lemma in r.lemmas()}
    return out


def _synset_heads(word: str) -> set[str]:
    from . import wordnet

    return {s.name().split(".")[0].replace("_", " ") for s in wordnet.wordnet().synsets(word)}


def _occurrences(text: str, names, boundary: bool) -> list[tuple[int, int, str]]:
    """Non-overlapping occurrences of `names` in `text`, leftmost and then longest first."""
    found = []
    for name in set(names):
        rx = re.compile((r"(?<!\w)" + re.escape(name) + r"(?!\w)") if boundary else re.escape(name))
        found += [(m.start(), m.end(), name) for m in rx.finditer(text)]
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    out, last = [], 0
    for f in found:
        if f[0] >= last:
            out.append(f)
            last = f[1]
    return out


def _slots(kind: str, text: str) -> list[tuple[int, int, list[str]]]:
    """(start, end, alternatives) of every place in `text` the reference may change."""
    from .augcse import data as D

    if kind == "color":
        colors = list(D.colors())
        return [(s, e, colors) for s, e, _ in _occurrences(text, colors, boundary=False)]
    if kind == "city":
        scarce = list(D.scarce_cities())
        return [(s, e, scarce) for s, e, _ in _occurrences(text, D.populous_cities(), boundary=True)]
    if kind == "marker":
        senses = D.marker_classes()
        out = []
        for m in re.finditer(r"\S+", text):
            word = m.group().lower()
            key = word.rstrip(",")
            if key in senses and (word == key or word in dict(D.pairs("discourse_markers.tsv"))):
                out.append((m.start(), m.start() + len(key), [k for k, c in senses.items() if c == senses[key]]))
        return out
    if kind in ("hyponym", "hypernym"):
        return [(m.start(), m.end(), sorted(_wordnet_related(m.group().lower(), kind)))
                for m in _WORD_RX.finditer(text)]
    if kind == "synonym":
        return [(m.start(), m.end(), sorted(_synset_heads(m.group()))) for m in _WORD_RX.finditer(text)]
    raise KeyError(kind)


def _gap(text: str) -> str:
    chars = [c for c in text if not c.isspace()]
    return r"\s*" + r"\s*".join(re.escape(c) for c in chars) + (r"\s*" if chars else "")


def changed_slots(kind: str, before: str, after: str) -> list[bool] | None:
    """Which of `before`'s slots `after` changed, or None when `after` does not fit the frame. Long pools
    (cities) are matched as any text, then looked up (a regex of 9,000 names per slot is slow)."""
    slots = _slots(kind, before)
    parts, last, lookup = [], 0, []
    for s, e, alts in slots:
        options = {before[s:e], *alts}
        if len(options) > 200:
            parts += [_gap(before[last:s]), "(.+?)"]
            lookup.append({o.lower() for o in options})
        else:
            parts += [_gap(before[last:s]),
                      "(" + "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True)) + ")"]
            lookup.append(None)
        last = e
    parts.append(_gap(before[last:]))
    m = re.fullmatch("".join(parts), after, flags=re.IGNORECASE | re.DOTALL)
    if m is None or any(pool is not None and g.lower() not in pool for g, pool in zip(m.groups(), lookup)):
        return None
    return [g.lower() != before[s:e].lower() for g, (s, e, _) in zip(m.groups(), slots)]


def _sentences(text: str) -> list[str]:
    from .parse import worker_nlp

    return sorted(s.text.strip() for s in worker_nlp(_SPACY_MODEL[0])(text).sents if s.text.strip())


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def _pool_base(kind: str, text: str) -> str:
    """The input as the reference's output is spelt around the change (cities: spaCy's tokens joined)."""
    if kind == "city":
        from .parse import worker_nlp

        return " ".join(t.text for t in worker_nlp(_SPACY_MODEL[0]).make_doc(text))
    return text


def in_pool(kind: str, before: str, after: str) -> bool:
    """Whether `after` is a change of `before` that the reference's random draw could have made."""
    if after == before:
        return False
    if kind == "reorder":
        return _sentences(after) == _sentences(before)
    if kind == "deletion":               # a shorter subsequence of the tokens (case aside: a capital moves on)
        a, b = [t.lower() for t in _tokens(before)], [t.lower() for t in _tokens(after)]
        it = iter(a)
        return len(b) < len(a) and all(w in it for w in b)
    changed = changed_slots(kind, _pool_base(kind, before), after)
    return changed is not None and any(changed)


def same_targets(kind: str, before: str, ours: str, theirs: str) -> bool:
    """For pools where which places change is deterministic (colours, cities, markers): the same ones."""
    if kind not in ("color", "city"):
        return True
    base = _pool_base(kind, before)
    return changed_slots(kind, base, ours) == changed_slots(kind, base, theirs)


# --------------------------------------------------------------------------------------------------
# Running the checks
# --------------------------------------------------------------------------------------------------
_SPACY_MODEL = ["en_core_web_sm"]


def _parse(text: str):
    from .parse import worker_nlp

    return worker_nlp(_SPACY_MODEL[0])(text)


def run_case(aug: registry.Augmentation, text: str, params: dict, seed: int = 0):
    """Our output for one case: the augmented text, or (anchor, augmented) for an anchored augmentation."""
    x = _parse(text) if aug.needs_parse else text
    params = {k: v for k, v in params.items() if k in aug.params}
    return aug(x, random.Random(seed), **params)


POOL_SEEDS = 10      # a random draw is judged over this many seeds of the line's generator


def judge(check: Check, case: dict, outputs: list) -> dict:
    """Agreement of our output(s) with the reference case. Deterministic checks look at one output; ``each``,
    ``count`` and pool checks at the outputs of `POOL_SEEDS` seeds. For a pool, the decision to change agrees
    when we change the line under some seed exactly when the reference changed it (a draw of words that may
    each change is random, and one seed may leave the line as it was), and the output agrees when, besides,
    every change we make is one the reference could have drawn; ``reference_in_pool`` records whether the
    reference's own output passes the same pool test (a check on the pool's definition)."""
    src, expected = case["input"], case["expected"]
    anchors = [o[0] for o in outputs if isinstance(o, tuple)]
    outputs = [o[1] if isinstance(o, tuple) else o for o in outputs]
    base = anchors[0] if anchors else src
    got = outputs[0]
    kind = check.compare
    verdict = {"input": src, "expected": expected if kind in ("any", "each") else (expected[0] if expected else None),
               "got": got}
    if case.get("count") is not None:
        counts = [sum(a != b for a, b in zip(src.split(" "), o.split(" "))) for o in outputs]
        agree = decision = all(c == case["count"] for c in counts)
        verdict.update(expected=f"{case['count']} words changed", got=f"{counts} words changed")
    elif kind in ("exact", "any"):
        decision = (got != base) == (expected[0] != base)
        agree = got == expected[0] if kind == "exact" else got in expected
    elif kind == "each":
        bad = [o for o in outputs if o not in expected]
        agree = not bad and (case.get("anchor") is None or set(anchors) == {case["anchor"]})
        decision = any(o != base for o in outputs) == any(e != (case.get("anchor") or src) for e in expected)
        verdict["got"] = bad[0] if bad else got
        if anchors and case.get("anchor") is not None and set(anchors) != {case["anchor"]}:
            verdict["got_anchor"] = anchors[0]
    else:
        pool = kind.split(":", 1)[1]
        ref_changed = expected[0] != src
        changed = [o for o in outputs if o != src]
        decision = bool(changed) == ref_changed
        bad = [o for o in changed if not (in_pool(pool, src, o) and same_targets(pool, src, o, expected[0]))]
        agree = decision and not bad
        verdict["got"] = bad[0] if bad else (changed[0] if changed else got)
        verdict["reference_in_pool"] = (not ref_changed) or in_pool(pool, src, expected[0])
    if case.get("deps") is not None and [t.dep_ for t in _parse(src)] != case["deps"]:
        verdict["parse_differs"] = True      # the reference saw another parse: the likely reason
    verdict.update(agree=bool(agree), decision_agrees=bool(decision))
    return verdict


def evaluate(checks=CHECKS, only: set[str] | None = None, spacy_model: str = "en_core_web_sm") -> dict:
    """{augmentation: {reference, compare, params, n, agree, agreement, decision_agreement, failures}}.
    A case that raises (a model that is not available offline) counts as a failure with the error."""
    _SPACY_MODEL[0] = spacy_model
    known = known_failures()
    result: dict[str, dict] = {}
    for check in checks:
        if only and check.op not in only:
            continue
        try:
            aug = registry.get(check.op)
        except ValueError as e:         # measured against a version that lacks the augmentation
            aug, missing = None, str(e).split(";")[0]
        ref = load_reference(check.reference)
        src = ref.get("source", {})
        entry = result.setdefault(check.op, {
            "reference": (f"{src.get('repository', '?')}:{src.get('path', check.reference)}"
                          f"@{src.get('commit', '?')[:12]}"),
            "compare": check.compare, "params": dict(check.params), "note": check.note,
            "n": 0, "agree": 0, "decision_agree": 0, "failures": []})
        for case in cases(check):
            try:
                if aug is None:
                    raise LookupError(missing)
                seeds = ([case["seed"]] if check.compare in ("exact", "any") and case.get("count") is None
                         else range(POOL_SEEDS))
                outputs = [run_case(aug, case["input"], case["params"], s) for s in seeds]
                verdict = judge(check, case, outputs)
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
