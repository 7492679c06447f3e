"""CARDS Table 1: what switching the case of one word does to its tokens, counted over a corpus
(`tokenization_effects`), and the `sentaug tokenization-effects` command that writes the counts.

Every switchable word occurrence is switched (one at a time) and the effect on its tokenization counted by
direction (lower to upper case, upper to lower): substitution, division, fusion or regrouping
(`sentaug.augment.cards_words.classify`), or unchanged under an uncased tokenizer.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from .cards import split_words
from .cards_words import EFFECTS, WordTokenizer, classify, word_tokenizer

DIRECTIONS = ("lower_to_upper", "upper_to_lower")


def switchable(word: str) -> bool:
    """A word whose first character is a cased letter whose case can be flipped one-for-one."""
    c = word[:1]
    return bool(c) and c.lower() != c.upper() and len(c.swapcase()) == 1 and c.swapcase().swapcase() == c


def flip(word: str) -> str:
    return word[0].swapcase() + word[1:]


def word_effect(wt: WordTokenizer, word: str, initial: bool) -> str:
    return classify(wt.tokens(word, initial), wt.tokens(flip(word), initial))


CONTEXTS = ("isolated", "sentence")


def tokenization_effects(lines: Iterable[str], tokenizer: str, context: str = "isolated") -> dict:
    """CARDS Table 1 over a corpus: every switchable word occurrence is switched (one at a time) and the
    effect on its tokenization counted, split by direction. Percentages are of all switched words (the
    paper's rows sum to 100); switching every word is the expectation of switching a random share of them.

    ``context``: ``isolated`` tokenizes each word alone, without RoBERTa's leading space; ``sentence`` as
    it occurs in the line (leading space except line-initially). Table 1's examples are isolated
    tokenizations (' urgency' is one token, 'urgency' is urg-ency; ' Serious' one, 'Serious' Ser-ious), and
    on wiki1m_head the isolated shares match the paper's closely (division 6.0 vs 6.2 %, fusion 1.9 vs
    1.8 %, regrouping 1.1 vs 1.2 % for lower-to-upper) while in-sentence ones do not (9.8, 0.14, 0.18 %):
    `isolated` is the default for the table."""
    if context not in CONTEXTS:
        raise ValueError(f"context must be one of {list(CONTEXTS)}, got {context!r}")
    wt = word_tokenizer(tokenizer)
    counts: Counter = Counter()
    n_lines = 0
    for line in lines:
        n_lines += 1
        for j, m in enumerate(split_words(line)):
            w = m.group()
            if switchable(w):
                direction = "lower_to_upper" if w[0].islower() else "upper_to_lower"
                counts[(word_effect(wt, w, context == "isolated" or j == 0), direction)] += 1
    total = sum(counts.values())
    cells = {f"{e}/{d}": counts[(e, d)] for e in (*EFFECTS, "unchanged") for d in DIRECTIONS}
    return {"tokenizer": wt.path, "context": context, "lines": n_lines, "switched_words": total, "counts": cells,
            "percent": {k: round(100 * v / total, 4) if total else 0.0 for k, v in cells.items()}}


def tokenization_effects_cli(corpus: str, tokenizer: str, out: str, context: str = "isolated") -> dict:
    """``sentaug tokenization-effects``: CARDS Table 1 counts over a corpus file (flagged lines skipped)."""
    from ..data.corpus import read_corpus
    from ..io import sha256_file, write_json

    lines = [ln.text for ln in read_corpus(corpus) if not ln.flag]
    result = {**tokenization_effects(lines, tokenizer, context), "corpus": str(corpus),
              "corpus_sha256": sha256_file(corpus)}
    write_json(out, result)
    return result
