"""AugCSE's "highly meaning preserving" rule-based augmentations (Table 3, third column), as NL-Augmenter
implements them: YodaPerturbation, ContractionExpansions, DiscourseMarkerSubstitution, GenderSwap,
GeoNamesTransformation and SynonymSubstitution (NumericToWord is in `numbers`)."""
from __future__ import annotations

import re
from functools import lru_cache

from ...params import Param
from ..registry import register
from . import data
from .common import FAMILY, UPOS_WORDNET, synsets, untokenize, wordlist


# --------------------------------------------------------------------------------------------------
# YodaPerturbation
# --------------------------------------------------------------------------------------------------
_CLAUSE_MARKS = frozenset({",", ".", ";", "?", "!"})
_COMMA = object()          # the comma Yoda inserts (a punctuation token of its own)


def _clauses(sent):
    """Clauses of a sentence, cut at coordinating conjunctions and at , . ; ? ! (each cut is a clause too)."""
    out, cur = [], []
    for tok in sent:
        if tok.dep_ == "cc" or (tok.dep_ == "punct" and tok.text in _CLAUSE_MARKS):
            out += [cur, [tok]]
            cur = []
        else:
            cur.append(tok)
    if cur:
        out.append(cur)
    return out


def _yodafy(clause):
    """What follows the first root or auxiliary, a comma (unless that part ends in punctuation), then the
    clause's start up to that root/auxiliary."""
    pivot = next((k for k, t in enumerate(clause) if t.dep_ in ("ROOT", "aux")), None)
    if pivot is None:
        return list(clause)
    tail = list(clause[pivot + 1:])
    if tail and tail[-1].dep_ != "punct":
        tail.append(_COMMA)
    return tail + list(clause[:pivot + 1])


@register("YodaPerturbation", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter, after yevbar/Yoda-Script): in each clause, what follows the first "
                      "root/auxiliary moves to the front ('You must find the treasure' -> 'Find the treasure, "
                      "you must'); words are lower-cased except proper nouns and 'I'")
def yoda(doc, rng) -> str:
    """NL-Augmenter's rendering: tokens joined by spaces, punctuation glued to the word before it, the first
    word capitalised (a negation becomes "Not"), proper nouns (PROPN) and "I" kept, every other word lower-
    cased; sentences are joined by two spaces. NL-Augmenter takes its comma from parsing " , " and spaCy 3.0
    labelled it punct (glued: "treasure, you"); spaCy 3.8 does not, and NL-Augmenter itself then writes
    "treasure , you". The comma here is always punctuation, as the test cases show."""
    out = []
    for sent in doc.sents:
        s = ""
        for clause in _clauses(sent):
            for tok in _yodafy(clause):
                if tok is _COMMA:
                    s = s[:-1] + ", "
                elif tok.text == "I":
                    s += tok.text + " "
                elif s == "":
                    s += ("Not" if tok.dep_ == "neg" else tok.text[:1].upper() + tok.text[1:]) + " "
                elif tok.dep_ == "punct":
                    s = s[:-1] + tok.text + " "
                else:
                    s += (tok.text if tok.pos_ == "PROPN" else tok.text.lower()) + " "
        out.append(s + " ")
    return "".join(out).rstrip(" ")


# --------------------------------------------------------------------------------------------------
# ContractionExpansions
# --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _contractions():
    """(contraction -> expansion, expansion -> contraction, expanding regex, contracting regex), built from
    NL-Augmenter's map (after CheckList) in its order: the order decides which alternative a regex tries first
    and, for expansions shared by two contractions, which contraction is used ("is not" -> "isn't")."""
    expand = dict(data.pairs("contractions.tsv"))
    contract = {}
    for c, e in expand.items():
        contract[e] = c
    rx_expand = re.compile(r"\b({})\b".format("|".join(expand)), re.IGNORECASE | re.DOTALL)
    rx_contract = re.compile(r"\b({})\b ".format("|".join(contract)), re.IGNORECASE | re.DOTALL)
    return expand, contract, rx_expand, rx_contract


