"""AugCSE's "meaning alteration" augmentations (Table 3, first column), as NL-Augmenter implements them.

Each follows the behaviour of its NL-Augmenter transformation (GEM-benchmark/NL-Augmenter, read, not run);
where ours differs, the function's docstring says how and why.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ...params import Param
from ..registry import register
from . import data
from .common import FAMILY, WORD, synsets, untokenize, wn


# --------------------------------------------------------------------------------------------------
# SentenceAdjectivesAntonymsSwitch
# --------------------------------------------------------------------------------------------------
def first_antonym(lemma: str) -> str | None:
    """The antonym NL-Augmenter picks for an adjective: of the first head-adjective synset of the lemma, its
    first lemma's antonyms ordered by sense number, the first one (None when there is none)."""
    heads = [s for s in wn().synsets(lemma, "a") if ".a." in s.name()]
    if not heads:
        return None
    ants = heads[0].lemmas()[0].antonyms()
    if not ants:
        return None
    return sorted(ants, key=lambda a: a.synset().name().split(".")[2])[0].name()


@register("SentenceAdjectivesAntonymsSwitch", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter): every adjective with an antonym becomes it (WordNet: the first "
                      "head-adjective sense of its lemma, that sense's first lemma, its first antonym)")
def adjectives_antonyms_switch(doc, rng) -> str:
    """The antonym is written as WordNet spells it (lower case, underscores kept, as NL-Augmenter does)."""
    texts, changed = [t.text_with_ws for t in doc], False
    for tok in doc:
        if tok.pos_ == "ADJ":
            ant = first_antonym(tok.lemma_)
            if ant is not None:
                texts[tok.i], changed = ant + tok.whitespace_, True
    return "".join(texts) if changed else doc.text


# --------------------------------------------------------------------------------------------------
# SentenceAuxiliaryNegationRemoval
# --------------------------------------------------------------------------------------------------
NEGATED_AUXILIARIES = frozenset("am are can could had has have is may might must shall should was were will "
                                "would".split())


def _is_negation(tok) -> bool:
    return tok.lemma_.lower() in ("not", "n't") or tok.lower_ in ("not", "n't", "n’t")


@register("SentenceAuxiliaryNegationRemoval", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter): remove 'not'/\"n't\" after am/are/can/could/had/has/have/is/"
                      "may/might/must/shall/should/was/were/will/would, and 'do' with it ('do not have' -> 'have')")
def auxiliary_negation_removal(doc, rng) -> str:
    """NL-Augmenter's list of auxiliaries, matched on the word before the negation as written: "does not",
    "did not", "can't" ("ca" + "n't") and "won't" ("wo" + "n't") are left as they are, as there. A clitic
    "n't" hands its trailing space to the word before it ("isn't a" -> "is a")."""
    keep = [True] * len(doc)
    ws = [t.whitespace_ for t in doc]
    changed = False
    for tok in doc:
        if not _is_negation(tok) or tok.i == 0:
            continue
        prev = doc[tok.i - 1]
        if prev.lower_ in NEGATED_AUXILIARIES:
            keep[tok.i], changed = False, True
            ws[prev.i] = ws[prev.i] if prev.whitespace_ else tok.whitespace_
        elif prev.lower_ == "do":
            keep[tok.i] = keep[prev.i] = False
            changed = True
            if prev.i > 0 and not prev.whitespace_:
                ws[prev.i - 1] = tok.whitespace_
    if not changed:
        return doc.text
    return "".join(t.text + w for t, k, w in zip(doc, keep, ws) if k)


# --------------------------------------------------------------------------------------------------
# ReplaceHyponyms / ReplaceHypernyms
# --------------------------------------------------------------------------------------------------
def _step(synset, relation: str):
    if relation == "hyponym":
        return synset.hyponyms() + synset.instance_hyponyms()
    return synset.hypernyms() + synset.instance_hypernyms()


@lru_cache(maxsize=100_000)
def related_nouns(word: str, relation: str, depth: int) -> tuple[str, ...]:
    """Single-word WordNet hyponyms/hypernyms of any noun sense of `word`, up to `depth` steps away (0: all the
    way), nearest first. CheckList's Editor, which NL-Augmenter calls, walks the hierarchy the same way (its
    hypernyms reach "entity"; its hyponyms stop after three steps) before ranking the words with a masked LM."""
    out: list[str] = []
    frontier = list(wn().synsets(word, "n"))
    seen = set(frontier)
    step = 0
    while frontier and (depth == 0 or step < depth):
        step += 1
        frontier = [r for s in frontier for r in _step(s, relation) if r not in seen]
        seen.update(frontier)
        for r in frontier:
            for lemma in r.lemmas():
                name = lemma.name()
                if "_" not in name and name.lower() != word.lower() and name not in out:
                    out.append(name)
    return tuple(out)      # cached: nouns repeat a lot, and a hierarchy three levels deep is large


