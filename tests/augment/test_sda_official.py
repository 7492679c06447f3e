"""SDA's released augmentation code (sentaug.augment.sda_official) on sentences whose parse is asserted first:
expected outputs written by hand from Zhudongsheng75/SDA's augmentation_tools/{PI,MV,DN}.py (the full sets
those functions can produce are checked in tests/augment/test_conformance.py); the anchored cache format; and the
trainer pairing the positive with the cache's anchor."""
from __future__ import annotations

import random

import pandas as pd

from sentaug.augment import registry
from sentaug.augment.sda_official import AFFIRM_ADVERBS, AFFIRM_VERBS, NEGATION_TEMPLATES

PI, AA, DN = ("punctuation_insertion_official_code", "affirmative_auxiliary_official_code",
              "double_negation_official_code")


def outputs(nlp, op, text, deps, seeds=range(40)):
    doc = nlp(text)
    assert [t.dep_ for t in doc] == deps, "the parse this expectation assumes"
    return {registry.get(op)(doc, random.Random(s)) for s in seeds}


def test_registered_as_anchored_sda_augmentations():
    for op in (PI, AA, DN):
        aug = registry.get(op)
        assert aug.family == "sda" and aug.anchored and aug.needs_parse
    assert "(rewrites the anchor too)" in registry.describe()


def test_pi_subject_rule_and_fallback(nlp):
    deps = ["nsubj", "ROOT", "dobj", "punct"]
    # the root's first child is its subject: quotes around it or a comma after it, whichever rule is drawn
    # first (the clause rule finds no clause and hands over)
    assert outputs(nlp, PI, "John loves Mary.", deps) == {("John loves Mary .", "' John ' loves Mary ."),
                                                          ("John loves Mary .", "John , loves Mary .")}
    # no subject, no clause: quotes around the whole line, or its final mark redrawn from , . ; ! (the same
    # mark may come back, leaving the line as the anchor)
    got = {p for _, p in outputs(nlp, PI, "Stop!", ["ROOT", "punct"], range(60))}
    assert got == {"' Stop ! '", "Stop ,", "Stop .", "Stop ;", "Stop !"}


def test_pi_clause_rule_marks_the_clause_heads_first_child(nlp):
    deps = ["det", "nsubj", "dobj", "nsubj", "relcl", "npadvmod", "ROOT", "prep", "det", "pobj", "punct"]
    got = {p for _, p in outputs(nlp, PI, "The cat that I saw yesterday sat on the mat.", deps)}
    # clause: ' ,' before "that" (first child of the relcl head "saw"); subject: the span of "cat"'s
    # children (The .. saw) quoted, or ' ,' after "saw"
    assert got == {"The cat , that I saw yesterday sat on the mat .",
                   "' The cat that I saw ' yesterday sat on the mat .",
                   "The cat that I saw , yesterday sat on the mat ."}


def test_aa_verb_and_adjective_rules(nlp):
    got = {p for _, p in outputs(nlp, AA, "John loves Mary.", ["nsubj", "ROOT", "dobj", "punct"], range(200))}
    assert got == {f"John {w.replace('have', 'has')} love Mary ." for w in AFFIRM_VERBS}
    got = {p for _, p in outputs(nlp, AA, "She was tired.", ["nsubj", "ROOT", "acomp", "punct"], range(300))}
    # a root "was" takes the word as listed ("have to be": the released code inflects only other verbs)
    assert got == {f"She {w} be tired ." for w in AFFIRM_VERBS} | {f"She was {a} tired ." for a in AFFIRM_ADVERBS}
    # the first auxiliary "ca" is none of am/are/be/is/was/were: the verb rule stops there; no adjective
    assert outputs(nlp, AA, "They can't stop now.", ["nsubj", "aux", "neg", "ROOT", "advmod", "punct"]) == {
        ("They ca n't stop now .", "They ca n't stop now .")}


def test_dn_counts_to_two(nlp):
    # "not" deleted (1), "not" after the root "is" (2): the line comes back as it was
    assert outputs(nlp, DN, "He is not happy.", ["nsubj", "ROOT", "neg", "acomp", "punct"]) == {
        ("He is not happy .", "He is not happy .")}
    # "n't" deleted (1), "not" after the auxiliary "ca" (2)
    assert outputs(nlp, DN, "They can't stop now.", ["nsubj", "aux", "neg", "ROOT", "advmod", "punct"]) == {
        ("They ca n't stop now .", "They ca not stop now .")}
    # one negation added ("does not love"): a template in front
    got = {p for _, p in outputs(nlp, DN, "John loves Mary.", ["nsubj", "ROOT", "dobj", "punct"], range(200))}
    assert got == {f"{t} John does not love Mary ." for t in NEGATION_TEMPLATES}


def test_anchored_cache_stores_the_anchor_and_compares_with_it(nlp, tmp_path):
    from sentaug.augment.cache import build_cache

    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"He is not happy.\n\nThey can't stop now.\nJohn loves Mary.\n")
    out = tmp_path / "dn.parquet"
    stats = build_cache(DN, corpus, out, seed=1)
    df = pd.read_parquet(out)
    assert list(df.columns) == ["original", "anchor", "augmented", "changed", "flag"]
    assert list(df.anchor) == ["He is not happy .", "", "They ca n't stop now .", "John loves Mary ."]
    assert list(df.augmented[:3]) == ["He is not happy .", "", "They ca not stop now ."]
    assert df.augmented[3] in {f"{t} John does not love Mary ." for t in NEGATION_TEMPLATES}
    assert list(df.changed) == [False, False, True, True]        # against the anchor, not the line as written
    assert stats["anchored"] and stats["n_changed"] == 2 and stats["share_changed"] == 50.0


def test_trainer_pairs_the_positive_with_the_cached_anchor(tmp_path):
    from sentaug.train.sources import TrainingData

    corpus = tmp_path / "c.txt"
    corpus.write_text("It's fine.\nGo home.\n")
    cache = tmp_path / "c.parquet"
    pd.DataFrame({"original": ["It's fine.", "Go home."], "anchor": ["It 's fine .", "Go home ."],
                  "augmented": ["' It 's fine . '", "Go home !"], "changed": [True, True],
                  "flag": ["", ""]}).to_parquet(cache)
    spec = {"method": "sda_pi_official_code", "seed": 1, "positive": {"source": "cache"}}
    batch = TrainingData(spec, corpus, [str(cache)]).batch([0, 1], step=0)
    assert batch.anchors == ["It 's fine .", "Go home ."]
    assert batch.positives == ["' It 's fine . '", "Go home !"]
    assert batch.originals == ["It's fine.", "Go home."]           # the MLM input stays the corpus line
