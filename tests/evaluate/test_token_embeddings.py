"""CARDS Figure 1's analysis (sentaug.evaluate.token_embeddings): token categories by each tokenizer's convention,
the 2-D PCA and the separation score against hand computations, and the whole command on a tiny backbone."""
import json

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertModel

from sentaug.evaluate.token_embeddings import (categorise, nearest_centroid_accuracy, pca_2d, scheme, token_pca_cli,
                                               token_usage)


@pytest.mark.parametrize("token,kind,corpus_role,expected", [
    ("Ġthe", "bpe", None, "lower"), ("ĠParis", "bpe", None, "upper"), ("ing", "bpe", None, "subtoken"),
    ("The", "bpe", True, "upper"),            # sentence-initial in the corpus: a beginning without the marker
    ("ing", "bpe", False, "subtoken"), ("Ġ,", "bpe", None, None), ("Ġ1990", "bpe", None, None),
    ("Ã©", "bpe", None, None),               # a byte fragment has no case
    ("paris", "wordpiece", None, "lower"), ("##ing", "wordpiece", None, "subtoken"), ("[CLS]", "wordpiece", None, None),
    ("▁The", "sentencepiece", None, "upper"), ("ly", "sentencepiece", None, "subtoken"),
])
def test_categories_follow_each_tokenizers_word_boundary_marker(token, kind, corpus_role, expected):
    assert categorise(token, kind, corpus_role) == expected


def test_scheme_is_read_off_the_vocabulary():
    assert scheme({"Ġthe": 0, "ing": 1}) == "bpe"
    assert scheme({"the": 0, "##ing": 1}) == "wordpiece"
    assert scheme({"▁the": 0}) == "sentencepiece"
    with pytest.raises(ValueError, match="word-boundary convention"):
        scheme({"a": 0, "b": 1})


def test_pca_projects_on_the_direction_of_largest_variance():
    # in the plane spanned by u and v (orthonormal, inside 3-D): +-3 along u, +-1 along v, shifted by c
    u, v, c = np.array([0.6, 0.8, 0.0]), np.array([0.0, 0.0, 1.0]), np.array([5.0, -2.0, 7.0])
    x = np.stack([c + 3 * u, c - 3 * u, c + v, c - v])
    coords, explained = pca_2d(x)
    assert explained == pytest.approx([18 / 20, 2 / 20])          # variances 9+9 and 1+1 (sum of squares)
    np.testing.assert_allclose(np.abs(coords), [[3, 0], [3, 0], [0, 1], [0, 1]], atol=1e-12)


def test_nearest_centroid_accuracy_by_hand():
    # centroids: a = (0, 0.5), b = (3.5, 0); the point (1.8, 0) is nearer b's centroid (1.70 < 1.87)
    x = np.array([[0.0, 0.0], [0.0, 1.0], [1.8, 0.0], [5.2, 0.0]])
    assert nearest_centroid_accuracy(x, ["a", "a", "b", "b"]) == 1.0
    # a = (0.9, 0), b = (2.6, 0.5): (0, 1) is 1.35 from a and 2.65 from b, so it is misread as a
    assert nearest_centroid_accuracy(x, ["a", "b", "a", "b"]) == 0.75


def test_token_usage_counts_each_words_first_token(minilm_path):
    tok = AutoTokenizer.from_pretrained(minilm_path)
    counts, beginnings = token_usage(tok, ["unaffable tea", "tea tea"])
    pieces = tok.tokenize("unaffable")                         # several WordPiece tokens, the first one begins
    assert len(pieces) > 1 and all(p.startswith("##") for p in pieces[1:])
    ids = tok.convert_tokens_to_ids(pieces)
    tea = tok.convert_tokens_to_ids("tea")
    assert counts[tea] == 3 and beginnings[tea] == 3
    assert beginnings[ids[0]] == 1 and all(beginnings[i] == 0 for i in ids[1:])


def test_token_pca_command_on_a_tiny_backbone(tmp_path, minilm_path):
    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32)).save_pretrained(tmp_path / "bb")
    tok.save_pretrained(tmp_path / "bb")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\nunaffable cats\n")
    token_pca_cli(str(tmp_path / "bb"), str(tmp_path / "out.json"), corpus=str(corpus))
    result = json.loads((tmp_path / "out.json").read_text())
    t = result["tokens"]
    vocab = tok.get_vocab()
    assert result["scheme"] == "wordpiece" and result["categories"]["upper"] == 0      # an uncased vocabulary
    assert len(t["id"]) == result["n_tokens"] == sum(result["categories"].values())
    assert t["category"][t["token"].index("the")] == "lower" and t["frequency"][t["token"].index("the")] == 2
    assert t["category"][t["token"].index("##s")] == "subtoken"
    assert all(vocab[token] == i for token, i in zip(t["token"], t["id"]))
    # the projection is the PCA of exactly those rows of the embedding matrix
    weights = BertModel.from_pretrained(tmp_path / "bb").get_input_embeddings().weight.detach().numpy()
    coords, _ = pca_2d(weights[t["id"]])
    np.testing.assert_allclose(np.abs(t["pc1"]), np.abs(coords[:, 0]), atol=1e-4)
    assert 0 < result["separation"]["majority_share"] <= 1
