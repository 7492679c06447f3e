"""VaSCL's explicit augmentations through nlpaug: strength, determinism from the line's rng, errors."""
import random

import pytest

from sentaug.augment import explicit

WORDS = [f"token{chr(97 + i)}" for i in range(20)]
TEXT = " ".join(WORDS)


@pytest.mark.parametrize("p,deleted", [(0.05, 1), (0.1, 2), (0.2, 4)])
def test_wdel_deletes_ceil_p_n_words(p, deleted):
    out = explicit.vascl_wdel(TEXT, random.Random(0), p=p).split()
    assert len(out) == 20 - deleted                            # nlpaug: ceil(aug_p * n), at least 1
    it = iter(WORDS)
    assert all(w in it for w in out)


def test_wdel_is_deterministic_from_the_line_rng_whatever_the_global_state():
    random.seed(123)
    a = explicit.vascl_wdel(TEXT, random.Random("5:3"), p=0.2)
    random.seed(999)
    import numpy as np
    np.random.seed(7)
    assert explicit.vascl_wdel(TEXT, random.Random("5:3"), p=0.2) == a
    outs = {explicit.vascl_wdel(TEXT, random.Random(f"{s}:3"), p=0.2) for s in range(6)}
    assert len(outs) > 1                                       # seeds differ


def test_ctxt_needs_an_existing_masked_lm(tmp_path):
    with pytest.raises(FileNotFoundError, match="masked LM folder"):
        explicit.vascl_ctxt(TEXT, random.Random(0), model=str(tmp_path / "absent"))
    with pytest.raises(ValueError, match="needs --param model"):
        explicit.vascl_ctxt(TEXT, random.Random(0), model="")


def test_ctxt_cache_is_the_same_in_worker_processes(tiny_mlm, tmp_path, monkeypatch):
    """CTxt in `--workers` pool processes (nlpaug's pipeline must not start processes of its own there)."""
    import pandas as pd

    from sentaug.augment import parse
    from sentaug.augment.cache import build_cache

    monkeypatch.setattr(parse, "CHUNK", 3)
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(f"the river {w} flows past the old mill" for w in "abcdef") + "\n")
    outs = []
    for w in (1, 2):
        build_cache("vascl_ctxt", corpus, tmp_path / f"w{w}.parquet", seed=1, params={"model": str(tiny_mlm)},
                    workers=w)
        outs.append(pd.read_parquet(tmp_path / f"w{w}.parquet")["augmented"].tolist())
    assert outs[0] == outs[1]
    assert outs[0][3:] == explicit.vascl_ctxt(corpus.read_text().splitlines()[3:], random.Random("1:chunk3"),
                                              model=str(tiny_mlm))


def test_ctxt_substitutes_with_a_tiny_masked_lm(tmp_path, tiny_mlm):
    text = "the river flows north past the old mill and the quiet town in the valley below"
    short = "rain fell"
    batch = [text, "  ", short]                  # batched: a chunk of lines in one call
    out = explicit.vascl_ctxt(batch, random.Random(1), p=0.2, model=str(tiny_mlm))
    assert out == explicit.vascl_ctxt(batch, random.Random(1), p=0.2, model=str(tiny_mlm))
    assert out[1] == "  "                        # blank lines are passed through, not sent to the model
    for src, a, most in ((text, out[0], 4), (short, out[2], 1)):     # aug_p 0.2: int(0.2 * 16) = 3, ceil 4
        changed = sum(x != y for x, y in zip(src.split(), a.split()))
        assert len(a.split()) == len(src.split()) and 1 <= changed <= most


