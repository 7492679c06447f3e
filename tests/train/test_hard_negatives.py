"""Hard negatives from the batch (AugCSE Tables 1, 2, 14): a cached augmentation as the anchor's own negative
(AugCSE eq. 1, unchanged lines removed) and supervised SimCSE on NLI triplets (every hard negative shared), the
first training step of each against a loop over the paper's equation; the specs and caches they resolve to."""
import json

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from sentaug import config as sc
from sentaug.data.nli import NLITriplet
from sentaug.data.triplets import write_triplets
from sentaug.train.sources import TrainingData, training_data
from sentaug.train.trainer import batch_order, train
from tests.train.test_methods_train import CONFIG, CORPUS, make_cache, setup, spec_for  # noqa: F401 (fixture)


def nll(pos, negs, tau):
    """-log e^{pos/tau} / (e^{pos/tau} + sum e^{neg/tau}), written out."""
    num = torch.exp(pos / tau)
    return -torch.log(num / (num + sum(torch.exp(n / tau) for n in negs)))


def encode(backbone, texts):
    """[CLS] vectors of `texts` in one padded forward pass in train mode, as the method encodes a step."""
    model, tok = AutoModel.from_pretrained(backbone), AutoTokenizer.from_pretrained(backbone)
    model.train()
    enc = tok(texts, padding=True, truncation=True, max_length=32, return_tensors="pt")
    return model(**enc).last_hidden_state[:, 0]


def first_loss(run) -> float:
    return json.loads((run / "train_log.jsonl").read_text().splitlines()[0])["loss"]


def test_cached_negatives_keep_the_changed_lines_only(setup):  # noqa: F811
    root, corpus, _ = setup
    spec = spec_for("simcse_aug_negative")
    cache = make_cache(root / "neg.parquet", seed=1, changed_every=2)      # odd lines changed
    data = TrainingData(spec, corpus, [cache])
    changed = [i for i in range(len(CORPUS)) if i % 2]
    assert data.lines == changed and data.originals == [CORPUS[i] for i in changed]
    import pandas as pd

    augmented = pd.read_parquet(cache)["augmented"].tolist()
    batch = data.batch([0, 2], step=0)
    assert batch.lines == [changed[0], changed[2]]
    assert batch.anchors == batch.positives == [CORPUS[changed[0]], CORPUS[changed[2]]]
    assert batch.negatives == [augmented[changed[0]], augmented[changed[2]]]
    spec["negatives"]["changed_only"] = False
    assert len(TrainingData(spec, corpus, [cache])) == len(CORPUS)
    with pytest.raises(ValueError, match="and negative source .cache. needs --positives with 1 cache file"):
        TrainingData(spec, corpus, [])


def test_cached_negative_step_is_augcse_equation_1(setup):  # noqa: F811
    """Eq. 1: -log e^{s(h_i, h_i+)} / (sum_j e^{s(h_i, h_j+)} + e^{s(h_i, h_i-)}): the anchor's own negative only."""
    root, corpus, backbone = setup
    spec = spec_for("simcse_aug_negative", max_steps=1, batch_size=4, pooler="cls_before_pooler")
    cache = make_cache(root / "neg.parquet", seed=1, changed_every=2)
    train(spec, corpus, [cache], backbone, str(root / "data"), str(root / "run"))
    lines = [i for i in range(len(CORPUS)) if i % 2]
    import pandas as pd

    augmented = pd.read_parquet(cache)["augmented"].tolist()
    idx = [lines[k] for k in batch_order(len(lines), 4, 3, 0)]
    anchors = [CORPUS[i] for i in idx]
    z = encode(backbone, anchors + anchors + [augmented[i] for i in idx])
    z1, z2, z3 = z[:4], z[4:8], z[8:]
    cos = torch.nn.functional.cosine_similarity
    expected = sum(nll(cos(z1[i], z2[i], dim=0), [cos(z1[i], z2[j], dim=0) for j in range(4) if j != i]
                       + [cos(z1[i], z3[i], dim=0)], 0.05) for i in range(4)) / 4
    assert first_loss(root / "run") == pytest.approx(expected.item(), rel=1e-4)


TRIPLETS = [NLITriplet(f"premise number {i} is here", f"it entails {i}", f"it contradicts {i} not")
            for i in range(6)]


