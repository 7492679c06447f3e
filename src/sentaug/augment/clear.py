"""CLEAR's sentence augmentations (Wu et al. 2020, Section 3 and "Hyperparameters for CL").

CLEAR edits the model's BPE tokens; here the units are whitespace words (punctuation stays attached to its
word), so the same positive serves every backbone and the cache stays readable. The operations:

* ``clear_del_word``: replace ``round(ratio * n)`` randomly chosen words (CLEAR: 70 %) by ``[DEL]``;
* ``clear_del_span``: replace ``spans`` (5) non-adjacent spans of ``max(1, round(span_ratio * n))`` words
  (5 % of the length) each by ``[DEL]``;
* ``clear_reorder``: pick ``pairs`` (5) pairs of non-overlapping spans of ``max(1, round(span_ratio * n))``
  words and swap the two spans of each pair (the words' multiset is kept);
* ``clear_subs``: replace ``round(ratio * n)`` words (CLEAR: 30 %) that have a WordNet synonym by one of
  their single-word synonyms (any POS; first-letter case kept). CLEAR's synonym list (Jia et al. 2019)
  is not public in usable form; WordNet stands in (`sentaug.augment.wordnet`).
* ``clear_combo``: the pairs and triple of CLEAR's Tables 1-3 (``subs+del_word``, ``subs+del_span``,
  ``del_word+reorder``, ``del_span+reorder``, ``subs+del_word+reorder``), applied left to right as the
  paper describes ("it substitutes 30 % tokens first and then deletes 5 spans").

Consecutive ``[DEL]`` are merged into one (CLEAR: "we eliminate the consecutive token [DEL] into one
token", so word and span deletion cannot be told apart by runs of [DEL]). Deletion never removes every word
of a line (at most n - 1: a positive made only of [DEL] carries nothing). Counts are exact, not per-word
coin flips, so a 70 % deletion deletes 70 % of every line. Short lines fit fewer spans/pairs: as many as
fit (the numbers actually used are reproducible from the line's rng). Edited lines are re-joined with
single spaces; a line left unchanged is returned as it was.
"""
from __future__ import annotations

import random

from ..params import Param
from .registry import register

DEL = "[DEL]"
COMBOS = ("subs+del_word", "subs+del_span", "del_word+reorder", "del_span+reorder", "subs+del_word+reorder")


def merge_del(words: list[str], token: str = DEL) -> list[str]:
    """Collapse runs of consecutive `token` into one."""
    out = []
    for w in words:
        if not (w == token and out and out[-1] == token):
            out.append(w)
    return out


def delete_words(words: list[str], rng: random.Random, ratio: float) -> list[str]:
    n = len(words)
    k = min(round(ratio * n), n - 1)
    if k <= 0:
        return list(words)
    gone = set(rng.sample(range(n), k))
    return merge_del([DEL if i in gone else w for i, w in enumerate(words)])


def place_spans(n: int, k: int, length: int, rng: random.Random, gap: int) -> list[int]:
    """Start positions (sorted) of `k` spans of `length` words in n, at least `gap` words apart, uniformly
    over all such placements (stars and bars: choose k of n - k*(length+gap) + gap + k slots)."""
    free = n - k * (length + gap) + gap
    if k <= 0 or free < 0:
        return []
    slots = sorted(rng.sample(range(free + k), k))
    return [s + j * (length + gap - 1) for j, s in enumerate(slots)]


def span_length(n: int, span_ratio: float) -> int:
    return max(1, round(span_ratio * n))


