"""The trainer: one step against a hand-written SimCSE step, determinism, resume, output layout."""
import json

import pandas as pd
import pytest
import torch
import yaml
from safetensors.torch import load_file
from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel

from sentaug.train.trainer import batch_order, train

ANCHORS = ["the river flows north .", "a cat sleeps on the mat", "rain fell all night .", "he sold the old car",
           "two dogs play in the park", "the museum opened in 1901 .", "she plays the violin", "markets fell today"]
POSITIVES = ["the river , flows north !", "a cat has to sleep on the mat", "rain fell all night !",
             "he has to sell the old car", "two dogs play in the park !", "the museum , opened in 1901 .",
             "she can't help to play the violin", "markets fell today !"]


def write_backbone(path, minilm_path, dropout: float):
    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    BertModel(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture()
def setup(tmp_path, minilm_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(ANCHORS) + "\n\n")  # a trailing empty line is not trained on
    cache = tmp_path / "cache.parquet"
    pd.DataFrame({"original": ANCHORS + [""], "augmented": POSITIVES + [""], "changed": [True] * 8 + [False],
                  "flag": [""] * 8 + ["empty"]}).to_parquet(cache)
    dev = tmp_path / "data/sts/STSBenchmark"
    dev.mkdir(parents=True)
    rows = [f"g\tf\t2020\t{i:04d}\t{(i * 7) % 6}.0\t{ANCHORS[i]}\t{POSITIVES[(i * 3) % 8]}" for i in range(8)]
    (dev / "sts-dev.csv").write_text("\n".join(rows) + "\n")
    return tmp_path, str(corpus), str(cache)


def write_paired_dev(data):
    """STS-B dev under `data` pairing ANCHORS[i] with POSITIVES[i], gold i % 5 (the fault and distributed tests)."""
    dev = data / "sts" / "STSBenchmark"
    dev.mkdir(parents=True)
    (dev / "sts-dev.csv").write_text("".join(f"g\tf\t2020\t{i}\t{i % 5}.0\t{ANCHORS[i]}\t{POSITIVES[i]}\n"
                                             for i in range(8)))


def spec(**kw):
    base = {"scale": "test", "paper_backbone": "tiny", "backbone": "tiny", "method": "sda_pi",
            "positive": {"source": "cache", "augmentation": "sda_pi"}, "negatives": "in_batch", "objectives": [],
            "seed": 3, "corpus": "c", "temperature": 0.05, "max_seq_length": 32, "batch_size": 8,
            "learning_rate": 1e-3, "weight_decay": 0.0, "epochs": 1, "max_steps": 1, "eval_steps": 1,
            "save_steps": 100, "pooler": "cls_before_pooler", "mlp_only_train": True,
            "eval_pooler": "cls_before_pooler"}
    return {**base, **kw}


def hand_written_first_step(backbone):
    """(model, loss) of the first step of `spec()`'s run written out by hand: SimCSE's cl_forward (CosineSimilarity /
    temp, CE with labels i) on the cached pairs of the run's first batch."""
    model = AutoModel.from_pretrained(backbone)
    tok = AutoTokenizer.from_pretrained(backbone)
    idx = batch_order(8, 8, 3, 0)
    enc = tok([ANCHORS[i] for i in idx] + [POSITIVES[i] for i in idx], padding=True, truncation=True,
              max_length=32, return_tensors="pt")
    model.train()
    cls = model(**enc).last_hidden_state[:, 0]
    z1, z2 = cls[:8], cls[8:]
    sim = torch.nn.CosineSimilarity(dim=-1)(z1.unsqueeze(1), z2.unsqueeze(0)) / 0.05
    return model, torch.nn.CrossEntropyLoss()(sim, torch.arange(8))


def test_gradients_are_clipped_to_max_grad_norm_as_the_hf_trainer_clips(setup, minilm_path, monkeypatch):
    """max_grad_norm: every gradient scaled by max / (global norm + 1e-6) where the norm exceeds it (the HF Trainer's
    clip_grad_norm_), before the optimizer sees it: the clipped run's gradients are the unclipped run's times that
    factor, and the unclipped norm is the hand-written step's."""
    root, corpus, cache = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.0)
    seen: list[dict] = []
    step = torch.optim.AdamW.step

    def recording(optimizer, *a, **k):
        names = {id(p): n for n, p in built[-1].encoder.backbone.named_parameters()}
        seen.append({names[id(p)]: p.grad.clone() for g in optimizer.param_groups for p in g["params"]
                     if p.grad is not None and id(p) in names})
        return step(optimizer, *a, **k)

    from sentaug.train import trainer as trainer_module

    built, original = [], trainer_module.Method.__init__

    def keep(method, *a, **k):
        original(method, *a, **k)
        built.append(method)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording)
    monkeypatch.setattr(trainer_module.Method, "__init__", keep)
    for clip in (None, 1e-3):
        train(spec(max_grad_norm=clip), corpus, cache, backbone, str(root / "data"), str(root / f"run{clip}"))
    raw, clipped = seen

    def global_norm(grads):
        return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads.values()]))

    model, loss = hand_written_first_step(backbone)
    loss.backward()
    by_hand = global_norm({n: p.grad for n, p in model.named_parameters() if p.grad is not None})
    assert global_norm(raw) == pytest.approx(by_hand.item(), rel=1e-4) and by_hand > 1e-3   # so the clip acts
    scale = 1e-3 / (global_norm(raw) + 1e-6)
    assert set(clipped) == set(raw)
    for name, grad in raw.items():
        torch.testing.assert_close(clipped[name], grad * scale, rtol=1e-6, atol=0, msg=name)
    assert global_norm(clipped) == pytest.approx(1e-3, rel=1e-3)


