"""CARDS's switch-case augmentation (Wang et al., SIGIR 2022) and its Table 5 variants, as CARDS's collator
does them (alibaba/SimCSE-with-CARDS, ``data/text_augmentation.py``, called from ``data/data_collator.py``).

Switch-case flips the case of the first letter of randomly chosen words ("book" -> "Book", "Chart" ->
"chart"). As in the collator, the words are the line's space-separated tokens (split at " " only) and a word
is eligible when its first character is a letter (``str.isalpha``: "éclair" and "Ωmega" too, not "3rd",
"'s" or "(The"); the letter is flipped with ``str.upper``/``str.lower`` ("ß" -> "SS", a letter without case
is left as it is, and still counts as switched). Two selection rules (``version``):

* ``v1``: ``max(1, round(p * n))`` switches, n counting every token (letters or not), spent on eligible words
  drawn without replacement (fewer when there are fewer eligible words);
* ``v2``: each token independently with probability ``p`` (an ineligible one drawn is left alone; a line may
  come out unchanged).

The text is edited in place (spacing kept); the collator instead rebuilds it from its token ids
(``tokenizer.decode``: spaces collapsed, transformers' clean-up of " ." / " 's" ...) before switching, and
re-encodes it. ``normalize="collator"`` applies that decode-side normalisation first (`collator_text`);
the default leaves the line as it is (the anchor the trainer pairs it with is the line as it is too).

`switch_case` is a pure function of (text, rng): the trainer's collator can import and call it on the
fly, as CARDS does; the cache built through the registry serves analysis (Table 1, the census).

Tokenizer-relative variants (Table 5) take a ``tokenizer`` parameter (a path, a hub id, or
``mirror:<folder>`` resolved in ``$SENTAUG_MODEL_MIRROR``, see `sentaug.models.backbones.resolve_tokenizer`):

* ``switch_case_substitution``: switch-case restricted to words whose tokenization under the tokenizer is a
  *substitution* (only the first token changes; the length in tokens is kept; an unchanged tokenization
  counts too, as in the collator). The output is text.
* ``retokenize``: for *division* and *regrouping* words, keep the segmentation of the case-switched word but
  restore the original case (CARDS: 'interpret' is forced into 'inter' + 'pret'). The collator writes the
  switched word's tokens joined by the mask token with the first letter switched back ("inter<mask>pret"),
  re-encodes the line and drops the mask ids; ``context="isolated"`` does exactly that (so a non-ASCII word,
  whose byte-level token strings are re-read as text, comes out garbled as there); ``context="sentence"``
  instead takes the switched word's segmentation in its sentence and re-spells the token holding the letter.
  The text does not change, only its tokens; BPE-dropout likewise. These two return a **token sequence**,
  stored as text (`sentaug.models.token_sequences`: ``"<tokens> Ġinter pret Ġthe Ġtext"``), which the
  trainer maps to input ids as it stands (`sentaug.models.tokens.mixed_ids`). When the sequence equals the
  plain tokenization, the original text is returned instead, so ``changed`` in the cache means "tokens differ".
* ``bpe_dropout``: BPE-dropout (Provilkov et al. 2020) on every word: at each merge step each applicable
  merge is skipped with probability ``p``; the highest-priority surviving merge is applied. Byte-level BPE
  tokenizers only (RoBERTa, GPT-2). Implemented here rather than with the tokenizers library's own
  ``dropout`` so that it draws from the line's ``rng`` (the library's random state cannot be seeded).

Both decide a word's type from its tokens. The collator tokenizes the word alone, without RoBERTa's leading
space, punctuation glued to it included (``context="isolated"``, the default); ``context="sentence"``
tokenizes it as in its line (leading space except at the start), which for single-spaced text equals
tokenizing the whole line. The collator draws the words with v2's rule; ``version="v1"`` instead spends
``max(1, round(p * n))`` switches on the eligible words of the right type.

Which words the Table 5 variants switch depends on how the tokenizer splits them (`sentaug.augment.cards_words`:
Table 1's effects); CARDS Table 1 itself is `sentaug.augment.tokenization_effects`.
"""
from __future__ import annotations

import random
import re
from typing import Sequence

from ..models.token_sequences import encode_tokens
from .cards_words import WordTokenizer, classify, word_tokenizer
from ..params import Param
from .registry import register

_WORD = re.compile(r"[^ ]+")
_VERSIONS = ("v1", "v2")


# --------------------------------------------------------------------------------------------------
# Switch-case on text
# --------------------------------------------------------------------------------------------------
VERSIONS_HELP = "v1: max(1, round(p*n)) switches among the eligible words; v2: each token with probability p"
NORMALIZATIONS = ("none", "collator")


def _check(p: float, version: str) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"switch-case probability p must be in [0, 1], got {p}")
    if version not in _VERSIONS:
        raise ValueError(f"switch-case version must be one of {list(_VERSIONS)}, got {version!r}")


