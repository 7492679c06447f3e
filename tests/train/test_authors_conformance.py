"""Each method whose authors released training code, against figures that code computed (fixtures in
tests/train/authors_code/fixtures, written by scripts/authors_conformance.py from the authors' checkouts at pinned
commits): the same tiny model (2 layers, hidden 64, weights by name), the same batch, fp32, one thread; our
`Method`, built from config.yaml through `train_spec` and the registered parts, gives the same loss and every
parameter the same gradient within 1e-5 relative, with dropout 0 and (where the masks can be keyed to the rows)
with dropout on. The host-side draws (SimCSE's MLM masking, CARDS's sample from the top K1, VaSCL's probe start)
follow the authors' distributions: a chi-square test of homogeneity against their counts."""
import json
import os
import sys
from pathlib import Path

import pytest
import torch
import yaml

from sentaug import config as sc
from sentaug.models.encoder import SentenceEncoder
from sentaug.train.method import Method
from sentaug.train.sources import Batch
from sentaug.train.trainer import load_backbone

HERE = Path(__file__).resolve().parent / "authors_code"
sys.path.insert(0, str(HERE))
import common  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())
MODELS = Path(os.environ.get("SENTAUG_MODEL_MIRROR") or ROOT.parent / "shared" / "models")
TOLERANCE = 1e-5
# AugCSE with dropout 0: its two views are one vector, its contrastive loss ~1e-7, and fp32 rounding alone (our
# own step with eager vs SDPA attention) moves its gradients by 2.3e-5; with dropout on it meets TOLERANCE.
LOOSER = {"augcse_official_code": 5e-5}


def fixture(case: str) -> dict:
    return json.loads((HERE / "fixtures" / f"{case}.json").read_text())


def tokenizer_dir(name: str) -> str:
    path = MODELS / name
    if not path.is_dir():
        pytest.skip(f"needs the model mirror's {name} ($SENTAUG_MODEL_MIRROR or ../shared/models)")
    return str(path)


# -- our side ------------------------------------------------------------------------------------------------
def _rename_ours(name: str) -> str | None:
    """Our Method's parameter names -> the canonical names the fixtures use."""
    for prefix, to in (("encoder.backbone.", ""), ("encoder.head.", "head."),
                       ("objectives.mlm.lm_head.predictions.", "lm_head."),
                       ("objectives.discriminator.net.", "discriminator.")):
        if name.startswith(prefix):
            rest = name[len(prefix):]
            if to == "lm_head.":
                return "lm_head." + ("bias" if rest == "decoder.bias" else rest)
            if to == "discriminator.":            # net: dropout, linear, tanh, dropout, linear, tanh
                index, _, leaf = rest.partition(".")
                return f"discriminator.{ {'1': 0, '4': 1}[index]}.{leaf}"
            return to + rest
    return None


