"""Sentence encoder: a Hugging Face backbone, a pooler, and a training-only projection head.

`embed` is the one inference path (evaluation, retrieval, analysis): it de-duplicates sentences,
tokenizes them once, sorts them by length so batches carry little padding, runs each batch once and
applies every requested pooler to that single forward pass.

On the CPU it runs in fp32, batches of 128 sentences (where the SentEval parity is checked). On a GPU it runs
under bf16 autocast, in length-sorted batches of up to `GPU_BATCH_TOKENS` padded tokens (`precision="fp32"`
keeps fp32 there; an explicit `batch_size` keeps batches of that many sentences); the vectors come back in the
sentences' order, in float32, either way.
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..cli_args import PRECISIONS
from .heads import build_head
from .packing import Unpacked, block_mask
from .poolers import NEEDS_HIDDEN_STATES, pool
from .tokens import model_inputs, pad, to_device, token_ids

CPU_BATCH = 128              # sentences per batch on the CPU
GPU_BATCH_TOKENS = 32_768    # on a GPU: a batch holds sentences up to this many tokens, padding included


_PRECISION = ["auto"]         # what `precision=None` means: `embedding_precision` sets it for a command


@contextlib.contextmanager
def embedding_precision(precision: str):
    """Within: every `embed` not given a precision runs in `precision` (`sentaug evaluate --precision`)."""
    embedding_dtype(precision, torch.device("cpu"))      # a clear error for an unknown name, before anything runs
    before, _PRECISION[0] = _PRECISION[0], precision
    try:
        yield
    finally:
        _PRECISION[0] = before


def embedding_dtype(precision: str | None, device: torch.device) -> torch.dtype:
    """The autocast dtype an embedding runs in: `auto` is bf16 on a GPU and fp32 elsewhere; None is the
    precision `embedding_precision` set (auto unless set)."""
    precision = _PRECISION[0] if precision is None else precision
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: choose from {', '.join(PRECISIONS)}")
    if precision == "bf16" or (precision == "auto" and device.type == "cuda"):
        return torch.bfloat16
    return torch.float32


def autocast_to(dtype: torch.dtype, device: torch.device):
    """A context running the model's matrix work in `dtype` (bf16 autocast), or nothing for fp32."""
    if dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


def batching(device: torch.device, batch_size: int | None = None) -> tuple[int | None, int | None]:
    """(sentences per batch, tokens per batch) of an embedding on `device`: `batch_size` sentences when given,
    else CPU_BATCH on the CPU and up to GPU_BATCH_TOKENS tokens on a GPU."""
    if batch_size:
        return batch_size, None
    return (None, GPU_BATCH_TOKENS) if device.type == "cuda" else (CPU_BATCH, None)


