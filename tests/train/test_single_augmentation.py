"""AugCSE Figure 6's single-augmentation runs (appendix A.14): the augmentation as the positive (symmetric loss)
or as a cached hard negative, on the lines it changed only; first steps against hand-written losses."""
import json

import pandas as pd
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from sentaug import config as sc
from sentaug.train.sources import TrainingData
from sentaug.train.trainer import batch_order, train
from tests.train.test_methods_train import CONFIG, CORPUS, make_cache, setup, spec_for  # noqa: F401 (fixture)

TAU = 0.05


def _encode(backbone, texts):
    model, tok = AutoModel.from_pretrained(backbone), AutoTokenizer.from_pretrained(backbone)
    model.train()   # the backbone has no dropout: both passes are the same
    enc = tok(texts, padding=True, truncation=True, max_length=32, return_tensors="pt")
    return model(**enc).last_hidden_state[:, 0]


def _row_loss(anchor, columns, target):
    logits = torch.stack([torch.cosine_similarity(anchor, c, dim=0) / TAU for c in columns])
    return -torch.log_softmax(logits, 0)[target]


def _first_step(root, corpus, backbone, method, cache):
    spec = spec_for(method, max_steps=1, pooler="cls_before_pooler")
    spec.pop("head")                       # the [CLS] vector itself, so that the hand computation is short
    train(spec, corpus, [cache], backbone, str(root / "data"), str(root / method))
    return json.loads((root / method / "train_log.jsonl").read_text().splitlines()[0])["loss"]


def _changed_lines(cache):
    return [i for i, c in enumerate(pd.read_parquet(cache)["changed"]) if c]


def test_cached_negative_adds_one_column_per_example_on_the_changed_lines_only(setup):  # noqa: F811
    root, corpus, backbone = setup
    cache = make_cache(root / "neg.parquet", seed=5)
    lines = _changed_lines(cache)
    assert 0 < len(lines) < len(CORPUS)
    logged = _first_step(root, corpus, backbone, "augcse_single_negative", cache)

    augmented = pd.read_parquet(cache)["augmented"].tolist()
    rows = [lines[i] for i in batch_order(len(lines), 8, 3, 0)]
    anchors, negatives = [CORPUS[i] for i in rows], [augmented[i] for i in rows]
    z = _encode(backbone, anchors + anchors + negatives)
    z1, z2, zn = z[:8], z[8:16], z[16:]
    total = sum(_row_loss(z1[i], list(z2) + list(zn), i) for i in range(8)) / 8
    assert logged == pytest.approx(total.item(), rel=1e-4)


def test_augmentation_as_positive_is_symmetric_on_the_changed_lines_only(setup):  # noqa: F811
    root, corpus, backbone = setup
    cache = make_cache(root / "pos.parquet", seed=6)
    lines = _changed_lines(cache)
    logged = _first_step(root, corpus, backbone, "augcse_single_positive", cache)

    augmented = pd.read_parquet(cache)["augmented"].tolist()
    rows = [lines[i] for i in batch_order(len(lines), 8, 3, 0)]
    z = _encode(backbone, [CORPUS[i] for i in rows] + [augmented[i] for i in rows])
    z1, z2 = z[:8], z[8:]
    forward = sum(_row_loss(z1[i], list(z2), i) for i in range(8)) / 8
    backward = sum(_row_loss(z2[i], list(z1), i) for i in range(8)) / 8
    assert logged == pytest.approx(((forward + backward) / 2).item(), rel=1e-4)


def test_changed_only_and_cached_negatives_are_checked(setup):  # noqa: F811
    root, corpus, _ = setup
    cache = make_cache(root / "c.parquet", seed=7)
    spec = spec_for("augcse_single_negative")
    data = TrainingData(spec, corpus, [cache])
    assert data.lines == _changed_lines(cache)
    assert data.negatives == [pd.read_parquet(cache)["augmented"][i] for i in data.lines]
    spec["positive"]["changed_only"] = True           # the dropout source has no augmentation to check
    with pytest.raises(ValueError, match="changed_only needs positive source 'cache'"):
        TrainingData(spec, corpus, [cache])
    assert sc.method_caches(spec_for("augcse_single_negative")) == [("RandomSwap", 3)]

    # an augmentation that changed no line (SentenceReordering on one-sentence lines) leaves nothing to train on
    unchanged = make_cache(root / "u.parquet", seed=8, changed_every=1)
    assert _changed_lines(unchanged) == []
    for method in ("augcse_single_negative", "augcse_single_positive"):
        with pytest.raises(ValueError, match=rf"{method}' trains only on lines .*u\.parquet changed none of the "
                                             rf"{len(CORPUS)} lines"):
            TrainingData(spec_for(method), corpus, [unchanged])

    bad = {**CONFIG, "methods": {"x": {"positive": {"source": "dropout"},
                                       "negatives": {"source": "cache", "augmentation": "NoSuchAug"}}}}
    with pytest.raises(sc.ConfigError, match="'methods.x.negatives.augmentation': unknown augmentation 'NoSuchAug'"):
        sc.check_references(bad)
    variant = sc.method_config(CONFIG, "augcse_single_negative~negatives.augmentation=TenseTransformation")
    assert variant["negatives"] == {"source": "cache", "augmentation": "TenseTransformation"}
