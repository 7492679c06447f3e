"""Token-sequence entries of an augmentation cache: a positive stored as a tokenizer's own tokens instead of
text (CARDS Table 5's re-tokenization and BPE-dropout, whose point is a segmentation the tokenizer would not
produce from any text). Such an entry is ``TOKENS_PREFIX`` followed by the tokens joined by single spaces
(byte-level BPE and WordPiece token strings never contain a space), e.g. ``"<tokens> Ġinter pret Ġthe Ġtext"``.

Its own module, without dependencies, because every stage that reads a cache tells the two kinds of entry
apart (the cache's statistics, tokenization, training, the census), and none of them should depend on the
CARDS augmentations that write them; among the models, because the tokenizers read them and the augmentations
stand a layer above (tests/test_module_graph.py).
"""
from __future__ import annotations

from typing import Sequence

TOKENS_PREFIX = "<tokens> "


def encode_tokens(tokens: Sequence[str]) -> str:
    return TOKENS_PREFIX + " ".join(tokens)


def decode_tokens(text: str) -> list[str] | None:
    """The token sequence of a token-sequence entry, or None for a plain-text entry."""
    return text[len(TOKENS_PREFIX):].split(" ") if text.startswith(TOKENS_PREFIX) else None
