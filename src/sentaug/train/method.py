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

A step has a host part and a device part (`sentaug.train.inputs`). `Method.prepare(batch, step)` turns the
batch's texts into ids (a `BatchTokenizer`: looked up in the run's token files where given, else tokenized;
the same ids either way) and makes every random draw of the step (retrieval draws, perturbation noise, MLM
masks) from a generator seeded by (seed, step), so a resumed run draws what an uninterrupted one would.
`Method.compute(inputs)` encodes every text the step needs in one forward pass (anchors, positives,
retrieved negatives, augmented views), then adds the weighted objectives to the contrastive term; it touches
only device tensors, so a CUDA graph can hold it (`sentaug.train.step`). `Method.loss(batch, step)` is the
two in one. The loss and its parts stay on the device: reading them (`.item()`) would make the host wait for
the step to finish, so the trainer does it only where it writes a log line.
"""
from __future__ import annotations

import torch
from torch import nn

from ..augment.token_sequences import TOKENS_PREFIX
from ..models.tokens import BatchTokenizer, mixed_ids
from ..objectives import InfoNCE, NTXent
from ..objectives.discriminator import AugmentationDiscriminator
from ..objectives.mlm import MaskedLM
from ..objectives.virtual_augmentation import VirtualAugmentation
from . import distributed
from .inputs import FixedShape, StepInputs
from .sources import Batch, TrainingData

OBJECTIVES = ("virtual_augmentation", "discriminator", "mlm")


def encode_mixed(tokenizer, texts: list[str], max_length: int, width: int | None = None):
    """Input ids and attention mask for texts some of which are token sequences (`mixed_ids`), padded to the
    longest (or to `width`)."""
    padding = {"padding": True} if width is None else {"padding": "max_length", "max_length": width}
    return dict(tokenizer.pad({"input_ids": mixed_ids(tokenizer, texts, max_length)}, return_tensors="pt",
                              **padding))


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

    def _tokenize(self, texts: list[str], width: int | None = None) -> dict[str, torch.Tensor]:
        """input_ids and attention_mask of `texts` on the host, padded to the longest (or to `width`)."""
        if any(t.startswith(TOKENS_PREFIX) for t in texts):     # token-level positives (CARDS Table 5)
            return encode_mixed(self.tokenizer, texts, self.spec["max_seq_length"], width)
        return self.batch_tokenizer.encode(texts, width)

    def loss(self, batch: Batch, step: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The loss to back-propagate for the global `batch` of this step, and its parts (detached, on the
        device; for the log): `compute` of what `prepare` makes."""
        return self.compute(self.prepare(batch, step).to(next(self.encoder.parameters()).device))

    def prepare(self, batch: Batch, step: int, shape: FixedShape | None = None) -> StepInputs:
        """The host's part of a step: token ids of every text the step encodes (anchors, positives, retrieved or
        batch negatives, augmented views), and every random draw, in a fixed order from one generator seeded by
        (seed, step): retrieved negatives, then each objective's (VaSCL's noise, MLM masks). `shape`: pad to
        fixed shapes (`FixedShape`)."""
        g = torch.Generator().manual_seed(self.spec["seed"] * 1_000_003 + step)
        width = shape.width if shape else None
        lookups = (self.batch_tokenizer.hits, self.batch_tokenizer.misses)
        mine = distributed.local_slice(batch.anchors, len(batch.anchors))
        tensors: dict[str, torch.Tensor] = {}
        if self.contrastive is None:
            self._draw_mlm(batch.originals[mine], g, shape, tensors)
            return self._inputs(tensors, (), lookups)
        anchors, positives = batch.anchors[mine], batch.positives[mine]
        b = len(anchors)
        texts = anchors + positives
        n_neg = 0
        if self.sampler is not None:    # one extra column per retrieved sentence, shared by the batch
            from ..index.sampling import same_id_mask

            negative_rows = self.sampler.sample(batch.lines, g)            # [B, s] for the global batch
            texts += self.sampler.sentences(negative_rows[mine])
            n_neg = negative_rows[mine].numel()
            tensors["negative_mask"] = same_id_mask(self.sampler.rows(batch.lines), negative_rows.reshape(-1))
        if self.batch_negatives:
            texts += batch.negatives[mine]
            n_neg = b
        if "discriminator" in self.objectives:
            texts += batch.augmented[mine]
            tensors["labels"] = torch.tensor(batch.labels[mine])
        tensors.update(self._tokenize(texts, width))
        for name, module in self.objectives.items():
            if name == "virtual_augmentation":
                tensors["noise"] = module.draw_noise((b, self.encoder.backbone.config.hidden_size), g)
            elif name == "mlm":
                self._draw_mlm(batch.originals[mine], g, shape, tensors)
        return self._inputs(tensors, (b, n_neg), lookups)

    def _inputs(self, tensors, layout, before) -> StepInputs:
        after = (self.batch_tokenizer.hits, self.batch_tokenizer.misses)
        return StepInputs(tensors, layout, (after[0] - before[0], after[1] - before[1]))

    def _draw_mlm(self, originals: list[str], g: torch.Generator, shape: FixedShape | None, tensors: dict) -> None:
        """The mlm objective's masked copies of the original sentences (masks drawn on the host, see `MaskedLM`)."""
        orig = self.batch_tokenizer.encode(originals, shape.width if shape else None)
        copies = self.objectives["mlm"].draw(orig["input_ids"], orig["attention_mask"], g,
                                             shape.mlm_positions if shape else None)
        for i, copy in enumerate(copies):
            tensors.update({f"mlm{i}_{k}": v for k, v in copy.items()})

    def _mlm_loss(self, tensors: dict) -> torch.Tensor:
        module = self.objectives["mlm"]
        copies = [{k: tensors[f"mlm{i}_{k}"] for k in ("input_ids", "attention_mask", "positions", "targets")}
                  for i in range(module.copies)]
        return module.loss(self.encoder.run_backbone, copies)

    def compute(self, x: StepInputs) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The device's part of a step, from `prepare`'s tensors (on the device) alone: the loss and its parts.

        Under data parallelism (`sentaug.train.distributed`) this rank encodes its slice; the contrastive
        loss is over the gathered global batch, the other objectives over this rank's slice, scaled by
        1/world so that summing the ranks' gradients gives their global mean."""
        size, _ = distributed.world()
        t = x.tensors
        if self.contrastive is None:    # the objectives alone (CLEAR's MLM-only baselines)
            value = self._mlm_loss(t)
            return self.weights["mlm"] / size * value, {"mlm": value.detach()}
        b, n_neg = x.layout
        e = self.encoder.represent(t["input_ids"], t["attention_mask"])
        z = self.encoder.project(e)
        z1, z2 = distributed.gather_with_grad(z[:b]), distributed.gather_with_grad(z[b:2 * b])
        if "negative_mask" in t:
            negatives = distributed.gather_with_grad(z[2 * b:2 * b + n_neg])
            total = self.contrastive(z1, z2, negatives, t["negative_mask"])
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
                value = module(e[:b], self.encoder.head or nn.Identity(), noise=t["noise"])
            elif name == "discriminator":
                value, accuracy = module.loss_and_accuracy(e[:b], e[2 * b + n_neg:], t["labels"])
                parts["discriminator_accuracy"] = accuracy.detach()   # logged like a loss part (AugCSE Fig. 5)
            else:
                value = self._mlm_loss(t)
            parts[name] = value.detach()
            total = total + self.weights[name] / size * value
        return total, parts
