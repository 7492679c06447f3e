"""A method as a composition: one encoder, one contrastive loss, a negative source and extra objectives.

Declared in config.yaml (`methods:`) and resolved into the training spec by `sentaug.config.train_spec`:

    positive:      {source: dropout | cache | switch_case | two_views | augmented_view, ...,
                    proportion: share of a batch's pairs using this positive, the rest the dropout one}
    negatives:     {source: in_batch} | {source: retrieved, mode: top_k_uniform | r_top | d_uniform, k, s}
                   | {source: cache, augmentation, only_changed, shared} | {source: nli, use, shared}
    contrastive:   {name: infonce | nt_xent | none, symmetric: false}   (none: the mlm objective alone)
    head:          mlp | two_layer | batchnorm | none        (default: mlp with pooler cls, else none)
    augmented_view: [augmentation, ...]                     (AugCSE's per-example augmented sentence)
    objectives:    [{name: virtual_augmentation | discriminator | mlm, weight: w, ...parameters}]

`Method.loss(batch, step)` encodes every text a step needs in one forward pass (anchors, positives,
retrieved negatives, augmented views), then adds the weighted objectives to the contrastive term. Texts are
turned into ids by a `BatchTokenizer`: looked up in the run's token files where given, else tokenized per
batch (the same ids either way). The loss and its parts stay on the device: reading them (`.item()`) would
make the host wait for the step to finish, so the trainer does it only where it writes a log line.
Randomness inside a step (retrieval draws, perturbation noise, MLM masks) comes from a generator seeded by
(seed, step), so a resumed run draws what an uninterrupted one would.
"""
from __future__ import annotations

import torch
from torch import nn

from ..augment.token_sequences import TOKENS_PREFIX
from ..models.tokens import BatchTokenizer, mixed_ids, to_device
from ..objectives import InfoNCE, NTXent
from ..objectives.discriminator import AugmentationDiscriminator
from ..objectives.mlm import MaskedLM
from ..objectives.virtual_augmentation import VirtualAugmentation
from . import distributed
from .sources import Batch, TrainingData

OBJECTIVES = ("virtual_augmentation", "discriminator", "mlm")


def encode_mixed(tokenizer, texts: list[str], max_length: int):
    """Input ids and attention mask for texts some of which are token sequences (`mixed_ids`), padded."""
    return tokenizer.pad({"input_ids": mixed_ids(tokenizer, texts, max_length)}, padding=True, return_tensors="pt")


def as_source(value) -> dict:
    """`in_batch` or `{source: in_batch}` -> the dict form."""
    return {"source": value} if isinstance(value, str) else dict(value)


def needs_mlm(spec: dict) -> bool:
    return any(o["name"] == "mlm" for o in spec.get("objectives", []))


