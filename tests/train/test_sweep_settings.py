"""The two trainer settings SDA Figure 2 sweeps: `positive.proportion` (the share of a batch's pairs whose positive
is the augmentation, the rest SimCSE's dropout positive) and `train.dropout` (the backbone's hidden and attention
dropout). Expectations: counts by hand, the cache's own texts, and SimCSE's run (a proportion of 0 is SimCSE)."""
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

import sentaug.config as sc
from sentaug.train.sources import TrainingData, augmented_pairs
from sentaug.train.trainer import load_backbone, train

from .test_train import ANCHORS, POSITIVES, setup, spec, write_backbone  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("proportion,expected", [(0.0, 0), (0.25, 8), (0.5, 16), (0.8, 26), (1.0, 32)])
def test_proportion_picks_exactly_round_p_times_b_pairs(proportion, expected):
    picked = augmented_pairs(32, proportion, seed=1, step=5)
    assert len(picked) == expected and picked <= set(range(32))    # 0.8 * 32 = 25.6 -> 26
    assert augmented_pairs(32, proportion, seed=1, step=5) == picked  # the same (seed, step), the same pairs


def test_proportion_draws_change_with_step_and_seed():
    draws = {frozenset(augmented_pairs(32, 0.5, seed, step)) for seed in (1, 2) for step in range(5)}
    assert len(draws) == 10


def test_batch_pairs_the_picked_examples_with_the_cache_and_the_rest_with_themselves(setup):
    _, corpus, cache = setup
    data = TrainingData(spec(positive={"source": "cache", "augmentation": "sda_pi", "proportion": 0.5}), corpus,
                        [cache])
    idx = [0, 1, 2, 3, 4, 5, 6, 7]
    batch = data.batch(idx, step=3)
    picked = augmented_pairs(8, 0.5, seed=3, step=3)
    assert batch.anchors == ANCHORS
    assert batch.positives == [POSITIVES[i] if i in picked else ANCHORS[i] for i in range(8)]
    assert sum(p != a for p, a in zip(batch.positives, batch.anchors)) == 4   # every cached positive differs here


@pytest.mark.parametrize("positive,message", [
    ({"source": "dropout", "proportion": 0.5}, "does not apply to source 'dropout'"),
    ({"source": "cache", "augmentation": "sda_pi", "proportion": 1.5}, r"must lie in \[0, 1\], got 1.5"),
])
def test_bad_proportions_are_named(setup, positive, message):
    _, corpus, cache = setup
    caches = [cache] if positive["source"] == "cache" else []
    with pytest.raises(ValueError, match=message):
        TrainingData(spec(positive=positive), corpus, caches)


def test_a_proportion_of_zero_trains_exactly_simcse(setup, minilm_path):
    """With no augmented pair every positive is the anchor itself: the run is SimCSE's, weight for weight."""
    root, corpus, cache = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.1)
    common = dict(max_steps=2, batch_size=4, eval_steps=2, pooler="cls")
    train(spec(**common, method="simcse", positive={"source": "dropout"}), corpus, None, backbone,
          str(root / "data"), str(root / "simcse"))
    train(spec(**common, positive={"source": "cache", "augmentation": "sda_pi", "proportion": 0.0}), corpus, cache,
          backbone, str(root / "data"), str(root / "p0"))
    train(spec(**common, positive={"source": "cache", "augmentation": "sda_pi", "proportion": 1.0}), corpus, cache,
          backbone, str(root / "data"), str(root / "p1"))
    a, b, c = (load_file(str(root / x / "model.safetensors")) for x in ("simcse", "p0", "p1"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)                # the augmented run differs


def _dropout_rates(model) -> set[float]:
    return {m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)}


def test_dropout_reaches_the_model_config_and_its_layers(tmp_path, minilm_path):
    backbone = write_backbone(tmp_path / "bb", minilm_path, dropout=0.1)
    model, _, _ = load_backbone(backbone, {}, "cpu")                  # unset: the backbone's own
    assert model.config.hidden_dropout_prob == 0.1 and model.config.attention_probs_dropout_prob == 0.1
    model, _, _ = load_backbone(backbone, {"dropout": 0.2}, "cpu")
    assert model.config.hidden_dropout_prob == 0.2 and model.config.attention_probs_dropout_prob == 0.2
    assert _dropout_rates(model) == {0.2}
    # a rate of 0 makes the two training-mode passes identical (SimCSE's positive pair collapses)
    model, tok, _ = load_backbone(backbone, {"dropout": 0.0}, "cpu")
    model.train()
    enc = tok(ANCHORS, padding=True, return_tensors="pt")
    with torch.no_grad():
        assert torch.equal(model(**enc).last_hidden_state, model(**enc).last_hidden_state)
    model, _, _ = load_backbone(backbone, {"dropout": 0.3}, "cpu")
    model.train()
    with torch.no_grad():
        assert not torch.equal(model(**enc).last_hidden_state, model(**enc).last_hidden_state)


def test_dropout_reaches_the_masked_lm_backbone_too(tmp_path, minilm_path):
    backbone = write_backbone(tmp_path / "bb", minilm_path, dropout=0.1)
    model, _, lm_head = load_backbone(backbone, {"dropout": 0.05, "objectives": [{"name": "mlm"}]}, "cpu")
    assert lm_head is not None and _dropout_rates(model) == {0.05}


def test_the_sweep_settings_resolve_as_method_variants(cfg):
    s = sc.train_spec(cfg, None, "roberta-base", "sda_pi~positive.proportion=0.5~train.dropout=0.2", 1,
                      scale="demo")
    assert s["positive"]["proportion"] == 0.5 and s["dropout"] == 0.2
    assert "dropout" not in sc.train_spec(cfg, None, "roberta-base", "sda_pi", 1, scale="demo")
    with pytest.raises(sc.ConfigError, match="positive.proportion: 2 is greater than the maximum of 1"):
        sc.method_config(cfg, "sda_pi~positive.proportion=2")
    with pytest.raises(sc.ConfigError, match="train.dropout: -0.1 is less than the minimum of 0"):
        sc.method_config(cfg, "simcse~train.dropout=-0.1")
