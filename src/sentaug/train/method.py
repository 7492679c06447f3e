"""A method as a composition of registered parts: one encoder, a positive source, a negative source, a contrastive
loss and any number of objectives (`sentaug.parts`: what each is, and the settings of each).

Declared in config.yaml (`methods:`) and resolved into the training spec by `sentaug.config.train_spec`; beside the
parts a method may set `head` (mlp | two_layer | batchnorm | none; default: mlp with pooler cls, else none),
`augmented_view` (AugCSE's per-example augmented sentence), `labels`, `add_tokens` and `train`.

A step has a host part and a device part (`sentaug.train.inputs`). `Method.prepare(batch, step)` turns the
batch's texts into ids (a `BatchTokenizer`: looked up in the run's token files where given, else tokenized;
the same ids either way) and lets every part make its random draws (retrieval draws, perturbation noise, MLM
masks) from one generator seeded by (seed, step), so a resumed run draws what an uninterrupted one would.
`Method.compute(inputs)` encodes every text the step needs in one forward pass (anchors, positives, retrieved
negatives, augmented views), then adds each part's weighted loss; it touches only device tensors, so a CUDA graph
can hold it (`sentaug.train.step`). `Method.loss(batch, step)` is the two in one. The loss and its parts stay on
the device: reading them (`.item()`) would make the host wait for the step to finish, so the trainer does it
only where it writes a log line.
"""
from __future__ import annotations

import torch
from torch import nn

from ..models.token_sequences import TOKENS_PREFIX
from ..models import packing
from ..models.tokens import BatchTokenizer, mixed_ids
from ..parts import BuildContext, DeviceStep, HostStep, compose
from . import distributed
from .inputs import FixedShape, StepInputs
from .sources import Batch, TrainingData


def encode_mixed(tokenizer, texts: list[str], max_length: int, width: int | None = None):
    """Input ids and attention mask for texts some of which are token sequences (`mixed_ids`), padded to the
    longest (or to `width`)."""
    padding = {"padding": True} if width is None else {"padding": "max_length", "max_length": width}
    return dict(tokenizer.pad({"input_ids": mixed_ids(tokenizer, texts, max_length)}, return_tensors="pt",
                              **padding))


class Method(nn.Module):
    def __init__(self, spec: dict, encoder, tokenizer, data: TrainingData, lm_head: nn.Module | None = None,
                 index_path: str | None = None, token_tables=()):
        super().__init__()
        self.spec, self.encoder, self.tokenizer, self.data = spec, encoder, tokenizer, data
        self.batch_tokenizer = BatchTokenizer(tokenizer, spec["max_seq_length"], token_tables)
        composition = compose(spec)
        self.parts, self.views = composition.parts, composition.views
        context = BuildContext(spec, encoder, tokenizer, data, lm_head, index_path, spec["temperature"],
                               encoder.backbone.config.hidden_size)
        self.part_modules = nn.ModuleDict()  # the other parts' modules (the built-in ones hold no weights)
        self.objectives = nn.ModuleDict()    # by name: their parameters keep these names in checkpoints
        for part in self.parts:
            part.module = part.build(context)
            if isinstance(part.module, nn.Module):
                (self.objectives if part.kind == "objective" else self.part_modules)[part.log_key] = part.module

    def head_parameters(self) -> list[nn.Parameter]:
        """Everything trained besides the backbone (projection head, discriminator, LM head's own weights)."""
        backbone = {id(p) for p in self.encoder.backbone.parameters()}
        return [p for p in self.parameters() if id(p) not in backbone]

    def fixed_shape(self, batch_size: int, pack: bool = False) -> FixedShape:
        """Every step's shape on the graph path: texts padded to max_seq_length, and room for the positions a
        part's tensors need (an MLM's selection); `pack`: the texts then packed into rows, where the backbone
        takes them (`sentaug.models.packing`)."""
        width = self.spec["max_seq_length"]
        rooms = [r for part in self.parts if (r := part.positions_room(batch_size, width)) is not None]
        row = packing.ROW if pack and packing.packable(self.encoder.backbone) and width <= packing.ROW else None
        return FixedShape(width, max(rooms) if rooms else None, row)

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
        """The host's part of a step: token ids of every text the step encodes (anchors and positives, then each
        part's block: retrieved or batch negatives, augmented views), and every random draw, from one generator
        seeded by (seed, step), part after part (retrieved negatives, then each objective's: VaSCL's noise, MLM
        masks). `shape`: pad to fixed shapes (`FixedShape`)."""
        host = HostStep(self.spec["method"], batch, torch.Generator().manual_seed(self.spec["seed"] * 1_000_003 + step),
                        shape, distributed.local_slice(batch.anchors, len(batch.anchors)),
                        self.encoder.backbone.config.hidden_size, self.batch_tokenizer.encode)
        lookups = (self.batch_tokenizer.hits, self.batch_tokenizer.misses)
        if self.views:
            host.encode("anchors", batch.anchors[host.mine])
            host.encode("positives", batch.positives[host.mine])
        for part in self.parts:
            part.prepare(host)
        if host.texts:
            host.tensors.update(self._tokenize(host.texts, shape.width if shape else None))
            if shape is not None and shape.row:
                tensors = host.tensors
                tensors.update(packing.pack(tensors.pop("input_ids"), tensors["attention_mask"],
                                            self.tokenizer.pad_token_id, packing.first_position(
                                                self.encoder.backbone), shape.row))
        after = (self.batch_tokenizer.hits, self.batch_tokenizer.misses)
        return StepInputs(host.tensors, tuple(host.layout), (after[0] - lookups[0], after[1] - lookups[1]))

    def compute(self, x: StepInputs) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The device's part of a step, from `prepare`'s tensors (on the device) alone: the loss and its parts.

        Under data parallelism (`sentaug.train.distributed`) this rank encodes its slice; the contrastive
        loss is over the gathered global batch, the other objectives over this rank's slice, scaled by
        1/world so that summing the ranks' gradients gives their global mean."""
        step = DeviceStep(self.encoder, x.tensors, x.layout, distributed.world()[0], distributed.gather_with_grad)
        total, logged = None, {}
        for part in self.parts:
            value, named = part.compute(step)
            if value is None:
                continue
            if not isinstance(value, torch.Tensor) or value.dim() != 0 or not isinstance(named, dict):
                raise TypeError(f"{part.kind} '{part.name}' ({part.where}): compute returned {type(value).__name__} "
                                f"and {type(named).__name__}; it must return (a 0-dim loss tensor or None, a dict of "
                                f"named parts)")
            logged.update(named)
            logged[part.log_key] = value.detach()
            term = part.weighted(value, step.world)
            total = term if total is None else total + term
        return total, logged
