"""What one training step reads, made on the host before the step runs.

A step is split in two: `Method.prepare` does the host's part (the batch's texts, their token ids, every random
draw: retrieved negatives, VaSCL's noise, MLM masks) and returns `StepInputs`; `Method.compute` does the
device's part on those tensors alone. Everything a step prepares is a function of (seed, step), so steps can be
prepared ahead, in other processes (`prepared_steps`), while the device runs the current one, and a resumed
run prepares what an uninterrupted one would.

`FixedShape` pads every text batch to one width (and the MLM positions to one count), so that every step has
the same tensor shapes: what a captured CUDA graph needs (`sentaug.train.step`). Without it batches are
padded to their longest text, as a CPU run always is.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch


class EpochOrder:
    """`order(step)`: the indices of the examples in batch `step` (0-based), one seeded permutation per epoch.

    The permutation is drawn when a step of a new epoch is first asked for and kept for the epoch's other steps:
    drawn per step, a permutation of 1M examples costs ~15 ms of host time at every step, more than the rest of a
    step's host work together. The indices are those `torch.randperm` gives for (seed, epoch), as they always
    were, so runs keep their batches bit for bit."""

    def __init__(self, n: int, batch_size: int, seed: int):
        self.n, self.batch_size, self.seed = n, batch_size, seed
        self.per_epoch = math.ceil(n / batch_size)
        self._epoch, self._perm = None, None

    def permutation(self, epoch: int) -> np.ndarray:
        if epoch != self._epoch:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._perm, self._epoch = torch.randperm(self.n, generator=g).numpy(), epoch
        return self._perm

    def __call__(self, step: int) -> list[int]:
        epoch, k = divmod(step, self.per_epoch)
        return self.permutation(epoch)[k * self.batch_size:(k + 1) * self.batch_size].tolist()


def batch_order(n: int, batch_size: int, seed: int, step: int) -> list[int]:
    """Indices of the examples in batch `step` (0-based) alone (`EpochOrder` keeps the epoch's permutation)."""
    return EpochOrder(n, batch_size, seed)(step)


@dataclass(frozen=True)
class FixedShape:
    """Every text batch padded to `width` tokens; MLM positions padded to `mlm_positions` (ignored targets); with
    `row`, the step's texts then packed into rows of that many tokens (`sentaug.models.packing`)."""
    width: int
    mlm_positions: int | None = None
    row: int | None = None


@dataclass
class StepInputs:
    """Host (or device) tensors of one step, and the plain numbers that fix how `compute` slices them.

    `layout`: (anchors in this rank's slice, extra negatives among the encoded texts). `lookups`: texts found in
    token files and texts tokenized now, for the run's summary. `full`: False for a batch with fewer examples
    than the batch size (the last of an epoch), whose shapes differ from every other step's."""
    tensors: dict[str, torch.Tensor]
    layout: tuple = ()
    lookups: tuple[int, int] = (0, 0)
    full: bool = True     # a whole batch (the last batch of an epoch may hold fewer examples)

    def signature(self) -> tuple:
        """What must match for a captured graph to run these inputs: layout, and every tensor's shape and dtype."""
        return (self.layout, tuple((k, tuple(v.shape), v.dtype) for k, v in sorted(self.tensors.items())))

    def to(self, device, non_blocking: bool = False, copy: bool = False) -> "StepInputs":
        """On `device`; `copy`: tensors of their own even where they are there already."""
        device = torch.device(device)
        if device.type == "cuda":   # from pinned memory, the host does not wait for the copy
            moved = {k: (v if v.is_pinned() else v.pin_memory()).to(device, non_blocking=True, copy=copy)
                     for k, v in self.tensors.items()}
        else:
            moved = {k: v.to(device, copy=copy) for k, v in self.tensors.items()}
        return StepInputs(moved, self.layout, self.lookups, self.full)

    def pin_memory(self) -> "StepInputs":
        """(DataLoader's pinning thread calls this.)"""
        return StepInputs({k: v.pin_memory() for k, v in self.tensors.items()}, self.layout,
                          self.lookups, self.full)

    def describe(self) -> str:
        """The batch's size in words, for messages (e.g. running out of memory)."""
        ids = next((self.tensors[k] for k in ("input_ids", "pack_index", "mlm0_input_ids") if k in self.tensors), None)
        if ids is None:
            return "an empty batch"
        rows = self.tensors.get("pack_ids")
        return f"{ids.shape[0]} texts x {ids.shape[1]} tokens" + (
            f", packed into {rows.shape[0]} rows of {rows.shape[1]}" if rows is not None else "")


class StepPreparer:
    """`preparer(step)`: the `StepInputs` of training step `step` (0-based) of a run."""

    def __init__(self, method, data, batch_size: int, seed: int, shape: FixedShape | None = None):
        self.method, self.data, self.batch_size, self.seed, self.shape = method, data, batch_size, seed, shape
        self.order = EpochOrder(len(data), batch_size, seed)

    def __call__(self, step: int) -> StepInputs:
        idx = self.order(step)
        inputs = self.method.prepare(self.data.batch(idx, step), step, self.shape)
        inputs.full = len(idx) == min(self.batch_size, len(self.data))
        return inputs


class _Steps(torch.utils.data.Dataset):
    def __init__(self, preparer: StepPreparer, steps: range):
        self.preparer, self.steps = preparer, steps

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, i: int) -> StepInputs:
        return self.preparer(self.steps[i])


def prepared_steps(preparer: StepPreparer, steps: range, workers: int = 0, pin: bool = False):
    """The inputs of `steps`, in order. With `workers`, made ahead by that many forked processes (the host's part
    of a step then overlaps the device's), pinned for asynchronous copies when `pin`; inline otherwise."""
    if workers <= 0:
        return (preparer(s) for s in steps)
    from torch.utils.data import DataLoader

    return iter(DataLoader(_Steps(preparer, steps), batch_size=None, shuffle=False, num_workers=workers,
                           pin_memory=pin, prefetch_factor=4, multiprocessing_context="fork"))
