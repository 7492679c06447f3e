"""Data-parallel training over several processes (GPUs, or CPU processes with gloo), started by torchrun.

The global batch (`batch_size`) is split evenly over the ranks. The contrastive loss is computed over the
*global* batch on every rank: embeddings are all-gathered, this rank's slice kept in the graph (SimCSE's
trick), so each rank's backward yields the gradient through its own examples, and summing the ranks'
gradients (`reduce_gradients`, an all-reduce SUM) gives exactly the single-process gradient. Objectives
that are means over a rank's own examples (MLM, discriminator, virtual augmentation) are scaled by 1/world
before that sum, which makes them the global mean too; their randomness (masks, neighbourhoods within the
rank's slice) is per rank, so only the contrastive part is bit-for-bit the single-process one.
"""
from __future__ import annotations

import os

import torch
import torch.distributed as dist


def world() -> tuple[int, int]:
    """(world size, rank): (1, 0) unless started under torchrun (WORLD_SIZE > 1)."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def setup(device: torch.device | None = None) -> torch.device | None:
    """Join the process group torchrun describes (nccl on CUDA, else gloo); returns this rank's device."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or dist.is_initialized():
        return device
    cuda = torch.cuda.is_available() and (device is None or device.type == "cuda")
    dist.init_process_group("nccl" if cuda else "gloo")
    if cuda:
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        return torch.device("cuda", local)
    return torch.device("cpu")


def gather_with_grad(x: torch.Tensor) -> torch.Tensor:
    """All ranks' `x` concatenated in rank order; this rank's part is `x` itself (in the graph)."""
    size, rank = world()
    if size == 1:
        return x
    parts = [torch.empty_like(x) for _ in range(size)]
    dist.all_gather(parts, x.detach().contiguous())
    parts[rank] = x
    return torch.cat(parts)


def gather(x: torch.Tensor) -> torch.Tensor:
    """All ranks' `x` concatenated in rank order, without gradient."""
    size, _ = world()
    if size == 1:
        return x
    parts = [torch.empty_like(x) for _ in range(size)]
    dist.all_gather(parts, x.contiguous())
    return torch.cat(parts)


def reduce_gradients(module: torch.nn.Module) -> None:
    """Sum every parameter's gradient over the ranks (one flat all-reduce)."""
    size, _ = world()
    if size == 1:
        return
    grads = [p.grad for p in module.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def local_slice(items: list, batch_size: int) -> slice:
    """This rank's share of a global batch of `batch_size` items."""
    size, rank = world()
    if batch_size % size:
        raise ValueError(f"batch_size {batch_size} is not divisible by the {size} processes")
    per = batch_size // size
    return slice(rank * per, (rank + 1) * per)


def barrier() -> None:
    if world()[0] > 1:
        dist.barrier()
