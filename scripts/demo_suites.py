"""Demo data for the downstream suites and the NLI / Chinese STS formats (used by make_demo_data.py).

Written for this project like the rest of the demo data: every text is drawn from small template grammars
(the English lexicon and meaning-state pairs of make_demo_data.py, word lists below, a small Chinese lexicon),
so that each file has the layout, encoding and quirks of its real counterpart in ../shared/data and labels that
follow from the text (a model can learn them), at a size that keeps each suite to seconds per model.

`build(g)` returns {path: bytes}; `g` is the make_demo_data module (its lexicon and pair maker). Each family
draws from its own seeded generator, so adding one never changes another's files.
"""
from __future__ import annotations

import csv
import io
import json
import random

FAMILY_SEED = "20240611:{}"


def rng_for(family: str) -> random.Random:
    return random.Random(FAMILY_SEED.format(family))


def untok(s: str) -> str:
    """A SentEval-tokenised lowercase sentence as plain text: punctuation and clitics re-attached, capitalised."""
    for a, b in ((" .", "."), (" ,", ","), (" ?", "?"), (" 's", "'s"), (" n't", "n't")):
        s = s.replace(a, b)
    return s[0].upper() + s[1:]


def cap(s: str) -> str:
    """Tokenised text with its first letter capitalised (SentEval's MRPC, SNLI)."""
    return s[0].upper() + s[1:]


def lines(rows) -> bytes:
    return "".join(r + "\n" for r in rows).encode("utf-8")


def csv_bytes(rows) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def unique(draw, n: int, limit: int = 100000) -> list:
    """n distinct values of draw() (in draw order)."""
    out, seen = [], set()
    for _ in range(limit):
        x = draw()
        if x not in seen:
            seen.add(x)
            out.append(x)
            if len(out) == n:
                return out
    raise RuntimeError(f"only {len(out)} distinct values drawn, wanted {n}")


def pick(rng: random.Random, spec: str) -> str:
    return rng.choice(spec.split("|"))


# ------------------------------------------------------------------------------------------------------------
# Sentiment and subjectivity (MR, CR, SST-2, MPQA, SUBJ; GLUE SST-2)
POS = "wonderful|moving|brilliant|charming|delightful|superb|gripping|funny|warm|clever|beautiful|fresh"
NEG = "dull|tedious|clumsy|boring|predictable|shallow|awful|messy|bland|lifeless|ugly|stale"
FILM = "film|movie|plot|script|story|ending|soundtrack|performance|direction|dialogue"
PRODUCT = "battery|screen|camera|case|charger|menu|button|lens|software|speaker|keyboard"


def review(rng: random.Random, positive: bool, nouns: str = FILM) -> str:
    """A tokenised, lowercased review sentence whose polarity is `positive` (a negated opposite counts too)."""
    good, bad = (POS, NEG) if positive else (NEG, POS)
    n, a, a2 = pick(rng, nouns), pick(rng, good), pick(rng, good)
    return rng.choice([f"the {n} is {a} .", f"a {a} and {a2} {n} .", f"the {n} is not {pick(rng, bad)} at all .",
                       f"what a {a} {n} !", f"it 's a {a} {n} , and the {pick(rng, nouns)} is {a2} .",
                       f"i found the {n} {a} from start to finish .", f"{a} , {a2} and never {pick(rng, bad)} ."])


def product_review(rng: random.Random, positive: bool) -> str:
    p = pick(rng, PRODUCT)
    if positive:
        return rng.choice([f"the {p} works perfectly .", f"i love the {p} , it is {pick(rng, POS)} .",
                           f"great {p} and easy to use .", f"the {p} is better than i expected ."])
    return rng.choice([f"the {p} stopped working after a week .", f"the {p} is {pick(rng, NEG)} and cheap .",
                       f"i returned it because the {p} broke .", f"the {p} does n't work as advertised ."])


