"""Texts packed into rows, so that a step's matrix work is spent on real tokens, not on padding.

A training step pads every text to `max_seq_length` (32) so that a CUDA graph sees one shape; wiki1m's lines
average 21.9 tokens, so about a third of the work was padding. Packed, each row holds several texts one after
the other: every text attends only to itself (a block-diagonal mask), its positions restart at its first
token, and the encoder's outputs are gathered back into the padded [texts, width] layout, where the poolers,
heads and losses find them as before. For one text nothing changes but the arithmetic's order: in float32 with
dropout off, the packed [CLS] vectors equal the padded ones (tests/models/test_packing.py), and on an H200 a
BERT-base step at batch 64 went from 12.84 to 10.45 ms, at batch 512 from 68.9 to 46.4 ms
(benchmarks/results/h200-2026-11-28-floor).

The rows of a batch vary with its lengths, so a captured step needs a few shapes: the row count is rounded up to
a multiple of `row_quantum` (about 4 % of the padded rows), one CUDA graph each (`sentaug.train.step`).
"""
from __future__ import annotations

import math

import torch

ROW = 128            # tokens per row: 4 texts of 32 always fit; rows of 64 measured within 1 % of it
PACKED = ("pack_ids", "pack_positions", "pack_segments", "pack_index")


def packable(backbone) -> bool:
    """Whether the backbone takes packed rows: absolute position embeddings that position ids can restart
    (BERT, RoBERTa and their kin)."""
    embeddings = getattr(backbone, "embeddings", None)
    return isinstance(getattr(embeddings, "position_embeddings", None), torch.nn.Embedding)


def first_position(backbone) -> int:
    """The position id of a text's first token: RoBERTa counts from its padding index + 1, BERT from 0."""
    padding = backbone.embeddings.position_embeddings.padding_idx
    return 0 if padding is None else padding + 1


def row_quantum(texts: int, width: int, row: int = ROW) -> int:
    """Row counts are rounded up to a multiple of this: about 4 % of the rows the padded texts would fill."""
    return max(1, math.ceil(math.ceil(texts * width / row) / 25))


def assign_rows(lengths: list[int], row: int) -> list[tuple[int, int]]:
    """Best-fit decreasing: (row, offset) of each text in rows of `row` tokens, the longest texts placed first,
    each into the fullest row that still has room (among rows of equal room, the first opened), after the texts
    placed there before it."""
    from collections import deque

    place: list[tuple[int, int]] = [(0, 0)] * len(lengths)
    filled: list[int] = []                        # tokens used in each row
    by_room: dict[int, deque] = {}                # free tokens -> rows with that much room, oldest first
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        n = lengths[i]
        room = next((r for r in range(n, row + 1) if by_room.get(r)), None)
        if room is None:
            filled.append(0)
            at, room = len(filled) - 1, row
        else:
            at = by_room[room].popleft()
        place[i] = (at, filled[at])
        filled[at] += n
        by_room.setdefault(room - n, deque()).append(at)
    return place


def pack(input_ids: torch.Tensor, attention_mask: torch.Tensor, pad_id: int, first: int, row: int = ROW,
         quantum: int | None = None) -> dict[str, torch.Tensor]:
    """Host tensors of the texts of a padded batch ([N, T], right-padded) packed into rows of `row` tokens:
    `pack_ids`, `pack_positions` [R, row] (ids, position ids restarting at `first` for each text),
    `pack_segments` [R, row] (the text each position belongs to; -1 for padding, one block of its own in each
    row) and `pack_index` [N, T] (where each position of each text sits in the flattened rows; a text's padding
    positions point at its first token, and are masked out by `attention_mask` wherever they are pooled).
    R is the rows needed rounded up to a multiple of `quantum` (default `row_quantum`)."""
    n, width = input_ids.shape
    if width > row:
        raise ValueError(f"texts of {width} tokens do not fit rows of {row}")
    lengths = attention_mask.sum(1)
    place = torch.tensor(assign_rows(lengths.tolist(), row), dtype=torch.long).reshape(n, 2)
    needed = int(place[:, 0].max()) + 1 if n else 1
    quantum = quantum or row_quantum(n, width, row)
    count = math.ceil(needed / quantum) * quantum
    t = torch.arange(width)
    real = t[None, :] < lengths[:, None]
    start = place[:, 0] * row + place[:, 1]
    index = torch.where(real, start[:, None] + t[None, :], start[:, None])
    ids = torch.full((count * row,), pad_id, dtype=input_ids.dtype)
    positions = torch.full((count * row,), first, dtype=torch.long)
    segments = torch.full((count * row,), -1, dtype=torch.long)
    at = index[real]
    ids[at] = input_ids[real]
    positions[at] = (first + t).expand(n, width)[real]
    segments[at] = torch.arange(n)[:, None].expand(n, width)[real]
    return {"pack_ids": ids.view(count, row), "pack_positions": positions.view(count, row),
            "pack_segments": segments.view(count, row), "pack_index": index}


def block_mask(segments: torch.Tensor) -> torch.Tensor:
    """[R, 1, row, row] boolean attention mask: a position sees the positions of its own text (padding: the
    row's padding), as SDPA takes it."""
    return (segments[:, None, :, None] == segments[:, None, None, :])


class Unpacked:
    """A backbone's outputs over packed rows, gathered back into the padded layout ([N, T, d]) that the poolers
    read (`last_hidden_state`, and `hidden_states` where asked for)."""

    pooler_output = None

    def __init__(self, outputs, index: torch.Tensor):
        def gather(h):
            return h.reshape(-1, h.shape[-1])[index]

        self.last_hidden_state = gather(outputs.last_hidden_state)
        hidden = getattr(outputs, "hidden_states", None)
        self.hidden_states = tuple(gather(h) for h in hidden) if hidden is not None else None
