"""AugCSE's "possible meaning alteration" augmentations that follow rules (Table 3, second column):
ColorTransformation, Summarization, SentenceReordering and TenseTransformation, as NL-Augmenter implements
them. The random word operations and the model-based ones are in `random_words` and `seq2seq`."""
from __future__ import annotations

import re
import string
from functools import lru_cache

from ...params import Param
from ..registry import register
from . import data
from .common import FAMILY, past_tense, third_person


# --------------------------------------------------------------------------------------------------
# ColorTransformation
# --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=2)
def _color_word_rx() -> re.Pattern:
    names = sorted(data.colors(), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w-])")


def color_spans(text: str, match: str) -> list[tuple[int, int]]:
    """Where colour names occur. ``substring``: NL-Augmenter's search, the first occurrence of each name
    anywhere in the text, case-sensitive, inside words too ("red" in "entered"); a name found inside a longer
    one found too ("blue" in "alice blue") is dropped (NL-Augmenter replaces both and garbles the text).
    ``word``: every occurrence of a name as a whole word, longest name first."""
    if match == "word":
        return [m.span() for m in _color_word_rx().finditer(text)]
    found = []
    for name in data.colors():
        i = text.find(name)
        if i >= 0:
            found.append((i, i + len(name)))
    return sorted(s for s in found if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in found))


@register("ColorTransformation", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (NL-Augmenter): each colour name found is replaced by one of NL-Augmenter's 147 "
                      "colour names, drawn uniformly (the same colour may be drawn)",
          match=Param("substring", "substring: NL-Augmenter's search (first occurrence of each name, also inside "
                                   "words: 'entered' -> 'entmisty rose'); word: whole words only",
                      choices=("substring", "word")))
def color_transformation(text, rng, match="substring") -> str:
    """NL-Augmenter first re-tokenises and detokenises the sentence with nltk's Treebank tools (its punkt model is
    not offline; for ordinary sentences this changes nothing) and replaces the spans in the colour list's
    reverse order at their original offsets; here from the last span to the first, so offsets stay right."""
    colors = data.colors()
    for start, end in reversed(color_spans(text, match)):
        text = text[:start] + rng.choice(colors) + text[end:]
    return text


# --------------------------------------------------------------------------------------------------
# Summarization
# --------------------------------------------------------------------------------------------------
SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "agent", "expl"})
OBJECTS = frozenset({"dobj", "dative", "attr", "oprd", "acomp", "advcl", "advmod", "amod", "appos", "nn", "nmod",
                     "ccomp", "complm", "hmod", "infmod", "xcomp", "rcmod", "poss", " possessive"})
_NEGATIONS = frozenset({"no", "not", "n't", "never", "none"})


def _negated(tok) -> bool:
    return any(t.lower_ in _NEGATIONS for t in (*tok.lefts, *tok.rights))


def _conjoined(toks, labels):
    """Tokens joined by "and" to the right of `toks` (repeatedly), NL-Augmenter's conjunction rule."""
    more = []
    for t in toks:
        rights = list(t.rights)
        if "and" in {r.lower_ for r in rights}:
            more += [r for r in rights if r.dep_ in labels or r.pos_ == "NOUN"]
            if more:
                more += _conjoined(more, labels)
    return more


def _objects_from_prepositions(deps):
    objs = []
    for d in deps:
        if d.pos_ == "ADP" and d.dep_ == "prep":
            objs += [t for t in d.rights if t.dep_ in OBJECTS or (t.pos_ == "PRON" and t.lower_ == "me")]
            v, more = _objects_from_xcomp(list(d.rights))
            if v is not None and more:
                objs += more
    return objs


def _objects_from_xcomp(deps):
    for d in deps:
        if d.pos_ == "VERB" and d.dep_ in ("xcomp", "pcomp"):
            rights = list(d.rights)
            objs = [t for t in rights if t.dep_ in OBJECTS] + _objects_from_prepositions(rights)
            if objs:
                return d, objs
    return None, None


def _all_objects(v):
    rights = list(v.rights)
    objs = [t for t in rights if t.dep_ in OBJECTS] + _objects_from_prepositions(rights)
    xv, xobjs = _objects_from_xcomp(rights)
    if xv is not None and xobjs:
        objs += xobjs
        v = xv
    if objs:
        objs += _conjoined(objs, OBJECTS)
    return v, objs