@register("ContractionExpansions", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (NL-Augmenter, CheckList's map): expand contractions (\"can't\" -> 'cannot'); "
                      "in a line with none, contract expansions ('There is' -> \"There's\")")
def contraction_expansions(text, rng) -> str:
    """NL-Augmenter returns [expanded, contracted] (those that differ from the line) and AugCSE keeps the first.
    Only the first letter of a match keeps its case; contractions are matched before a space only."""
    expand, contract, rx_expand, rx_contract = _contractions()

    def expanded(m):
        w = m.group(0)
        return w[0] + expand.get(w, expand.get(w.lower()))[1:]

    out = rx_expand.sub(expanded, text)
    if out != text:
        return out

    def contracted(m):
        w = m.group(1)
        return w[0] + contract.get(w, contract.get(w.lower()))[1:] + " "

    return rx_contract.sub(contracted, text)


# --------------------------------------------------------------------------------------------------
# DiscourseMarkerSubstitution
# --------------------------------------------------------------------------------------------------
@register("DiscourseMarkerSubstitution", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (NL-Augmenter): one discourse marker (of its 38 PDTB markers) replaced by another "
                      "of the same sense, drawn uniformly ('because' -> 'since')")
def discourse_marker_substitution(text, rng) -> str:
    """NL-Augmenter's rule: the markers found as whitespace tokens of the lower-cased line (so only one-word
    markers, a trailing comma included for "also,"); one drawn; a same-sense marker that does not occur inside
    it drawn; one occurrence of the marker (anywhere in the line, any case) replaced, keeping its case type."""
    markers = data.pairs("discourse_markers.tsv")
    sense = dict(markers)
    words = text.lower().split()
    present = [m for m, _ in markers if m in words]
    if not present:
        return text
    original = rng.choice(present)
    same = [m.rstrip(",") for m, c in markers if c == sense[original]]
    options = [m for m in same if m not in original]
    if not options:
        return text
    new = rng.choice(options)
    found = list(re.finditer("(?i)" + re.escape(original), text))
    if not found:
        return text
    m = rng.choice(found)
    if m[0].isupper():
        new = new.upper()
    elif m[0][0].isupper() and len(m[0]) > 1:
        new = new[0].upper() + new[1:]
    if original.endswith(","):
        new += ","
    return text[:m.start()] + new + text[m.end():]


# --------------------------------------------------------------------------------------------------
# GenderSwap
# --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _names() -> dict[str, list[str]]:
    names = {"m": [], "f": []}
    for n, g in wordlist("names.tsv"):
        names[g].append(n)
    return names


def _normalise(word: str) -> str:
    raw = word.lower().replace("'s", "")
    return "".join(c for c in raw if c.isalpha() or c == "-").strip("-")


@register("GenderSwap", family=FAMILY, needs_parse=False,
          description="AugCSE A.2 (NL-Augmenter): every gendered word of NL-Augmenter's list (Zhao et al. 2018's "
                      "pairs, 'his' <-> 'her') becomes its counterpart, and first names become a name of the other "
                      "gender, drawn per word",
          swap_names=Param(True, "also swap first names (NL-Augmenter's default)"))
def gender_swap(text, rng, swap_names=True) -> str:
    """NL-Augmenter's rule on the space-separated words: a word is normalised (lower case, "'s" dropped,
    letters and inner dashes kept); its counterpart replaces that part of the lower-cased word, whose first
    letter then gets the original's case ("Son-in-law," -> "Daughter-in-law,"). The name lists are CheckList's
    there (not offline); ours (``resources/wordlists/names.tsv``) are common US first names."""
    pairs = dict(data.pairs("gender_pairs.tsv"))
    names = _names()
    male = {n.lower() for n in names["m"]}
    female = {n.lower() for n in names["f"]}
    out = []
    for word in text.split(" "):
        raw = _normalise(word)
        new = pairs.get(raw)
        if swap_names:
            if raw in female:
                new = rng.choice(names["m"])
            if raw in male:
                new = rng.choice(names["f"])
        if new is None or not raw:
            out.append(word)
            continue
        y = word.lower().replace(raw, new)
        out.append(y[0].upper() + y[1:] if word[:1].isupper() else y)
    return " ".join(out)


# --------------------------------------------------------------------------------------------------
# GeoNamesTransformation
# --------------------------------------------------------------------------------------------------
_CONTINENTS = {"AF": "Africa", "AS": "Asia", "EU": "Europe", "NA": "North America", "OC": "Oceania",
               "SA": "South America", "AN": "Antarctica"}


@lru_cache(maxsize=1)
def _geo():
    """(countries by ISO code, countries by name, capitals -> country name, cities -> country ISO)."""
    countries = data.countries()
    by_name = {c["name"]: c for c in countries.values()}
    capitals = {c["capital"]: c["name"] for c in countries.values()}
    cities = {c["capital"]: c["iso"] for c in countries.values() if c["capital"]}
    for city, country, _ in wordlist("cities.tsv"):
        iso = by_name.get(country, by_name.get(_COUNTRY_ALIASES.get(country, ""), {})).get("iso")
        if iso:
            cities.setdefault(city, iso)
    return countries, by_name, capitals, cities


_COUNTRY_ALIASES = {"USA": "United States", "UK": "United Kingdom", "South Korea": "South Korea"}


def _and_list(names: list[str]) -> str:
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]


