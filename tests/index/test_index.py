"""CARDS retrieval: exact neighbours against brute force, corpus selection, and negative sampling."""
import json

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from sentaug.data.corpus import Line
from sentaug.index.neighbours import build_index, exact_topk, json_path, select_sentences
from sentaug.index.sampling import NegativeSampler, RetrievalIndex, check_corpus, load_index, same_id_mask


def brute_force(x: np.ndarray, k: int):
    """Reference: every row against every other row in float64, score desc then row asc."""
    sim = x.astype(np.float64) @ x.astype(np.float64).T
    ids, scores = [], []
    for r in range(len(x)):
        others = np.array([j for j in range(len(x)) if j != r])
        order = np.lexsort((others, -sim[r, others]))[:k]
        ids.append(others[order])
        scores.append(sim[r, others[order]])
    return np.array(ids), np.array(scores)


@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_topk_equals_brute_force_on_random_unit_vectors(backend):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 16)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids, scores = exact_topk(x, 10, backend=backend)
    ref_ids, ref_scores = brute_force(x, 10)
    assert ids.dtype == np.int32 and ids.shape == (300, 10)
    np.testing.assert_array_equal(ids, ref_ids)
    np.testing.assert_allclose(scores, ref_scores, atol=1e-5)
    assert not (ids == np.arange(300)[:, None]).any()


@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_ties_are_ordered_by_row_and_cut_exactly(backend):
    # Small integer vectors: every dot product is exact in float32, so ties are real ties, many of them at
    # the k-th place. Rows 3 and 7 are identical: each must be the other's neighbour, never its own.
    rng = np.random.default_rng(1)
    x = rng.integers(-1, 2, size=(60, 3)).astype(np.float32)
    x[7] = x[3] = np.array([1, 1, 0], np.float32)
    ids, scores = exact_topk(x, 5, backend=backend)
    ref_ids, ref_scores = brute_force(x, 5)
    np.testing.assert_array_equal(ids, ref_ids)
    np.testing.assert_array_equal(scores, ref_scores.astype(np.float32))
    assert 7 in ids[3] and 3 in ids[7]
    assert not (ids == np.arange(60)[:, None]).any()


def test_torch_search_in_blocks_finds_faiss_neighbours_on_a_sample():
    # 2,000 random unit vectors, the last 10 repeating the first 10 (exact ties), searched by torch in
    # 37-row blocks on the CPU and by faiss, k = 64. Scores must agree everywhere; on a sample of rows, both
    # must give the float64 ranking where the row's top 65 scores are distinct, else the same set above the
    # near-tie (two float32 products may order a near-tie differently).
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2000, 24)).astype(np.float32)
    x[1990:] = x[:10]
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids_t, sc_t = exact_topk(x, 64, device="cpu", backend="torch", block=37)
    ids_f, sc_f = exact_topk(x, 64, backend="faiss")
    np.testing.assert_allclose(sc_t, sc_f, atol=1e-5)
    sample = np.concatenate([np.arange(10), rng.choice(2000, 200, replace=False)])
    sim = x[sample].astype(np.float64) @ x.astype(np.float64).T
    sim[np.arange(len(sample)), sample] = -np.inf
    distinct = 0
    for row, r in enumerate(sample):
        top = np.sort(sim[row])[::-1][:65]
        expected = np.argsort(-sim[row], kind="stable")[:64]
        if np.diff(top).max() < -1e-5:          # every gap clear of float32 rounding: the same ranking
            np.testing.assert_array_equal(ids_t[r], expected)
            np.testing.assert_array_equal(ids_f[r], expected)
            distinct += 1
        elif top[63] - top[64] > 1e-5:          # a near-tie inside the top 64: the same set
            assert set(ids_t[r]) == set(ids_f[r]) == set(expected)
        else:                                   # a near-tie at the cut: the same set above it
            above = expected[sim[row][expected] > top[63] + 1e-5]
            assert set(ids_t[r][sc_t[r] > top[63] + 1e-5]) == set(ids_f[r][sc_f[r] > top[63] + 1e-5]) == set(above)
    assert distinct >= 100     # rows checked for the exact ranking (the others have near-ties in their top 65)
    assert (ids_t[1990:, 0] == np.arange(10)).all() and (ids_t[:10, 0] == np.arange(1990, 2000)).all()