def _find_subjects(tok):
    """Up the tree from a verb without a subject of its own: the first noun above it is its subject."""
    head = tok.head
    while head.pos_ not in ("VERB", "NOUN") and head.head != head:
        head = head.head
    if head.pos_ == "VERB":
        # NL-Augmenter looks for children labelled "SUB", a label spaCy never gives: it climbs on
        return _find_subjects(head) if head.head != head else ([], False)
    if head.pos_ == "NOUN":
        return [head], _negated(tok)
    return [], False


def _all_subjects(v):
    negated = _negated(v)
    subs = [t for t in v.lefts if t.dep_ in SUBJECTS and t.pos_ != "DET"]
    if subs:
        subs += _conjoined(subs, SUBJECTS)
    else:
        found, negated = _find_subjects(v)
        subs += found
    return subs, negated


@register("Summarization", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter): 'subject verb object' triples from the parse, joined by ', ', "
                      "'!' before a negated verb ('Stillwater is not a ... film' -> 'Stillwater !is film')")
def summarization(doc, rng) -> str:
    """NL-Augmenter's subject-verb-object extraction: for every verb (or auxiliary) with subjects, each
    (subject, verb, object) triple, the verb replaced by an open complement's verb when that one carries the
    objects. A line without a verbal root takes its root as subject and the last verb to its right. A line
    where nothing is found becomes the empty string, as NL-Augmenter returns it."""
    verbs = [t for t in doc if t.pos_ in ("VERB", "AUX") or t.dep_ == "aux"]
    results = []
    if any(v.dep_ == "ROOT" for v in verbs):
        for v in verbs:
            subs, negated = _all_subjects(v)
            if subs:
                v2, objs = _all_objects(v)
                results += [f"{s.text} {'!' if negated or _negated(o) else ''}{v2.text} {o.text}"
                            for s in subs for o in objs]
    else:
        for root in (t for t in doc if t.dep_ == "ROOT"):
            negated = _negated(root)
            v = None
            for t in root.rights:
                if t.pos_ in ("VERB", "AUX"):
                    v = t
            if v is not None:
                v2, objs = _all_objects(v)
                results += [f"{root.text} {'!' if negated or _negated(o) else ''}{v2.text} {o.text}" for o in objs]
    return ", ".join(results)


# --------------------------------------------------------------------------------------------------
# SentenceReordering
# --------------------------------------------------------------------------------------------------
@register("SentenceReordering", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter, coreference off as AugCSE ran it): the sentences spaCy finds, "
                      "shuffled and joined by single spaces; single-sentence lines unchanged")
def sentence_reordering(doc, rng) -> str:
    """NL-Augmenter shuffles with a fixed seed (42), so every line of n sentences gets the same permutation
    (for the n of its tests, never the identity); here the permutation is drawn per line and the identity
    is turned into a rotation, so a multi-sentence line always changes."""
    sents = [s.text for s in doc.sents if s.text.strip()]
    if len(sents) < 2 or len(set(sents)) < 2:
        return doc.text
    order = list(range(len(sents)))
    rng.shuffle(order)
    if order == sorted(order):
        order = order[1:] + order[:1]
    return " ".join(sents[i] for i in order)


# --------------------------------------------------------------------------------------------------
# TenseTransformation (NL-Augmenter's, after tenseflow)
# --------------------------------------------------------------------------------------------------
_SUBJ_DEPS = frozenset({"agent", "csubj", "csubjpass", "expl", "nsubj", "nsubjpass"})
_BE_FORMS = frozenset({"be", "am", "is", "are", "was", "were", "been", "being", "'m", "'s", "'re"})


def _subjects_of(verb):
    if verb.dep_ == "aux" and verb.head != verb:
        return _subjects_of(verb.head)
    subs = [t for t in verb.lefts if t.dep_ in _SUBJ_DEPS]
    subs += [r for s in subs for r in s.rights if r.dep_ == "conj"]
    if not subs and verb.head != verb:
        return _subjects_of(verb.head)
    return subs