def test_one_step_matches_a_hand_written_simcse_step(setup, minilm_path):
    root, corpus, cache = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.0)  # no dropout: both passes deterministic
    out = root / "run"
    train(spec(), corpus, cache, backbone, str(root / "data"), str(out))
    logged = json.loads((out / "train_log.jsonl").read_text().splitlines()[0])

    # Reference: SimCSE's cl_forward written out by hand (CosineSimilarity / temp, CE with labels i), AdamW.
    model, loss = hand_written_first_step(backbone)
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    assert logged["step"] == 1 and logged["loss"] == pytest.approx(loss.item(), rel=1e-5)
    loss.backward()
    grads = {n: p.grad.clone() if p.grad is not None else torch.zeros_like(p) for n, p in model.named_parameters()}
    torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0).step()
    trained = load_file(str(out / "model.safetensors"))
    expected = dict(model.named_parameters())
    for name, value in trained.items():
        if name.startswith("pooler."):  # the pooler is not trained with cls_before_pooler
            continue
        # Adam's first step is lr * g / (|g| + eps), about ±lr whatever |g|. In float32 the embeddings' gradients
        # carry rounding errors up to ~1e-6 (LayerNorm's backward cancels; our loss normalises then multiplies,
        # the reference divides by norms), so where |g| is below that its sign, and the step's, is rounding's:
        # on one CPU an element whose float64 gradient is -2e-9 stepped +lr here and -lr in the reference.
        # So: equal where the gradient is clear, and everywhere one step at most (a second step would show).
        clear = grads[name].abs() > 1e-5
        torch.testing.assert_close(value[clear], expected[name].detach()[clear], rtol=0, atol=1e-6, msg=name)
        assert (value - initial[name]).abs().max() <= 1e-3 + 1e-6, name  # lr, and float32 rounding of w + step


def test_same_seed_same_model_and_resume_gives_the_uninterrupted_result(setup, minilm_path):
    root, corpus, cache = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.1)  # dropout on: RNG state must resume
    s = spec(max_steps=4, batch_size=4, eval_steps=2, pooler="cls", method="simcse",
             positive={"source": "dropout"})
    train(s, corpus, None, backbone, str(root / "data"), str(root / "a"))
    train(s, corpus, None, backbone, str(root / "data"), str(root / "b"))
    assert train(s, corpus, None, backbone, str(root / "data"), str(root / "c"), stop_after=3) is None
    assert not (root / "c").exists() and (root / "c.partial/checkpoints/step00000003/state.pt").exists()
    train(s, corpus, None, backbone, str(root / "data"), str(root / "c"), resume=True)
    a, b, c = (load_file(str(root / x / "model.safetensors")) for x in "abc")
    for name in a:
        assert torch.equal(a[name], b[name]), name
        assert torch.equal(a[name], c[name]), name
    log_a = [json.loads(x) for x in (root / "a/train_log.jsonl").read_text().splitlines()]
    log_c = [json.loads(x) for x in (root / "c/train_log.jsonl").read_text().splitlines()]
    assert [r["loss"] for r in log_a] == [r["loss"] for r in log_c]
    other = spec(**{**s, "seed": 4})
    train(other, corpus, None, backbone, str(root / "data"), str(root / "d"))
    d = load_file(str(root / "d/model.safetensors"))
    assert not torch.equal(a["encoder.layer.0.attention.self.query.weight"],
                           d["encoder.layer.0.attention.self.query.weight"])


def test_output_is_a_sentence_transformers_model_with_the_best_checkpoint(setup, minilm_path):
    from sentence_transformers import SentenceTransformer

    from sentaug.models.encoder import embed, load_pretrained

    root, corpus, cache = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.1)
    out = root / "run"
    summary = train(spec(max_steps=4, batch_size=4, eval_steps=2, pooler="cls"), corpus, cache, backbone,
                    str(root / "data"), str(out))
    log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    dev_scores = {r["step"]: r["stsb_dev"] for r in log if "stsb_dev" in r}
    assert set(dev_scores) == {2, 4}
    assert summary["best_step"] == max(dev_scores, key=dev_scores.get)
    assert summary["best_stsb_dev"] == pytest.approx(max(dev_scores.values()))
    # its model card: what it is, its recipe and the score it was selected on, as the hub reads a README
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    assert front["library_name"] == "sentence-transformers" and "sentaug" in front["tags"]
    (selected,) = front["model-index"][0]["results"]
    assert selected["metrics"][0]["value"] == round(summary["best_stsb_dev"], 2)
    assert f"with the method `{summary['spec']['method']}`" in card and "## Recipe" in card and "## How to cite" in card
    st = SentenceTransformer(str(out), device="cpu")
    model, tok = load_pretrained(out, "cpu")
    ours = embed(model, tok, ANCHORS[:3], poolers=("cls_before_pooler",))["cls_before_pooler"]
    torch.testing.assert_close(torch.tensor(st.encode(ANCHORS[:3])), torch.tensor(ours), atol=1e-5, rtol=1e-4)
    assert not (root / "run.partial").exists()


def test_cached_positives_are_required_for_cache_methods(setup, minilm_path):
    root, corpus, _ = setup
    backbone = write_backbone(root / "bb", minilm_path, dropout=0.0)
    with pytest.raises(ValueError, match="needs --positives"):
        train(spec(), corpus, None, backbone, str(root / "data"), str(root / "run"))
