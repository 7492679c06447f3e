"""CARDS' retrieval index: exact top-k neighbours of every training sentence under the frozen backbone.

CARDS (Wang et al., SIGIR 2022, sec. 2.3 and 3.1) embeds the training corpus once with the *pre-trained*
model, before any fine-tuning, and keeps that index static; each training step then draws hard negatives
from a sentence's top k. The corpus is de-duplicated and sentences under three words are removed first
("does not affect much the final performance but significantly stabilize[s] the training").

Which sentences are indexed (`select_sentences`):

* lines carrying a `sentaug.data.corpus` flag (empty, invalid UTF-8, over-long) are left out;
* lines with fewer than three whitespace-separated words are left out (``short``);
* a line whose exact text was already seen is a ``duplicate``: it gets no row of its own but maps to the
  row of its first occurrence (`row_of_line`), so a duplicate anchor in training shares that sentence's
  neighbours and its same-id masking.

Search (`exact_topk`) is exact inner product on L2-normalised vectors (= cosine): faiss ``IndexFlatIP`` on
the CPU, or torch matmul + topk in blocks of query rows sized to the GPU's free memory (float32 products,
TF32 off; benchmarks/gpu_training.py times 1M x 768 vectors). The row itself is removed by id (not by taking
position 0), so a different sentence with an identical vector (e.g. one differing only in case under an
uncased tokenizer) is still a neighbour. Ties: neighbours are ordered by score, descending, and equal
scores by ascending row; a row whose k-th neighbour ties with a candidate the search window may have cut
off is re-ranked over the whole corpus, so the result does not depend on how the backend orders ties.

Output: one ``.npz`` (``neighbours`` int32 [n, k], ``scores`` float32 [n, k], ``row_of_line`` int64
[n_lines], ``line_of_row`` int64 [n], the kept sentences as UTF-8 ``sentence_bytes`` + ``sentence_offsets``)
and a ``.json`` beside it recording how the index was built. Both are written atomically.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MIN_WORDS = 3
DEFAULT_MAX_LENGTH = 32   # SimCSE/CARDS' max_seq_length: the index sees sentences as training does


@dataclass(frozen=True)
class Selection:
    sentences: list[str]       # kept sentences, in first-occurrence order; row r of the index is sentences[r]
    line_of_row: np.ndarray    # int64 [n]: corpus line of each row's first occurrence
    row_of_line: np.ndarray    # int64 [n_lines]: index row of each corpus line, -1 if flagged or short
    dropped: dict              # {"flagged": .., "short": .., "duplicate": ..} line counts


def select_sentences(lines) -> Selection:
    """Choose the indexed sentences from `sentaug.data.corpus.Line`s (policy in the module docstring)."""
    row_of_text: dict[str, int] = {}
    sentences: list[str] = []
    line_of_row: list[int] = []
    row_of_line = np.full(len(lines), -1, dtype=np.int64)
    dropped = {"flagged": 0, "short": 0, "duplicate": 0}
    for i, line in enumerate(lines):
        if line.flag:
            dropped["flagged"] += 1
        elif len(line.text.split()) < MIN_WORDS:
            dropped["short"] += 1
        elif line.text in row_of_text:
            dropped["duplicate"] += 1
            row_of_line[i] = row_of_text[line.text]
        else:
            row_of_text[line.text] = row_of_line[i] = len(sentences)
            sentences.append(line.text)
            line_of_row.append(i)
    return Selection(sentences, np.asarray(line_of_row, dtype=np.int64), row_of_line, dropped)


def _canonical(ids: np.ndarray, scores: np.ndarray, self_rows: np.ndarray, k: int):
    """Per row of candidates [b, m]: drop the row itself and padding (-1), order by (score desc, id asc), keep k.

    Returns (ids [b, k], scores [b, k], ambiguous [b]): ambiguous rows have a k-th score that a candidate
    outside the window could tie (the window's lowest score reaches it), so they must be re-ranked in full.
    """
    scores = scores.astype(np.float64)
    drop = (ids == self_rows[:, None]) | (ids < 0)
    key_scores = np.where(drop, np.inf, -scores)           # dropped candidates sort last
    order = np.lexsort((ids, key_scores), axis=-1)[:, :k]
    kept_ids = np.take_along_axis(ids, order, axis=1)
    kept_scores = np.take_along_axis(scores, order, axis=1)
    ambiguous = scores.min(axis=1) >= kept_scores[:, -1]
    return kept_ids, kept_scores, ambiguous


def _progress(starts, progress: bool):
    if not progress:
        return starts
    from tqdm.auto import tqdm

    return tqdm(starts, desc="searching", unit="block")


def _faiss_topk(vectors: np.ndarray, k: int, progress: bool, block: int = 16384):
    import faiss

    n, dim = vectors.shape
    index = faiss.IndexFlatIP(dim)
    index.add(vectors)
    m = min(n, k + 2)            # self + k neighbours + one more to see whether the k-th ties beyond
    neighbours = np.empty((n, k), dtype=np.int64)
    scores = np.empty((n, k), dtype=np.float64)
    ambiguous = []
    for start in _progress(range(0, n, block), progress):
        d, i = index.search(vectors[start:start + block], m)
        rows = np.arange(start, start + len(d))
        neighbours[rows], scores[rows], amb = _canonical(i, d, rows, k)
        if m < n:                # with the whole corpus in the window nothing can be cut off
            ambiguous.extend(rows[amb].tolist())
    # Rare for real embeddings: rank these rows against the whole corpus, a few at a time (memory).
    chunk = max(1, (1 << 26) // n)
    for start in range(0, len(ambiguous), chunk):
        rows = np.asarray(ambiguous[start:start + chunk])
        d, i = index.search(vectors[rows], n)
        neighbours[rows], scores[rows], _ = _canonical(i, d, rows, k)
    return neighbours, scores


def _torch_topk(vectors: np.ndarray, k: int, device, progress: bool, block: int | None = None):
    """Exact search as one matrix product per block of query rows, then top-k, on `device` (a GPU when there
    is one). The similarities are exact float32 products: TF32 is switched off for the search."""
    import torch

    device = torch.device(device)
    x = torch.from_numpy(vectors).to(device)
    n = x.shape[0]
    if block is None:   # a [block, n] float32 similarity block (and top-k's workspace) within a memory budget
        budget = torch.cuda.mem_get_info(device)[0] // 16 if device.type == "cuda" else 1 << 30
        block = max(1, min(8192 if device.type == "cuda" else 4096, budget // (4 * n)))
    m = min(n - 1, k + 1)        # self is masked to -inf, so k + 1 candidates show whether the k-th ties
    neighbours = np.empty((n, k), dtype=np.int64)
    scores = np.empty((n, k), dtype=np.float64)
    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        for start in _progress(range(0, n, block), progress):
            sim = x[start:start + block] @ x.T
            rows = np.arange(start, start + sim.shape[0])
            sim[torch.arange(len(rows), device=device), torch.from_numpy(rows).to(device)] = float("-inf")
            d, i = torch.topk(sim, m, dim=1)
            ids, sc, amb = _canonical(i.cpu().numpy(), d.cpu().numpy(), rows, k)
            if m < n - 1 and amb.any():     # re-rank those rows over the whole corpus (self is -inf)
                full = sim[torch.from_numpy(np.flatnonzero(amb)).to(device)].cpu().numpy()
                ids[amb], sc[amb], _ = _canonical(np.broadcast_to(np.arange(n), full.shape), full, rows[amb], k)
            neighbours[rows], scores[rows] = ids, sc
    finally:
        torch.set_float32_matmul_precision(precision)
    return neighbours, scores


def exact_topk(vectors: np.ndarray, k: int, device=None, backend: str | None = None, progress: bool = False,
               block: int | None = None):
    """Exact top-k inner-product neighbours of every row among the other rows: (int32 ids, float32 scores).

    `backend` "faiss" (IndexFlatIP, CPU) or "torch" (matmul + topk in blocks of `block` query rows on
    `device`; by default as many as fit a memory budget); by default torch when `device` is a CUDA device,
    else faiss.
    """
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n = vectors.shape[0]
    if not 1 <= k <= n - 1:
        raise ValueError(f"k must be between 1 and n - 1 = {n - 1} (the number of other sentences), got {k}")
    on_gpu = device is not None and str(device).startswith("cuda")
    backend = backend or ("torch" if on_gpu else "faiss")
    if backend == "faiss":
        ids, sc = _faiss_topk(vectors, k, progress)
    elif backend == "torch":
        ids, sc = _torch_topk(vectors, k, device or "cpu", progress, block)
    else:
        raise ValueError(f"unknown search backend '{backend}'; choose faiss or torch")
    return ids.astype(np.int32), sc.astype(np.float32)


def _faiss_version() -> str | None:
    try:
        import faiss
    except ImportError:      # a GPU machine searches with torch and may not have faiss
        return None
    return faiss.__version__


def l2_normalise(v: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return (v / np.maximum(norms, 1e-12)).astype(np.float32)


def pack_sentences(sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes + offsets [n + 1]: compact (a numpy unicode array pads every string to the longest)."""
    encoded = [s.encode("utf-8") for s in sentences]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def unpack_sentences(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    raw = data.tobytes()
    return [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])]


