"""Every method of config.yaml trains through the one trainer; CARDS's first step against a hand computation."""
import json
import random

import pandas as pd
import pytest
import torch
import yaml
from transformers import AutoModel, AutoTokenizer

from sentaug import config as sc
from sentaug.augment.cards import switch_case
from sentaug.train.trainer import batch_order, train
from tests.train.test_train import ANCHORS, POSITIVES, write_backbone

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())
CORPUS = [f"{a} and then some {i}" for i, a in enumerate(ANCHORS)] + [a.upper() for a in ANCHORS]


@pytest.fixture()
def setup(tmp_path, minilm_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS) + "\n")
    dev = tmp_path / "data/sts/STSBenchmark"
    dev.mkdir(parents=True)
    rows = [f"g\tf\t2020\t{i:04d}\t{(i * 7) % 6}.0\t{ANCHORS[i]}\t{POSITIVES[(i * 3) % 8]}" for i in range(8)]
    (dev / "sts-dev.csv").write_text("\n".join(rows) + "\n")
    return tmp_path, str(corpus), write_backbone(tmp_path / "bb", minilm_path, dropout=0.0)


def make_cache(path, seed: int, changed_every: int = 2):
    rng = random.Random(seed)
    augmented = [" ".join(rng.sample(t.split(), len(t.split()))) if i % changed_every else t
                 for i, t in enumerate(CORPUS)]
    pd.DataFrame({"original": CORPUS, "augmented": augmented, "changed": [a != o for a, o in zip(augmented, CORPUS)],
                  "flag": [""] * len(CORPUS)}).to_parquet(path)
    return str(path)


def spec_for(method: str, **train) -> dict:
    s = sc.train_spec(CONFIG, None, "bert-base-uncased", method, seed=3, scale="demo")
    s.update({"max_steps": 2, "batch_size": 8, "eval_steps": 1, "learning_rate": 1e-3,
              "head_learning_rate": s.get("head_learning_rate") and 1e-2}, **train)
    for o in s["objectives"]:
        if o["name"] == "virtual_augmentation":
            o["neighbours"] = 3
    if s["negatives"]["source"] == "retrieved":
        s["negatives"]["k"] = 4
    return s


def infonce_with_retrieved(backbone, idx, anchors, positives, sampler, rows) -> float:
    """A first step's loss by hand: InfoNCE (temperature 0.05) of the 8 anchors' CLS vectors against their
    positives and the retrieved negative column `rows`, each anchor's own sentence masked among the negatives."""
    model, tok = AutoModel.from_pretrained(backbone), AutoTokenizer.from_pretrained(backbone)
    enc = tok(anchors + positives + sampler.sentences(rows), padding=True, truncation=True, max_length=32,
              return_tensors="pt")
    model.train()
    cls = model(**enc).last_hidden_state[:, 0]
    z1, z2, zn = cls[:8], cls[8:16], cls[16:]
    anchor_rows = sampler.rows(idx)
    total = 0.0
    for i in range(8):
        logits = [torch.cosine_similarity(z1[i], z2[j], dim=0) / 0.05 for j in range(8)]
        logits += [torch.cosine_similarity(z1[i], zn[c], dim=0) / 0.05 for c in range(8)
                   if rows[c, 0] != anchor_rows[i]]          # the anchor's own sentence is masked
        total += -torch.log_softmax(torch.stack(logits), 0)[i]
    return (total / 8).item()


def test_cards_first_step_is_infonce_with_the_retrieved_negative_column(setup):
    from sentaug.index.neighbours import build_index
    from sentaug.index.sampling import NegativeSampler, load_index

    root, corpus, backbone = setup
    index = root / "index.npz"
    build_index(corpus, backbone, "cls_before_pooler", 4, index)
    spec = spec_for("cards", max_steps=1, pooler="cls_before_pooler", mlp_only_train=True)
    spec["positive"]["p"] = 0.5
    train(spec, corpus, None, backbone, str(root / "data"), str(root / "run"), index=str(index))
    logged = json.loads((root / "run/train_log.jsonl").read_text().splitlines()[0])

    idx = batch_order(len(CORPUS), 8, 3, 0)
    anchors = [CORPUS[i] for i in idx]
    positives = [switch_case(CORPUS[i], random.Random(f"3:0:{i}"), 0.5, "v1") for i in idx]
    assert positives != anchors
    sampler = NegativeSampler(load_index(index), mode="top_k_uniform", s=1, k=4)
    rows = sampler.sample(idx, torch.Generator().manual_seed(3 * 1_000_003))
    assert logged["loss"] == pytest.approx(infonce_with_retrieved(backbone, idx, anchors, positives, sampler, rows),
                                           rel=1e-4)