def subjective(rng: random.Random, g) -> str:
    return rng.choice([f"this is a {pick(rng, POS + '|' + NEG)} little film that never finds its way .",
                       f"i can not imagine anyone enjoying such a {pick(rng, NEG)} {pick(rng, FILM)} .",
                       f"it 's {pick(rng, POS)} , and you will want to see it twice .",
                       f"the {pick(rng, FILM)} feels {pick(rng, POS + '|' + NEG)} and oddly personal ."])


def objective(rng: random.Random, g) -> str:
    he = rng.choice(["he", "she"])
    name = rng.choice(g.FIRST[he]).lower()
    town, town2 = rng.sample(g.TOWNS, 2)
    return rng.choice([f"{name} , a {rng.choice(g.OCCUPATIONS)} from {town.lower()} , travels to {town2.lower()} .",
                       f"after the war , {name} returns to the family farm near the {rng.choice(g.RIVERS).lower()} .",
                       f"{name} and a {pick(rng, 'young|retired|former')} {rng.choice(g.OCCUPATIONS)} "
                       f"open a {rng.choice(g.BUILDINGS)} in {town.lower()} .",
                       f"the story follows {name} , who works at the {rng.choice(g.BUILDINGS)} in {town.lower()} ."])


def mpqa_phrase(rng: random.Random, positive: bool) -> str:
    w = pick(rng, POS if positive else NEG)
    return rng.choice([w, f"very {w}", f"{w} and {pick(rng, POS if positive else NEG)}",
                       "support" if positive else "oppose", f"not {pick(rng, NEG if positive else POS)}"])


# Question classes of TREC (coarse:fine) with templates
TREC = {
    "ABBR:exp": ["what does {ab} stand for ?", "what is the full form of {ab} ?"],
    "DESC:def": ["what is a {obj} ?", "what does {occ} mean ?"],
    "ENTY:animal": ["what kind of animal lives near the {river} river ?", "which bird nests on the {bld} ?"],
    "HUM:ind": ["who built the {bld} in {town} ?", "who was the first {occ} of {town} ?"],
    "LOC:city": ["what town lies on the {river} river ?", "where is the {bld} of {town} ?"],
    "NUM:date": ["when was the {bld} in {town} built ?", "what year did {name} die ?"],
}


def trec_question(rng: random.Random, g, label: str) -> str:
    f = {"ab": "".join(rng.choice("ABCDEFGHKLMNPRSTUW") for _ in range(rng.randint(2, 4))),
         "obj": rng.choice(rng.choice(list(g.OBJECTS.values())))[0], "occ": rng.choice(g.OCCUPATIONS),
         "river": rng.choice(g.RIVERS), "bld": rng.choice(g.BUILDINGS), "town": rng.choice(g.TOWNS),
         "name": f"{rng.choice(g.FIRST['he'] + g.FIRST['she'])} {rng.choice(g.SURNAMES)}"}
    return f"{label} " + rng.choice(TREC[label]).format(**f)


def transfer_files(g) -> dict[str, bytes]:
    rng = rng_for("transfer")
    files = {}

    def binary(folder: str, pos: str, neg: str, make, n_pos: int, n_neg: int):
        files[f"transfer/{folder}/{pos}"] = lines(unique(lambda: make(True), n_pos))
        files[f"transfer/{folder}/{neg}"] = lines(unique(lambda: make(False), n_neg))

    binary("MR", "rt-polarity.pos", "rt-polarity.neg", lambda p: review(rng, p), 60, 60)
    binary("CR", "custrev.pos", "custrev.neg", lambda p: product_review(rng, p), 50, 40)
    binary("SUBJ", "subj.objective", "subj.subjective",
           lambda obj: objective(rng, g) if obj else subjective(rng, g), 60, 60)
    binary("MPQA", "mpqa.pos", "mpqa.neg", lambda p: mpqa_phrase(rng, p), 40, 50)
    sst = unique(lambda: (lambda y: (review(rng, y), y))(rng.random() < 0.55), 260)
    for split, (a, b) in {"train": (0, 160), "dev": (160, 200), "test": (200, 260)}.items():
        files[f"transfer/SST/binary/sentiment-{split}"] = lines(f"{s}\t{int(y)}" for s, y in sst[a:b])
    questions = unique(lambda: trec_question(rng, g, rng.choice(list(TREC))), 240)
    files["transfer/TREC/train_5500.label"] = lines(questions[:180])
    files["transfer/TREC/TREC_10.label"] = lines(questions[180:])
    header = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"
    pairs = g.make_pairs(rng, "news", 180)
    ids = rng.sample(range(100000, 3000000), 2 * len(pairs))
    rows = [f"{int(ch in ((), ('tense',)))}\t{ids[2 * i]}\t{ids[2 * i + 1]}\t{cap(a)}\t{cap(b)}"
            for i, (a, b, _, ch) in enumerate(pairs)]
    files["transfer/MRPC/msr_paraphrase_train.txt"] = lines([header] + rows[:120])
    files["transfer/MRPC/msr_paraphrase_test.txt"] = lines([header] + rows[120:])
    return files


