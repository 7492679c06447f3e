"""WordNet 3.0 and Penn Treebank POS tags, offline, for the augmentations that need them.

WordNet: no PyPI package carries it, so ``scripts/setup_wordnet.sh`` lays out Debian's ``wordnet-base`` +
``wordnet-sense-index`` files for nltk, or, where apt cannot install them, NLTK's own wordnet.zip (downloaded
with a sha256 pin, or from a mirror: the `wordnet` source of sentaug/data/sources.yaml). `wordnet()` looks, in
order, in

1. ``$SENTAUG_NLTK_DATA/corpora/wordnet`` (when the variable is set),
2. ``<repo>/nltk_data/corpora/wordnet`` (where the setup script writes by default),
3. ``/usr/share/wordnet`` (Debian's files): copied, with the ``lexnames`` file Debian lacks, into
   ``$XDG_CACHE_HOME/sentaug/nltk_data/corpora/wordnet`` on first use (nltk cannot read the folder as is),

and raises `WordNetMissing` (one line: how to get it) otherwise. Nothing here calls ``nltk.download``. The
folder's parent is added to ``nltk.data.path`` (nltk 3.10 refuses to read corpora outside it), which also
lets nlpaug's ``from nltk.corpus import wordnet`` find the same files.

Lexical helpers (`synonyms`, `antonyms`, `hypernyms`, `hyponyms`) return single-word lemmas only: WordNet's
multi-word lemmas ("master_of_arts_in_teaching" for "mat") make poor in-sentence substitutes. Their ``pos``
is a Penn Treebank tag (what spaCy's ``token.tag_`` gives), a WordNet POS (n, v, a, r) or None (all POS).

POS tags: nlpaug's SynonymAug/AntonymAug call ``nltk.pos_tag``, whose tagger model is another download;
`penn_tags` gives the same Penn Treebank tags from spaCy's tagger and has the same signature, and
`offline_nlpaug` plugs it (and this WordNet) into an nlpaug augmenter.
"""
from __future__ import annotations

import os
import shutil
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Sequence

REPO_ROOT = Path(__file__).resolve().parents[3]
DEBIAN_WORDNET = Path("/usr/share/wordnet")
SETUP_HINT = ("run `scripts/setup_wordnet.sh` (Debian's wordnet-base and wordnet-sense-index where apt-get works, "
              "else NLTK's sha256-pinned wordnet.zip) or set SENTAUG_NLTK_DATA to a folder holding corpora/wordnet")

# The files nltk's WordNetCorpusReader reads (lexnames is written, not copied: Debian does not ship it).
WORDNET_FILES = ("adj.exc", "adv.exc", "noun.exc", "verb.exc", "data.adj", "data.adv", "data.noun", "data.verb",
                 "index.adj", "index.adv", "index.noun", "index.verb", "index.sense", "cntlist.rev")

# lexnames(5WN): lexicographer file number -> (name, syntactic category 1 noun 2 verb 3 adj 4 adv).
# scripts/setup_wordnet.sh writes the same table (tests/augment/test_wordnet.py checks they agree).
LEXNAMES = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1), ("noun.animal", 1),
    ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1), ("noun.cognition", 1),
    ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1), ("noun.food", 1), ("noun.group", 1),
    ("noun.location", 1), ("noun.motive", 1), ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1),
    ("noun.plant", 1), ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1), ("verb.body", 2),
    ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2), ("verb.competition", 2),
    ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2),
    ("verb.perception", 2), ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2),
    ("adj.ppl", 3),
)


class WordNetMissing(FileNotFoundError):
    """No WordNet 3.0 could be found or laid out."""


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{cat}\n" for i, (name, cat) in enumerate(LEXNAMES))


def _complete(folder: Path) -> bool:
    return all((folder / f).is_file() and (folder / f).stat().st_size > 0 for f in (*WORDNET_FILES, "lexnames"))


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sentaug" / "nltk_data"


