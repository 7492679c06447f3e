"""SDA's comparison baselines (Tables 6/7): exact edit counts and what each operation keeps."""
import random

import pytest

from sentaug.augment import baselines

WORDS = [f"w{i}" for i in range(20)]
TEXT = " ".join(WORDS)


@pytest.mark.parametrize("ratio,kept", [(0.1, 18), (0.2, 16), (0.3, 14)])
def test_crop_keeps_a_contiguous_window(ratio, kept):
    starts = set()
    for seed in range(40):
        out = baselines.crop(TEXT, random.Random(seed), ratio=ratio).split()
        assert len(out) == kept
        start = WORDS.index(out[0])
        assert out == WORDS[start:start + kept]
        starts.add(start)
    assert starts == set(range(20 - kept + 1))                    # every window position occurs


@pytest.mark.parametrize("ratio,kept", [(0.1, 18), (0.2, 16), (0.3, 14)])
def test_word_deletion_removes_exactly_round_ratio_n(ratio, kept):
    out = baselines.word_deletion(TEXT, random.Random(0), ratio=ratio).split()
    assert len(out) == kept
    it = iter(WORDS)
    assert all(w in it for w in out)                              # order kept


def test_mask_15_percent():
    out = baselines.mask(TEXT, random.Random(0)).split()
    assert out.count("[MASK]") == 3                               # round(0.15 * 20)
    assert [w for w in out if w != "[MASK]"] == [w for w in WORDS if w in out]
    assert baselines.mask("a b c d", random.Random(0), token="<mask>").count("<mask>") == 1


def test_word_repetition_follows_esimcse():
    lengths = []
    for seed in range(2000):
        out = baselines.word_repetition(TEXT, random.Random(seed)).split()
        dedup = [w for i, w in enumerate(out) if i == 0 or out[i - 1] != w]
        assert dedup == WORDS                                     # only in-place repeats
        lengths.append(len(out) - len(WORDS))
    # dup_len ~ uniform{0..max(2, int(0.32 * 20)) = 6}: mean 3
    assert set(lengths) == set(range(7))
    assert abs(sum(lengths) / len(lengths) - 3.0) < 0.15


def test_random_punctuation_inserts_one_mark_from_the_pool():
    for seed in range(20):
        out = baselines.random_punctuation(TEXT, random.Random(seed)).split()
        extra = [w for w in out if w not in WORDS]
        assert len(out) == 21 and len(extra) == 1 and extra[0] in baselines.PUNCTUATION
        assert [w for w in out if w in WORDS] == WORDS


def test_one_word_lines_are_left_alone():
    for fn in (baselines.crop, baselines.word_deletion, baselines.mask):
        assert fn("solo", random.Random(0)) == "solo"


def test_synonym_replacement_edits_ten_percent(wn):
    words = "car house dog quick happy run big small river road".split()
    out = baselines.synonym_replacement(" ".join(words), random.Random(0)).split()
    changed = [(a, b) for a, b in zip(words, out) if a != b]
    assert len(changed) == 1 and changed[0][1] in wn.synonyms(changed[0][0])
