#!/usr/bin/env python
"""Generate sentaug's bundled demo data and the demo byte-level BPE tokenizer.

The data are synthetic and were written for this project: every sentence comes from the small
template grammar below (word lists + sentence templates), drawn with a fixed seed. Nothing is read
from a public data set and nothing is downloaded. Re-running the script reproduces the committed
files byte for byte (checked by tests/data/test_demo_data.py).

The layout follows the real data mirror (../shared/data): wiki/, sts/STS1{2..6}-en-test/,
sts/STSBenchmark/, sick/. STS-style gold scores are derived from how much of a shared meaning
("state": subject, verb, object, adjective, place, negation, tense, town) two sentences differ in.

    .venv/bin/python scripts/make_demo_data.py                      # data + tokenizer (in the package)
    .venv/bin/python scripts/make_demo_data.py --data-out D --no-tokenizer
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import random
import tempfile
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
DATA_OUT = ROOT / "src/sentaug/resources/demo"
TOKENIZER_OUT = ROOT / "src/sentaug/resources/tokenizers/demo-bpe"
SEED = 20240611
N_CORPUS = 1500                       # good corpus sentences (the bad lines come on top)
VOCAB_SIZE = 2000
SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]   # RoBERTa order: ids 0..4


# --------------------------------------------------------------------------------------------
# Lexicon. "|" separates synonyms (used for paraphrases), "; " separates groups.
def groups(spec: str) -> list[list[str]]:
    return [g.split("|") for g in spec.split("; ")]


PEOPLE = groups("man|guy; woman|lady; boy|young boy; girl|young girl; child|kid; teacher|instructor; "
                "farmer|grower; doctor|physician; student|pupil; cook|chef; worker|labourer; sailor|seaman")
OBJECTS = {
    "food": groups("tomato; onion; potato; carrot; apple; fish; cake"),
    "instrument": groups("guitar; piano; flute; drum; violin|fiddle"),
    "vehicle": groups("car|automobile; boat|ship; bicycle|bike; truck|lorry; bus|coach"),
    "text": groups("book|novel; letter|note; map|chart; newspaper|paper"),
    "item": groups("box|crate; ball; picture|photo; basket; lamp|lantern"),
    "building": groups("house|home; bridge; wall; fence; cottage|cabin; tower"),
}
# Verb forms "base 3sg past participle gerund"; the object kinds the verb takes.
VERBS = [(groups(forms)[0], kinds.split()) for forms, kinds in [
    ("cut cuts cut cut cutting|slice slices sliced sliced slicing", "food"),
    ("cook cooks cooked cooked cooking|prepare prepares prepared prepared preparing", "food"),
    ("peel peels peeled peeled peeling", "food"),
    ("play plays played played playing", "instrument"),
    ("tune tunes tuned tuned tuning|adjust adjusts adjusted adjusted adjusting", "instrument"),
    ("drive drives drove driven driving|steer steers steered steered steering", "vehicle"),
    ("repair repairs repaired repaired repairing|fix fixes fixed fixed fixing", "vehicle building"),
    ("wash washes washed washed washing|clean cleans cleaned cleaned cleaning", "vehicle food"),
    ("sell sells sold sold selling", "vehicle item food"),
    ("buy buys bought bought buying|purchase purchases purchased purchased purchasing", "vehicle item food"),
    ("carry carries carried carried carrying|hold holds held held holding", "item instrument text"),
    ("throw throws threw thrown throwing|toss tosses tossed tossed tossing", "item"),
    ("read reads read read reading|study studies studied studied studying", "text"),
    ("paint paints painted painted painting|decorate decorates decorated decorated decorating",
     "building item vehicle"),
    ("build builds built built building|construct constructs constructed constructed constructing", "building"),
    ("open opens opened opened opening", "item text"),
]]
PLACES = groups("in the park|at the park; near the river|by the river; in the kitchen|inside the kitchen; "
                "on the beach|on the shore; in the forest|in the woods; at the market|in the marketplace; "
                "on the street|on the road; in the garden|in the yard; at the station|at the railway station; "
                "on the hill|on the hillside")
ADJECTIVES = groups("big|large; small|little; old|worn; new|modern; red; wooden; heavy; beautiful|lovely; "
                    "dirty|muddy")
# Encyclopedic names (invented).
FIRST = {"she": "Anna Lena Maria Ida Clara Nora Elsa Greta Vera Hanna".split(),
         "he": "Tomas Oskar Jonas Felix Hugo Emil Anton Karl Viktor Leon".split()}
SURNAMES = "Berg Holm Varga Lund Moreau Keller Novak Sand Dahl Brandt Ferreira Okafor".split()
TOWNS = "Norvale Lindham Brackwell Eastmoor Stellby Carrow Westford Ashdene Kelmont Rivenby Marlow Fenwick".split()
RIVERS = "Avel Morrow Tessa Dray Kessel Orrin".split()
BUILDINGS = "church castle museum library station mill school theatre hospital lighthouse".split()
OCCUPATIONS = "painter poet engineer architect composer footballer botanist politician merchant historian".split()
TOWN_ADJ = "small quiet historic busy coastal".split()
DIRECTIONS = "north south east west".split()
REGIONS = "northern southern eastern western central".split()
PLURAL = {"man": "men", "woman": "women", "child": "children", "fish": "fish", "guy": "guys"}


def plural(noun: str) -> str:
    head, _, last = noun.rpartition(" ")
    if last in PLURAL:
        p = PLURAL[last]
    elif last.endswith(("s", "sh", "ch", "x")) or last in ("tomato", "potato"):
        p = last + "es"
    elif last.endswith("y") and last[-2] not in "aeiou":
        p = last[:-1] + "ies"
    else:
        p = last + "s"
    return f"{head} {p}".strip()


def art(phrase: str) -> str:
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


# --------------------------------------------------------------------------------------------
# Meaning states and their renderings (STS, STS-B, SICK).
WEIGHTS = {"subj": 1.7, "verb": 1.8, "obj": 2.0, "place": 1.4, "adj": 0.6, "neg": 2.2, "tense": 0.3, "town": 0.8}
# changed slots (penalties add up) -> relative frequency; "unrelated" = two independent states
CHANGES = [((), 28), (("adj",), 6), (("place",), 10), (("obj",), 10), (("subj",), 6), (("verb",), 6),
           (("neg",), 6), (("tense",), 3), (("town",), 3), (("obj", "place"), 6), (("subj", "verb"), 8),
           (("subj", "obj"), 4), (("adj", "place"), 4), ("unrelated", 12)]
# tense -> (active, active negated, passive, passive negated) and question (aux, verb, passive aux, passive verb)
AUX = {"prog": ("is {ing}", "is not {ing}", "is being {pp}", "is not being {pp}"),
       "present": ("{s}", "does n't {base}", "is {pp}", "is n't {pp}"),
       "headline": ("{s}", "does n't {base}", "{pp}", "not {pp}"),
       "past": ("{past}", "did n't {base}", "was {pp}", "was n't {pp}"),
       "perfect": ("has {pp}", "has n't {pp}", "has been {pp}", "has n't been {pp}")}
QAUX = {"prog": ("is", "{ing}", "is", "being {pp}"), "past": ("did", "{base}", "was", "{pp}"),
        "perfect": ("has", "{pp}", "has", "been {pp}")}
# style -> (tenses, templates); every style has >= 2 templates so that paraphrases can change structure
STYLES = {
    "captions": ("prog", ["{a_s} {act} {a_o} {p} .", "{p} , {a_s} {act} {a_o} .", "{a_o} {pas} by {a_s} {p} ."]),
    "headlines": ("headline", ["{s} {act} {o} {p}", "{o} {pas} by {s} {p}", "{s} {p} {act} {o}"]),
    "forums": ("past perfect", ["the {s} {act} the {o} {p} .", "{p} , the {s} {act} the {o} .",
                                "the {o} {pas} by the {s} {p} ."]),
    "questions": ("past perfect prog", ["why {qa} the {s} {qv} the {o} {p} ?",
                                        "why {qpa} the {o} {qpv} by the {s} {p} ?"]),
    "news": ("past", ["{a_s} from {town} {act} {a_o} {p} .", "{a_o} {pas} {p} by {a_s} from {town} .",
                      "{town} 's {s} {act} {a_o} {p} , officials said ."]),
}


def new_state(rng: random.Random, tenses: list[str]) -> dict:
    verb = rng.randrange(len(VERBS))
    kind = rng.choice(VERBS[verb][1])
    return {"subj": rng.randrange(len(PEOPLE)), "verb": verb, "kind": kind, "obj": rng.randrange(len(OBJECTS[kind])),
            "adj": rng.choice([None] + list(range(len(ADJECTIVES)))), "place": rng.randrange(len(PLACES)),
            "neg": rng.random() < 0.15, "tense": rng.choice(tenses), "town": rng.randrange(len(TOWNS))}


def change(rng: random.Random, st: dict, slot: str, tenses: list[str]) -> None:
    """Change one slot of state `st` in place to a different value."""
    def other(n, cur):
        return rng.choice([i for i in range(n) if i != cur])
    if slot == "verb":   # another verb that takes the same kind of object
        st["verb"] = rng.choice([i for i, (_, kinds) in enumerate(VERBS) if st["kind"] in kinds and i != st["verb"]])
    elif slot == "obj":
        st["obj"] = other(len(OBJECTS[st["kind"]]), st["obj"])
    elif slot == "adj":
        st["adj"] = rng.choice([a for a in [None] + list(range(len(ADJECTIVES))) if a != st["adj"]])
    elif slot == "neg":
        st["neg"] = not st["neg"]
    elif slot == "tense":
        st["tense"] = rng.choice([t for t in tenses if t != st["tense"]])
    else:
        n = {"subj": len(PEOPLE), "place": len(PLACES), "town": len(TOWNS)}[slot]
        st[slot] = other(n, st[slot])


def render(rng: random.Random, st: dict, style: str, template: int) -> str:
    """One tokenised, lowercased sentence for state `st`; synonyms are drawn at random."""
    base, s3, past, pp, ing = rng.choice(VERBS[st["verb"]][0]).split()
    forms = {"base": base, "s": s3, "past": past, "pp": pp, "ing": ing}
    obj = rng.choice(OBJECTS[st["kind"]][st["obj"]])
    o = obj if st["adj"] is None else f"{rng.choice(ADJECTIVES[st['adj']])} {obj}"
    subj = rng.choice(PEOPLE[st["subj"]])
    act, act_neg, pas, pas_neg = AUX["headline" if style == "headlines" else st["tense"]]
    qa, qv, qpa, qpv = QAUX.get(st["tense"], QAUX["past"])
    if st["neg"]:
        act, pas, qa, qpa = act_neg, pas_neg, qa + " n't", qpa + " n't"
    fields = {"s": subj, "a_s": art(subj), "o": o, "a_o": art(o), "p": rng.choice(PLACES[st["place"]]),
              "town": TOWNS[st["town"]].lower(), "act": act.format(**forms), "pas": pas.format(**forms),
              "qa": qa, "qv": qv.format(**forms), "qpa": qpa, "qpv": qpv.format(**forms)}
    return STYLES[style][1][template].format(**fields)


def make_pairs(rng: random.Random, style: str, n: int) -> list[tuple[str, str, float, tuple]]:
    """n distinct (sentence1, sentence2, score 0-5, changed slots) pairs of one style."""
    tenses, templates = STYLES[style][0].split(), STYLES[style][1]
    kinds = [(c, w) for c, w in CHANGES if not (c == ("tense",) and len(tenses) < 2) and
             not (c == ("town",) and style != "news")]
    pairs, seen = [], set()
    while len(pairs) < n:
        changed = rng.choices([c for c, _ in kinds], [w for _, w in kinds])[0]
        a = new_state(rng, tenses)
        b = new_state(rng, tenses) if changed == "unrelated" else dict(a)
        for slot in () if changed == "unrelated" else changed:
            change(rng, b, slot, tenses)
        ta = rng.randrange(len(templates))   # a paraphrase always changes the sentence structure
        tb = rng.choice([t for t in range(len(templates)) if t != ta or changed != ()])
        s1, s2 = render(rng, a, style, ta), render(rng, b, style, tb)
        if s1 == s2 or (s1, s2) in seen:
            continue
        seen.add((s1, s2))
        if changed == "unrelated":
            score = rng.uniform(0.0, 0.5)
        elif changed == ():
            score = rng.uniform(4.5, 5.0)
        else:
            score = min(5.0, max(0.0, 5.0 - sum(WEIGHTS[s] for s in changed) + rng.uniform(-0.3, 0.3)))
        pairs.append((s1, s2, score, changed))
    return pairs


# --------------------------------------------------------------------------------------------
# Encyclopedic corpus (cased, untokenised).
TEMPLATES = {  # category -> (weight, templates)
    "bio": (14, ["{Name} ({year}–{year2}) was {a_occ} from {town} who {vpast} {o} {p}.",
                 "{Name} was born in {town} in {year}, and {he} later worked as {a_occ} in {town2}.",
                 "{Name} is {a_occ} who has lived in {town} since {year}.",
                 "After {he} had {vpp} {o} {p}, {Name} moved to {town2}, where {he} became {a_occ}.",
                 "In {year}, {Name} {vpast} {o} {p} for the first time.",
                 "{Name} studied in {town2} and was appointed {occ} of the {bld} in {year}."]),
    "town": (12, ["{town} is a {tadj} town on the {river} River, about {km} kilometres {dir} of {town2}.",
                  "{town} (population {pop}) is the largest town in the {region} district.",
                  "{town} has a {bld}, a {bld2} and a small harbour.",
                  "The {river} River flows through {town} before it reaches the sea near {town2}.",
                  "{town} was first mentioned in {year}, when it was a village of {n} houses.",
                  "The population of {town} grew quickly after the {bld} opened in {year}."]),
    "building": (12, ["The {town} {bld} was built in {year} by the {occ} {Name}; it was rebuilt in {year2}.",
                      "The {bld} in {town} was completed in {year2}, because the money ran out.",
                      "The old {bld} can still be visited, although it is closed in winter.",
                      "The {bld} will reopen in {future} after a long restoration.",
                      "The {bld} (built {year}) is one of the oldest buildings in {town}.",
                      "The {bld} has been used as a {bld2} since {year}.",
                      "Visitors can see {o} in the {bld}, which {Name} gave to the town in {year2}."]),
    "scene": (26, ["A {s} is {ving} {o} {p}.", "The {s} {vpast} {o} {p}.",
                   "The {s} {vpast} {o} {p}, because the {s2} was {ving2} {o2}.",
                   "When the {s} {vpast} {o}, the {s2} was {ving2} {o2} {p}.",
                   "Although the {s} was tired, {he} {vpast} {o} {p}.",
                   "While the {s} {vpast} {o}, the {s2} {vpast2} {o2}.",
                   "The {s} can {v} {o} {p}.", "The {s} will {v} {o} {p} tomorrow.",
                   "The {s} has {vpp} {o} {p}.", "{O} was {vpp} {p} by the {s}.",
                   "The {s} and the {s2} {vpast} {o} {p} together.",
                   "The {s} {vpast} {o} {p}; later, the {s2} {vpast2} {o2}.",
                   "The {s} ({a_occ2} by training) {vpast} {o} {p}.", "There is {ao} {p}.",
                   "Many {ss} in {town} {v} {objs} {p}.", "The {obj} is {adj}.",
                   "Every summer, the {ss} of {town} {v} {objs} {p} and {v2} {objs2} {p2}."]),
    "negation": (12, ["The {s} did not {v} {o} {p}.", "The {s} doesn't {v} {o} {p}.",
                      "{Name} never {vpast} {o} again.", "The {bld} was not completed until {year2}.",
                      "It is not known when the first {bld} in {town} was built.",
                      "{Name} didn't return to {town} until {year2}.",
                      "Because the {obj} was {adj}, the {s} couldn't {v} it.",
                      "{Name} was not a trained {occ}; {he} {vpast} {o} only as a hobby.",
                      "The {s} wasn't {ving} {o} {p}, and the {s2} never {vpast2} {o2}."]),
    "title": (5, ["History of the {river} River", "{town} railway station", "Geography of {town}",
                  "List of {occ}s from {town}", "{Name} ({occ})", "The {bld} of {town}", "{Town_adj} {bld}s"]),
    "short": (5, ["{Name} retired.", "The {bld} closed.", "{town} grew.", "The {s} smiled.",
                  "It rained.", "{Name} died in {year2}.", "The {obj} broke."]),
    "exclaim": (1, ["The {s} shouted that the {bld} was on fire!", "What a {adj} {obj} it was!"]),
    "question": (2, ["Why did the {s} {v} {o} {p}?", "Who {vpast} the {obj} {p}?",
                     "Was the {bld} really built by {Name}?"]),
}
LONG = {  # main clause -> clauses that may follow it (30-45 words in all)
    "In {year}, {Name}, who had {vpp} {o} {p} as a young {occ}, moved to {town}": [
        ", where {he} {vpast2} {o2} {p2} with the help of the local {ss}",
        " and later worked as {a_occ2} at the {bld2} in {town2} until {late}",
        ", although the {s3} next door said that nobody had ever {vpp3} {o3} there",
        ", because the old road to {town2} had been closed since the winter of {year2}",
        " (a fact that is still recorded in the {bld} of {town} today)"],
    "The {bld} of {town}, which the {occ} {Name} designed in {year}, was damaged by a fire in {year2}": [
        " and was rebuilt in stone by the {ss} of the town",
        ", although the {s2} who lived {p2} had {vpp2} {o2} there",
        "; the {s3} {vpast3} {o3} every morning while the workers repaired the walls",
        ", because the river had flooded the lower streets of {town} in the same year",
        " (a fact that is still recorded in the museum of {town2} today)"],
    "According to the {occ} {Name}, the first {bld} in {town} stood on the bank of the {river} River": [
        ", where the {ss} of the town {vpast} {objs} every summer",
        ", although nobody has ever found its walls",
        ", because the {s2} who {vpast2} {o2} there kept a careful diary",
        "; the building was moved to {town2} in {year2} and is now used as a {bld2}",
        " (the {occ2} who wrote this did not live in {town} himself)"],
}
LONG_WEIGHT = 8


def corpus_fields(rng: random.Random) -> dict:
    f = {}
    for k in ("", "2", "3"):
        verb, kinds = rng.choice(VERBS)
        kind = rng.choice(kinds)
        base, _, past, pp, ing = rng.choice(verb).split()
        obj = rng.choice(rng.choice(OBJECTS[kind]))
        o = obj if rng.random() < 0.4 else f"{rng.choice(rng.choice(ADJECTIVES))} {obj}"
        f.update({"v" + k: base, "vpast" + k: past, "vpp" + k: pp, "ving" + k: ing, "obj" + k: obj,
                  "o" + k: "the " + o if rng.random() < 0.4 else art(o),
                  "objs" + k: plural(obj), "s" + k: rng.choice(rng.choice(PEOPLE)),
                  "p" + k: rng.choice(rng.choice(PLACES)), "town" + k: rng.choice(TOWNS), "ao" + k: art(o),
                  "bld" + k: rng.choice(BUILDINGS), "occ" + k: (occ := rng.choice(OCCUPATIONS)), "a_occ" + k: art(occ)})
    he = rng.choice(["he", "she"])
    year = rng.randint(1620, 1990)
    f.update(he=he, Name=f"{rng.choice(FIRST[he])} {rng.choice(SURNAMES)}", year=year,
             year2=year + rng.randint(3, 30), late=year + rng.randint(31, 60), future=rng.randint(2026, 2031),
             O=f["o"][0].upper() + f["o"][1:], ss=plural(f["s"]), adj=rng.choice(rng.choice(ADJECTIVES)),
             river=rng.choice(RIVERS), tadj=rng.choice(TOWN_ADJ), Town_adj=rng.choice(TOWN_ADJ).capitalize(),
             dir=rng.choice(DIRECTIONS), region=rng.choice(REGIONS), km=rng.randint(3, 60), n=rng.randint(5, 90),
             pop=f"{rng.randint(800, 60000):,}")
    return f


def corpus_sentence(rng: random.Random) -> str:
    f = corpus_fields(rng)
    cats = list(TEMPLATES) + ["long"]
    cat = rng.choices(cats, [TEMPLATES[c][0] for c in TEMPLATES] + [LONG_WEIGHT])[0]
    if cat != "long":
        s = rng.choice(TEMPLATES[cat][1]).format(**f)
        return s[0].upper() + s[1:]
    while True:   # 30-45 words: a main clause and distinct subordinate/coordinate clauses
        s = rng.choice(list(LONG))
        clauses = rng.sample(LONG[s], len(LONG[s]))
        while len(s.split()) < 30 and clauses:
            s += clauses.pop()
        s = s.format(**f) + "."
        if 30 <= len(s.split()) <= 45:
            return s


def bad_lines(rng: random.Random) -> list[bytes]:
    """Lines that exercise the corpus reader's bad-input policy (each documented in the README)."""
    items = []
    while sum(len(x) + 2 for x in items) < 2600:
        f = corpus_fields(rng)
        items.append(f"{f['o']} given by {f['Name']} ({f['year']})")
    return [b"", b"", b" \t  ",
            ("Objects listed in the museum catalogue include " + ", ".join(items) + ".").encode(),
            b"The caf\xe9 on the main square of Norvale opened in 1931.",             # latin-1, not UTF-8
            b"The Norvale bridge was repaired in 1874 after a flood.\r"]              # CRLF line ending


