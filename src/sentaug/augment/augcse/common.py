"""What the AugCSE operations share: our own word lists, case copying, NL-Augmenter's re-joining of tokens,
English inflection, and WordNet lookups as NL-Augmenter's pinned nltk made them."""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

FAMILY = "augcse"
WORD = re.compile(r"^[A-Za-z]+$")


# --------------------------------------------------------------------------------------------------
# Our word lists (package data; see resources/wordlists/SOURCES.md)
# --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def wordlist(name: str) -> tuple[tuple[str, ...], ...]:
    """Rows of ``resources/wordlists/<name>`` (tab-separated; '#' lines are comments)."""
    path = resources.files("sentaug") / "resources" / "wordlists" / name
    if not path.is_file():
        raise FileNotFoundError(f"word list {path} is missing from the sentaug package")
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            rows.append(tuple(line.split("\t")))
    return tuple(rows)


def match_case(src: str, new: str) -> str:
    """`new` with the case pattern of `src`: ALL CAPS, Capitalised, or as given."""
    if len(src) > 1 and src.isupper():
        return new.upper()
    if src[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


# --------------------------------------------------------------------------------------------------
# Writing text back
# --------------------------------------------------------------------------------------------------
def untokenize(words) -> str:
    """Words joined back into text the way NL-Augmenter's word-substitution transformations do it (after
    metanl's ``untokenize``): joined by spaces, then the space before closing punctuation, clitics ("'s",
    "n't") and after "(" removed, "can not" written "cannot"."""
    text = " ".join(words)
    text = text.replace("`` ", '"').replace(" ''", '"').replace(". . .", "...")
    text = text.replace(" ( ", " (").replace(" ) ", ") ")
    text = re.sub(r' ([.,:;?!%]+)([ \'"`])', r"\1\2", text)
    text = re.sub(r" ([.,:;?!%]+)$", r"\1", text)
    text = text.replace(" '", "'").replace(" n't", "n't").replace("can not", "cannot")
    return text.replace(" ` ", " '").strip()


# --------------------------------------------------------------------------------------------------
# Inflection (our own rules and irregular list; NL-Augmenter used pattern.en's lexicon)
# --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _irregular() -> dict[str, str]:
    return {b: p for b, p in wordlist("irregular_verbs.tsv")}


_VOWELS = "aeiou"


def past_tense(lemma: str) -> str:
    past = _irregular()
    if lemma in past:
        return past[lemma]
    if lemma.endswith("e"):
        return lemma + "d"
    if len(lemma) > 1 and lemma.endswith("y") and lemma[-2] not in _VOWELS:
        return lemma[:-1] + "ied"
    groups = re.findall(r"[aeiou]+", lemma)
    if (len(groups) == 1 and len(lemma) >= 3 and lemma[-1] not in _VOWELS + "wxy" and lemma[-2] in _VOWELS
            and lemma[-3] not in _VOWELS):
        return lemma + lemma[-1] + "ed"          # stop -> stopped
    return lemma + "ed"


def third_person(lemma: str) -> str:
    special = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if lemma in special:
        return special[lemma]
    if re.search(r"(s|x|z|ch|sh|o)$", lemma):
        return lemma + "es"
    if len(lemma) > 1 and lemma.endswith("y") and lemma[-2] not in _VOWELS:
        return lemma[:-1] + "ies"
    return lemma + "s"


# --------------------------------------------------------------------------------------------------
# WordNet
# --------------------------------------------------------------------------------------------------
def wn():
    """nltk's WordNet 3.0 reader over the offline files (`sentaug.augment.wordnet`)."""
    from .. import wordnet

    return wordnet.wordnet()


# spaCy universal POS -> WordNet POS, as NL-Augmenter's word-substitution transformations map them
UPOS_WORDNET = {"VERB": "v", "NOUN": "n", "ADV": "r", "ADJ": "s"}


def synsets(word: str, pos: str | None = None):
    """``wordnet.synsets(word, pos)`` as nltk 3.6.2 (NL-Augmenter's pin) answered it: the satellite POS 's'
    then listed every adjective synset (heads and satellites, in WordNet's order); nltk >= 3.7 lists only
    the satellites, which drops most antonyms ("interested" -> "uninterested" is a head adjective's)."""
    return wn().synsets(word, "a" if pos == "s" else pos)