def layout_from(src: str | os.PathLike, nltk_root: str | os.PathLike) -> Path:
    """Copy a WordNet 3.0 dict folder (Debian's /usr/share/wordnet) to ``<nltk_root>/corpora/wordnet`` with a
    ``lexnames`` file, atomically (a half-copied folder never appears under the final name). Returns it."""
    src, dest = Path(src), Path(nltk_root) / "corpora" / "wordnet"
    missing = [f for f in WORDNET_FILES if not (src / f).is_file()]
    if missing:
        raise WordNetMissing(f"{src} is not a complete WordNet 3.0 folder (no {missing[0]}); {SETUP_HINT}")
    tmp = dest.with_name(f"wordnet.tmp.{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in WORDNET_FILES:
        shutil.copyfile(src / f, tmp / f)
    (tmp / "lexnames").write_text(lexnames_text())
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


def find_wordnet() -> Path:
    """The ``corpora/wordnet`` folder to read (see the module docstring for the search order)."""
    env = os.environ.get("SENTAUG_NLTK_DATA")
    candidates = ([Path(env) / "corpora" / "wordnet"] if env else []) + [
        REPO_ROOT / "nltk_data" / "corpora" / "wordnet", _cache_root() / "corpora" / "wordnet"]
    for c in candidates:
        if _complete(c):
            return c
    if env:
        raise WordNetMissing(f"SENTAUG_NLTK_DATA={env} has no complete corpora/wordnet; {SETUP_HINT}")
    if (DEBIAN_WORDNET / "data.noun").is_file() and (DEBIAN_WORDNET / "index.sense").is_file():
        return layout_from(DEBIAN_WORDNET, _cache_root())
    raise WordNetMissing(f"WordNet 3.0 not found (looked in {', '.join(map(str, candidates))} and "
                         f"{DEBIAN_WORDNET}); {SETUP_HINT}")


@lru_cache(maxsize=1)
def wordnet():
    """nltk's WordNetCorpusReader over WordNet 3.0, loaded once per process (~2 s); never downloads."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    folder = find_wordnet()
    root = str(folder.parent.parent)
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)      # nltk 3.10 reads corpora only under nltk.data.path
    with warnings.catch_warnings():     # "multilingual functions are not available": only English is used
        warnings.simplefilter("ignore", UserWarning)
        return WordNetCorpusReader(str(folder), None)


# --------------------------------------------------------------------------------------------------
# Lexical relations
# --------------------------------------------------------------------------------------------------
def wordnet_pos(tag: str | None) -> str | None:
    """Penn Treebank tag (or WordNet POS letter) -> WordNet POS; None for tags WordNet has no words for
    and for None (meaning: every POS)."""
    if not tag:
        return None
    if tag in ("n", "v", "a", "r", "s"):
        return tag
    head = tag[:2]
    return {"NN": "n", "VB": "v", "JJ": "a", "RB": "r"}.get(head, "none")


def _synsets(word: str, pos: str | None):
    wpos = wordnet_pos(pos)
    if wpos == "none":
        return []
    wn = wordnet()
    found = wn.synsets(word, pos=wpos)
    if wpos == "a":           # adjective satellites ("s") are adjectives too
        found += wn.synsets(word, pos="s")
    return found


def _single_words(lemmas, exclude: str) -> list[str]:
    """Lemma names that are one word and not `exclude` (any case), first occurrence order, no duplicates."""
    out, seen = [], {exclude.lower()}
    for name in lemmas:
        if "_" in name or " " in name or name.lower() in seen:
            continue
        seen.add(name.lower())
        out.append(name)
    return out


def synonyms(word: str, pos: str | None = None) -> list[str]:
    """Single-word lemmas sharing a synset with `word` (synsets in WordNet's frequency order)."""
    return _single_words((l.name() for s in _synsets(word, pos) for l in s.lemmas()), word)


def antonyms(word: str, pos: str | None = None) -> list[str]:
    """Single-word direct antonyms of `word`'s lemmas (for adjective satellites, via their head adjective,
    so 'awful' -> 'good' as well as 'good' -> 'bad')."""
    names = []
    for s in _synsets(word, pos):
        lemmas = [l for l in s.lemmas() if l.name().lower() == word.lower()]
        for l in lemmas:
            names += [a.name() for a in l.antonyms()]
        if s.pos() == "s" and not names:
            for head in s.similar_tos():
                for hl in head.lemmas():
                    names += [a.name() for a in hl.antonyms()]
    return _single_words(names, word)


def hypernyms(word: str, pos: str | None = None) -> list[str]:
    """Single-word lemmas of the direct (and instance) hypernyms of `word`'s synsets."""
    return _single_words((l.name() for s in _synsets(word, pos)
                          for h in s.hypernyms() + s.instance_hypernyms() for l in h.lemmas()), word)


def hyponyms(word: str, pos: str | None = None) -> list[str]:
    """Single-word lemmas of the direct (and instance) hyponyms of `word`'s synsets."""
    return _single_words((l.name() for s in _synsets(word, pos)
                          for h in s.hyponyms() + s.instance_hyponyms() for l in h.lemmas()), word)


# --------------------------------------------------------------------------------------------------
# POS tags from spaCy (in place of nltk.pos_tag)
# --------------------------------------------------------------------------------------------------
_TAGGER_MODEL = "en_core_web_sm"


def penn_tags(tokens: str | Sequence[str], model: str = _TAGGER_MODEL) -> list[tuple[str, str]]:
    """[(token, Penn Treebank tag)], like ``nltk.pos_tag``. A list of tokens is tagged as given (one tag
    per token, as nlpaug expects); a string is tokenised by spaCy first."""
    from spacy.tokens import Doc

    from .parse import worker_nlp

    nlp = worker_nlp(model)
    if isinstance(tokens, str):
        doc = nlp(tokens)
    else:
        words = [str(t) for t in tokens]
        if not words:
            return []
        doc = nlp(Doc(nlp.vocab, words=words))
    return [(t.text, t.tag_) for t in doc]


def offline_nlpaug(aug):
    """Make an nlpaug WordNet-based augmenter (``naw.SynonymAug(aug_src='wordnet')``, ``naw.AntonymAug()``)
    run offline: its dictionary becomes this WordNet and its tagger `penn_tags`. Returns `aug`.

    Build the augmenter after calling `wordnet()` (so nlpaug's own ``nltk.corpus.wordnet`` finds the files
    instead of trying to download them): ``offline_nlpaug(naw.SynonymAug(...))`` does that in order only
    if `wordnet()` was called first, hence `nlpaug_synonym_aug`/`nlpaug_antonym_aug` below."""
    aug.model.model = wordnet()
    aug.model.pos_tag = penn_tags          # instance attribute shadows nlpaug's classmethod (nltk.pos_tag)
    return aug


def nlpaug_synonym_aug(**kwargs):
    """``nlpaug.augmenter.word.SynonymAug(aug_src='wordnet', **kwargs)`` served by offline WordNet + spaCy tags."""
    wordnet()
    import nlpaug.augmenter.word as naw

    return offline_nlpaug(naw.SynonymAug(aug_src="wordnet", **kwargs))


def nlpaug_antonym_aug(**kwargs):
    """``nlpaug.augmenter.word.AntonymAug(**kwargs)`` served by offline WordNet + spaCy tags."""
    wordnet()
    import nlpaug.augmenter.word as naw

    return offline_nlpaug(naw.AntonymAug(**kwargs))