def eligible(word: str) -> bool:
    """The collator's test: the first character is a letter (any script)."""
    return word[:1].isalpha()


def collator_flip(word: str) -> str:
    """The collator's flip of the first letter: upper-cased when it is lower case, else lower-cased."""
    c = word[0]
    return (c.upper() if c.islower() else c.lower()) + word[1:]


def choose(words: Sequence[str], rng: random.Random, p: float, version: str, ok) -> list[int]:
    """Indices of the words to switch (module docstring): v1 spends max(1, round(p*n)) switches on the words
    `ok` accepts, v2 draws every token and keeps the drawn ones `ok` accepts."""
    _check(p, version)
    if not words:
        return []
    if version == "v1":
        candidates = [i for i, w in enumerate(words) if ok(w)]
        k = max(1, int(round(len(words) * p)))
        return sorted(rng.sample(candidates, min(k, len(candidates))))
    return [i for i, w in enumerate(words) if rng.random() < p and ok(w)]


def split_words(text: str) -> list[re.Match]:
    """The collator's words: runs of characters other than the space (tabs and newlines stay inside)."""
    return list(_WORD.finditer(text))


def _replace_words(text: str, words: Sequence[re.Match], new: dict[int, str]) -> str:
    out, last = [], 0
    for i, m in enumerate(words):
        if i in new:
            out += [text[last:m.start()], new[i]]
            last = m.end()
    out.append(text[last:])
    return "".join(out)


_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def collator_text(text: str) -> str:
    """The line as the collator sees it after decoding its token ids: tokens joined by single spaces, then
    transformers' ``clean_up_tokenization`` (" ." -> ".", " n't" -> "n't", ...), on by default in the
    transformers 4.x CARDS ran."""
    out = " ".join(w for w in text.split(" ") if w)
    for a, b in _CLEANUP:
        out = out.replace(a, b)
    return out


def switch_case(text: str, rng: random.Random, p: float = 0.05, version: str = "v1",
                normalize: str = "none") -> str:
    """Flip the first letter's case of randomly chosen words (see the module docstring for v1/v2)."""
    if normalize == "collator":
        text = collator_text(text)
    elif normalize != "none":
        raise ValueError(f"normalize must be one of {list(NORMALIZATIONS)}, got {normalize!r}")
    words = split_words(text)
    chosen = choose([m.group() for m in words], rng, p, version, eligible)
    return _replace_words(text, words, {i: collator_flip(words[i].group()) for i in chosen})


register("switch_case", family="cards", needs_parse=False,
         description="CARDS (its collator): flip the case of the first letter of randomly chosen words",
         p=Param(0.05, "switch probability (CARDS: 0.05 roberta-base, 0.1 roberta-large)"),
         version=Param("v1", VERSIONS_HELP, choices=_VERSIONS),
         normalize=Param("none", "none: the line as written; collator: first as CARDS's collator decodes it "
                                 "(single spaces, ' .' -> '.')", choices=NORMALIZATIONS))(switch_case)


# --------------------------------------------------------------------------------------------------
# Table 5 variants
# --------------------------------------------------------------------------------------------------
def _token_line(wt: WordTokenizer, words: Sequence[re.Match], new: dict[int, list[str]]) -> list[str]:
    out = []
    for j, m in enumerate(words):
        out += new[j] if j in new else list(wt.tokens(m.group(), j == 0))
    return out


CONTEXTS_T5 = ("isolated", "sentence")


def _effect(wt: WordTokenizer, word: str, initial: bool) -> str:
    """The type of switching `word` (the collator's flip) under the tokenizer."""
    return classify(wt.tokens(word, initial), wt.tokens(collator_flip(word), initial))


def switch_case_substitution(text: str, rng: random.Random, p: float = 0.05, version: str = "v2",
                             tokenizer: str = "mirror:roberta-base-tokenizer", context: str = "isolated") -> str:
    """Switch-case over substitution-type words only (token count unchanged); ``v2`` is the collator's rule
    (each token drawn with probability p, the substitution-type ones switched)."""
    wt = word_tokenizer(tokenizer)
    words = split_words(text)

    def ok(j_word):
        j, w = j_word
        return eligible(w) and _effect(wt, w, context == "isolated" or j == 0) in ("substitution", "unchanged")

    chosen = choose(list(enumerate(m.group() for m in words)), rng, p, version, ok)
    return _replace_words(text, words, {j: collator_flip(words[j].group()) for j in chosen})


def _retokenize_isolated(wt: WordTokenizer, words: list[str], chosen: list[int]) -> list[str] | None:
    """The collator's re-tokenization of the line: each chosen word written as its switched tokens joined by
    the mask token, first letter switched back; the line encoded; the mask ids dropped."""
    tok = wt.tok
    new = list(words)
    for j in chosen:
        new[j] = collator_flip(tok.mask_token.join(tok.convert_ids_to_tokens(
            tok.encode(collator_flip(words[j]), add_special_tokens=False))))
    ids = [i for i in tok.encode(" ".join(new), add_special_tokens=False) if i != tok.mask_token_id]
    return tok.convert_ids_to_tokens(ids)