def make_corpus(rng: random.Random) -> bytes:
    lines, seen = [], set()
    while len(lines) < N_CORPUS:
        s = corpus_sentence(rng)
        if s not in seen:
            seen.add(s)
            lines.append(s.encode())
    bad = bad_lines(rng)
    positions = sorted(rng.sample(range(N_CORPUS // 3, 2 * N_CORPUS // 3), len(bad)), reverse=True)
    for pos, line in zip(positions, bad):   # in the middle third of the file
        lines.insert(pos, line)
    return b"\n".join(lines) + b"\n"


# --------------------------------------------------------------------------------------------
# Files.
STS_YEARS = {  # year -> topic -> style; STS15/16 gold files leave a few pairs unscored (empty line)
    "STS12": {"demo-captions": "captions", "demo-news": "news"},
    "STS13": {"demo-headlines": "headlines", "demo-forums": "forums"},
    "STS14": {"demo-captions": "captions", "demo-headlines": "headlines", "demo-forums": "forums"},
    "STS15": {"demo-captions": "captions", "demo-questions": "questions"},
    "STS16": {"demo-headlines": "headlines", "demo-news": "news"},
}
GOLD_FORMAT = {"STS12": "{:.3f}", "STS13": "{:.1f}", "STS14": "{:.3f}", "STS15": "{:.2f}", "STS16": "{:.0f}"}
PAIRS_PER_TOPIC, UNSCORED_PER_TOPIC = 40, 4
STSB = {"train": 300, "dev": 200, "test": 200}
STSB_GENRES = {"main-captions": "captions", "main-news": "news", "main-forums": "forums"}
SICK = {"train": 200, "trial": 100, "test_annotated": 200}


def sick_label(changed) -> str:
    return "ENTAILMENT" if changed == () else "CONTRADICTION" if changed == ("neg",) else "NEUTRAL"


def sick_text(s: str) -> str:
    s = s.removesuffix(" .")
    return s[0].upper() + s[1:]


def build(rng: random.Random) -> dict[str, bytes]:
    files = {"wiki/demo_corpus.txt": make_corpus(rng)}
    for year, topics in STS_YEARS.items():
        for topic, style in topics.items():
            pairs = make_pairs(rng, style, PAIRS_PER_TOPIC)
            unscored = set(rng.sample(range(len(pairs)), UNSCORED_PER_TOPIC)) if year in ("STS15", "STS16") else set()
            d = f"sts/{year}-en-test"
            files[f"{d}/STS.input.{topic}.txt"] = "".join(f"{a}\t{b}\n" for a, b, _, _ in pairs).encode()
            files[f"{d}/STS.gs.{topic}.txt"] = "".join(
                "\n" if i in unscored else GOLD_FORMAT[year].format(sc) + "\n"
                for i, (_, _, sc, _) in enumerate(pairs)).encode()
    for split, n in STSB.items():
        rows, genres = [], list(STSB_GENRES.items())
        per_genre = {g: iter(make_pairs(rng, style, n // len(genres) + 1)) for g, style in genres}
        for i in range(n):
            genre = genres[i % len(genres)][0]
            a, b, sc, _ = next(per_genre[genre])
            rows.append(f"{genre}\tdemo-{STSB_GENRES[genre]}\tdemo\t{i + 1:04d}\t{sc:.3f}\t{a}\t{b}\n")
        files[f"sts/STSBenchmark/sts-{split}.csv"] = "".join(rows).encode()
    pair_id = 0
    for split, n in SICK.items():
        rows = ["pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"]
        for a, b, sc, changed in make_pairs(rng, "captions", n):
            pair_id += 1
            rows.append(f"{pair_id}\t{sick_text(a)}\t{sick_text(b)}\t{1 + 0.8 * sc:.1f}\t{sick_label(changed)}\n")
        files[f"sick/SICK_{split}.txt"] = "".join(rows).encode()
    return files


def grammar() -> SimpleNamespace:
    """The lexicon and generators that demo_suites.py builds the suites' demo data on."""
    return SimpleNamespace(FIRST=FIRST, SURNAMES=SURNAMES, TOWNS=TOWNS, RIVERS=RIVERS, BUILDINGS=BUILDINGS,
                           OCCUPATIONS=OCCUPATIONS, OBJECTS=OBJECTS, make_pairs=make_pairs, new_state=new_state,
                           render=render, corpus_sentence=corpus_sentence, sick_text=sick_text, STYLES=STYLES)


def suite_files() -> dict[str, bytes]:
    """The demo data of the downstream suites, NLI and Chinese STS (scripts/demo_suites.py)."""
    spec = importlib.util.spec_from_file_location("demo_suites", Path(__file__).with_name("demo_suites.py"))
    suites = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suites)
    return suites.build(grammar())


def count_lines(data: bytes) -> int:
    return data.count(b"\n")


def readme(files: dict[str, bytes]) -> str:
    rows = []
    for path in sorted(files):
        data, extra = files[path], ""
        if path.startswith("sts/STS1") and "/STS.gs." in path:
            unscored = data.split(b"\n").count(b"") - 1   # the last element is the text after the final newline
            extra = f"{unscored} unscored (empty gold line)"
        if path.startswith("sick/"):
            extra = "pairs + 1 header line"
        rows.append(f"| `{path}` | {count_lines(data):,} | {len(data):,} | {extra} |")
    total = sum(len(d) for d in files.values())
    return f"""# sentaug demo data (synthetic)

A small data set **written for this project** so that the whole workflow runs offline on 2 CPU cores in
minutes. Every sentence is synthetic: `scripts/make_demo_data.py` generates it from a small template
grammar (invented names, towns and rivers; word lists of people, objects, verbs, adjectives and places,
with synonym groups) using a fixed seed ({SEED}). Nothing is copied from Wikipedia, SentEval, STS, SICK,
GLUE, SNLI, ANLI, CNSD or the clustering and intent sets; only the **file layout and formats** follow the
real data mirror (`sts/`, `sick/`, `wiki/`, `transfer/`, `clustering/`, `intent/`, `glue/`, `nli/`, `cnsd/`),
so the same readers are exercised. Do not report numbers obtained on it as results.

Regenerate (byte-identical; `tests/data/test_demo_data.py` checks it):

    .venv/bin/python scripts/make_demo_data.py

## Contents

- `wiki/demo_corpus.txt`: {N_CORPUS:,} cased, untokenised encyclopedic-style sentences (biographies,
  towns, buildings, everyday scenes, negations, modal/auxiliary verbs, subordinate clauses, titles
  without a verb, 2-4 word and 30-45 word sentences, a few `!`/`?`). In the middle third of the file
  are deliberately bad lines for the corpus reader's bad-input policy: 2 empty lines, 1 whitespace-only
  line, 1 line of more than 2,500 characters, 1 line that is not valid UTF-8 (a latin-1 `\\xe9`) and
  1 line ending in CRLF.
- `sts/STS12-en-test` ... `sts/STS16-en-test`: `STS.input.<topic>.txt` (two tab-separated sentences,
  lowercased, tokenised SentEval style: `" ."`, `"n't"`, `"'s"` split off) and `STS.gs.<topic>.txt` (one
  score 0-5 a line; the number format differs per year as in the real files). In STS15 and STS16,
  {UNSCORED_PER_TOPIC} pairs per topic have an empty gold line (unscored pairs, to be skipped).
- `sts/STSBenchmark/sts-{{train,dev,test}}.csv`: 7 tab-separated columns (genre, file, year, id, score,
  sentence1, sentence2), lowercased and tokenised.
- `sick/SICK_{{train,trial,test_annotated}}.txt`: header + pair_ID, sentence_A, sentence_B,
  relatedness_score (1-5), entailment_judgment (ENTAILMENT / NEUTRAL / CONTRADICTION); cased.
- `transfer/`: SentEval's transfer tasks in SentEval's file layout (lowercased, tokenised): MR, CR, SUBJ,
  MPQA (one text a line in a label-1 and a label-0 file), SST/binary (`sentence<TAB>label`, train/dev/test),
  TREC (`COARSE:fine question`, 6 classes) and MRPC (header line with a BOM, 5 tab-separated columns).
  Sentiment follows from the adjectives (a negated opposite counts), subjectivity from plot summary vs opinion.
- `clustering/`: the eight short-text clustering CSVs (`text,label`) under the real names; each class is a
  topic's word list (StackOverflow keeps its case; Tweet is imbalanced; GoogleNews T/S/TS share their rows).
- `intent/<set>/fewshot_intent_format/{{train,valid,test}}/{{seq.in,label}}` for SNIPS, BANKING77, CLINC150,
  HWU64 and ATIS, templates with slot fillers per intent. Every class has more than 20 pool (train + valid)
  examples, as 20-shot splits need; ATIS has two classes below 40 that the suite drops, as it drops the real ones.
- `glue/<TASK>/{{train,dev}}.tsv` for CoLA (no header), SST-2, MRPC (BOM), RTE, STS-B, QQP, QNLI and MNLI
  (`dev_matched`/`dev_mismatched`, 12 / 16 columns) in GLUE's columns; one SST-2 sentence starts with a bare
  `"` (the reason GLUE files are read with quoting off).
- `nli/snli_senteval/{{s1,s2,labels}}.{{dev,test}}` (SentEval's SNLI layout, lines ending in a space),
  `nli/simcse/nli_for_simcse.csv` (`sent0,sent1,hard_neg`: a sentence, a paraphrase, its negation; some fields
  quoted) and `nli/anli/R{{1,2,3}}/{{dev,test}}.jsonl` (ANLI's fields, labels e/n/c). NLI labels follow the pair:
  a paraphrase is entailment, a negation flip contradiction, anything else neutral.
- `cnsd/cnsd-sts-{{train,dev,test}}.txt`: Chinese STS pairs `id||sentence1||sentence2||score` from a small
  Chinese lexicon (people, actions with their objects, places, negation); integer score 5 minus the changed
  slots' weights.
- `MANIFEST.sha256`: sha256 of every data file (the download stage pins these).

`scripts/demo_suites.py` writes the suites', NLI and Chinese files, each family from its own seeded
generator.

The same script trains the demo tokenizer in `../tokenizers/demo-bpe/` (byte-level BPE, `tokenizers`
library, vocab_size {VOCAB_SIZE} asked, min_frequency 2, special tokens `<s> <pad> </s> <unk> <mask>` = ids
0-4, saved as a RoBERTa tokenizer that `transformers.AutoTokenizer` loads) on the usable corpus lines and
every demo STS/STS-B/SICK sentence. The merges run out before {VOCAB_SIZE}: see `len(vocab.json)`.

## How the gold scores are made

Each pair comes from one meaning *state* (subject, verb, object, adjective, place, negation, tense and,
for the news style, a town). The second sentence either renders the same state with other synonyms and
another sentence structure (active/passive, fronted place), or a copy of the state with some slots
changed. The score is 5 minus the sum of the changed slots' weights
({', '.join(f'{k} {v}' for k, v in WEIGHTS.items())}), plus a jitter of +-0.3,
clipped to [0, 5]; paraphrases score 4.5-5 and unrelated pairs (two independent states) 0-0.5.
SICK relatedness is 1 + 0.8 x that score; a paraphrase is ENTAILMENT, a negation flip CONTRADICTION,
anything else NEUTRAL. The synonyms also occur in the corpus, so contrastive training
on the corpus helps on these pairs.

## Files

| file | lines | bytes | note |
| --- | ---: | ---: | --- |
{chr(10).join(rows)}

Total: {len(files)} data files, {total:,} bytes.
"""


def write_demo(out: Path) -> dict[str, bytes]:
    """Write every demo file (data, README.md, MANIFEST.sha256) under `out`; returns the data files."""
    files = {**build(random.Random(SEED)), **suite_files()}
    manifest = "".join(f"{hashlib.sha256(files[p]).hexdigest()}  {p}\n" for p in sorted(files))
    for path, data in {**files, "README.md": readme(files).encode(), "MANIFEST.sha256": manifest.encode()}.items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_bytes(data)
    return files


# --------------------------------------------------------------------------------------------
# Tokenizer.
def tokenizer_texts(data: Path) -> list[str]:
    """Training text: the usable corpus lines (bad lines skipped) + every demo STS/SICK sentence."""
    texts = []
    for raw in (data / "wiki/demo_corpus.txt").read_bytes().split(b"\n"):
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            continue
        if line.strip() and len(line) <= 2500:
            texts.append(line)
    for path in sorted(data.glob("sts/*/*")) + sorted(data.glob("sick/*.txt")):
        rows = [r.split("\t") for r in path.read_text().splitlines()]
        if "STS.input." in path.name:
            texts += [s for r in rows for s in r]
        elif path.suffix == ".csv":
            texts += [s for r in rows for s in r[5:7]]
        elif path.parent.name == "sick":
            texts += [s for r in rows[1:] for s in r[1:3]]
    return texts


def train_bpe(data: Path):
    """The byte-level BPE (library `tokenizers`) trained on the demo data under `data`."""
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(tokenizer_texts(data), vocab_size=VOCAB_SIZE, min_frequency=2,
                            special_tokens=SPECIAL_TOKENS, show_progress=False)
    return bpe


def train_tokenizer(data: Path, out: Path) -> int:
    """Train the BPE and save it as a RoBERTa tokenizer under `out` (AutoTokenizer loads it); returns its vocab size."""
    from transformers import AutoTokenizer, RobertaTokenizerFast

    bpe = train_bpe(data)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        vocab, merges = bpe.save_model(tmp)
        # transformers 5 takes `vocab`/`merges` (a path or the data); `vocab_file=` would be silently ignored
        tok = RobertaTokenizerFast(vocab=vocab, merges=merges, model_max_length=512)
        tok.save_pretrained(str(out))
        for src in (vocab, merges):   # keep the plain files too (older transformers, other readers)
            (out / Path(src).name).write_bytes(Path(src).read_bytes())
    # verify what a user gets from AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(out))
    ids = tok("The river flows.")["input_ids"]
    assert [tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4], "special token ids"
    assert ids[0] == 0 and ids[-1] == 2 and len(ids) >= 5 and tok.unk_token_id not in ids, ids
    for s in ("The river flows.", "a man is playing a guitar in the park .", "Café (Norvale), 1931!"):
        assert tok.decode(tok(s)["input_ids"], skip_special_tokens=True) == s, s
    n = len(json.loads((out / "vocab.json").read_text()))
    assert len(tok) == n, (len(tok), n)
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-out", type=Path, default=DATA_OUT)
    ap.add_argument("--tokenizer-out", type=Path, default=TOKENIZER_OUT)
    ap.add_argument("--no-tokenizer", action="store_true")
    a = ap.parse_args(argv)
    files = write_demo(a.data_out)
    size = sum(p.stat().st_size for p in a.data_out.rglob("*") if p.is_file())
    print(f"demo data: {len(files)} data files, {size:,} bytes in {a.data_out}")
    if not a.no_tokenizer:
        n = train_tokenizer(a.data_out, a.tokenizer_out)
        print(f"demo tokenizer: vocab {n} in {a.tokenizer_out}")


if __name__ == "__main__":
    main()