def build(tmp_path, method: str, tokenizer: str, dropout: bool, arch: str = "bert", **objective) -> Method:
    """Our Method for `method` as config.yaml declares it, on the tiny backbone with the canonical weights."""
    from transformers import (AutoTokenizer, BertConfig, BertForMaskedLM, BertModel, RobertaConfig,
                              RobertaModel)

    spec = sc.train_spec(CONFIG, None, "bert-base-uncased", method, seed=1, scale="demo")
    for o in spec["objectives"]:
        o.update(objective.get(o["name"], {}))
    tok = AutoTokenizer.from_pretrained(tokenizer)
    p = common.DROPOUT if dropout else 0.0
    if arch == "roberta":
        config = RobertaConfig(vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=0, eos_token_id=2,
                               type_vocab_size=1, hidden_dropout_prob=p, attention_probs_dropout_prob=p,
                               **{**common.TINY, "max_position_embeddings": common.TINY["max_position_embeddings"] + 2})
        model = RobertaModel(config)
    else:
        config = BertConfig(vocab_size=len(tok), hidden_dropout_prob=p, attention_probs_dropout_prob=p, **common.TINY)
        model = BertForMaskedLM(config) if any(o["name"] == "mlm" for o in spec["objectives"]) else BertModel(config)
    folder = tmp_path / "backbone"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    backbone, tok, lm_head = load_backbone(str(folder), spec, torch.device("cpu"))
    backbone.set_attn_implementation("eager")      # attention dropout through F.dropout (keyed masks)
    common.load(backbone, lambda n: n)
    if lm_head is not None:                       # the checkpoint's head; its decoder is the embeddings (tied)
        common.load(lm_head, lambda n: None if n.endswith("decoder.weight") else
                    "lm_head." + n.removeprefix("predictions.").replace("decoder.bias", "bias"))
    torch.manual_seed(0)
    encoder = SentenceEncoder(backbone, pooler=spec["pooler"], head=spec.get("head"),
                              head_only_train=spec["mlp_only_train"])
    method_ = Method(spec, encoder, tok, None, lm_head)
    common.load(method_, lambda n: _rename_ours(n) if n.startswith(("encoder.head.", "objectives.discriminator."))
                else None)
    return method_.train()


def step(method: Method, batch: Batch, expected: dict, keys, inject=None):
    """prepare -> (the reference's draws injected) -> compute -> backward: (loss, parts, fingerprints)."""
    inputs = method.prepare(batch, 0)
    assert inputs.tensors["input_ids"].shape[1] == expected["width"]      # padded as the reference was
    if inject:
        inject(inputs)
    keyed = common.KeyedDropout()
    keyed.watch(method.encoder.backbone.embeddings, "backbone", keys(inputs))
    if "discriminator" in method.objectives:
        keyed.watch(method.objectives["discriminator"].net, "discriminator",
                    [[f"d:{i}" for i in range(len(batch.anchors))]])
    with keyed.active():
        loss, parts = method.compute(inputs)
    loss.backward()
    names = {n: _rename_ours(n) for n, _ in method.named_parameters() if _rename_ours(n)}
    return loss.item(), parts, common.fingerprints(method, names)


def block_keys(inputs, views: dict[str, int]) -> list[list[str]]:
    """Row keys of our one forward: block name -> the view index the reference gives those rows."""
    keys = []
    for block, n in inputs.layout:
        keys += [f"s:{i}:{views[block]}" for i in range(n)]
    return [keys]


def assert_conforms(case: str, loss: float, grads: dict, exact_zero=()) -> dict:
    ref = fixture(case)
    differences = common.compare(grads, ref["grads"], exact_zero)
    worst = max(differences, key=differences.get)
    assert loss == pytest.approx(ref["loss"], rel=TOLERANCE, abs=1e-7), (case, loss, ref["loss"])
    assert differences[worst] <= LOOSER.get(case, TOLERANCE), (case, worst, differences[worst])
    assert sum(g is not None for g in ref["grads"].values()) >= 20        # the encoder's parameters are compared
    return differences


def texts(case: str) -> dict:
    return common.case_texts(case)


def plain_batch(anchors, positives=None, **more) -> Batch:
    return Batch(lines=list(range(len(anchors))), anchors=list(anchors), positives=list(positives or anchors),
                 originals=list(anchors), **more)


# -- SimCSE -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["simcse_unsup", "simcse_unsup_dropout"])
def test_unsupervised_simcse_equals_simcse_code(tmp_path, case):
    dropout = case.endswith("dropout")
    method = build(tmp_path, "simcse", tokenizer_dir("bert-base-uncased-tokenizer"), dropout)
    t = texts(case)
    loss, _, grads = step(method, plain_batch(t["anchors"]), fixture(case),
                          lambda x: block_keys(x, {"anchors": 0, "positives": 1}))
    assert_conforms(case, loss, grads)