def _country_variants(start, final, c, features) -> list[str]:
    countries, _, _, _ = _geo()
    langs = data.language_names()
    cont = _CONTINENTS[c["continent"]]
    pop = "{:,}".format(int(c["population"]))
    out = []
    if cont not in features:
        out.append(f"{start}, a country in {cont}{final}")
        out.append(f"{start}, a country in {cont}, with a population of {pop} inhabitants{final}")
    if c["capital"] not in features:
        out.append(f"{start}, whose capital city is {c['capital']}{final}")
    if cont not in features and c["capital"] not in features:
        out.append(f"{start}, a country in {cont}, with a population of {pop} inhabitants, with the capital at "
                   f"{c['capital']}{final}")
    if c["iso"] not in features:
        out.append(f"{start} ({c['iso']}){final}")
    if c["iso3"] not in features:
        out.append(f"{start} ({c['iso3']}){final}")
    if c["iso"] not in features and c["iso3"] not in features:
        out.append(f"{start} ({c['iso']}/{c['iso3']}){final}")
    neighbours = [countries[n]["name"] for n in c["neighbours"] if n in countries]
    neighbours = [n for n in neighbours if n not in features]
    if neighbours:
        out.append(f"{start}, a country neighbouring {_and_list(neighbours)}{final}")

    def lang_name(code):
        code = code if code in langs else code.split("-")[0].strip()
        return langs.get(code)

    if c["languages"]:
        primary = lang_name(c["languages"][0])
        if primary:
            out.append(f"{start}, a country speaking primarily the {primary} language{final}")
        n = len(c["languages"])
        out.append(f"{start}, a country with {n} spoken language{'s' if n > 1 else ''}{final}")
        spoken = [name for name in map(lang_name, c["languages"]) if name]
        if len(spoken) >= 2:
            out.append(f"{start}, a country with the {len(spoken)} most spoken languages being "
                       f"{_and_list(spoken)}{final}")
    return out


def _city_variants(city, start, final, iso, features) -> list[str]:
    countries, _, capitals, _ = _geo()
    country = countries[iso]["name"]
    cont = _CONTINENTS[countries[iso]["continent"]]
    out = []
    if country not in features:
        out.append(f"{start}, a city in {country}{final}")
    if cont not in features:
        out.append(f"{start}, a city in {cont}{final}")
    if city in capitals and capitals[city] not in features:
        out.append(f"{start}, the capital of {capitals[city]}{final}")
    return out


@register("GeoNamesTransformation", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter): after a country or city name, what GeoNames knows of it "
                      "('Egypt has ...' -> 'Egypt, a country in Africa, has ...'); one of its variants drawn")
def geonames(doc, rng) -> str:
    """NL-Augmenter's rule on the line's tokens (nltk's there; spaCy's here): capitalised runs of up to five
    tokens that name a country (GeoNames countryInfo), a city or a continent code are found (longest first);
    for each country and city found, every description pattern that does not repeat a name of the line gives
    one variant, the tokens joined by spaces. NL-Augmenter returns them all; one is drawn here (a cache holds
    one positive per line). Cities: NL-Augmenter reads GeoNames cities5000 (not offline), with populations;
    ours are the capitals of countryInfo and the cities of ``resources/wordlists/cities.tsv``, without the
    population patterns."""
    _, by_name, _, cities = _geo()
    tokens = [t.text for t in doc if not t.is_space]
    features: dict[str, dict] = {}
    for i in range(len(tokens)):
        for j in reversed(range(1, min(6, len(tokens) - i + 1))):
            s = " ".join(tokens[i:i + j])
            if not s[0].isupper():
                continue
            if s in by_name:
                features[s] = {"to": i + j, "type": "country"}
                break
            if s in cities:
                features[s] = {"to": i + j, "type": "city"}
                break
            if s in _CONTINENTS:
                features[s] = {"to": i + j, "type": "continent"}
                break
            if len(s) in (2, 3) and s.isupper():
                features[s] = {"type": "iso"}
                break
    variants = []
    for name, f in features.items():
        if f["type"] not in ("country", "city"):
            continue
        start = " ".join(tokens[:f["to"]])
        final = " ".join(tokens[f["to"]:]).strip()
        final = ", " + final if final else ""
        if f["type"] == "country":
            variants += _country_variants(start, final, by_name[name], features)
        else:
            variants += _city_variants(name, start, final, cities[name], features)
    return rng.choice(variants) if variants else doc.text


# --------------------------------------------------------------------------------------------------
# SynonymSubstitution
# --------------------------------------------------------------------------------------------------
@register("SynonymSubstitution", family=FAMILY, needs_parse=True,
          description="AugCSE A.2 (NL-Augmenter): each noun/verb/adjective/adverb with WordNet synsets is replaced "
                      "with probability prob by the head word of one of them ('returned' -> 'retort'), drawn "
                      "uniformly; the words are re-joined",
          prob=Param(0.5, "probability that each word with a synonym is replaced (NL-Augmenter: 0.5)"))
def synonym_substitution(doc, rng, prob=0.5) -> str:
    """NL-Augmenter's rule: the candidates are the first words of the names of the token's synsets for its
    POS (so uninflected: "bought" -> "buy"), those equal to the word left out, multi-word ones with spaces;
    the draws are a coin with probability `prob` per token that has candidates, then a uniform choice. The
    words are re-joined with NL-Augmenter's `untokenize`, even when none changed. NL-Augmenter draws from
    numpy seeded with 42 on every call (the same stream for every line); here from the line's generator."""
    words = []
    for tok in doc:
        pos = UPOS_WORDNET.get(tok.pos_)
        if pos is None:
            words.append(tok.text)
            continue
        heads = [s.name().split(".")[0] for s in synsets(tok.text, pos)]
        heads = [h for h in heads if h.lower() != tok.text.lower()]
        if heads and rng.random() < prob:
            words.append(rng.choice(heads).replace("_", " "))
        else:
            words.append(tok.text)
    return untokenize(words)