def batch_bounds(lengths_desc, batch_size: int | None = None, max_tokens: int | None = None) -> list[tuple[int, int]]:
    """[start, end) of each batch over sequences sorted longest first: `batch_size` sequences each, or as many
    as fit `max_tokens` once padded to the batch's first (longest) one (at least one)."""
    n = len(lengths_desc)
    if max_tokens is None:
        size = batch_size or CPU_BATCH
        return [(s, min(s + size, n)) for s in range(0, n, size)]
    bounds, start = [], 0
    while start < n:
        width = max(1, int(lengths_desc[start]))
        end = min(n, start + max(1, max_tokens // width))
        bounds.append((start, end))
        start = end
    return bounds


def pick_device(device: str | None = None) -> torch.device:
    if device:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


_KEPT: list = [None]          # {(path, device): (model, tokenizer)} inside `models_kept`, else None


@contextlib.contextmanager
def models_kept():
    """Within: `load_pretrained` loads each (folder, device) once and returns that model again (one process
    evaluating several suites of a model, `sentaug evaluate suites`). The models are evaluated, never
    trained; a caller that trains its copy asks for its own (`shared=False`)."""
    before, _KEPT[0] = _KEPT[0], {}
    try:
        yield
    finally:
        _KEPT[0] = before


def load_pretrained(path: str | os.PathLike, device: str | torch.device | None = None, shared: bool = True):
    """Load a backbone (HF layout folder or hub id) with its tokenizer, in eval mode; inside `models_kept`
    the model loaded before for the same folder and device (unless `shared` is False)."""
    from transformers import AutoModel, AutoTokenizer

    device = pick_device(device) if not isinstance(device, torch.device) else device
    key = (str(Path(path).resolve()) if Path(path).exists() else str(path), str(device))
    if shared and _KEPT[0] is not None and key in _KEPT[0]:
        model, tokenizer = _KEPT[0][key]
        return model.eval(), tokenizer
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model = AutoModel.from_pretrained(str(path))
    model.to(device).eval()
    if shared and _KEPT[0] is not None:
        _KEPT[0][key] = (model, tokenizer)
    return model, tokenizer


def tokenized_batches(tokenizer, sentences: list[str], batch_size: int | None = CPU_BATCH,
                      max_length: int | None = None, max_tokens: int | None = None):
    """`sentences` tokenized once, ordered by length (longest first, ties in input order) and padded per
    batch, lazily: (positions in `sentences`, model inputs on the CPU) for each batch `embed` runs, of
    `batch_size` sentences or, with `max_tokens`, of up to that many padded tokens (`batch_bounds`). Keep
    them (`list(...)`) to embed the same sentences again (`sentaug.train.dev_score.DevEvaluator`)."""
    ids = token_ids(tokenizer, sentences, max_length) if sentences else []
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    order = np.argsort(-lengths, kind="stable")
    for start, end in batch_bounds(lengths[order], batch_size, max_tokens):
        idx = order[start:end]
        input_ids, attention_mask = pad([ids[i] for i in idx], tokenizer.pad_token_id, tokenizer.padding_side)
        yield idx, model_inputs(tokenizer, input_ids, attention_mask)


@torch.inference_mode()
def embed_batches(model, batches, n: int, poolers=("cls_before_pooler",), progress: bool = False,
                  batch_size: int | None = None, flush_bytes: int = 1 << 28,
                  precision: str | None = None) -> dict[str, np.ndarray]:
    """Run `tokenized_batches` output through `model` once; float32 [n, d] per pooler, row i = sentence i.
    `precision`: auto (bf16 autocast on a GPU, fp32 elsewhere), fp32 or bf16 (`embedding_dtype`).

    Vectors stay on the model's device until `flush_bytes` of them are pending (one copy to the host per
    flush rather than one wait per batch on a GPU)."""
    device = next(model.parameters()).device
    dtype = embedding_dtype(precision, device)
    hidden = bool(NEEDS_HIDDEN_STATES.intersection(poolers))
    out = {p: None for p in poolers}
    pending: list = []   # (positions, {pooler: vectors on the device})

    def flush():
        if not pending:
            return
        rows = np.concatenate([idx for idx, _ in pending])
        for p in poolers:
            vec = torch.cat([v[p] for _, v in pending]).float().cpu().numpy()
            if out[p] is None:
                out[p] = np.empty((n, vec.shape[1]), dtype=np.float32)
            out[p][rows] = vec
        pending.clear()

    if progress:
        from tqdm.auto import tqdm

        batches = tqdm(batches, desc="embedding", unit="batch", total=-(-n // batch_size) if batch_size else None)
    was_training = model.training
    model.eval()
    size = 0
    for idx, inputs in batches:
        inputs = to_device(inputs, device)
        with autocast_to(dtype, device):
            outputs = model(**inputs, output_hidden_states=hidden, return_dict=True)
            # a copy: a pooled view would keep the batch's whole hidden state alive until the flush
            vectors = {p: pool(p, outputs, inputs["attention_mask"]).to(torch.float32, copy=True) for p in poolers}
        pending.append((idx, vectors))
        size += sum(v.numel() * 4 for v in vectors.values())
        if size >= flush_bytes:
            flush()
            size = 0
    flush()
    model.train(was_training)
    return out


def embed(model, tokenizer, sentences: list[str], poolers=("cls_before_pooler",), batch_size: int | None = None,
          max_length: int | None = None, progress: bool = False, batches=None,
          precision: str | None = None, normalize: bool = False) -> dict[str, np.ndarray]:
    """Embed `sentences` with each pooler in `poolers`; returns float32 arrays aligned with `sentences`.

    No truncation unless `max_length` is given (SimCSE's SentEval protocol evaluates full sentences; the
    model's own position limit still applies). `batch_size`: sentences per batch (default: `batching`, by
    device); `precision`: auto, fp32 or bf16 (`embedding_dtype`). `batches`: the `tokenized_batches` of these
    sentences (distinct, in this order) kept from an earlier call, to skip tokenizing them again. `normalize`:
    each vector divided by its L2 norm (a sentence-transformers folder's Normalize module).
    """
    unique = list(dict.fromkeys(sentences))
    index = {s: i for i, s in enumerate(unique)}
    size, max_tokens = batching(next(model.parameters()).device, batch_size)
    if batches is None:
        batches = tokenized_batches(tokenizer, unique, size, max_length, max_tokens)
    out = embed_batches(model, batches, len(unique), poolers, progress, size, precision=precision)
    if normalize:
        out = {p: l2_normalize(v) for p, v in out.items()}
    rows = np.fromiter((index[s] for s in sentences), dtype=np.int64, count=len(sentences))
    return {p: (v[rows] if v is not None else np.zeros((0, 0), np.float32)) for p, v in out.items()}


def l2_normalize(vectors: np.ndarray | None) -> np.ndarray | None:
    """Rows divided by their L2 norm, as sentence-transformers' Normalize does (a zero row stays zero)."""
    if vectors is None:
        return None
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12).astype(vectors.dtype)


class SentenceEncoder(nn.Module):
    """Backbone + pooler + projection head (training only unless `head_only_train=False`): the trainable
    unit of every method. `pooler="cls"` means the last layer's [CLS] vector with SimCSE's MLP head (so
    `head` defaults to "mlp" for it and "none" otherwise)."""

    def __init__(self, backbone, pooler: str = "cls", head: str | None = None, head_only_train: bool = True):
        super().__init__()
        self.backbone = backbone
        self.pooler = "cls_before_pooler" if pooler == "cls" else pooler
        self.head_name = head or ("mlp" if pooler == "cls" else "none")
        self.head_only_train = head_only_train
        self.head = build_head(self.head_name, backbone.config.hidden_size)
        self.ready_mask = False

    def use_ready_mask(self, on: bool = True) -> None:
        """Hand the backbone a ready [B, 1, 1, T] boolean mask instead of the [B, T] padding mask. Transformers
        checks a [B, T] mask on the host at every forward (`.all()`: one wait for the device, and no CUDA graph
        can hold that); SDPA takes the ready mask as it is, with the same outputs (bit for bit on the CPU,
        transformers 5.23, BERT and RoBERTa). Only for SDPA attention, which the trainer checks."""
        self.ready_mask = on

    def run_backbone(self, input_ids, attention_mask, packed: dict | None = None, **kw):
        """The backbone's outputs (a transformers ModelOutput) for a padded batch; `packed`: its texts packed
        into rows (`sentaug.models.packing.pack`), the outputs gathered back into the padded layout."""
        if packed is not None:
            outputs = self.backbone(input_ids=packed["pack_ids"], position_ids=packed["pack_positions"],
                                    attention_mask=block_mask(packed["pack_segments"]), return_dict=True, **kw)
            return Unpacked(outputs, packed["pack_index"])
        mask = attention_mask[:, None, None, :].bool() if self.ready_mask else attention_mask
        return self.backbone(input_ids=input_ids, attention_mask=mask, return_dict=True, **kw)

    def represent(self, input_ids, attention_mask, packed: dict | None = None, **kw):
        """The pooled sentence vector e (before the head)."""
        outputs = self.run_backbone(input_ids, attention_mask, packed,
                                    output_hidden_states=self.pooler in NEEDS_HIDDEN_STATES, **kw)
        return pool(self.pooler, outputs, attention_mask)

    def project(self, e):
        """z = head(e) in training (and at inference when the head is kept)."""
        if self.head is not None and (self.training or not self.head_only_train):
            return self.head(e)
        return e

    def forward(self, input_ids, attention_mask, **kw):
        return self.project(self.represent(input_ids, attention_mask, **kw))

    def snapshot(self, into: dict | None = None) -> dict:
        """The backbone's weights as `save` writes them (the MLP head in the pooler layer), copied on their
        device; `into`: an earlier snapshot whose tensors are overwritten instead of new ones allocated."""
        state = self.backbone.state_dict()
        if self.head_name == "mlp" and getattr(self.backbone, "pooler", None) is not None:
            state.update({f"pooler.dense.{k}": v for k, v in self.head.dense.state_dict().items()})
        if into is None:
            return {k: v.detach().clone() for k, v in state.items()}
        for k, v in state.items():
            into[k].copy_(v.detach(), non_blocking=True)
        return into

    def save(self, out_dir: str | os.PathLike, tokenizer, eval_pooler: str = "cls_before_pooler",
             state: dict | None = None) -> None:
        """Write a Hugging Face folder (safetensors) loadable by AutoModel and by SentenceTransformer; `state`: a
        `snapshot` to write instead of the current weights.

        SimCSE's MLP head is stored as the backbone's pooler layer (as SimCSE's simcse_to_huggingface.py does), so
        `--pooler cls` evaluates with it and `cls_before_pooler` without it. The sentence-transformers
        config selects `eval_pooler`.
        """
        out_dir = Path(out_dir)
        backbone = self.backbone
        if state is not None:
            backbone.save_pretrained(out_dir, state_dict=state, safe_serialization=True)
        else:
            if self.head_name == "mlp" and getattr(backbone, "pooler", None) is not None:
                backbone.pooler.dense.load_state_dict(self.head.dense.state_dict())
            backbone.save_pretrained(out_dir, safe_serialization=True)
        tokenizer.save_pretrained(out_dir)
        write_sentence_transformers_config(out_dir, backbone.config.hidden_size, eval_pooler)


def write_sentence_transformers_config(out_dir: Path, dim: int, pooler: str) -> None:
    modes = {"cls_before_pooler": "cls_token", "avg": "mean_tokens"}
    if pooler not in modes:
        return  # sentence-transformers has no equivalent pooling; AutoModel + `sentaug evaluate` still work
    (out_dir / "1_Pooling").mkdir(parents=True, exist_ok=True)
    pooling = {"word_embedding_dimension": dim, "pooling_mode_cls_token": modes[pooler] == "cls_token",
               "pooling_mode_mean_tokens": modes[pooler] == "mean_tokens", "pooling_mode_max_tokens": False,
               "pooling_mode_mean_sqrt_len_tokens": False}
    (out_dir / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2))
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    (out_dir / "modules.json").write_text(json.dumps(modules, indent=2))
    (out_dir / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 512, "do_lower_case": False}))