def test_supervised_simcse_with_hard_negatives_equals_simcse_code(tmp_path):
    # SimCSE's supervised code trains its MLP head; `simcse_sup` as AugCSE's Tables 2 and 14 train it (AugCSE's
    # script, no projection layers) has none: the loss and every other part are the same, checked with the head
    method = build(tmp_path, "simcse_sup~head=mlp", tokenizer_dir("bert-base-uncased-tokenizer"), False)
    t = texts("simcse_sup")
    batch = plain_batch(t["anchors"], t["positives"], negatives=t["negatives"])
    loss, _, grads = step(method, batch, fixture("simcse_sup"),
                          lambda x: block_keys(x, {"anchors": 0, "positives": 1, "negatives": 2}))
    assert_conforms("simcse_sup", loss, grads)


def test_simcse_code_mlm_masks_both_views_with_a_head_of_its_own(tmp_path):
    """`simcse_mlm_simcse_code` against SimCSE --do_mlm, given SimCSE's masks; the fixture also records what
    loading showed: BertForCL.from_pretrained leaves lm_head random (the checkpoint names it cls.predictions),
    train.py then copies cls.predictions into it, untied from the embeddings."""
    ref = fixture("simcse_mlm")
    assert not ref["lm_head_loaded_by_from_pretrained"] and ref["lm_head_loaded_by_train_py"]
    assert not ref["lm_head_tied_to_embeddings"]
    method = build(tmp_path, "simcse_mlm_simcse_code", tokenizer_dir("bert-base-uncased-tokenizer"), False)
    head = method.objectives["mlm"].lm_head
    embeddings = method.encoder.backbone.embeddings.word_embeddings.weight
    assert head.predictions.decoder.weight is not embeddings
    assert torch.equal(head.predictions.decoder.weight, embeddings)
    masked, labels = torch.tensor(ref["mlm_input_ids"]), torch.tensor(ref["mlm_labels"])   # (B, 2, L)

    def inject(inputs):      # ours masks [anchors; positives], theirs (example, view) row-major
        ids = torch.cat([masked[:, 0], masked[:, 1]])
        flat = torch.cat([labels[:, 0], labels[:, 1]]).reshape(-1)
        positions = (flat != -100).nonzero().squeeze(1)
        assert inputs.tensors["mlm0_input_ids"].shape == ids.shape
        inputs.tensors.update(mlm0_input_ids=ids, mlm0_positions=positions, mlm0_targets=flat[positions])

    t = texts("simcse_mlm")
    loss, _, grads = step(method, plain_batch(t["anchors"]), ref,
                          lambda x: block_keys(x, {"anchors": 0, "positives": 1}) + [["unused"]], inject)
    assert_conforms("simcse_mlm", loss, grads)


def chi_square_p(a: list[int], b: list[int]) -> float:
    """p-value of the chi-square test that counts `a` and `b` come from one distribution (empty cells dropped)."""
    from scipy.stats import chi2_contingency

    table = [(x, y) for x, y in zip(a, b) if x + y > 0]
    return chi2_contingency(list(zip(*table)))[1]


def mlm_counts(ids: torch.Tensor, special: torch.Tensor, mask_id: int, draws: int, probability=0.15,
               vocab_size=30522) -> list[int]:
    from sentaug.objectives.mlm.module import mask_tokens

    g = torch.Generator().manual_seed(7)
    counts = [0, 0, 0, 0]
    for _ in range(draws):
        masked, labels = mask_tokens(ids, special, mask_id, vocab_size, probability, g)
        selected = labels != -100
        counts[0] += int((~special & ~selected).sum())
        counts[1] += int((selected & (masked == mask_id)).sum())
        counts[3] += int((selected & (masked == ids) & (ids != mask_id)).sum())
        counts[2] += int((selected & (masked != mask_id) & (masked != ids)).sum())
    return counts