class Method(nn.Module):
    def __init__(self, spec: dict, encoder, tokenizer, data: TrainingData, lm_head: nn.Module | None = None,
                 index_path: str | None = None, token_tables=()):
        super().__init__()
        self.spec, self.encoder, self.tokenizer, self.data = spec, encoder, tokenizer, data
        self.batch_tokenizer = BatchTokenizer(tokenizer, spec["max_seq_length"], token_tables)
        tau = spec["temperature"]
        contrastive = spec.get("contrastive") or "infonce"
        contrastive = {"name": contrastive} if isinstance(contrastive, str) else dict(contrastive)
        if contrastive["name"] == "none":   # the objectives alone (CLEAR's MLM-only baselines)
            self.contrastive = None
            if any(o["name"] != "mlm" for o in spec.get("objectives", [])) or not needs_mlm(spec):
                raise ValueError(f"method '{spec['method']}': contrastive none needs the mlm objective, alone")
        elif contrastive["name"] == "nt_xent":
            self.contrastive = NTXent(tau)
        elif contrastive["name"] == "infonce":
            self.contrastive = InfoNCE(tau, symmetric=contrastive.get("symmetric", False))
        else:
            raise ValueError(f"method '{spec['method']}': unknown contrastive loss '{contrastive['name']}'")
        negatives = as_source(spec.get("negatives", "in_batch"))
        self.sampler = self._sampler(negatives, index_path)
        # cache / nli: one hard negative per example, from the batch; every anchor sees all of them (SimCSE's
        # supervised loss) or, with shared: false, its own only (AugCSE eq. 1)
        self.batch_negatives = negatives["source"] in ("cache", "nli")
        self.shared_negatives = bool(negatives.get("shared", True))
        if (self.sampler is not None or self.batch_negatives) and contrastive["name"] != "infonce":
            raise ValueError(f"method '{spec['method']}': {negatives['source']} negatives need the infonce loss")
        self.weights: dict[str, float] = {}
        self.objectives = nn.ModuleDict()
        hidden = encoder.backbone.config.hidden_size
        for o in spec.get("objectives", []):
            o = dict(o)
            name, weight = o.pop("name"), float(o.pop("weight", 1.0))
            if name == "virtual_augmentation":
                module = VirtualAugmentation(temperature=tau, **o)
            elif name == "discriminator":
                if not data.augmented:
                    raise ValueError(f"method '{spec['method']}': the discriminator needs augmented_view")
                module = AugmentationDiscriminator(hidden, data.n_classes, **o)
            elif name == "mlm":
                if lm_head is None:
                    raise ValueError("the mlm objective needs the backbone's masked-LM head")
                module = MaskedLM(lm_head, tokenizer, **o)
            else:
                raise ValueError(f"method '{spec['method']}': unknown objective '{name}' "
                                 f"(choose from {', '.join(OBJECTIVES)})")
            self.objectives[name], self.weights[name] = module, weight

    def _sampler(self, negatives: dict, index_path: str | None):
        if negatives["source"] in ("in_batch", "cache", "nli"):
            return None
        if negatives["source"] != "retrieved":
            raise ValueError(f"method '{self.spec['method']}': unknown negative source '{negatives['source']}'")
        from ..index.sampling import NegativeSampler, check_corpus, load_index

        if not index_path:
            raise ValueError(f"method '{self.spec['method']}': retrieved negatives need --index FILE.npz")
        index = load_index(index_path)
        check_corpus(index, self.data.corpus)  # anchors are looked up by line: it must be the same file
        return NegativeSampler(index, mode=negatives.get("mode", "top_k_uniform"), s=negatives.get("s", 1),
                               k=negatives.get("k"))

    def head_parameters(self) -> list[nn.Parameter]:
        """Everything trained besides the backbone (projection head, discriminator, LM head's own weights)."""
        backbone = {id(p) for p in self.encoder.backbone.parameters()}
        return [p for p in self.parameters() if id(p) not in backbone]

    def _tokenize(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """input_ids and attention_mask of `texts`, padded to the longest, on the model's device."""
        dev = next(self.encoder.parameters()).device
        if any(t.startswith(TOKENS_PREFIX) for t in texts):     # token-level positives (CARDS Table 5)
            return encode_mixed(self.tokenizer, texts, self.spec["max_seq_length"]).to(dev)
        return to_device(self.batch_tokenizer.encode(texts), dev)

    def loss(self, batch: Batch, step: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The loss to back-propagate for the global `batch` of this step, and its parts (detached, on the
        device; for the log).

        Under data parallelism (`sentaug.train.distributed`) this rank encodes its slice; the contrastive
        loss is over the gathered global batch, the other objectives over this rank's slice, scaled by
        1/world so that summing the ranks' gradients gives their global mean."""
        g = torch.Generator().manual_seed(self.spec["seed"] * 1_000_003 + step)
        size, _ = distributed.world()
        mine = distributed.local_slice(batch.anchors, len(batch.anchors))
        if self.contrastive is None:
            return self._objectives_only(batch.originals[mine], g, size)
        anchors, positives = batch.anchors[mine], batch.positives[mine]
        b = len(anchors)
        texts = anchors + positives
        negative_rows = None
        if self.sampler is not None:
            negative_rows = self.sampler.sample(batch.lines, g)            # [B, s] for the global batch
            texts += self.sampler.sentences(negative_rows[mine])
        n_neg = 0 if negative_rows is None else negative_rows[mine].numel()
        if self.batch_negatives:
            texts += batch.negatives[mine]
            n_neg = b
        if "discriminator" in self.objectives:
            texts += batch.augmented[mine]
        enc = self._tokenize(texts)
        e = self.encoder.represent(enc["input_ids"], enc["attention_mask"])
        z = self.encoder.project(e)
        z1, z2 = distributed.gather_with_grad(z[:b]), distributed.gather_with_grad(z[b:2 * b])
        if negative_rows is not None:   # one extra column per retrieved sentence, shared by the batch
            from ..index.sampling import same_id_mask

            negatives = distributed.gather_with_grad(z[2 * b:2 * b + n_neg])
            mask = same_id_mask(self.sampler.rows(batch.lines), negative_rows.reshape(-1)).to(z.device)
            total = self.contrastive(z1, z2, negatives, mask)
        elif self.batch_negatives:
            negatives = distributed.gather_with_grad(z[2 * b:3 * b])
            own_only = None if self.shared_negatives else \
                ~torch.eye(len(z1), dtype=torch.bool, device=z.device)   # True = column dropped
            total = self.contrastive(z1, z2, negatives, own_only)
        else:
            total = self.contrastive(z1, z2)
        parts = {"contrastive": total.detach()}
        for name, module in self.objectives.items():
            if name == "virtual_augmentation":
                value = module(e[:b], self.encoder.head or nn.Identity(), g)
            elif name == "discriminator":
                labels = torch.tensor(batch.labels[mine], device=z.device)
                value, accuracy = module.loss_and_accuracy(e[:b], e[2 * b + n_neg:], labels)
                parts["discriminator_accuracy"] = accuracy.detach()   # logged like a loss part (AugCSE Fig. 5)
            else:
                value = self._masked_lm(batch.originals[mine], g)
            parts[name] = value.detach()
            total = total + self.weights[name] / size * value
        return total, parts

    def _masked_lm(self, originals: list[str], g: torch.Generator) -> torch.Tensor:
        """The mlm objective, on masked copies of the original sentences (ids on the host: the masks are
        drawn there, see `MaskedLM`)."""
        orig = self.batch_tokenizer.encode(originals)
        return self.objectives["mlm"](self.encoder.backbone, orig["input_ids"], orig["attention_mask"], g)

    def _objectives_only(self, originals: list[str], g: torch.Generator, size: int):
        value = self._masked_lm(originals, g)
        return self.weights["mlm"] / size * value, {"mlm": value.detach()}