def json_path(out: str | os.PathLike) -> Path:
    """The provenance JSON beside an index file: ``k64.npz`` -> ``k64.json``."""
    return Path(out).with_suffix(".json")


def build_index(corpus_path, backbone_dir, pooler: str, k: int, out, batch_size: int = 128,
                device: str | None = None, max_length: int | None = DEFAULT_MAX_LENGTH) -> dict:
    """Embed the selected corpus sentences with the frozen backbone, search exact top-k, write `out` + JSON.

    Returns the provenance record (also written to ``json_path(out)``).
    """
    import torch

    from ..data.corpus import read_corpus
    from ..intermediates import file_digest
    from ..io import atomic_path, sha256_file, write_json
    from ..models.encoder import embed, load_pretrained, pick_device

    if not Path(corpus_path).is_file():
        raise FileNotFoundError(f"corpus not found: {corpus_path}")
    if not (Path(backbone_dir) / "config.json").is_file():
        raise FileNotFoundError(f"backbone folder has no config.json: {backbone_dir}")
    if not str(out).endswith(".npz"):
        raise ValueError(f"index output must end in .npz: {out}")
    t0 = time.perf_counter()
    selection = select_sentences(read_corpus(corpus_path))
    n = len(selection.sentences)
    if not 1 <= k <= n - 1:
        raise ValueError(f"k = {k} needs at least k + 1 indexed sentences; {corpus_path} has {n}")
    dev = pick_device(device)
    model, tokenizer = load_pretrained(backbone_dir, dev)
    t1 = time.perf_counter()
    # fp32 on a GPU too: the neighbours (CARDS's retrieved negatives) stay those of the exact vectors
    vectors = embed(model, tokenizer, selection.sentences, poolers=(pooler,), batch_size=batch_size,
                    max_length=max_length, progress=True, precision="fp32")[pooler]
    vectors = l2_normalise(vectors)
    t2 = time.perf_counter()
    backend = "torch" if dev.type == "cuda" else "faiss"
    neighbours, scores = exact_topk(vectors, k, device=dev, backend=backend, progress=True)
    t3 = time.perf_counter()
    data, offsets = pack_sentences(selection.sentences)
    with atomic_path(out) as tmp, open(tmp, "wb") as f:
        np.savez(f, neighbours=neighbours, scores=scores, row_of_line=selection.row_of_line,
                 line_of_row=selection.line_of_row, sentence_bytes=data, sentence_offsets=offsets)
    meta = {
        "backbone": str(Path(backbone_dir).resolve()), "pooler": pooler, "k": k, "n": n,
        "n_lines": len(selection.row_of_line), "dropped": selection.dropped, "min_words": MIN_WORDS,
        "max_length": max_length, "normalised": True, "metric": "inner_product",
        "corpus": str(corpus_path), "corpus_sha256": sha256_file(corpus_path),
        "search": {"faiss": "faiss.IndexFlatIP", "torch": "torch.matmul+topk"}[backend], "device": str(dev),
        "faiss_version": _faiss_version(), "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "seconds": {"load": round(t1 - t0, 3), "embed": round(t2 - t1, 3), "search": round(t3 - t2, 3),
                    "total": round(time.perf_counter() - t0, 3)},
        **file_digest(out, "index"),        # what load_index checks the index against
    }
    write_json(json_path(out), meta)
    return meta