# ------------------------------------------------------------------------------------------------------------
# Short-text clustering (text,label CSVs)
THEMES = {
    "sport": "match goal team league coach season player score final cup stadium win",
    "politics": "election minister parliament vote party campaign senate policy law president",
    "business": "market shares profit bank company investors trade prices economy quarter",
    "science": "research study scientists space telescope climate species data experiment lab",
    "health": "patients hospital disease vaccine doctors treatment cancer virus health clinic",
    "music": "album band concert song singer tour guitar festival chart record",
    "film": "movie actor director premiere cinema award sequel studio script trailer",
    "education": "school students university teachers exam degree campus course lecture class",
    "technology": "software phone internet app computer chip network device update users",
    "travel": "flight hotel airport tourists beach trip visa holiday cruise resort",
    "food": "recipe restaurant chef cheese bread wine dinner kitchen menu dessert",
    "weather": "storm rain flood snow wind forecast heat drought temperatures coast",
}
SO_TAGS = {  # StackOverflow keeps its case: titles with a tag's own words
    "wordpress": "WordPress plugin theme post widget", "oracle": "Oracle SQL query table PL/SQL",
    "svn": "SVN commit branch merge repository", "apache": "Apache mod_rewrite virtual host .htaccess",
    "excel": "Excel VBA formula cell macro", "matlab": "MATLAB matrix plot function vector",
    "visual-studio": "Visual Studio solution debugger project build", "cocoa": "Cocoa NSView NSWindow Xcode delegate",
    "osx": "OS X Finder dock terminal Mac", "bash": "bash script loop variable grep",
}
BIO = {"gene": "gene expression mutation promoter transcription", "cell": "cell apoptosis membrane signaling culture",
       "protein": "protein binding structure enzyme folding", "virus": "virus infection viral replication host",
       "brain": "brain neurons cortex memory synaptic", "heart": "cardiac heart artery blood pressure",
       "cancer": "tumor cancer carcinoma metastasis chemotherapy", "drug": "drug dose pharmacokinetics therapy trial",
       "immune": "immune t-cell antibody cytokine response", "bone": "bone fracture osteoporosis density joint"}
FILLER = "new report says big first day year people city world week plans".split()


def topic_text(rng: random.Random, words: list[str], n: tuple[int, int], filler: float = 0.25) -> str:
    k = rng.randint(*n)
    return " ".join(rng.choice(FILLER) if rng.random() < filler else rng.choice(words) for _ in range(k))


def cluster_csv(rng: random.Random, topics: dict[str, list[str]], sizes: dict[str, int], n_words, labels,
                filler=0.25) -> bytes:
    rows = [(topic_text(rng, topics[t], n_words, filler), labels[t]) for t in topics for _ in range(sizes[t])]
    rng.shuffle(rows)
    return csv_bytes([("text", "label"), *rows])