def _replace_one_noun(doc, rng, relation: str, depth: int) -> str:
    """NL-Augmenter (as AugCSE ran it, max_output=1): the nouns in a random order, the first that has a
    related word is replaced by one of them. NL-Augmenter ranks the candidates with a RoBERTa masked LM
    (CheckList's Editor) and keeps the best; no such model is offline, so one is drawn uniformly among the
    WordNet candidates (lower-case ones: upper-case hyponyms are names). NL-Augmenter's ``str.replace``
    also rewrites the noun inside longer words ("art" in "start"); here whole words only."""
    nouns = [t for t in doc if t.pos_ == "NOUN" and WORD.match(t.text)]
    rng.shuffle(nouns)
    for tok in nouns:
        options = [w for w in related_nouns(tok.text.lower(), relation, depth) if w.islower()]
        if options:
            new = rng.choice(options)
            return re.sub(rf"(?<![\w]){re.escape(tok.text)}(?![\w])", new, doc.text)
    return doc.text


@register("ReplaceHypernyms", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter): one noun (the first, in a random order, that has one) replaced "
                      "by a WordNet hypernym (any ancestor) drawn uniformly",
          depth=Param(0, "how many steps up the hierarchy (0: all the way, as CheckList)"))
def replace_hypernyms(doc, rng, depth=0) -> str:
    return _replace_one_noun(doc, rng, "hypernym", depth)


@register("ReplaceHyponyms", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter): one noun (the first, in a random order, that has one) replaced "
                      "by a WordNet hyponym (up to three steps down) drawn uniformly",
          depth=Param(3, "how many steps down the hierarchy (CheckList: 3)"))
def replace_hyponyms(doc, rng, depth=3) -> str:
    return _replace_one_noun(doc, rng, "hyponym", depth)


# --------------------------------------------------------------------------------------------------
# SentenceSubjectObjectSwitch
# --------------------------------------------------------------------------------------------------
@register("SentenceSubjectObjectSwitch", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter): swap the nearest subject/object phrase before the first "
                      "sentence's root with the nearest one after it ('John loves Mary.' -> 'Mary loves John.')")
def subject_object_switch(doc, rng) -> str:
    """NL-Augmenter's rule: every token whose dependency label contains "subj" or "obj" (nsubj, dobj, pobj,
    ...) heads a phrase (its whole subtree); phrases are keyed by their first token (a later one starting at
    the same token replaces an earlier one). The phrase starting last before the first sentence's root is
    swapped with the one starting first after it; the words between stay; only the first letter of the
    result is capitalised ("The fight would not give up The fighters.")."""
    if len(doc) == 0:
        return doc.text
    root = next(doc.sents).root
    starts: dict[int, tuple[int, int]] = {}
    for tok in doc:
        if "subj" in tok.dep_ or "obj" in tok.dep_:
            idx = sorted(t.i for t in tok.subtree)
            starts[idx[0]] = (idx[0], idx[-1])
    before = [k for k in starts if k < root.i]
    after = [k for k in starts if k > root.i]
    if not before or not after:
        return doc.text
    s0, s1 = starts[max(before)]
    o0, o1 = starts[min(after)]

    def span(a, b):                       # tokens a..b-1 with their own spacing
        return "".join(doc[i].text_with_ws for i in range(a, b))

    out = (span(0, s0) + span(o0, o1) + doc[o1].text + doc[s1].whitespace_ + span(s1 + 1, o0)
           + span(s0, s1) + doc[s1].text + doc[o1].whitespace_ + span(o1 + 1, len(doc)))
    if doc.text[:1] == doc.text[:1].upper() and out[:1] != out[:1].upper():
        out = out[:1].upper() + out[1:]
    return out


# --------------------------------------------------------------------------------------------------
# CityNamesTransformation
# --------------------------------------------------------------------------------------------------
_NER = {}


@lru_cache(maxsize=1)
def _POPULOUS_RX():
    names = sorted(set(data.populous_cities()), key=len, reverse=True)
    return re.compile("|".join(re.escape(n) for n in names))