def test_mlm_masking_draws_as_simcse_does():
    """Not selected / [MASK] / random / kept, over SimCSE's draws and ours: one distribution (15 %, 80/10/10);
    a wrong probability or split is told apart."""
    ref = fixture("draws_mlm")
    ids = torch.tensor([r + [0] * (ref["width"] - len(r)) for r in ref["batch"]["ids"]["anchors"]] * 2)
    special = torch.isin(ids, torch.tensor([0, 100, 101, 102, 103]))
    assert ref["special_selected"] == 0
    ours = mlm_counts(ids, special, 103, ref["draws"] // 4)
    assert chi_square_p(ours, ref["counts"]) > 1e-3
    assert chi_square_p(mlm_counts(ids, special, 103, ref["draws"] // 4, probability=0.17), ref["counts"]) < 1e-3


# -- CARDS ------------------------------------------------------------------------------------------------------
class _Sampled:
    """Stands in for the retrieval index's sampler: the rows CARDS's code drew, over the reference's corpus."""

    def __init__(self, corpus, sampled):
        self.corpus, self.sampled = corpus, torch.tensor(sampled).view(-1, 1)

    def sample(self, lines, generator):
        return self.sampled

    def rows(self, lines):
        return torch.as_tensor(lines)

    def sentences(self, rows):
        return [self.corpus[r] for r in torch.as_tensor(rows).reshape(-1).tolist()]


def test_cards_retrieved_negatives_and_switch_case_equal_cards_code(tmp_path, monkeypatch):
    from sentaug.parts.negatives import RetrievedNegatives

    ref = fixture("cards")
    t = texts("cards")
    lines = list(range(len(t["anchors"])))
    assert any(r in lines and r != i for i, r in enumerate(ref["sampled"]))    # a column masked for another anchor
    monkeypatch.setattr(RetrievedNegatives, "build",
                        lambda self, context: setattr(self, "sampler", _Sampled(t["corpus"], ref["sampled"])))
    method = build(tmp_path, "cards", tokenizer_dir("roberta-base-tokenizer"), False, arch="roberta")
    batch = plain_batch(t["anchors"], t["positives"])
    loss, _, grads = step(method, batch, ref, lambda x: block_keys(x, {"anchors": 0, "positives": 1,
                                                                     "negatives": 2}))
    assert_conforms("cards", loss, grads)


def test_cards_samples_uniformly_from_the_top_k_without_itself():
    """CARDS draws one of a line's K1 retrieved neighbours but itself (ranked first); ours draws uniformly from
    the index's k = K1 - 1 neighbours, self excluded: per rank, one distribution."""
    from sentaug.index.sampling import NegativeSampler, RetrievalIndex

    ref = fixture("draws_cards")
    k1, n = ref["k1"], 16
    assert ref["self_ranked_first"] and ref["counts_by_rank"][0] == 0
    g = torch.Generator().manual_seed(0)
    neighbours = torch.stack([torch.randperm(n, generator=g)[:k1] for _ in range(n)])
    neighbours = torch.stack([r[r != i][:k1 - 1] for i, r in enumerate(neighbours)]).numpy()
    index = RetrievalIndex(neighbours, neighbours * 0.0, torch.arange(n).numpy(), torch.arange(n).numpy(),
                           [str(i) for i in range(n)])

    def counts(k):
        sampler = NegativeSampler(index, s=1, k=k)
        gen, out = torch.Generator().manual_seed(1), [0] * k1
        for _ in range(ref["draws"] // n):
            drawn = sampler.sample(list(range(n)), gen).view(-1, 1)
            for rank in (torch.as_tensor(neighbours[:, :k]) == drawn).float().argmax(1).tolist():
                out[rank + 1] += 1                     # rank among CARDS's K1 (self first)
        return out

    assert chi_square_p(counts(k1 - 1), ref["counts_by_rank"]) > 1e-3
    assert chi_square_p(counts(k1 - 2), ref["counts_by_rank"]) < 1e-3     # one neighbour short: told apart


# -- VaSCL ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["vascl_official_code", "vascl_official_code_dropout"])
def test_vascl_official_code_equals_vascl_code(tmp_path, case):
    ref = fixture(case)
    method = build(tmp_path, "vascl_official_code", tokenizer_dir("bert-base-uncased-tokenizer"),
                   case.endswith("dropout"), virtual_augmentation={"neighbours": 3})

    def inject(inputs):
        inputs.tensors["noise"] = torch.tensor(ref["probe_start_direction"])

    t = texts(case)
    loss, parts, grads = step(method, plain_batch(t["anchors"]), ref,
                              lambda x: block_keys(x, {"anchors": 0, "positives": 1}), inject)
    assert parts["contrastive"].item() == pytest.approx(ref["nt_xent"], rel=TOLERANCE)
    assert parts["virtual_augmentation"].item() == pytest.approx(ref["virtual_augmentation"], rel=TOLERANCE)
    assert_conforms(case, loss, grads)
    assert all(ref["grads"][n] is None for n in ref["grads"] if n.startswith("head.") and n.endswith("bias"))


def test_vascl_probe_starts_where_vascl_code_starts():
    """The start's coordinates (x sqrt(d)) over VaSCL's draws and ours: the unit direction of U(-0.5, 0.5)^d, at
    norm Delta; the paper's Gaussian start is told apart."""
    from sentaug.objectives.virtual_augmentation.module import VirtualAugmentation

    ref = fixture("draws_vascl")
    dim, rows = ref["dim"], ref["draws"]

    def histogram(probe):
        va = VirtualAugmentation(delta=15.0, probe=probe, init_std=1.0)
        start = va.start(va.draw_noise((rows, dim), torch.Generator().manual_seed(3)))
        unit = start / start.norm(dim=1, keepdim=True)
        if probe == "released":
            assert torch.allclose(start.norm(dim=1), torch.full((rows,), 15.0))
        return torch.histc((unit * dim ** 0.5).clamp(-3.49, 3.49), bins=28, min=-3.5, max=3.5).long().tolist()

    assert chi_square_p(histogram("released"), ref["histogram"]) > 1e-3
    assert chi_square_p(histogram("gaussian"), ref["histogram"]) < 1e-3


# -- AugCSE -----------------------------------------------------------------------------------------------------
# The last layer's output LayerNorm bias shifts every [CLS] vector alike; the batch-normed projector removes the
# shift, so its exact gradient is 0.
BN_INVARIANT = ("encoder.layer.1.output.LayerNorm.bias",)


@pytest.mark.parametrize("case", ["augcse_official_code", "augcse_official_code_dropout"])
def test_augcse_official_code_equals_augcse_code(tmp_path, case):
    """With dropout 0 the two views are one vector (the contrastive loss ~0: the discriminator's step is what is
    compared); with dropout on (0.1 in the backbone, the discriminator's own 0.2), both terms."""
    ref = fixture(case)
    dropout = case.endswith("dropout")
    method = build(tmp_path, "augcse_official_code", tokenizer_dir("bert-base-uncased-tokenizer"), dropout,
                   discriminator={} if dropout else {"dropout": 0.0})
    t = texts("augcse_official_code")
    _, labels = common.augcse_labels()
    batch = plain_batch(t["anchors"], augmented=t["augmented"], labels=labels)
    loss, parts, grads = step(method, batch, ref,                       # theirs: [x, aug, x] per example
                              lambda x: block_keys(x, {"anchors": 0, "augmented": 1, "positives": 2}))
    assert parts["contrastive"].item() == pytest.approx(ref["contrastive_loss"], rel=TOLERANCE, abs=1e-6)
    assert parts["discriminator"].item() == pytest.approx(ref["discriminator_loss"], rel=TOLERANCE)
    assert_conforms(case, loss, grads, BN_INVARIANT)