def delete_spans(words: list[str], rng: random.Random, spans: int, span_ratio: float) -> list[str]:
    n = len(words)
    length = span_length(n, span_ratio)
    # spans are one word apart at least, so they stay distinct [DEL]s; never delete every word
    k = min(spans, (n + 1) // (length + 1))
    while k > 0 and k * length >= n:
        k -= 1
    starts = place_spans(n, k, length, rng, gap=1)
    if not starts:
        return list(words)
    gone = {s + d for s in starts for d in range(length)}
    return merge_del([DEL if i in gone else w for i, w in enumerate(words)])


def reorder(words: list[str], rng: random.Random, pairs: int, span_ratio: float) -> list[str]:
    n = len(words)
    length = span_length(n, span_ratio)
    k = min(pairs, n // (2 * length))
    starts = place_spans(n, 2 * k, length, rng, gap=0)
    if not starts:
        return list(words)
    rng.shuffle(starts)
    out = list(words)
    for a, b in zip(starts[0::2], starts[1::2]):
        out[a:a + length], out[b:b + length] = words[b:b + length], words[a:a + length]
    return out


def _case_like(word: str, model: str) -> str:
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def substitute(words: list[str], rng: random.Random, ratio: float) -> list[str]:
    """Replace round(ratio * n) words that have a single-word WordNet synonym (capped by how many do)."""
    from .wordnet import synonyms

    out = list(words)
    candidates = []
    for i, w in enumerate(words):
        core = w.strip(".,;:!?\"'()[]")
        if core.isalpha() and w != DEL:
            syn = synonyms(core.lower())
            if syn:
                candidates.append((i, core, syn))
    k = min(round(ratio * len(words)), len(candidates))
    for i, core, syn in (candidates[j] for j in sorted(rng.sample(range(len(candidates)), k))):
        out[i] = words[i].replace(core, _case_like(rng.choice(syn).replace("_", " "), core), 1)
    return out


def _join(text: str, words: list[str]) -> str:
    return text if words == text.split() else " ".join(words)


def clear_del_word(text: str, rng: random.Random, ratio: float = 0.7) -> str:
    return _join(text, delete_words(text.split(), rng, ratio))


def clear_del_span(text: str, rng: random.Random, spans: int = 5, span_ratio: float = 0.05) -> str:
    return _join(text, delete_spans(text.split(), rng, spans, span_ratio))


def clear_reorder(text: str, rng: random.Random, pairs: int = 5, span_ratio: float = 0.05) -> str:
    return _join(text, reorder(text.split(), rng, pairs, span_ratio))


def clear_subs(text: str, rng: random.Random, ratio: float = 0.3) -> str:
    return _join(text, substitute(text.split(), rng, ratio))


def clear_combo(text: str, rng: random.Random, steps: str = "subs+del_span", subs_ratio: float = 0.3,
                del_ratio: float = 0.7, spans: int = 5, pairs: int = 5, span_ratio: float = 0.05) -> str:
    words = text.split()
    for step in steps.split("+"):
        if step == "subs":
            words = substitute(words, rng, subs_ratio)
        elif step == "del_word":
            words = delete_words(words, rng, del_ratio)
        elif step == "del_span":
            words = delete_spans(words, rng, spans, span_ratio)
        elif step == "reorder":
            words = reorder(words, rng, pairs, span_ratio)
        else:
            raise ValueError(f"clear_combo: unknown step {step!r} in {steps!r}")
    return _join(text, merge_del(words))     # reordering can bring [DEL]s together again


_SPAN = Param(0.05, "span length as a share of the line's words (at least one word)")
register("clear_del_word", family="clear", needs_parse=False,
         description="CLEAR word deletion: round(ratio*n) words -> [DEL], consecutive [DEL] merged",
         ratio=Param(0.7, "share of words deleted"))(clear_del_word)
register("clear_del_span", family="clear", needs_parse=False,
         description="CLEAR span deletion: `spans` non-adjacent spans -> one [DEL] each",
         spans=Param(5, "number of spans"), span_ratio=_SPAN)(clear_del_span)
register("clear_reorder", family="clear", needs_parse=False,
         description="CLEAR reordering: `pairs` pairs of equal-length spans swapped",
         pairs=Param(5, "number of span pairs"), span_ratio=_SPAN)(clear_reorder)
register("clear_subs", family="clear", needs_parse=False,
         description="CLEAR substitution: round(ratio*n) words -> a WordNet synonym",
         ratio=Param(0.3, "share of words substituted"))(clear_subs)
register("clear_combo", family="clear", needs_parse=False,
         description="CLEAR's combined augmentations (Tables 1-3), applied left to right",
         steps=Param("subs+del_span", "which combination", choices=COMBOS),
         subs_ratio=Param(0.3, "substitution share"), del_ratio=Param(0.7, "word deletion share"),
         spans=Param(5, "spans deleted"), pairs=Param(5, "span pairs swapped"), span_ratio=_SPAN)(clear_combo)