def test_k_must_leave_a_neighbour():
    with pytest.raises(ValueError, match="k must be between 1 and n - 1 = 3"):
        exact_topk(np.eye(4, dtype=np.float32), 4)


def test_select_sentences_drops_flagged_short_and_duplicates():
    lines = [Line("the cat sat down", ""), Line("too short", ""), Line("", "empty"),
             Line("a dog ran off", ""), Line("the cat sat down", ""), Line("bad \ufffd bytes here", "invalid_utf8"),
             Line("one two three", "")]
    sel = select_sentences(lines)
    assert sel.sentences == ["the cat sat down", "a dog ran off", "one two three"]
    assert sel.row_of_line.tolist() == [0, -1, -1, 1, 0, -1, 2]   # the duplicate maps to its first occurrence
    assert sel.line_of_row.tolist() == [0, 3, 6]
    assert sel.dropped == {"flagged": 2, "short": 1, "duplicate": 1}


def unit_vectors(n, seed):
    x = np.random.default_rng(seed).normal(size=(n, 8)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def small_index(n=40, k=8, seed=0) -> RetrievalIndex:
    ids, scores = exact_topk(unit_vectors(n, seed), k)
    # corpus lines: the n sentences, then a duplicate of row 5 and one short line
    row_of_line = np.concatenate([np.arange(n), [5, -1]]).astype(np.int64)
    return RetrievalIndex(ids, scores, row_of_line, np.arange(n, dtype=np.int64), [f"s{i}" for i in range(n)])


def test_top_k_uniform_never_draws_self_and_is_uniform_over_top_k():
    index = small_index()
    sampler = NegativeSampler(index, "top_k_uniform", s=1)
    g = torch.Generator().manual_seed(0)
    anchors = torch.tensor([5, 12, 40])          # line 40 duplicates line 5 (row 5)
    draws = torch.cat([sampler.sample(anchors, g) for _ in range(4000)], dim=1)   # [3, 4000]
    for a, row in zip(anchors.tolist(), [5, 12, 5]):
        d = draws[anchors.tolist().index(a)]
        assert not (d == row).any()
        assert set(d.tolist()) <= set(index.neighbours[row].tolist())
        counts = np.array([(d == int(c)).sum().item() for c in index.neighbours[row]])
        assert counts.sum() == 4000
        assert chisquare(counts).pvalue > 1e-3   # uniform over the 8 neighbours (expected 500 each)


def test_top_k_uniform_with_s_draws_distinct_neighbours_uniformly():
    index = small_index()
    sampler = NegativeSampler(index, "top_k_uniform", s=3)
    g = torch.Generator().manual_seed(1)
    out = torch.cat([sampler.sample(torch.tensor([9]), g) for _ in range(3000)])       # [3000, 3]
    assert all(len(set(r)) == 3 for r in out.tolist())
    counts = np.array([(out == int(c)).sum().item() for c in index.neighbours[9]])
    assert counts.sum() == 9000 and chisquare(counts).pvalue > 1e-3   # each neighbour in 3/8 of the draws


def test_a_smaller_k_draws_from_the_first_k_of_a_larger_index():
    index = small_index(k=8)
    g = torch.Generator().manual_seed(4)
    out = torch.cat([NegativeSampler(index, k=3).sample([20], g) for _ in range(1500)]).squeeze(1)
    counts = np.array([(out == int(c)).sum().item() for c in index.neighbours[20, :3]])
    assert counts.sum() == 1500 and chisquare(counts).pvalue > 1e-3   # the 3 best only, uniformly


def test_r_top_returns_the_s_hardest():
    index = small_index()
    out = NegativeSampler(index, "r_top", s=2).sample(torch.arange(40), 0)
    ref_ids, _ = brute_force(unit_vectors(40, 0), 2)        # independent of the index's own search
    assert out.tolist() == ref_ids.tolist()


def test_d_uniform_excludes_self_and_covers_the_corpus():
    index = small_index(n=20, k=4)
    sampler = NegativeSampler(index, "d_uniform", s=2)
    g = torch.Generator().manual_seed(2)
    out = torch.cat([sampler.sample(torch.tensor([7]), g) for _ in range(3800)])     # [3800, 2]
    assert not (out == 7).any() and (out[:, 0] != out[:, 1]).all()
    counts = np.array([(out == r).sum().item() for r in range(20) if r != 7])
    assert counts.sum() == 7600 and chisquare(counts).pvalue > 1e-3   # uniform over the 19 other rows


def test_unindexed_lines_get_a_uniform_negative_or_none():
    index = small_index()
    g = torch.Generator().manual_seed(3)
    assert NegativeSampler(index, unindexed="none").sample([41, 0], g)[0].tolist() == [-1]
    out = torch.cat([NegativeSampler(index).sample([41], g) for _ in range(2000)]).squeeze(1)
    assert out.min() >= 0 and len(set(out.tolist())) == 40   # whole index, not a neighbour list


def test_sampling_is_deterministic_for_a_seed():
    sampler = NegativeSampler(small_index(), s=2)
    a = sampler.sample(torch.arange(40), torch.Generator().manual_seed(11))
    b = sampler.sample(torch.arange(40), torch.Generator().manual_seed(11))
    c = sampler.sample(torch.arange(40), torch.Generator().manual_seed(12))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_sampler_rejects_bad_settings():
    index = small_index()
    with pytest.raises(ValueError, match="unknown negative sampling mode"):
        NegativeSampler(index, "hardest")
    with pytest.raises(ValueError, match="exceeds the index's k = 8"):
        NegativeSampler(index, k=64)
    with pytest.raises(ValueError, match="between 1 and 8"):
        NegativeSampler(index, s=9)


def test_same_id_mask_on_a_hand_example():
    # anchors are rows 4, 9, 4 (a duplicate), -1 (not indexed); negatives [B, s=2] flattened to 8 columns
    anchors = torch.tensor([4, 9, 4, -1])
    negatives = torch.tensor([[9, 1], [4, 2], [7, 9], [-1, 3]]).reshape(-1)   # 9 1 4 2 7 9 -1 3
    expected = torch.tensor([
        [0, 0, 1, 0, 0, 0, 1, 0],
        [1, 0, 0, 0, 0, 1, 1, 0],
        [0, 0, 1, 0, 0, 0, 1, 0],
        [0, 0, 0, 0, 0, 0, 1, 0],
    ], dtype=torch.bool)
    assert torch.equal(same_id_mask(anchors, negatives), expected)


def write_backbone(path, minilm_path):
    from transformers import AutoTokenizer, BertConfig, BertModel

    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64)
    BertModel(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_build_index_end_to_end(tmp_path, minilm_path):
    from sentaug.models.encoder import embed, load_pretrained

    sentences = [f"sentence number {w} talks about {t}" for w in ("one", "two", "three", "four")
                 for t in ("rivers", "cats", "music")]
    lines = sentences[:5] + ["short line", sentences[2], ""] + sentences[5:]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    backbone = write_backbone(tmp_path / "bb", minilm_path)
    out = tmp_path / "index" / "k4.npz"
    meta = build_index(corpus, backbone, "avg", 4, out, batch_size=5)

    index = load_index(out)
    assert index.sentences == sentences and meta["n"] == 12 and meta["n_lines"] == len(lines)
    assert meta["dropped"] == {"flagged": 1, "short": 1, "duplicate": 1}
    assert json.loads(json_path(out).read_text())["pooler"] == "avg" and index.meta["k"] == 4
    assert index.row_of_line.tolist() == [0, 1, 2, 3, 4, -1, 2, -1] + list(range(5, 12))
    # reference: the same frozen model and pooler, normalised, ranked by brute force
    model, tok = load_pretrained(backbone, "cpu")
    v = embed(model, tok, sentences, poolers=("avg",), max_length=32)["avg"]
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ref_ids, ref_scores = brute_force(v, 4)
    np.testing.assert_allclose(index.scores, ref_scores, atol=1e-5)
    assert (index.neighbours == ref_ids).mean() > 0.95    # near-ties may swap under float rounding
    assert not (index.neighbours == np.arange(12)[:, None]).any()
    assert sorted(p.name for p in out.parent.iterdir()) == ["k4.json", "k4.npz"]   # no temporary left over
    check_corpus(index, corpus)
    corpus.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="is not the corpus the retrieval index was built from"):
        check_corpus(index, corpus)