def test_supervised_simcse_step_shares_every_contradiction(setup):  # noqa: F811
    """SimCSE's supervised loss: -log e^{s(h_i, h_i+)} / sum_j (e^{s(h_i, h_j+)} + e^{s(h_i, h_j-)})."""
    root, _, backbone = setup
    triplets = root / "triplets.csv"
    write_triplets(triplets, TRIPLETS)
    spec = spec_for("simcse_sup", max_steps=1, batch_size=4, pooler="cls_before_pooler")
    assert spec["positive"]["triplets"] == "snli" and sc.method_caches(spec) == []
    train(spec, str(triplets), None, backbone, str(root / "data"), str(root / "run"))
    idx = batch_order(len(TRIPLETS), 4, 3, 0)
    t = [TRIPLETS[i] for i in idx]
    z = encode(backbone, [x.anchor for x in t] + [x.positive for x in t] + [x.negative for x in t])
    z1, z2, z3 = z[:4], z[4:8], z[8:]
    cos = torch.nn.functional.cosine_similarity
    expected = sum(nll(cos(z1[i], z2[i], dim=0), [cos(z1[i], z2[j], dim=0) for j in range(4) if j != i]
                       + [cos(z1[i], z3[j], dim=0) for j in range(4)], 0.05) for i in range(4)) / 4
    assert first_loss(root / "run") == pytest.approx(expected.item(), rel=1e-4)


@pytest.mark.parametrize("variant,positive,negative", [
    ("simcse_sup", "positive", "negative"),
    ("simcse_sup~negatives=in_batch", "positive", None),
    ("simcse_sup~positive.use=contradiction~negatives=in_batch", "negative", None),
    ("simcse_sup~positive.use=contradiction~negatives.use=entailment", "negative", "positive")])
def test_nli_source_picks_the_hypotheses_each_table_row_names(tmp_path, variant, positive, negative):
    triplets = tmp_path / "t.csv"
    write_triplets(triplets, TRIPLETS)
    data = training_data(sc.train_spec(CONFIG, None, "bert-base-uncased", variant, 1, scale="demo"), triplets)
    batch = data.batch([4, 1], step=0)
    assert batch.anchors == batch.originals == [TRIPLETS[4].anchor, TRIPLETS[1].anchor]
    assert batch.positives == [getattr(TRIPLETS[i], positive) for i in (4, 1)]
    assert batch.negatives == ([getattr(TRIPLETS[i], negative) for i in (4, 1)] if negative else [])


def test_nli_methods_resolve_their_triplet_files_per_scale():
    spec = lambda m, scale: sc.train_spec(CONFIG, None, "bert-base-uncased", m, 1, scale=scale)  # noqa: E731
    assert spec("simcse_sup", "small")["corpus"] == "snli"
    assert spec("simcse_sup", "paper")["positive"]["triplets"] == "nli_for_simcse"
    assert spec("simcse_sup~positive.data=anli", "paper")["corpus"] == "anli_train"
    assert spec("simcse_sup~positive.sample_as=anli", "demo")["corpus"] == "snli.as_anli_devtest"
    from sentaug.workflow import Workflow

    wf = Workflow({**CONFIG, "scale": "demo"}, papers={})
    s = spec("simcse_sup~positive.sample_as=anli", "demo")
    assert wf.paths.train_corpus(s) == "results/nli/demo/snli.as_anli_devtest.csv"
    assert wf.paths.triplets_inputs("snli.as_anli_devtest") == ["results/data/demo/nli/anli",
                                                          "results/data/demo/nli/snli_senteval"]


def test_cached_negative_variants_read_their_augmentation_cache():
    s = sc.train_spec(CONFIG, None, "bert-base-uncased",
                      "simcse_aug_negative~negatives.augmentation=AntonymSubstitute", 2, scale="demo")
    assert sc.method_caches(s) == [("AntonymSubstitute", 2)]
    assert s["negatives"]["settings"] == {"op": "AntonymSubstitute"} and not s["negatives"]["shared"]
    with pytest.raises(sc.ConfigError, match="negatives.augmentation': unknown augmentation 'Nope'"):
        sc.method_config(CONFIG, "simcse_aug_negative~negatives.augmentation=Nope")


def test_a_papers_recipe_sets_a_methods_objectives_at_paper_scale():
    """AugCSE Table 10: lambda 5e-3 for BERT-base, 1e-4 for RoBERTa-base (papers/augcse.yaml's recipe)."""
    paper = sc.load_paper({**CONFIG, "papers_dir": str(__import__("pathlib").Path(__file__).parents[2] / "papers")},
                          "augcse")
    def weight(backbone, scale):
        return sc.train_spec(CONFIG, paper, backbone, "augcse", 42, scale=scale)["objectives"][0]["weight"]

    assert (weight("bert-base-uncased", "paper"), weight("roberta-base", "paper")) == (5e-3, 1e-4)
    assert weight("roberta-base", "demo") == 5e-3          # below paper scale no recipe applies