def clustering_files(g) -> dict[str, bytes]:
    rng = rng_for("clustering")
    theme_words = {t: w.split() for t, w in THEMES.items()}

    def subset(names):
        return {t: theme_words[t] for t in names}

    files = {}
    ag = subset(["politics", "sport", "business", "science"])
    files["clustering/agnews.csv"] = cluster_csv(rng, ag, dict.fromkeys(ag, 20), (14, 24),
                                                 {t: str(i) for i, t in enumerate(ag, 1)})
    ss = subset(["business", "technology", "film", "education", "science", "health", "politics", "sport"])
    files["clustering/searchsnippets.csv"] = cluster_csv(rng, ss, dict.fromkeys(ss, 12), (12, 22),
                                                         {t: str(i) for i, t in enumerate(ss, 1)})
    so = {t: w.split() + ["How", "to", "in", "with", "error", "using"] for t, w in SO_TAGS.items()}
    files["clustering/stackoverflow.csv"] = cluster_csv(rng, so, dict.fromkeys(so, 16), (5, 10),
                                                        {t: str(i) for i, t in enumerate(so, 1)}, filler=0.0)
    bio = {t: w.split() for t, w in BIO.items()}
    files["clustering/biomedical.csv"] = cluster_csv(rng, bio, dict.fromkeys(bio, 10), (8, 16),
                                                     {t: str(i) for i, t in enumerate(bio, 1)})
    tw = dict(theme_words)  # 12 classes, imbalanced like Tweet (largest / smallest = 8)
    files["clustering/tweet89.csv"] = cluster_csv(rng, tw, {t: s for t, s in zip(tw, [16, 12, 10, 8, 8, 6, 5, 4,
                                                                                       3, 2, 2, 2])},
                                                  (5, 10), {t: str(i) for i, t in enumerate(tw, 1)})
    # GoogleNews: 12 events (a theme in a town), titles T, snippets S and both TS, same order and labels
    events = [(t, g.TOWNS[i].lower()) for i, t in enumerate(THEMES)]
    rows = []
    for label, (theme, town) in enumerate(events, 1):
        for _ in range(8):
            title = f"{town} " + topic_text(rng, theme_words[theme], (4, 7), 0.1)
            snippet = topic_text(rng, theme_words[theme] + [town], (14, 22))
            rows.append((title, snippet, str(label)))
    rng.shuffle(rows)
    files["clustering/googlenews_T.csv"] = csv_bytes([("text", "label"), *[(t, y) for t, _, y in rows]])
    files["clustering/googlenews_S.csv"] = csv_bytes([("text", "label"), *[(s, y) for _, s, y in rows]])
    files["clustering/googlenews_TS.csv"] = csv_bytes([("text", "label"), *[(f"{t} {s}", y) for t, s, y in rows]])
    return files


