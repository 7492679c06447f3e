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

from dataclasses import dataclass

import torch
from torch import nn

from ..models.token_sequences import TOKENS_PREFIX
from ..models import packing
from ..models.tokens import BatchTokenizer, mixed_ids
from ..parts import compose
from . import distributed
from .inputs import FixedShape, StepInputs
from .sources import Batch, TrainingData


def encode_mixed(tokenizer, texts: list[str], max_length: int, width: int | None = None):
    """Input ids and attention mask for texts some of which are token sequences (`mixed_ids`), padded to the
    longest (or to `width`)."""
    padding = {"padding": True} if width is None else {"padding": "max_length", "max_length": width}
    return dict(tokenizer.pad({"input_ids": mixed_ids(tokenizer, texts, max_length)}, return_tensors="pt",
                              **padding))


@dataclass
class BuildContext:
    """What a part's `build` may use."""
    spec: dict
    encoder: nn.Module
    tokenizer: object
    data: object
    lm_head: nn.Module | None
    index_path: str | None
    temperature: float
    hidden_size: int


class HostStep:
    """The host's part of one step as the parts see it in `prepare`: this rank's slice of the batch (`mine`,
    `size` examples), the step's `generator` (the only source of its random draws), the fixed `shape` (or None),
    the texts to encode in the step's forward pass, by block (`encode`), and its `tensors`."""

    def __init__(self, method: "Method", batch: Batch, generator: torch.Generator, shape: FixedShape | None):
        self.method, self.batch, self.generator, self.shape = method, batch, generator, shape
        self.mine = distributed.local_slice(batch.anchors, len(batch.anchors))
        self.size = len(batch.anchors[self.mine])
        self.hidden_size = method.encoder.backbone.config.hidden_size
        self.texts: list[str] = []
        self.layout: list[tuple[str, int]] = []
        self.tensors: dict[str, torch.Tensor] = {}

    def encode(self, block: str, texts: list[str]) -> None:
        """Encode `texts` in the step's forward pass, as the block `block` (`DeviceStep.blocks`)."""
        if any(name == block for name, _ in self.layout):
            raise ValueError(f"two parts of method '{self.method.spec['method']}' encode a block named {block!r}")
        self.layout.append((block, len(texts)))
        self.texts += texts

    def tokenize(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """Ids and attention mask of `texts` on their own (an MLM's sentences), padded as the step pads."""
        return self.method.batch_tokenizer.encode(texts, self.shape.width if self.shape else None)


class DeviceStep:
    """The device's part of one step as the parts see it in `compute`: the step's `tensors`, the representations
    `e` of every encoded text (before the head) and their projections `z`, `blocks` (name -> rows of e and z),
    `z1` and `z2` (the anchors' and positives' projections over the global batch, `gathered`), `encoder` and
    `world` (the number of processes). A negative source sets `negatives`: (extra columns, mask) for the
    contrastive loss."""

    def __init__(self, encoder, inputs: StepInputs):
        self.encoder, self.tensors, self.world = encoder, inputs.tensors, distributed.world()[0]
        self.blocks, start = {}, 0
        for name, n in inputs.layout:
            self.blocks[name], start = slice(start, start + n), start + n
        self.negatives = None
        if self.blocks:
            packed = {k: self.tensors[k] for k in packing.PACKED} if "pack_ids" in self.tensors else None
            self.e = encoder.represent(self.tensors.get("input_ids"), self.tensors["attention_mask"], packed=packed)
            self.z = encoder.project(self.e)
            self.z1, self.z2 = self.gathered("anchors"), self.gathered("positives")

    def gathered(self, block: str) -> torch.Tensor:
        """The projections of block `block` over the global batch: every process's rows in rank order, this
        process's own in the graph (`sentaug.train.distributed.gather_with_grad`)."""
        return distributed.gather_with_grad(self.z[self.blocks[block]])


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
        host = HostStep(self, batch, torch.Generator().manual_seed(self.spec["seed"] * 1_000_003 + step), shape)
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
        step = DeviceStep(self.encoder, x)
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