METHODS = ["vascl", "vascl_official_code", "augcse", "augcse_official_code", "augcse_bool", "augcse_positive",
           "augcse_no_discriminator", "augcse_single_positive", "augcse_single_negative", "simcse_mlm",
           "simcse_mlm_simcse_code", "clear_subs_del_word", "simcse_switch_case", "clear_double_mlm",
           "clear_double_batch"]


@pytest.mark.parametrize("method", METHODS)
def test_every_method_trains_and_logs_its_weighted_parts(setup, method):
    root, corpus, backbone = setup
    spec = spec_for(method)
    caches = [make_cache(root / f"{aug}_{seed}.parquet", seed) for aug, seed in sc.method_caches(spec)]
    summary = train(spec, corpus, caches, backbone, str(root / "data"), str(root / method))
    log = [json.loads(x) for x in (root / method / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [1, 2] and summary["steps"] == 2
    weights = {o["name"]: o.get("weight", 1.0) for o in spec["objectives"]}
    contrastive = spec.get("contrastive") != "none"      # CLEAR's MLM-only baselines have none
    logged_only = {"discriminator_accuracy"} if "discriminator" in weights else set()   # not in the loss
    for record in log:
        parts = record.get("parts", {"contrastive": record["loss"]})
        assert set(parts) == ({"contrastive", *weights} if contrastive else set(weights)) | logged_only
        total = parts.get("contrastive", 0.0) + sum(w * parts[name] for name, w in weights.items())
        assert record["loss"] == pytest.approx(total, rel=1e-5)
        if logged_only:   # the share of one batch of 8 that the discriminator gets right
            assert 0 <= parts["discriminator_accuracy"] <= 1
            assert parts["discriminator_accuracy"] * 8 == pytest.approx(round(parts["discriminator_accuracy"] * 8))
    if "discriminator" in weights:   # an untrained discriminator guesses: BCE near log 2 per class
        assert log[0]["parts"]["discriminator"] == pytest.approx(0.693, abs=0.15)
    if spec.get("add_tokens"):
        assert "[DEL]" in AutoTokenizer.from_pretrained(root / method).get_vocab()


def test_sda_positives_with_retrieved_negatives_first_step_by_hand(setup):
    """The leaderboard's composition sda_pi_retrieval: the cached augmentation as positive and CARDS's retrieved
    negative column, through the same trainer."""
    from sentaug.index.neighbours import build_index
    from sentaug.index.sampling import NegativeSampler, load_index

    root, corpus, backbone = setup
    index = root / "index.npz"
    build_index(corpus, backbone, "cls_before_pooler", 4, index)
    spec = spec_for("sda_pi_retrieval", max_steps=1, pooler="cls_before_pooler", mlp_only_train=True)
    assert sc.method_caches(spec) == [("sda_pi", 3)] and spec["negatives"]["source"] == "retrieved"
    cache = make_cache(root / "sda_pi.parquet", 7)
    train(spec, corpus, [cache], backbone, str(root / "data"), str(root / "run"), index=str(index))
    logged = json.loads((root / "run/train_log.jsonl").read_text().splitlines()[0])

    augmented = pd.read_parquet(cache)["augmented"].tolist()
    idx = batch_order(len(CORPUS), 8, 3, 0)
    anchors, positives = [CORPUS[i] for i in idx], [augmented[i] for i in idx]
    assert positives != anchors
    sampler = NegativeSampler(load_index(index), mode="top_k_uniform", s=1, k=4)
    rows = sampler.sample(idx, torch.Generator().manual_seed(3 * 1_000_003))
    assert logged["loss"] == pytest.approx(infonce_with_retrieved(backbone, idx, anchors, positives, sampler, rows),
                                           rel=1e-4)