# ------------------------------------------------------------------------------------------------------------
# Few-shot intent (DNNC fewshot_intent_format: <split>/seq.in + <split>/label)
INTENTS = {
    "snips": {
        "AddToPlaylist": ["add {song} to my {mood} playlist", "put {song} on the {mood} list",
                          "please add the song {song} to {mood} music"],
        "GetWeather": ["what is the weather in {town} {when}", "will it rain in {town} {when}",
                       "tell me the forecast for {town} {when}"],
        "BookRestaurant": ["book a table for {n} at {place} {when}", "reserve a restaurant for {n} people {when}",
                           "i need a table at {place} for {n} {when}"],
    },
    "banking77": {
        "card_arrival": ["when will my new card arrive", "my card has not arrived {when}",
                         "how long does the card take to arrive", "is my card on its way {when}"],
        "lost_or_stolen_card": ["i lost my card {when}", "my card was stolen {when}", "someone took my card {when}",
                                "what do i do if my card is lost"],
        "exchange_rate": ["what exchange rate do you use for {cur}", "how much is {cur} worth {when}",
                          "which rate applies when i pay in {cur}"],
        "top_up_failed": ["my top up failed {when}", "why did my top up not work", "top up with {cur} was declined"],
    },
    "clinc150": {
        "translate": ["how do you say {word} in {lang}", "translate {word} into {lang}", "what is {word} in {lang}"],
        "alarm": ["set an alarm for {time}", "wake me up at {time}", "i need an alarm at {time} {when}"],
        "balance": ["what is my balance", "how much money is in my {acct} account", "check my {acct} balance"],
        "recipe": ["how do i make {dish}", "give me a recipe for {dish}", "what do i need to cook {dish}"],
    },
    "hwu64": {
        "alarm_set": ["set alarm {time}", "alarm at {time} {when}", "please wake me {time}"],
        "music_query": ["what song is playing", "who sings {song}", "which album is {song} on"],
        "weather_query": ["is it cold in {town}", "weather {town} {when}", "do i need an umbrella {when}"],
        "calendar_remove": ["cancel my meeting {when}", "delete the event {when}", "remove {event} from my calendar"],
    },
    "atis": {
        "atis_flight": ["show me flights from {city} to {city2} {when}", "i want to fly from {city} to {city2}",
                        "list flights to {city2} leaving {when}", "flights from {city} to {city2} on {day}"],
        "atis_airfare": ["how much is a ticket from {city} to {city2}", "what is the cheapest fare to {city2}",
                         "fares from {city} to {city2} {when}"],
        "atis_ground_service": ["what ground transportation is there in {city}", "is there a bus from the airport "
                                "in {city}", "car rental in {city2} {when}"],
        "atis_abbreviation": ["what does {ab} mean", "what is fare code {ab}"],
        "atis_flight#atis_airfare": ["flights and fares from {city} to {city2}"],
    },
}
SLOTS = {"song": "blue river|night train|golden hour|summer rain|old town road|paper moon",
         "mood": "chill|workout|dinner|road trip|focus|party", "when": "today|tomorrow|tonight|this weekend|next week|"
         "on monday|in the morning", "n": "two|three|four|five|six", "place": "the harbour grill|luigi 's|the old mill|"
         "green garden|the corner cafe", "cur": "euros|dollars|pounds|yen|francs", "word": "hello|thank you|river|"
         "bread|good night", "lang": "french|german|spanish|italian|swedish", "time": "six am|seven thirty|noon|"
         "five pm|nine", "acct": "checking|savings|joint", "dish": "pancakes|lasagna|fish soup|apple pie|curry",
         "event": "lunch|the dentist|team meeting|yoga", "city": "boston|denver|atlanta|dallas|pittsburgh|baltimore",
         "city2": "san francisco|philadelphia|washington|oakland|miami", "day": "monday|tuesday|friday|sunday",
         "ab": "ap|ewr|yx|fn|ea|qx", "town": "norvale|lindham|brackwell|eastmoor|carrow"}
# intent -> (pool size, test size); ATIS: three classes of 40+ are kept, two smaller ones are dropped
INTENT_SIZES = {"atis": {"atis_flight": (48, 8), "atis_airfare": (44, 8), "atis_ground_service": (42, 6),
                         "atis_abbreviation": (12, 3), "atis_flight#atis_airfare": (4, 1)}}


PREFIX, SUFFIX = "|please |hi , |excuse me , |quick question : ", "| please| thanks| asap"


def utterance(rng: random.Random, templates: list[str]) -> str:
    core = rng.choice(templates).format(**{k: pick(rng, v) for k, v in SLOTS.items()})
    return pick(rng, PREFIX) + core + pick(rng, SUFFIX)


def intent_files(g) -> dict[str, bytes]:
    rng = rng_for("intent")
    files = {}
    for name, intents in INTENTS.items():
        splits = {"train": [], "valid": [], "test": []}
        for intent, templates in intents.items():
            pool_n, test_n = INTENT_SIZES.get(name, {}).get(intent, (26, 8))
            texts = unique(lambda: utterance(rng, templates), pool_n + test_n)
            n_valid = pool_n // 5
            splits["train"] += [(t, intent) for t in texts[:pool_n - n_valid]]
            splits["valid"] += [(t, intent) for t in texts[pool_n - n_valid:pool_n]]
            splits["test"] += [(t, intent) for t in texts[pool_n:]]
        for split, rows in splits.items():
            rng.shuffle(rows)
            folder = f"intent/{name}/fewshot_intent_format/{split}"
            files[f"{folder}/seq.in"] = lines(t for t, _ in rows)
            files[f"{folder}/label"] = lines(y for _, y in rows)
    return files


