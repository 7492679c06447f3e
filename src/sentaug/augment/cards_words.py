"""A tokenizer's view of single words, which CARDS's Table 5 variants and its Table 1 analysis share: each word
tokenized alone (memoised), byte-level BPE merges replayed with dropout, and the effect of switching a word's case.

Table 1 (`classify`, `tokenization_effects`): the tokens before (A) and after (B) the switch of one word are
* substitution: same count, all but the first token equal;
* division: B has more tokens and A[1:] is a suffix of B (the first token was split);
* fusion: B has fewer tokens and B[1:] is a suffix of A (the first token absorbed the next ones);
* regrouping: any other change (token boundaries move);
* unchanged: A == B (an uncased tokenizer).
"""
from __future__ import annotations

import functools
import json
import random
from typing import Sequence

EFFECTS = ("substitution", "division", "fusion", "regrouping")


class WordTokenizer:
    """A Hugging Face tokenizer applied one word at a time (with a leading space except line-initially),
    memoised: a corpus has far fewer distinct words than word occurrences."""

    def __init__(self, ref: str, model_mirror: str | None = None):
        from transformers import AutoTokenizer

        from ..models import hub
        from ..models.backbones import resolve_tokenizer

        self.path = resolve_tokenizer(ref, model_mirror)
        try:
            self.tok = hub.from_pretrained(AutoTokenizer, self.path)
        except OSError as e:
            raise FileNotFoundError(f"tokenizer {ref!r}: cannot load {self.path} ({e.__class__.__name__})") from e
        model = json.loads(self.tok.backend_tokenizer.to_str())["model"]
        self.kind = model["type"]                       # BPE, WordPiece, ...
        self.byte_level = self.kind == "BPE"
        self.ranks = ({tuple(m.split(" ") if isinstance(m, str) else m): r for r, m in enumerate(model["merges"])}
                      if self.kind == "BPE" else {})
        self.vocab = self.tok.get_vocab()
        self.tokens = functools.lru_cache(maxsize=1 << 20)(self._tokens)

    def _tokens(self, word: str, initial: bool) -> tuple[str, ...]:
        text = word if (initial or not self.byte_level) else " " + word
        return tuple(self.tok.tokenize(text))

    def pieces(self, word: str, initial: bool) -> list[str]:
        """Pre-tokenized pieces of a word (byte-level strings for BPE), before any merge."""
        text = word if (initial or not self.byte_level) else " " + word
        return [s for s, _ in self.tok.backend_tokenizer.pre_tokenizer.pre_tokenize_str(text)]

    def bpe(self, piece: str, rng: random.Random | None = None, dropout: float = 0.0) -> list[str]:
        """Byte-level BPE of one pre-tokenized piece, merges skipped with probability `dropout`."""
        symbols = list(piece)
        while len(symbols) > 1:
            pairs = [(self.ranks[pair], i) for i, pair in enumerate(zip(symbols, symbols[1:]))
                     if pair in self.ranks and not (dropout and rng.random() < dropout)]
            if not pairs:
                break
            _, i = min(pairs)
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        # a symbol outside the vocabulary (cannot happen with a consistent merges/vocab pair) falls back to bytes
        return [t for s in symbols for t in ([s] if s in self.vocab else list(s))]


@functools.lru_cache(maxsize=8)
def word_tokenizer(ref: str) -> WordTokenizer:
    return WordTokenizer(ref)


def classify(before: Sequence[str], after: Sequence[str]) -> str:
    """Table 1's effect of switching one word, from its tokens before and after (module docstring)."""
    a, b = list(before), list(after)
    if a == b:
        return "unchanged"
    if len(a) == len(b) and a[1:] == b[1:]:
        return "substitution"
    if len(b) > len(a) and b[len(b) - len(a) + 1:] == a[1:]:
        return "division"
    if len(b) < len(a) and a[len(a) - len(b) + 1:] == b[1:]:
        return "fusion"
    return "regrouping"

