"""The bundled demo data (src/sentaug/resources/demo) and demo tokenizer (resources/tokenizers/demo-bpe).

Expectations here are written independently of scripts/make_demo_data.py (counts, formats, the bad lines),
except for the byte-for-byte regeneration checks, which run the script itself.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src/sentaug/resources/demo"
TOKENIZER = ROOT / "src/sentaug/resources/tokenizers/demo-bpe"
STS_TOPICS = {
    "STS12": ["demo-captions", "demo-news"],
    "STS13": ["demo-forums", "demo-headlines"],
    "STS14": ["demo-captions", "demo-forums", "demo-headlines"],
    "STS15": ["demo-captions", "demo-questions"],
    "STS16": ["demo-headlines", "demo-news"],
}
PAIRS_PER_TOPIC = 40
UNSCORED = {"STS12": 0, "STS13": 0, "STS14": 0, "STS15": 4, "STS16": 4}   # empty gold lines per topic
STSB_ROWS = {"train": 300, "dev": 200, "test": 200}
SICK_ROWS = {"train": 200, "trial": 100, "test_annotated": 200}
SICK_HEADER = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"
GOOD_CORPUS_LINES = 1500
TRAINED_VOCAB = 1754          # what BPE reached with vocab_size=2000, min_frequency=2 (merges run out)


def load_script():
    spec = importlib.util.spec_from_file_location("make_demo_data", ROOT / "scripts/make_demo_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def data_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def lines(path: Path) -> list[str]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path}: no final newline"
    return data.decode("utf-8").split("\n")[:-1]


# (a) determinism, no hand edits -------------------------------------------------------------------
def test_generator_reproduces_committed_files(tmp_path):
    load_script().write_demo(tmp_path)
    new, committed = data_files(tmp_path), data_files(DEMO)
    assert sorted(new) == sorted(committed)
    changed = [p for p in new if new[p] != committed[p]]
    assert not changed, f"regenerating differs in {changed}: re-run scripts/make_demo_data.py, do not edit by hand"


def test_tokenizer_training_reproduces_committed_merges(tmp_path):
    bpe = load_script().train_bpe(DEMO)
    bpe.save_model(str(tmp_path))
    for name in ("vocab.json", "merges.txt"):
        assert (tmp_path / name).read_bytes() == (TOKENIZER / name).read_bytes(), name


# (b) manifest -------------------------------------------------------------------------------------
def test_manifest_matches_files():
    entries = [ln.split("  ", 1) for ln in lines(DEMO / "MANIFEST.sha256")]
    paths = [p for _, p in entries]
    assert paths == sorted(paths)
    on_disk = sorted(p for p in data_files(DEMO) if p not in ("README.md", "MANIFEST.sha256"))
    assert paths == on_disk
    for digest, path in entries:
        assert re.fullmatch(r"[0-9a-f]{64}", digest)
        assert hashlib.sha256((DEMO / path).read_bytes()).hexdigest() == digest, path
    assert sum(len(b) for b in data_files(DEMO).values()) < 1_000_000


# (c) formats and counts ---------------------------------------------------------------------------
def is_tokenised_lower(s: str) -> bool:
    return (s == s.lower() and s == " ".join(s.split()) and not re.search(r"\w[.,?!]( |$)", s)
            and not re.search(r"\wn't|\w's\b", s))


@pytest.mark.parametrize("year", sorted(STS_TOPICS))
def test_sts_year_format(year):
    folder = DEMO / "sts" / f"{year}-en-test"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"STS.{kind}.{t}.txt" for t in STS_TOPICS[year] for kind in ("input", "gs"))
    for topic in STS_TOPICS[year]:
        inputs, gold = lines(folder / f"STS.input.{topic}.txt"), lines(folder / f"STS.gs.{topic}.txt")
        assert len(inputs) == len(gold) == PAIRS_PER_TOPIC
        for line in inputs:
            assert line.count("\t") == 1, line
            assert all(is_tokenised_lower(s) and s for s in line.split("\t")), line
        assert sum(g == "" for g in gold) == UNSCORED[year]
        scores = [float(g) for g in gold if g != ""]
        assert all(0.0 <= x <= 5.0 for x in scores)
        assert len(set(scores)) > 3, "scores should vary"


def spearman(x, y):
    def ranks(v):
        order = sorted(range(len(v)), key=v.__getitem__)
        r = [0.0] * len(v)
        i = 0
        while i < len(v):   # average ranks for ties
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5


def test_stsb_format_and_meaningful_scores():
    all_pairs = []
    for split, n in STSB_ROWS.items():
        rows = [ln.split("\t") for ln in lines(DEMO / f"sts/STSBenchmark/sts-{split}.csv")]
        assert len(rows) == n
        for r in rows:
            assert len(r) == 7, r
            assert r[0].startswith("main-") and re.fullmatch(r"\d{4}", r[3])
            assert 0.0 <= float(r[4]) <= 5.0
            assert is_tokenised_lower(r[5]) and is_tokenised_lower(r[6]), r
            all_pairs.append((r[5], r[6], float(r[4])))
    scores = [s for _, _, s in all_pairs]
    assert sum(s >= 4.5 for s in scores) > 0.1 * len(scores) and sum(s <= 1.0 for s in scores) > 0.1 * len(scores)
    # gold must follow meaning: even a synonym-blind word overlap correlates with it (but far from perfectly)
    overlap = [len(set(a.split()) & set(b.split())) / len(set(a.split()) | set(b.split())) for a, b, _ in all_pairs]
    assert 0.3 < spearman(overlap, scores) < 0.9


def test_sick_format():
    ids = []
    for split, n in SICK_ROWS.items():
        text = lines(DEMO / f"sick/SICK_{split}.txt")
        assert text[0] == SICK_HEADER
        assert len(text) == n + 1
        for ln in text[1:]:
            r = ln.split("\t")
            assert len(r) == 5, r
            ids.append(int(r[0]))
            assert r[1][0].isupper() and r[2][0].isupper(), r    # cased
            assert 1.0 <= float(r[3]) <= 5.0
            assert r[4] in ("ENTAILMENT", "NEUTRAL", "CONTRADICTION")
    assert len(set(ids)) == len(ids)


# (d) the corpus and its bad lines -----------------------------------------------------------------
def test_corpus_bad_lines():
    data = (DEMO / "wiki/demo_corpus.txt").read_bytes()
    assert data.endswith(b"\n")
    raw = data.split(b"\n")[:-1]

    def invalid(b):
        try:
            b.decode("utf-8")
            return False
        except UnicodeDecodeError:
            return True

    bad = {"empty": [i for i, b in enumerate(raw) if b == b""],
           "whitespace": [i for i, b in enumerate(raw) if b and not b.strip()],
           "long": [i for i, b in enumerate(raw) if len(b) > 2500],
           "invalid_utf8": [i for i, b in enumerate(raw) if invalid(b)],
           "crlf": [i for i, b in enumerate(raw) if b.endswith(b"\r")]}
    assert {k: len(v) for k, v in bad.items()} == {"empty": 2, "whitespace": 1, "long": 1, "invalid_utf8": 1, "crlf": 1}
    positions = [i for v in bad.values() for i in v]
    assert all(0.2 * len(raw) < i < 0.8 * len(raw) for i in positions), "bad lines belong in the middle"
    good = [b.decode("utf-8").rstrip("\r") for i, b in enumerate(raw) if i not in positions or i in bad["crlf"]]
    assert len(good) == GOOD_CORPUS_LINES + 1        # + the CRLF line, which is otherwise fine
    n_words = [len(s.split()) for s in good]
    assert sum(2 <= n <= 4 for n in n_words) >= 30 and sum(30 <= n <= 45 for n in n_words) >= 50
    assert max(n_words) <= 45
    assert sum(s[0].isupper() for s in good) == len(good)     # cased

    def count(pat):
        return sum(bool(re.search(pat, s)) for s in good)

    assert count(r"\.$") > 0.8 * len(good)
    assert count(r"!$") >= 3 and count(r"\?$") >= 5
    assert count(r"n't\b") >= 20 and count(r"\bnot\b") >= 20 and count(r"\bnever\b") >= 10
    assert count(r"\b(can|will|has)\b") >= 100 and count(r"\b(is|was)\b") >= 300
    assert count(r", (because|when|although|where)\b|^(When|Although|While|Because|After)\b") >= 100
    assert count(r";") >= 50 and count(r"\(") >= 50
    assert count(r"^[A-Z]\w+ of the \w+ River$|^Geography of") >= 5           # titles without a verb
    assert count(r"\b\w+ \. ") == 0, "the corpus is untokenised"


# (e) the tokenizer --------------------------------------------------------------------------------
def test_demo_tokenizer_loads_as_roberta():
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(TOKENIZER))
    assert "Roberta" in type(tok).__name__
    assert [tok.convert_tokens_to_ids(t) for t in ("<s>", "<pad>", "</s>", "<unk>", "<mask>")] == [0, 1, 2, 3, 4]
    assert (tok.bos_token_id, tok.pad_token_id, tok.eos_token_id) == (0, 1, 2)
    vocab = json.loads((TOKENIZER / "vocab.json").read_text())
    assert len(tok) == len(vocab) == TRAINED_VOCAB <= 2000
    ids = tok("The river flows.")["input_ids"]
    assert ids[0] == 0 and ids[-1] == 2
    inner = ids[1:-1]
    assert len(inner) >= 3 and tok.unk_token_id not in inner and all(i > 4 for i in inner)
    for s in ("The river flows.", "a man is n't playing a guitar in the park .",
              "Café (Norvale), 1931; Ünïcödé & emoji 🙂!"):
        assert tok.decode(tok(s)["input_ids"], skip_special_tokens=True) == s
    batch = tok(["a b", "a longer sentence than that"], padding=True)
    assert batch["input_ids"][0][-1] == 1 and batch["attention_mask"][0][-1] == 0


# (f) the suites', NLI and Chinese STS formats, read by the package's own readers --------------------------
def test_demo_transfer_reads_with_the_senteval_readers():
    from sentaug.data.transfer import TASKS, load_transfer

    data = load_transfer(DEMO)
    assert set(data) == set(TASKS)
    sizes = {t: len(data[t].labels) for t in ("MR", "CR", "SUBJ", "MPQA")}
    assert sizes == {"MR": 120, "CR": 90, "SUBJ": 120, "MPQA": 90}
    assert {k: len(v.labels) for k, v in data["SST2"].items()} == {"train": 160, "dev": 40, "test": 60}
    assert {k: len(v.labels) for k, v in data["TREC"].items()} == {"train": 180, "test": 60}
    assert set(data["TREC"]["train"].labels.tolist()) == set(range(6))        # all six coarse classes
    assert {k: len(v.labels) for k, v in data["MRPC"].items()} == {"train": 120, "test": 60}
    for task in ("MR", "CR", "SUBJ", "MPQA"):                                    # both classes present
        assert 0 < data[task].labels.mean() < 1


def test_demo_clustering_sets():
    from sentaug.data.clustering import DATASETS, load_clustering

    sets = load_clustering(DEMO)
    assert set(sets) == set(DATASETS)
    classes = {k: v.n_classes for k, v in sets.items()}
    assert classes == {"AgNews": 4, "SearchSnippets": 8, "StackOverflow": 10, "Biomedical": 10, "Tweet": 12,
                       "GoogleNews-TS": 12, "GoogleNews-T": 12, "GoogleNews-S": 12}
    assert len(sets["StackOverflow"].texts) > 100          # the analysis suite's top-100 neighbourhoods
    tweet_sizes = np.bincount(sets["Tweet"].labels)
    assert tweet_sizes.max() / tweet_sizes.min() == 8       # imbalanced, like Tweet
    t, ts = sets["GoogleNews-T"], sets["GoogleNews-TS"]
    assert all(b.startswith(a + " ") for a, b in zip(t.texts, ts.texts)) and (t.labels == ts.labels).all()


def test_demo_intent_sets_allow_20_shot_splits():
    from sentaug.data.intent import DATASETS, read_intent
    from sentaug.evaluate.intent import KS, fewshot_split

    for name in DATASETS:
        s = read_intent(DEMO, name)
        counts = {c: s.pool.labels.count(c) for c in s.classes}
        assert min(counts.values()) > max(KS), (name, counts)
        assert set(s.test.labels) == set(s.classes)
        train, val = fewshot_split(s.pool.labels, s.classes, 20, 0)
        assert len(train) == 20 * len(s.classes)
    atis = read_intent(DEMO, "ATIS")
    assert atis.classes == ["atis_airfare", "atis_flight", "atis_ground_service"]   # the two below 40 dropped
    assert len(read_intent(DEMO, "ATIS", min_class_size=0).classes) == 5


def test_demo_glue_tasks_read_with_quoting_off():
    from sentaug.data.glue import TASKS, read_glue

    for task, spec in TASKS.items():
        for split in ("train", *spec.eval_splits):
            data = read_glue(DEMO / "glue" / task, split)
            n = {"train": 64, "dev": 32}.get(split, 24)
            assert len(data.labels) == n, (task, split)
            if spec.labels:
                assert len(set(data.labels.tolist())) == len(spec.labels), (task, split)   # every class occurs
    assert read_glue(DEMO / "glue/SST-2", "train").text_a[3].startswith('" ')
    assert (DEMO / "glue/MRPC/train.tsv").read_bytes().startswith(b"\xef\xbb\xbf")


def test_demo_nli_formats():
    from sentaug.data.nli import LABELS, read_anli, read_nli_pairs, read_nli_triplets

    for split in ("dev", "test"):
        pairs = read_nli_pairs(DEMO / "nli/snli_senteval", split)
        assert len(pairs) == 60 and {p.label for p in pairs} == set(LABELS)
    assert all(line.endswith(" ") for line in lines(DEMO / "nli/snli_senteval/s1.dev"))
    triplets = read_nli_triplets(DEMO / "nli/simcse/nli_for_simcse.csv")
    assert len(triplets) == 200
    assert all(" not " in t.negative or "n't" in t.negative or " not " in t.anchor or "n't" in t.anchor
               for t in triplets)                                        # the hard negative flips a negation
    assert any("," in t.anchor for t in triplets)
    for rnd in ("R1", "R2", "R3"):
        for split in ("dev", "test"):
            records = read_anli(DEMO / f"nli/anli/{rnd}/{split}.jsonl")
            assert len(records) == 24 and {r.label for r in records} == set(LABELS)


def test_demo_cnsd():
    from sentaug.data.cnsd import read_cnsd_split

    sizes = {}
    for split in ("train", "dev", "test"):
        pairs = read_cnsd_split(DEMO, split)
        sizes[split] = len(pairs.gold)
        assert set(pairs.gold.tolist()) <= {0.0, 1.0, 2.0, 3.0, 4.0, 5.0} and len(set(pairs.gold.tolist())) >= 4
        assert all(re.search(r"[\u4e00-\u9fff]", s) for s in pairs.s1 + pairs.s2)      # Chinese text
    assert sizes == {"train": 120, "dev": 60, "test": 60}


def test_demo_anli_contexts_carry_an_entailment_and_a_contradiction():
    """AugCSE's ANLI triplets (sentaug nli-triplets) group hypotheses by premise: the demo rounds must give every
    context an entailed, a contradicted and a neutral hypothesis, as the real rounds often do."""
    import collections
    import json
    from importlib import resources

    root = resources.files("sentaug") / "resources" / "demo" / "nli" / "anli"
    for rnd in ("R1", "R2", "R3"):
        for split in ("dev", "test"):
            labels = collections.defaultdict(list)
            for line in (root / rnd / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                labels[record["context"]].append(record["label"])
            assert len(labels) == 8 and all(sorted(v) == ["c", "e", "n"] for v in labels.values()), (rnd, split)


def test_demo_snli_premises_come_in_threes():
    """SNLI's premises come with an entailed, a contradicted and a neutral hypothesis: the demo's do too (the
    supervised SimCSE triplets and VaSCL Figure 2b's distances pair them by premise)."""
    import collections
    from importlib import resources

    root = resources.files("sentaug") / "resources" / "demo" / "nli" / "snli_senteval"
    for split in ("dev", "test"):
        s1, labels = ((root / f"{f}.{split}").read_text(encoding="utf-8").splitlines() for f in ("s1", "labels"))
        by_premise = collections.defaultdict(list)
        for premise, label in zip(s1, labels):
            by_premise[premise].append(label)
        assert len(by_premise) == 20 and all(sorted(v) == ["contradiction", "entailment", "neutral"]
                                             for v in by_premise.values()), split