def _plural_subject(verb) -> bool:
    """tenseflow's number: more than half of the subjects are plural nouns (a NOUN whose lemma differs from
    its lower-case form); pronouns never count, so "we" and "they" are singular for it."""
    subs = _subjects_of(verb)
    if not subs:
        return False
    return sum(s.pos_ == "NOUN" and s.lemma_ != s.lower_ for s in subs) / len(subs) > 0.5


def conjugate(tok, tense: str, person: int, plural: bool) -> str:
    """The verb `tok` in `tense` (past / present / inf), our inflection rules standing in for pattern.en's."""
    lemma = tok.lemma_.lower() if tok.lemma_ else tok.lower_
    if tok.lower_ in _BE_FORMS:
        lemma = "be"
    if tense == "inf":
        return lemma
    if lemma == "be":
        if tense == "past":
            return "were" if plural or person == 2 else "was"
        return "are" if plural or person == 2 else ("am" if person == 1 else "is")
    if tense == "past":
        return past_tense(lemma)
    return third_person(lemma) if person == 3 and not plural else lemma


def _caps(old: str, new: str) -> str:
    return new.capitalize() if "A" <= old[:1] <= "Z" else new


def change_tense(doc, to: str) -> str:
    tense = {"future": "inf", "present": "present", "past": "past"}[to]
    if len(doc) == 0:
        return doc.text
    out = [doc[0].text]
    for k in range(1, len(doc)):
        prev, w = doc[k - 1], doc[k]
        if ((prev.text == "will" and prev.tag_ == "MD" and w.tag_ == "VB") or w.tag_ in ("VBD", "VBP", "VBZ", "VBN")
                or (prev.text not in ("to", "not") and w.tag_ == "VB")):
            this = "past" if (prev.text in ("were", "am", "is", "are", "was")
                              or (prev.text == "be" and k > 1 and doc[k - 2].text == "will")) else tense
            names = {s.text for s in _subjects_of(w)}
            person = 1 if names & {"I", "we", "We"} else 2 if names & {"you", "You"} else 3
            if (prev.text == "will" and prev.tag_ == "MD") or prev.text == "had":
                out.pop()
            if to == "future":
                if out and out[-1] not in ("will", "be"):
                    out.append("will")
                if prev.text == "will" and prev.tag_ == "NN":
                    out.append("will")
            out.append(_caps(w.text, conjugate(w, this, person, _plural_subject(w))))
        else:
            out.append(w.text)
        if prev.text + w.text in ("didnot", "donot", "willnot", "didn't", "don't", "won't") and len(out) > 1:
            if tense == "past":
                out[-2] = "did"
            elif tense == "present":
                out[-2] = "do"
            else:
                out.pop(-2)
        if w.text in ("have", "has") and w.head != w and w.dep_ == "aux":
            out.pop()
    text = " ".join(out)
    for ch in string.punctuation:          # tenseflow's clean-up of the spaces around punctuation
        text = text.replace(ch + " ", ch) if ch in "(<['" else text.replace(" " + ch, ch)
    for ch in ("-", "“", "‘"):
        text = text.replace(ch + " ", ch)
    for ch in ("…", "”", "'s", "n't"):
        text = text.replace(" " + ch, ch)
    return text


@register("TenseTransformation", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter, after tenseflow): conjugate the verbs into the past, present or "
                      "future ('I will go to the park.' -> 'I went to the park.'); AugCSE draws the tense per line",
          to=Param("random", "target tense; random: one of past/present/future drawn per line (AugCSE's setting)",
                   choices=("random", "past", "present", "future")))
def tense_transformation(doc, rng, to="random") -> str:
    """tenseflow's rules, as NL-Augmenter runs them: every finite verb, participle, and base form not after
    "to"/"not" is conjugated (so "I can come" -> "I can came" in the past, as there); "will"/"had" before a
    verb is dropped; the words are re-joined by spaces and the spaces around punctuation removed. pattern.en's
    verb lexicon is not available offline: our inflection rules and irregular list stand in (they give
    "smelled" where pattern gives "smelt")."""
    if to == "random":
        to = rng.choice(("past", "present", "future"))
    return change_tense(doc, to)