def test_ctxt_of_a_checkpoint_without_its_head_is_reproducible(tmp_path, tiny_mlm):
    """The demo's masked LM is a random stand-in saved without an MLM head: the head nlpaug loads it with is new
    each time, and must be the same whatever torch's generator holds (a new process seeds it at random)."""
    import torch
    from transformers import AutoTokenizer, BertModel

    lines = ["the river flows north past the old mill", "rain fell on the quiet hills of the valley"]
    outs = []
    for state in (1, 2):        # a copy each: nlpaug keeps the models it loaded by path
        BertModel.from_pretrained(tiny_mlm).save_pretrained(tmp_path / f"headless{state}")
        AutoTokenizer.from_pretrained(tiny_mlm).save_pretrained(tmp_path / f"headless{state}")
        torch.manual_seed(state)
        outs.append(explicit.vascl_ctxt(lines, random.Random(0), p=0.3, model=str(tmp_path / f"headless{state}")))
    assert outs[0] == outs[1] and outs[0] != lines


def test_ctxt_never_substitutes_special_tokens(tmp_path, tiny_mlm):
    """A masked LM biased to rank [MASK], [CLS] and [UNK] first: among its top 5, nlpaug (which draws a
    candidate uniformly) would pick them 3 times in 5 and put them into the line, or fail on its next pass over
    a line holding two masks. Only the two words may replace words."""
    from transformers import AutoTokenizer, BertForMaskedLM

    tok = AutoTokenizer.from_pretrained(tiny_mlm)
    model = BertForMaskedLM.from_pretrained(tiny_mlm)
    specials = [tok.mask_token_id, tok.cls_token_id, tok.unk_token_id]
    model.cls.predictions.bias.data[specials] = 30.0        # softmax share of any other token: below 1e-10
    model.save_pretrained(tmp_path / "biased")
    tok.save_pretrained(tmp_path / "biased")
    text = "the river flows north past the old mill and the quiet town in the valley below"
    out = explicit.vascl_ctxt([text, "rain fell on the hills"], random.Random(3), p=0.3, model=str(tmp_path / "biased"),
                              top_k=5)
    for src, a in zip([text, "rain fell on the hills"], out):
        assert not any(t in a for t in ("[MASK]", "[CLS]", "[UNK]")), a
        assert len(a.split()) == len(src.split()) and a != src


def test_words_only_drops_special_candidates_per_input():
    one = [{"token": 5, "token_str": "a"}, {"token": 103, "token_str": "[MASK]"}, {"token": 7, "token_str": "b"}]
    assert explicit._words_only(one, {103}) == [one[0], one[2]]
    assert explicit._words_only([one, one[:1]], {103, 5}) == [[one[2]], []]


def test_wnet_substitutes_wordnet_synonyms_deterministically(wn):
    text = "the big dog runs quickly across the wide green field"
    a = explicit.vascl_wnet(text, random.Random(2), p=0.2)
    assert a == explicit.vascl_wnet(text, random.Random(2), p=0.2)
    assert a != text


def test_cache_is_the_same_for_any_worker_count(tmp_path):
    """nlpaug draws from global generators; seeding them per line keeps caches worker-independent (the
    corpus spans two CHUNKs, so two processes each build one half)."""
    import pandas as pd

    from sentaug.augment.cache import build_cache, line_rng
    from sentaug.augment.parse import CHUNK

    lines = [f"line {i} has a few more words in it" for i in range(CHUNK + 50)]
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n")
    build_cache("vascl_wdel", corpus, tmp_path / "w1.parquet", seed=4, params={"p": 0.2}, workers=1)
    build_cache("vascl_wdel", corpus, tmp_path / "w2.parquet", seed=4, params={"p": 0.2}, workers=2)
    one, two = pd.read_parquet(tmp_path / "w1.parquet"), pd.read_parquet(tmp_path / "w2.parquet")
    assert one["augmented"].tolist() == two["augmented"].tolist()
    for i in (0, CHUNK, CHUNK + 7):    # first lines of each chunk (where a worker builds its augmenter), by hand
        assert two["augmented"][i] == explicit.vascl_wdel(lines[i], line_rng(4, i), p=0.2)
