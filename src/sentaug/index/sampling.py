"""Drawing CARDS' retrieved hard negatives from a `sentaug.index.neighbours` index during training.

Modes (CARDS sec. 2.3 and Fig. 3), each giving `s` negatives per anchor, as index rows:

* ``top_k_uniform`` (CARDS' default, R_uniform): `s` distinct neighbours drawn uniformly from the anchor's
  top k (the anchor itself is never among them, see `neighbours.exact_topk`);
* ``r_top``: the `s` hardest neighbours, deterministically (ties ordered as in the index);
* ``d_uniform``: `s` distinct sentences drawn uniformly from the whole index, the anchor excluded.

Anchors are training-corpus line numbers. A duplicate line maps to the row of its first occurrence (it *is*
that sentence). Lines that are not indexed (flagged, or under three words) have no neighbours; the
`unindexed` policy decides what they get: ``"uniform"`` (default) draws from the whole index as
``d_uniform`` does (such a line's text is in no row, so no row can be itself), keeping every batch the
same shape; ``"none"`` gives -1, a column the trainer must mask for every anchor (`same_id_mask` does).

Negatives are shared by the batch: anchor i's negative is an extra column for every anchor j. When that
sentence is anchor j's own sentence (same row), the logit compares j with itself and must be masked:
`same_id_mask` returns that mask.

Every draw comes from the given `torch.Generator`, so a seed fixes the negatives.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..io import unpack_texts
from .neighbours import json_path

MODES = ("top_k_uniform", "r_top", "d_uniform")
UNINDEXED = ("uniform", "none")


@dataclass
class RetrievalIndex:
    neighbours: np.ndarray     # int32 [n, k]
    scores: np.ndarray         # float32 [n, k]
    row_of_line: np.ndarray    # int64 [n_lines]
    line_of_row: np.ndarray    # int64 [n]
    sentences: list[str]       # [n]
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.sentences)

    @property
    def k(self) -> int:
        return self.neighbours.shape[1]


def load_index(path: str | os.PathLike) -> RetrievalIndex:
    """Read an index written by `build_index` (the JSON beside it is optional)."""
    from ..intermediates import check_digest, read_result, reading

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"retrieval index not found: {path}")
    meta = read_result(json_path(path), "retrieval index provenance") if json_path(path).is_file() else {}
    check_digest(path, meta, "retrieval index", "index")
    with reading(path, "retrieval index"), np.load(path) as z:    # a zip: each member read is CRC-checked
        missing = {"neighbours", "scores", "row_of_line", "line_of_row", "sentence_bytes",
                   "sentence_offsets"} - set(z.files)
        if missing:
            raise ValueError(f"not a retrieval index (missing {', '.join(sorted(missing))})")
        arrays = {name: z[name] for name in z.files}
    return RetrievalIndex(arrays["neighbours"], arrays["scores"], arrays["row_of_line"], arrays["line_of_row"],
                          unpack_texts(arrays["sentence_bytes"], arrays["sentence_offsets"]), meta)


def check_corpus(index: RetrievalIndex, corpus_path: str | os.PathLike) -> None:
    """Raise ValueError unless `corpus_path` is the corpus the index was built from.

    Anchors are looked up by line number, so training on another file (or an edited one) would silently
    pair sentences with the neighbours of other sentences.
    """
    from ..io import sha256_file

    expected = index.meta.get("corpus_sha256")
    if expected is None:
        raise ValueError("the retrieval index has no provenance JSON beside it (corpus_sha256 unknown)")
    if sha256_file(corpus_path) != expected:
        raise ValueError(f"{corpus_path} is not the corpus the retrieval index was built from "
                         f"({index.meta.get('corpus')}, sha256 {expected[:12]}...)")


def _as_generator(rng) -> torch.Generator:
    if isinstance(rng, torch.Generator):
        return rng
    if isinstance(rng, (int, np.integer)):
        return torch.Generator().manual_seed(int(rng))
    raise ValueError(f"rng must be a torch.Generator or an int seed, got {type(rng).__name__}")


class NegativeSampler:
    """Draws `s` hard negatives per anchor line under one of `MODES` (see the module docstring)."""

    def __init__(self, index: RetrievalIndex, mode: str = "top_k_uniform", s: int = 1, k: int | None = None,
                 unindexed: str = "uniform"):
        if mode not in MODES:
            raise ValueError(f"unknown negative sampling mode '{mode}'; choose from {', '.join(MODES)}")
        if unindexed not in UNINDEXED:
            raise ValueError(f"unknown unindexed policy '{unindexed}'; choose from {', '.join(UNINDEXED)}")
        k = index.k if k is None else k
        if not 1 <= k <= index.k:
            raise ValueError(f"k = {k} exceeds the index's k = {index.k} (rebuild the index with a larger k)")
        limit = k if mode != "d_uniform" else index.n - 1
        if not 1 <= s <= limit:
            raise ValueError(f"s = {s} negatives per anchor must be between 1 and {limit} for mode '{mode}'")
        self.index, self.mode, self.s, self.k, self.unindexed = index, mode, s, k, unindexed
        self._neighbours = torch.from_numpy(index.neighbours[:, :k].astype(np.int64))
        self._row_of_line = torch.from_numpy(index.row_of_line)

    def rows(self, line_ids) -> torch.Tensor:
        """Index row of each corpus line (-1 for lines that are not indexed)."""
        lines = torch.as_tensor(line_ids, dtype=torch.long)
        n_lines = len(self._row_of_line)
        if lines.numel() and (lines.min() < 0 or lines.max() >= n_lines):
            raise ValueError(f"anchor line ids must lie in [0, {n_lines}) (the indexed corpus's line count)")
        return self._row_of_line[lines]

    def sample(self, batch_line_ids, rng) -> torch.Tensor:
        """Negative rows [B, s] for anchors given as corpus line numbers; -1 only with unindexed="none"."""
        g = _as_generator(rng)
        anchors = self.rows(batch_line_ids)
        out = torch.full((len(anchors), self.s), -1, dtype=torch.long)
        indexed = anchors >= 0
        if self.mode == "d_uniform":
            out[indexed] = self._uniform(anchors[indexed], g)
        else:
            out[indexed] = self._from_neighbours(anchors[indexed], g)
        if self.unindexed == "uniform" and (~indexed).any():
            out[~indexed] = self._uniform(torch.full((int((~indexed).sum()),), -1, dtype=torch.long), g)
        return out

    def sentences(self, rows) -> list[str]:
        """Texts of index rows (to re-encode the negatives with gradients)."""
        return [self.index.sentences[r] for r in torch.as_tensor(rows).reshape(-1).tolist()]

    def _from_neighbours(self, anchors: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        candidates = self._neighbours[anchors]                       # [b, k], best first
        if self.mode == "r_top":
            return candidates[:, :self.s]
        # s distinct positions, uniform over subsets: the first s of a uniformly random permutation
        positions = torch.rand(candidates.shape, generator=g).argsort(dim=1)[:, :self.s]
        return candidates.gather(1, positions)

    def _uniform(self, anchors: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        """`s` distinct rows per anchor, uniform over the index minus the anchor's own row (-1: no row)."""
        n = self.index.n
        out = torch.empty((len(anchors), self.s), dtype=torch.long)
        for j in range(self.s):
            todo = torch.ones(len(anchors), dtype=torch.bool)
            while todo.any():   # rejection: a repeat of an earlier draw is redrawn (rare when n >> s)
                idx = todo.nonzero().squeeze(1)
                own = anchors[idx]
                pool = torch.where(own >= 0, n - 1, n)                 # rows other than the anchor's own
                u = torch.rand(len(idx), generator=g, dtype=torch.float64)   # 53 bits: unbiased for large n
                draw = (u * pool).long().clamp_max(pool - 1)
                draw = draw + ((own >= 0) & (draw >= own)).long()      # skip over the anchor's row
                out[idx, j] = draw
                todo = torch.zeros_like(todo)
                if j:
                    todo[idx] = (out[idx, :j] == draw.unsqueeze(1)).any(dim=1)
        return out


def same_id_mask(anchor_rows, negative_rows) -> torch.Tensor:
    """Bool [B, C]: True where negative column c is anchor b's own sentence, or is -1 (no negative).

    `negative_rows` are the batch's shared negative columns (e.g. `sample(...)` [B, s] flattened row-major
    to B*s columns). Anchors that are not indexed (-1) match no column but still get -1 columns masked.
    """
    a = torch.as_tensor(anchor_rows, dtype=torch.long).reshape(-1, 1)
    c = torch.as_tensor(negative_rows, dtype=torch.long).reshape(1, -1)
    return ((a == c) & (a >= 0)) | (c < 0)
