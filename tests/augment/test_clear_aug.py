"""CLEAR augmentations: deletion rates and [DEL] merging, span counts, reordering keeps the words."""
import random

import pytest

from sentaug.augment import clear
from sentaug.augment.clear import DEL

WORDS = [f"w{i}" for i in range(40)]
TEXT = " ".join(WORDS)


def is_subsequence(small, big):
    it = iter(big)
    return all(x in it for x in small)


def test_merge_del_collapses_runs():
    assert clear.merge_del(["a", DEL, DEL, "b", DEL, DEL, DEL]) == ["a", DEL, "b", DEL]


@pytest.mark.parametrize("seed", range(5))
def test_word_deletion_deletes_70_percent_and_merges(seed):
    out = clear.clear_del_word(" ".join(WORDS[:20]), random.Random(seed)).split()
    kept = [w for w in out if w != DEL]
    assert len(kept) == 20 - 14                                   # round(0.7 * 20) deleted
    assert is_subsequence(kept, WORDS[:20])                       # order kept
    assert all(not (a == b == DEL) for a, b in zip(out, out[1:]))  # no two [DEL] in a row
    # one [DEL] per maximal run of deleted positions
    gone = [w not in kept for w in WORDS[:20]]
    runs = sum(1 for i, g in enumerate(gone) if g and (i == 0 or not gone[i - 1]))
    assert out.count(DEL) == runs


def test_deletion_never_removes_every_word():
    assert clear.clear_del_word("alone", random.Random(0)) == "alone"
    assert clear.clear_del_word("two words", random.Random(0), ratio=1.0).split().count(DEL) == 1


@pytest.mark.parametrize("seed", range(5))
def test_span_deletion_makes_five_spans_of_five_percent(seed):
    out = clear.clear_del_span(TEXT, random.Random(seed)).split()   # 40 words: spans of round(0.05*40) = 2
    kept = [w for w in out if w != DEL]
    assert out.count(DEL) == 5                                   # spans never touch, so never merge
    assert len(kept) == 40 - 5 * 2
    assert is_subsequence(kept, WORDS)


def test_span_placement_is_uniform_over_positions():
    # 1-word spans, 2 spans in 5 words with a gap: the 6 placements {0,2},{0,3},{0,4},{1,3},{1,4},{2,4}
    rng = random.Random(1)
    counts = {}
    for _ in range(6000):
        key = tuple(clear.place_spans(5, 2, 1, rng, gap=1))
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) == {(0, 2), (0, 3), (0, 4), (1, 3), (1, 4), (2, 4)}
    assert all(abs(c / 6000 - 1 / 6) < 0.03 for c in counts.values())


@pytest.mark.parametrize("seed", range(5))
def test_reordering_swaps_five_pairs_and_keeps_the_multiset(seed):
    out = clear.clear_reorder(TEXT, random.Random(seed)).split()
    assert sorted(out) == sorted(WORDS)
    moved = [i for i, (a, b) in enumerate(zip(out, WORDS)) if a != b]
    assert len(moved) == 5 * 2 * 2                               # 5 pairs of 2-word spans, all displaced
    # moved words come in blocks of 2 consecutive original words
    for i in moved[::2]:
        j = WORDS.index(out[i])
        assert out[i + 1] == WORDS[j + 1]


def test_combo_applies_left_to_right_and_merges():
    out = clear.clear_combo(TEXT, random.Random(0), steps="del_word+reorder").split()
    kept = [w for w in out if w != DEL]
    assert len(kept) == 40 - 28
    assert all(not (a == b == DEL) for a, b in zip(out, out[1:]))
    with pytest.raises(ValueError, match="steps"):
        from sentaug.augment import registry
        registry.get("clear_combo").resolve({"steps": "reorder+subs"})


def test_deterministic_per_seed_and_seeds_differ():
    a = clear.clear_del_word(TEXT, random.Random("1:0"))
    assert a == clear.clear_del_word(TEXT, random.Random("1:0"))
    assert a != clear.clear_del_word(TEXT, random.Random("2:0"))


def test_substitution_replaces_30_percent_with_wordnet_synonyms(wn):
    words = "car house dog quick happy run big small river road".split()
    out = clear.clear_subs(" ".join(words), random.Random(0)).split()
    changed = [(a, b) for a, b in zip(words, out) if a != b]
    assert len(changed) == 3                                     # round(0.3 * 10)
    for a, b in changed:
        assert b in wn.synonyms(a)
