"""The discrete augmentations SDA compares its rules with (Tables 6 and 7; Table 6 repeats SimCSE's Table 1).

Units are whitespace words. Counts are exact (``max(1, round(ratio * n))`` words), never per-word coin flips,
so "word deletion 20 %" removes 20 % of every line; no operation removes every word. A line left unchanged
is returned as it was; an edited one is re-joined with single spaces.

* ``crop``: keep one contiguous window of ``n - k`` words (k = max(1, round(ratio * n))), its start drawn
  uniformly: the removed words are a prefix and a suffix, as in image cropping (SimCSE/SDA do not define
  crop further);
* ``word_deletion``: delete k randomly chosen words;
* ``synonym_replacement``: EDA's synonym replacement (Wei & Zou 2019): ``max(1, round(ratio * n))`` words
  with a WordNet synonym (default 10 %) replaced by a random single-word synonym;
* ``mask``: replace k words (15 %) by ``token`` (``[MASK]``; use ``<mask>`` for RoBERTa backbones);
* ``word_repetition``: ESimCSE's word repetition (Wu et al. 2021): ``dup_len`` drawn uniformly from
  ``0 .. max(2, int(dup_rate * n))``, that many distinct positions repeated in place (ESimCSE does this on
  subword tokens; here on words);
* ``random_punctuation``: SDA Table 7's "Random Insertion": ``count`` marks drawn from all English
  punctuation (`PUNCTUATION`), not from the sentence, each inserted after a uniformly chosen word.
"""
from __future__ import annotations

import random

from ..params import Param
from .registry import register

PUNCTUATION = (",", ".", ";", ":", "!", "?", "'", '"', "-", "(", ")", "...")


def n_edit(n: int, ratio: float) -> int:
    """Words to edit in a line of n: max(1, round(ratio * n)), at most n - 1 (0 for one-word lines)."""
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"ratio must be in [0, 1], got {ratio}")
    return min(max(1, round(ratio * n)), n - 1) if n > 1 else 0


def _join(text: str, words: list[str]) -> str:
    return text if words == text.split() else " ".join(words)


def crop(text: str, rng: random.Random, ratio: float = 0.1) -> str:
    words = text.split()
    k = n_edit(len(words), ratio)
    start = rng.randint(0, k)
    return _join(text, words[start:start + len(words) - k])


def word_deletion(text: str, rng: random.Random, ratio: float = 0.1) -> str:
    words = text.split()
    gone = set(rng.sample(range(len(words)), n_edit(len(words), ratio)))
    return _join(text, [w for i, w in enumerate(words) if i not in gone])


def mask(text: str, rng: random.Random, ratio: float = 0.15, token: str = "[MASK]") -> str:
    words = text.split()
    masked = set(rng.sample(range(len(words)), n_edit(len(words), ratio)))
    return _join(text, [token if i in masked else w for i, w in enumerate(words)])


def synonym_replacement(text: str, rng: random.Random, ratio: float = 0.1) -> str:
    from .clear import substitute

    words = text.split()
    k = max(1, round(ratio * len(words)))
    return _join(text, substitute(words, rng, k / len(words))) if words else text


def word_repetition(text: str, rng: random.Random, dup_rate: float = 0.32) -> str:
    words = text.split()
    n = len(words)
    if n == 0:
        return text
    dup_len = min(rng.randint(0, max(2, int(dup_rate * n))), n)
    dup = set(rng.sample(range(n), dup_len))
    return _join(text, [x for i, w in enumerate(words) for x in ([w, w] if i in dup else [w])])


def random_punctuation(text: str, rng: random.Random, count: int = 1) -> str:
    words = text.split()
    if not words:
        return text
    for _ in range(count):
        i = rng.randrange(len(words))
        words[i] = words[i] + " " + rng.choice(PUNCTUATION)
    return " ".join(" ".join(words).split())


_RATIO = Param(0.1, "share of words")
register("crop", family="baselines", needs_parse=False,
         description="SimCSE/SDA Table 6 crop: keep a random contiguous window of (1-ratio) of the words",
         ratio=_RATIO)(crop)
register("word_deletion", family="baselines", needs_parse=False,
         description="SimCSE/SDA Table 6 word deletion: delete max(1, round(ratio*n)) random words",
         ratio=_RATIO)(word_deletion)
register("mask", family="baselines", needs_parse=False,
         description="SimCSE/SDA Table 6 'Mask 15%': replace words by a mask token",
         ratio=Param(0.15, "share of words"), token=Param("[MASK]", "mask token ([MASK] BERT, <mask> RoBERTa)"))(mask)
register("synonym_replacement", family="baselines", needs_parse=False,
         description="SimCSE/SDA Table 6 synonym replacement (EDA, WordNet synonyms)",
         ratio=_RATIO)(synonym_replacement)
register("word_repetition", family="baselines", needs_parse=False,
         description="ESimCSE word repetition (SDA Table 6): repeat up to dup_rate*n random words",
         dup_rate=Param(0.32, "ESimCSE's duplication rate"))(word_repetition)
register("random_punctuation", family="baselines", needs_parse=False,
         description="SDA Table 7 random insertion: punctuation from all English marks at random places",
         count=Param(1, "marks inserted"))(random_punctuation)
