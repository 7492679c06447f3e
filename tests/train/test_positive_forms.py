"""Positives the trainer takes in other forms than plain text: token sequences (CARDS Table 5's
re-tokenization and BPE-dropout caches) and lower-cased training (CARDS Table 4's `train.lowercase`).
Expectations come from the tokenizer itself (its own encoding of the same tokens or text) and from a
plain-text run of the trainer."""
import json
import random

import pandas as pd
import pytest
from transformers import AutoTokenizer

from sentaug.augment.cards import bpe_dropout
from sentaug.models.token_sequences import encode_tokens
from sentaug.models.backbones import resolve_tokenizer
from sentaug.train.method import encode_mixed
from sentaug.train.sources import TrainingData
from sentaug.train.trainer import train
from tests.train.test_train import ANCHORS, POSITIVES, setup, spec, write_backbone  # noqa: F401  (fixture)

BPE = resolve_tokenizer("bundled:demo-bpe")     # byte-level BPE (RoBERTa's kind), bundled
TEXTS = ["the river flows north .", "Two Dogs play in the park"]


@pytest.fixture(scope="module")
def bpe():
    return AutoTokenizer.from_pretrained(BPE)


def test_plain_texts_encode_as_the_tokenizer_does(bpe):
    enc = encode_mixed(bpe, [encode_tokens(bpe.tokenize(TEXTS[0])), TEXTS[1]], 32)
    ref = bpe(TEXTS, padding=True, truncation=True, max_length=32, return_tensors="pt")
    assert enc["input_ids"].tolist() == ref["input_ids"].tolist()         # a text's own tokens = the text
    assert enc["attention_mask"].tolist() == ref["attention_mask"].tolist()


def test_a_token_sequence_is_encoded_as_it_stands_framed_and_truncated(bpe):
    tokens = bpe_dropout(TEXTS[1], random.Random(5), p=0.5, tokenizer=BPE)[len("<tokens> "):].split(" ")
    assert tokens != bpe.tokenize(TEXTS[1])                           # the dropout did change the segmentation
    enc = encode_mixed(bpe, [encode_tokens(tokens), TEXTS[0]], 32)
    ids = [bpe.cls_token_id, *bpe.convert_tokens_to_ids(tokens), bpe.sep_token_id]
    assert enc["input_ids"][0].tolist() == ids and enc["attention_mask"][0].sum() == len(ids)
    short = encode_mixed(bpe, [encode_tokens(tokens)], 5)["input_ids"][0].tolist()
    assert short == [bpe.cls_token_id, *bpe.convert_tokens_to_ids(tokens[:3]), bpe.sep_token_id]


def test_tokens_of_another_tokenizer_are_refused(bpe):
    with pytest.raises(ValueError, match="built with another tokenizer"):
        encode_mixed(bpe, [encode_tokens(["the", "zzqqxxyy###notatoken"])], 32)


def test_the_trainer_takes_token_positives_like_the_same_text(setup, minilm_path, tmp_path):  # noqa: F811
    """One step with a cache of token sequences equal to the positives' own tokenization logs the loss of the
    plain-text cache: the token path feeds the encoder the same ids."""
    root, corpus, cache = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.0)
    tok = AutoTokenizer.from_pretrained(backbone)
    table = pd.read_parquet(cache)
    table["augmented"] = [encode_tokens(tok.tokenize(t)) if t else t for t in table["augmented"]]
    token_cache = tmp_path / "tokens.parquet"
    table.to_parquet(token_cache)
    losses = []
    for name, positives in (("text", cache), ("tokens", str(token_cache))):
        train(spec(), corpus, positives, backbone, str(root / "data"), str(root / name))
        losses.append(json.loads((root / name / "train_log.jsonl").read_text().splitlines()[0])["loss"])
    assert losses[0] == pytest.approx(losses[1], abs=1e-6)


def test_lowercase_training_lowers_every_text_but_token_positives(setup):  # noqa: F811
    root, corpus, cache = setup
    table = pd.read_parquet(cache)
    table.loc[0, "augmented"] = encode_tokens(["The", "River"])
    table.loc[1, "augmented"] = "A Cat Has To Sleep"
    table.to_parquet(cache)
    data = TrainingData(spec(lowercase=True), corpus, [cache])
    batch = data.batch([0, 1, 2], step=0)
    assert batch.positives == [encode_tokens(["The", "River"]), "a cat has to sleep", POSITIVES[2]]
    assert batch.anchors == ANCHORS[:3] and batch.originals == ANCHORS[:3]
    upper = TrainingData(spec(positive={"source": "dropout"}, lowercase=True), _upper_corpus(root), [])
    assert upper.batch([0], 0).positives == upper.batch([0], 0).anchors == [ANCHORS[0]]


def _upper_corpus(root):
    path = root / "upper.txt"
    path.write_text("\n".join(a.upper() for a in ANCHORS) + "\n")
    return str(path)