# ------------------------------------------------------------------------------------------------------------
# GLUE (train.tsv / dev.tsv per task, GLUE's columns)
def nli_label(changed) -> str:
    """Three-way NLI label of a demo pair (a paraphrase entails, a negation flip contradicts)."""
    return {"ENTAILMENT": "entailment", "CONTRADICTION": "contradiction"}.get(_sick(changed), "neutral")


def _sick(changed) -> str:
    return "ENTAILMENT" if changed == () else "CONTRADICTION" if changed == ("neg",) else "NEUTRAL"


def nli_pairs(g, rng: random.Random, style: str, n: int) -> list[tuple[str, str, str]]:
    """(premise, hypothesis, label) with the three labels about equally frequent."""
    out = {"entailment": [], "neutral": [], "contradiction": []}
    while min(len(v) for v in out.values()) < n // 3 + 1:
        for a, b, _, changed in g.make_pairs(rng, style, 60):
            if changed == "unrelated" or changed == ("neg",) or rng.random() < 0.5:
                out[nli_label(changed)].append((a, b))
    rows = [(a, b, y) for y in out for a, b in out[y][:n // 3 + 1]]
    rng.shuffle(rows)
    return rows[:n]


def nli_groups(g, rng: random.Random, style: str, premises: int) -> list[tuple[str, str, str]]:
    """(premise, hypothesis, label) rows in groups of three per premise, as SNLI's and ANLI's premises come:
    an entailed hypothesis (the same statement in another template), a contradicted one (negation flipped) and
    a neutral one (an unrelated statement), in a random order within the group."""
    tenses, templates = g.STYLES[style][0].split(), g.STYLES[style][1]
    rows = []
    for _ in range(premises):
        st = g.new_state(rng, tenses)
        ta, tb = rng.sample(range(len(templates)), 2)
        premise = g.render(rng, st, style, ta)
        hypotheses = [("entailment", st), ("contradiction", dict(st, neg=not st["neg"])),
                      ("neutral", g.new_state(rng, tenses))]
        rng.shuffle(hypotheses)
        rows += [(premise, g.render(rng, state, style, tb), label) for label, state in hypotheses]
    return rows


def glue_files(g) -> dict[str, bytes]:
    rng = rng_for("glue")
    files = {}
    n = {"train": 64, "dev": 32}

    def write(task, split, header, rows):
        files[f"glue/{task}/{split}.tsv"] = lines(([header] if header else []) + ["\t".join(r) for r in rows])

    # CoLA: no header; acceptable sentences, and the same with two words swapped or the verb dropped
    for split, k in n.items():
        rows = []
        for s in unique(lambda: untok(g.render(rng, g.new_state(rng, ["past"]), "forums", 0)), k):
            if rng.random() < 0.3:
                words = s.rstrip(".").split()
                i = rng.randrange(1, len(words) - 1)
                words[i], words[i + 1] = words[i + 1], words[i]
                rows.append(("demo1", "0", "*", " ".join(words) + "."))
            else:
                rows.append(("demo1", "1", "", s))
        write("CoLA", split, None, rows)
    # SST-2 (GLUE's trailing space before the tab; one sentence starts with a bare quote)
    for split, k in n.items():
        rows = [(review(rng, y) + " ", str(int(y))) for y in (rng.random() < 0.55 for _ in range(k))]
        rows[3] = ('" ' + rows[3][0], rows[3][1])
        write("SST-2", split, "sentence\tlabel", rows)
    # MRPC (BOM header), QQP, STS-B, RTE, QNLI, MNLI
    for split, k in n.items():
        pairs = g.make_pairs(rng, "news", k)
        files[f"glue/MRPC/{split}.tsv"] = lines(["\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"] + [
            "\t".join((str(int(ch == ())), str(rng.randint(10 ** 5, 10 ** 7)), str(rng.randint(10 ** 5, 10 ** 7)),
                       cap(a), cap(b))) for a, b, _, ch in pairs])
        qs = g.make_pairs(rng, "questions", k)
        write("QQP", split, "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate",
              [(str(i), str(2 * i + 1), str(2 * i + 2), untok(a), untok(b), str(int(ch == ())))
               for i, (a, b, _, ch) in enumerate(qs)])
        sts = g.make_pairs(rng, "captions", k)
        write("STS-B", split, "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore",
              [(str(i), "main-captions", "demo", "2012test", f"{i:04d}", "none", "none", untok(a), untok(b),
                f"{sc:.3f}") for i, (a, b, sc, _) in enumerate(sts)])
        rte = nli_pairs(g, rng, "news", k)
        write("RTE", split, "index\tsentence1\tsentence2\tlabel",
              [(str(i), untok(a), untok(b), "entailment" if y == "entailment" else "not_entailment")
               for i, (a, b, y) in enumerate(rte)])
        qn = g.make_pairs(rng, "questions", k)
        write("QNLI", split, "index\tquestion\tsentence\tlabel",
              [(str(i), untok(a), untok(b.replace("why ", "because ").replace(" ?", " .")),
                "entailment" if ch in ((), ("tense",)) else "not_entailment") for i, (a, b, _, ch) in enumerate(qn)])
    head = "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t" \
           "sentence2_parse\tsentence1\tsentence2"
    for split, k in {"train": 64, "dev_matched": 24, "dev_mismatched": 24}.items():
        genre = "fiction" if split == "dev_mismatched" else "government"
        annot = "label1\tgold_label" if split == "train" else "label1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label"
        rows = []
        for i, (a, b, y) in enumerate(nli_pairs(g, rng, "forums", k)):
            parses = [f"( {s} )" for s in (a, b)] + [f"(ROOT (S {s}))" for s in (a, b)]
            votes = [y] if split == "train" else [y, y, rng.choice([y, "neutral"]), y, y]
            rows.append((str(i), str(1000 + i), f"{1000 + i}{y[0]}", genre, *parses, untok(a), untok(b), *votes, y))
        write("MNLI", split, f"{head}\t{annot}", rows)
    return files


# ------------------------------------------------------------------------------------------------------------
# NLI: SNLI in SentEval's layout, SimCSE's triplets, ANLI jsonl
def nli_files(g) -> dict[str, bytes]:
    rng = rng_for("nli")
    files = {}
    for split, k in {"dev": 20, "test": 20}.items():    # premises, three hypotheses each
        rows = nli_groups(g, rng, "captions", k)
        files[f"nli/snli_senteval/s1.{split}"] = lines(g.sick_text(a) + " . " for a, _, _ in rows)
        files[f"nli/snli_senteval/s2.{split}"] = lines(g.sick_text(b) + " . " for _, b, _ in rows)
        files[f"nli/snli_senteval/labels.{split}"] = lines(y for _, _, y in rows)
    triplets = [("sent0", "sent1", "hard_neg")]
    tenses = ["prog", "past", "perfect"]
    while len(triplets) < 201:
        st = g.new_state(rng, tenses)
        neg = dict(st, neg=not st["neg"])
        t1, t2 = rng.sample(range(3), 2)
        anchor, pos, hard = (untok(g.render(rng, s, "forums", t)) for s, t in ((st, t1), (st, t2), (neg, t1)))
        if rng.random() < 0.1:
            anchor = anchor.rstrip(".") + ", said the " + pick(rng, "guide|owner|neighbour") + "."  # a quoted comma
        if anchor not in (pos, hard):
            triplets.append((anchor, pos, hard))
    files["nli/simcse/nli_for_simcse.csv"] = csv_bytes(triplets)
    # ANLI: as in the real rounds, a context comes back with several hypotheses (nli_groups), so that grouping by
    # premise (AugCSE's triplets, the nli suite's pairs) finds entailment and contradiction together
    for rnd in ("R1", "R2", "R3"):
        for split in ("dev", "test"):
            records = []
            rows = nli_groups(g, rng, "news", 8)
            contexts = {}
            for premise, hypothesis, label in rows:
                if premise not in contexts:
                    contexts[premise] = " ".join([g.corpus_sentence(rng), untok(premise)])
                records.append({"uid": "%08x-%04x" % (rng.getrandbits(32), rng.getrandbits(16)),
                                "context": contexts[premise], "hypothesis": untok(hypothesis), "label": label[0],
                                "model_label": rng.choice("enc"), "emturk": rng.random() < 0.2, "genre": "wiki",
                                "reason": "", "tag": ""})
            files[f"nli/anli/{rnd}/{split}.jsonl"] = lines(json.dumps(r) for r in records)
    return files


# ------------------------------------------------------------------------------------------------------------
# Chinese STS-B (CNSD: id||sentence1||sentence2||score, integer scores)
ZH_PEOPLE = [["男人", "男子"], ["女人", "女子"], ["孩子", "小孩"], ["老师", "教师"], ["厨师"], ["医生", "大夫"], ["学生"]]
ZH_ACTS = [("弹", ["吉他", "钢琴", "小提琴"]), ("切", ["洋葱", "土豆", "西红柿"]), ("骑", ["马", "自行车", "摩托车"]),
           ("读", ["书", "报纸", "信"]), ("开", ["汽车", "卡车", "公交车"]), ("洗", ["苹果", "盘子", "衣服"]),
           ("画", ["房子", "小船", "大树"])]
ZH_PLACES = [["在公园里", "在公园"], ["在厨房里", "在厨房"], ["在河边", "在河岸上"], ["在海滩上"], ["在街上", "在路上"]]
ZH_WEIGHTS = {"subj": 2, "act": 2, "obj": 1, "place": 1, "neg": 3}


def zh_sentence(rng: random.Random, st: dict) -> str:
    verb, objs = ZH_ACTS[st["act"]]
    subj, place = rng.choice(ZH_PEOPLE[st["subj"]]), rng.choice(ZH_PLACES[st["place"]])
    obj = objs[st["obj"]]
    if st["neg"]:
        return rng.choice([f"一个{subj}{place}没有{verb}{obj}。", f"{subj}没有在{verb}{obj}。"])
    return rng.choice([f"一个{subj}{place}{verb}{obj}。", f"一个{subj}正在{verb}{obj}。", f"{place}，一个{subj}在{verb}{obj}。"])


def cnsd_files(g) -> dict[str, bytes]:
    rng = rng_for("cnsd")
    files = {}
    pair_id = 0
    for split, k in {"train": 120, "dev": 60, "test": 60}.items():
        rows = []
        while len(rows) < k:
            a = {"subj": rng.randrange(len(ZH_PEOPLE)), "act": rng.randrange(len(ZH_ACTS)), "obj": rng.randrange(3),
                 "place": rng.randrange(len(ZH_PLACES)), "neg": rng.random() < 0.15}
            b = dict(a)
            changed = rng.sample(list(ZH_WEIGHTS), rng.choice([0, 0, 1, 1, 2]))
            for slot in changed:
                b[slot] = (not b[slot]) if slot == "neg" else (b[slot] + 1 + rng.randrange(2)) % {
                    "subj": len(ZH_PEOPLE), "act": len(ZH_ACTS), "obj": 3, "place": len(ZH_PLACES)}[slot]
            s1, s2 = zh_sentence(rng, a), zh_sentence(rng, b)
            if s1 == s2:
                continue
            score = max(0, 5 - sum(ZH_WEIGHTS[s] for s in changed))
            rows.append(f"2012test-{pair_id:04d}||{s1}||{s2}||{score}")
            pair_id += 1
        files[f"cnsd/cnsd-sts-{split}.txt"] = lines(rows)
    return files


def build(g) -> dict[str, bytes]:
    files = {}
    for family in (transfer_files, clustering_files, intent_files, glue_files, nli_files, cnsd_files):
        files.update(family(g))
    return files