@lru_cache(maxsize=256)
def _entities(text: str, model: str, with_ner: bool = True):
    """spaCy's named entities of `text` (the cached parse runs without NER, so the few lines naming a populous
    city are run through the full pipeline here, once per line)."""
    import spacy

    from ..parse import _alternatives

    if model not in _NER:
        for name in _alternatives(model):
            try:       # NER listens to its own tok2vec: the tagger, parser and lemmatizer are not needed
                _NER[model] = spacy.load(name, disable=["tagger", "parser", "attribute_ruler", "lemmatizer"])
                break
            except OSError:
                continue
        else:
            raise ValueError(f"CityNamesTransformation needs the spaCy pipeline {model!r} (with NER)")
    nlp = _NER[model]
    return nlp(text) if with_ner else nlp.make_doc(text)


@register("CityNamesTransformation", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (NL-Augmenter): populous English cities (its Eng_Pop list) that spaCy's NER "
                      "labels GPE/LOC become less known ones (its Eng_Scarce list, drawn per occurrence)",
          spacing=Param("tokens", "tokens: NL-Augmenter's output, the line's spaCy tokens joined by spaces, even when "
                                  "no city is replaced; original: the line as written, only the cities replaced",
                        choices=("tokens", "original")),
          spacy_model=Param("en_core_web_sm", "spaCy pipeline whose NER finds the cities"))
def city_names(text, rng, spacing="tokens", spacy_model="en_core_web_sm") -> str:
    pop = set(data.populous_cities())
    candidate = _POPULOUS_RX().search(text) is not None
    if not candidate and spacing == "original":
        return text                       # no populous name at all: nothing to replace (no NER needed)
    doc = _entities(text, spacy_model, with_ner=candidate)
    scarce = data.scarce_cities()
    pieces: list[tuple[str, str]] = []    # (text, whitespace after) per token or entity
    i = 0
    while i < len(doc):
        tok = doc[i]
        if tok.ent_iob_ == "B":
            j = i + 1
            while j < len(doc) and doc[j].ent_iob_ == "I":
                j += 1
            span = doc[i:j]
            name = " ".join(t.text for t in span)
            if name in pop and span[0].ent_type_ in ("GPE", "LOC"):
                name = rng.choice(scarce)
                pieces.append((name, doc[j - 1].whitespace_))
            else:
                pieces.append((span.text, doc[j - 1].whitespace_) if spacing == "original" else (name, " "))
            i = j
        else:
            pieces.append((tok.text, tok.whitespace_))
            i += 1
    if spacing == "tokens":
        return " ".join(p for p, _ in pieces)
    return "".join(p + w for p, w in pieces)


# --------------------------------------------------------------------------------------------------
# AntonymSubstitute
# --------------------------------------------------------------------------------------------------
def _antonyms_of(word: str, pos: str) -> list[str]:
    """Every lemma's first antonym over the word's synsets (NL-Augmenter's lookup), sorted."""
    out = set()
    for s in synsets(word, pos):
        for lemma in s.lemmas():
            if lemma.antonyms():
                out.add(lemma.antonyms()[0].name())
    return sorted(out)


def _related(word1: str, word2: str) -> bool:
    """NL-Augmenter's guard: word2 is a synonym or an antonym of word1 (over all of word1's synsets)."""
    names, ants = set(), set()
    for s in wn().synsets(word1):
        for lemma in s.lemmas():
            names.add(lemma.name())
            if lemma.antonyms():
                ants.add(lemma.antonyms()[0].name())
    return word2 in names or word2 in ants


@register("AntonymSubstitute", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (modified NL-Augmenter AntonymsSubstitute): every adjective/adverb with a "
                      "WordNet antonym is replaced by its first antonym (alphabetical), only when their number "
                      "is odd (AugCSE; NL-Augmenter: even)",
          parity=Param("odd", "odd: AugCSE's modification (an odd number of flips changes the meaning); even: "
                              "NL-Augmenter's original (an even number, and no two flipped words related)",
                       choices=("odd", "even")))
def antonym_substitute(doc, rng, parity="odd") -> str:
    """Deterministic, as in both codes. The words are re-joined with NL-Augmenter's `untokenize`; with
    ``parity=even`` a line with no antonym at all is returned re-joined too, as NL-Augmenter returns it."""
    words, flipped = [], []
    for tok in doc:
        pos = {"ADV": "r", "ADJ": "s"}.get(tok.pos_)
        ants = _antonyms_of(tok.text, pos) if pos else []
        if ants:
            words.append(ants[0].replace("_", " "))
            flipped.append(tok.text)
        else:
            words.append(tok.text)
    if parity == "odd":
        return untokenize(words) if len(flipped) % 2 == 1 else doc.text
    if len(flipped) % 2 != 0 or any(a != b and (_related(a, b)) for a in flipped for b in flipped):
        return doc.text
    return untokenize(words)