def _restore_case(wt: WordTokenizer, switched: Sequence[str]) -> list[str]:
    """The case-switched word's segmentation with the case of its first letter switched back: the token
    holding that letter is re-spelt (and re-split by the tokenizer if the re-spelt form is not in the
    vocabulary); the other tokens are kept."""
    for t, token in enumerate(switched):
        # byte-level tokens are byte strings in disguise ('Ġ' for a space, 'Ã©' for 'é'): decode first
        text = wt.tok.convert_tokens_to_string([token]) if wt.byte_level else token
        if "\ufffd" in text:           # a partial UTF-8 sequence: leave the segmentation as it is
            return list(switched)
        k = next((i for i, c in enumerate(text) if c.lower() != c.upper()), None)
        if k is None:
            continue
        text = text[:k] + text[k].swapcase() + text[k + 1:]
        if wt.byte_level:
            restored = "".join(s for s, _ in wt.tok.backend_tokenizer.pre_tokenizer.pre_tokenize_str(text))
            head = [restored] if restored in wt.vocab else wt.bpe(restored)
        else:
            head = [text] if text in wt.vocab else list(wt.tok.tokenize(text))
        return list(switched[:t]) + head + list(switched[t + 1:])
    return list(switched)


def retokenize(text: str, rng: random.Random, p: float = 0.05, version: str = "v2",
               tokenizer: str = "mirror:roberta-base-tokenizer", context: str = "isolated") -> str:
    """CARDS re-tokenization: division/regrouping words keep the switched word's segmentation with their
    original case (module docstring for the two contexts). Returns the token sequence (`encode_tokens`), or
    the text when no token changes."""
    wt = word_tokenizer(tokenizer)
    words = split_words(text)
    isolated = context == "isolated"

    def ok(j_word):
        j, w = j_word
        return eligible(w) and _effect(wt, w, isolated or j == 0) in ("division", "regrouping")

    chosen = choose(list(enumerate(m.group() for m in words)), rng, p, version, ok)
    if isolated:
        plain = [m.group() for m in words]
        tokens = _retokenize_isolated(wt, plain, chosen)
        return text if tokens == wt.tok.tokenize(" ".join(plain)) else encode_tokens(tokens)
    new = {j: _restore_case(wt, wt.tokens(collator_flip(words[j].group()), j == 0)) for j in chosen}
    tokens = _token_line(wt, words, new)
    return text if tokens == _token_line(wt, words, {}) else encode_tokens(tokens)


def bpe_dropout(text: str, rng: random.Random, p: float = 0.1,
                tokenizer: str = "mirror:roberta-base-tokenizer") -> str:
    """BPE-dropout over every word of the line. Returns the token sequence (`encode_tokens`), or the text
    when the sampled segmentation equals the plain one."""
    wt = word_tokenizer(tokenizer)
    if not wt.byte_level:
        raise ValueError(f"bpe_dropout needs a BPE tokenizer; {wt.path} is {wt.kind}")
    words = split_words(text)
    new = {j: [t for piece in wt.pieces(m.group(), j == 0) for t in wt.bpe(piece, rng, p)]
           for j, m in enumerate(words)}
    tokens = _token_line(wt, words, new)
    return text if tokens == _token_line(wt, words, {}) else encode_tokens(tokens)


_TOK = Param("mirror:roberta-base-tokenizer", "tokenizer folder, hub id, or mirror:<folder> ($SENTAUG_MODEL_MIRROR)")
_CONTEXT = Param("isolated", "isolated: a word's type from its tokens alone, as CARDS's collator; sentence: as "
                             "tokenized in its line", choices=CONTEXTS_T5)
register("switch_case_substitution", family="cards", needs_parse=False,
         description="CARDS Table 5 'substitution': switch-case only on words whose first token alone changes",
         p=Param(0.05, "switch probability"),
         version=Param("v2", VERSIONS_HELP + " (the collator: v2)", choices=_VERSIONS),
         tokenizer=_TOK, context=_CONTEXT)(switch_case_substitution)
register("retokenize", family="cards", needs_parse=False,
         description="CARDS Table 5 're-tokenization': switched segmentation, original case (token sequence)",
         p=Param(0.05, "switch probability"),
         version=Param("v2", VERSIONS_HELP + " (the collator: v2)", choices=_VERSIONS),
         tokenizer=_TOK, context=_CONTEXT)(retokenize)
register("bpe_dropout", family="cards", needs_parse=False,
         description="CARDS Table 5 'BPE-dropout' (Provilkov et al. 2020): merges skipped with prob p (token sequence)",
         p=Param(0.1, "merge dropout probability"), tokenizer=_TOK)(bpe_dropout)

