"""Token ids computed once: padding of pre-tokenized batches, and token files of fixed texts.

Every run on a corpus encodes the same sentences (the corpus, its augmentation caches, and the retrieval
pool, which is a subset of the corpus) with the same tokenizer. `sentaug tokenize` writes their ids once
(`TokenTable`); the trainer looks each batch's texts up (`BatchTokenizer`) and pads the batch itself.

Exactness: a text's ids do not depend on the other texts of its batch, so padding the ids of each text
(tokenized alone, truncated to `max_length`) to the longest one of the batch, on the tokenizer's padding
side, gives exactly the `input_ids` and `attention_mask` of `tokenizer(texts, padding=True,
truncation=True, max_length=max_length)` (tests/models/test_tokens.py checks it). Texts missing from the tables
(positives drawn on the fly, e.g. CARDS's switch-case) are tokenized per batch, as before.

A token file (`.npz`) holds the distinct texts (UTF-8 bytes + offsets), their ids (uint16 when the
vocabulary fits, else int32) + offsets, and a JSON record (`meta`): the tokenizer's fingerprint, the
max_length, the source file and its sha256. A file is only used with the tokenizer it was written for.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np
import torch

from .token_sequences import TOKENS_PREFIX, decode_tokens
from ..io import pack_texts, unpack_texts

FORMAT = 1


def tokenizer_fingerprint(tokenizer) -> str:
    """A hash of everything that decides a tokenizer's ids: vocabulary, added tokens, normaliser,
    pre-tokeniser, model, post-processor (special tokens), and the padding and truncation sides.

    The fast tokenizer's per-call truncation/padding state is left out: a call changes it."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        state = json.loads(backend.to_str())
        state.pop("truncation", None)
        state.pop("padding", None)
    else:
        state = {"vocab": sorted(tokenizer.get_vocab().items())}
    state["_class"] = type(tokenizer).__name__
    state["_sides"] = [tokenizer.padding_side, tokenizer.truncation_side]
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:16]


def token_ids(tokenizer, texts: list[str], max_length: int | None, chunk: int = 8192,
              progress: bool = False) -> list[list[int]]:
    """Each text's ids as the tokenizer gives them (special tokens added; truncated when max_length is set).
    Token-level cache entries (CARDS Table 5) are mapped as the trainer maps them (`mixed_ids`)."""
    if max_length is not None and any(t.startswith(TOKENS_PREFIX) for t in texts):
        return mixed_ids(tokenizer, texts, max_length)
    starts = range(0, len(texts), chunk)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc="tokenizing", unit="chunk")
    out: list[list[int]] = []
    for start in starts:   # (fast tokenizers raise on an empty list, hence the chunks are never empty)
        out += tokenizer(texts[start:start + chunk], add_special_tokens=True, truncation=max_length is not None,
                         max_length=max_length)["input_ids"]
    return out


def mixed_ids(tokenizer, texts: list[str], max_length: int) -> list[list[int]]:
    """Ids of texts some of which are token sequences (CARDS Table 5's re-tokenization / BPE-dropout caches:
    TOKENS_PREFIX + the tokenizer's own tokens). A plain text is tokenized as usual; a token sequence is mapped
    to ids as it stands, truncated like a text and framed by the tokenizer's special tokens, so that a sequence
    equal to a text's own tokenization encodes exactly as that text. A token outside the vocabulary means the
    cache was built with another tokenizer: an error."""
    prefix, suffix = special_frame(tokenizer)
    ids = []
    for text in texts:
        tokens = decode_tokens(text)
        if tokens is None:
            ids.append(tokenizer(text, truncation=True, max_length=max_length)["input_ids"])
            continue
        stored = tokenizer.convert_tokens_to_ids(tokens)     # (not `token_ids`: that is this module's function)
        unknown = [t for t, i in zip(tokens, stored) if i == tokenizer.unk_token_id and t != tokenizer.unk_token]
        if unknown:
            raise ValueError(f"token-level positive has tokens outside the backbone's vocabulary ({unknown[:3]}): "
                             f"the cache was built with another tokenizer")
        ids.append(prefix + stored[:max(0, max_length - len(prefix) - len(suffix))] + suffix)
    return ids


def special_frame(tokenizer) -> tuple[list[int], list[int]]:
    """The special token ids the tokenizer puts before and after a single sentence ([CLS] ... [SEP],
    <s> ... </s>), read off its own encoding of one word."""
    framed = tokenizer("a")["input_ids"]
    bare = tokenizer("a", add_special_tokens=False)["input_ids"]
    at = next(i for i in range(len(framed)) if framed[i:i + len(bare)] == bare)
    return framed[:at], framed[at + len(bare):]


def pad(sequences, pad_id: int | None, side: str = "right", width: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, attention_mask), int64 [B, T], T the longest sequence: what a tokenizer called with
    padding=True returns for the texts these sequences are the ids of. `width`: pad to that many tokens instead
    (padding="max_length"; at least the longest sequence)."""
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    longest = int(lengths.max()) if len(lengths) else 0
    if width is not None and width < longest:
        raise ValueError(f"cannot pad to {width} tokens: a sequence has {longest}")
    width = longest if width is None else width
    if pad_id is None and (lengths < width).any():
        raise ValueError("the tokenizer has no padding token: cannot pad a batch of unequal lengths")
    ids = np.full((len(lengths), width), 0 if pad_id is None else pad_id, dtype=np.int64)
    positions = np.arange(width)
    mask = positions < lengths[:, None] if side == "right" else positions >= width - lengths[:, None]
    if len(lengths):
        ids[mask] = np.concatenate([np.asarray(s, dtype=np.int64) for s in sequences])
    return torch.from_numpy(ids), torch.from_numpy(mask.astype(np.int64))


def model_inputs(tokenizer, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """The keys the tokenizer itself would return for single sentences (token_type_ids all 0 where the
    model takes them)."""
    out = {"input_ids": input_ids, "attention_mask": attention_mask}
    if "token_type_ids" in getattr(tokenizer, "model_input_names", ()):
        out["token_type_ids"] = torch.zeros_like(input_ids)
    return out


def to_device(tensors: dict[str, torch.Tensor], device) -> dict[str, torch.Tensor]:
    """Host tensors onto `device`; to a GPU from pinned memory without blocking the host."""
    device = torch.device(device)
    if device.type != "cuda":
        return {k: v.to(device) for k, v in tensors.items()}
    return {k: v.pin_memory().to(device, non_blocking=True) for k, v in tensors.items()}


class TokenTable:
    """The ids of a set of distinct texts under one tokenizer and max_length."""

    def __init__(self, texts: list[str], ids: np.ndarray, offsets: np.ndarray, meta: dict):
        self.texts, self.ids, self.offsets, self.meta = texts, ids, offsets, meta

    def __len__(self) -> int:
        return len(self.texts)

    def row(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[i]:self.offsets[i + 1]]

    @classmethod
    def build(cls, tokenizer, texts, max_length: int, progress: bool = False, **meta) -> "TokenTable":
        texts = list(dict.fromkeys(texts))
        seqs = token_ids(tokenizer, texts, max_length, progress=progress) if texts else []
        offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
        np.cumsum([len(s) for s in seqs], out=offsets[1:])
        dtype = np.uint16 if len(tokenizer) <= np.iinfo(np.uint16).max + 1 else np.int32
        ids = np.fromiter((i for s in seqs for i in s), dtype=dtype, count=int(offsets[-1]))
        meta = {"format": FORMAT, "fingerprint": tokenizer_fingerprint(tokenizer), "max_length": max_length,
                "n_texts": len(texts), "n_tokens": int(offsets[-1]), **meta}
        return cls(texts, ids, offsets, meta)

    def save(self, path: str | os.PathLike) -> None:
        from ..io import atomic_path

        if not str(path).endswith(".npz"):
            raise ValueError(f"token file must end in .npz: {path}")
        data, text_offsets = pack_texts(self.texts)
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            np.savez(f, ids=self.ids, offsets=self.offsets, text_bytes=data, text_offsets=text_offsets,
                     meta=np.array(json.dumps(self.meta)))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TokenTable":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"token file not found: {path}")
        from ..intermediates import reading

        with reading(path, "token file"), np.load(path) as z:    # a zip: each member read is CRC-checked
            missing = {"ids", "offsets", "text_bytes", "text_offsets", "meta"} - set(z.files)
            if missing:
                raise ValueError(f"not a token file (missing {', '.join(sorted(missing))})")
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != FORMAT:
                raise ValueError(f"token file format {meta.get('format')}, expected {FORMAT}")
            meta["path"] = str(path)
            return cls(unpack_texts(z["text_bytes"], z["text_offsets"]), z["ids"], z["offsets"], meta)


class WordPieces:
    """The ids of a text assembled from the ids of its words, each word tokenized once and kept.

    A fast tokenizer normalises a text, splits it into pre-tokens and runs its model on each pre-token alone;
    the pre-tokenizers of BERT (whitespace and punctuation), RoBERTa/GPT-2 (byte-level: " word" chunks) and
    SentencePiece models (Metaspace) never join characters across a single space. So a text of words separated
    by single spaces encodes as its words do one by one, the first as it stands and each other with its leading
    space: texts drawn per step that differ from the corpus in a few words (CARDS's switch-case positives) cost
    dictionary lookups instead of a tokenizer call each. Only texts of that form are assembled (no leading,
    trailing or double spaces, no tabs or newlines), and only after the tokenizer's own ids of the sample texts
    it was checked on were reproduced; any other text is tokenized as a whole."""

    SIMPLE = re.compile(r"\S+(?: \S+)*")

    def __init__(self, tokenizer, max_length: int):
        self.tokenizer, self.max_length = tokenizer, max_length
        self.prefix, self.suffix = special_frame(tokenizer)
        self.room = max_length - len(self.prefix) - len(self.suffix)
        self.first: dict[str, list[int]] = {}     # a text's first word, as it stands
        self.later: dict[str, list[int]] = {}     # any other word (keyed without it), tokenized with its space

    def agrees_with(self, texts: list[str], ids: list) -> bool:
        """Whether assembling gives the tokenizer's ids of `texts` (those of assemblable form), one each."""
        pairs = [(t, list(i)) for t, i in zip(texts, ids) if self.SIMPLE.fullmatch(t)]
        return bool(pairs) and self.assemble([t for t, _ in pairs]) == [i for _, i in pairs]

    def assemble(self, texts: list[str]) -> list[list[int] | None]:
        """Each text's ids (framed, truncated to max_length), or None for a text not of assemblable form."""
        first, later, simple = self.first, self.later, self.SIMPLE.fullmatch
        split = [t.split(" ") if simple(t) else None for t in texts]
        new_first = list({words[0]: None for words in split if words is not None and words[0] not in first})
        new_later = list({w: None for words in split if words is not None for w in words[1:] if w not in later})
        if new_first or new_later:
            ids = self.tokenizer(new_first + [" " + w for w in new_later], add_special_tokens=False)["input_ids"]
            first.update(zip(new_first, ids))
            later.update(zip(new_later, ids[len(new_first):]))
        out = []
        for words in split:
            if words is None:
                out.append(None)
                continue
            body = list(first[words[0]])
            for w in words[1:]:
                if len(body) >= self.room:
                    break
                body += later[w]
            out.append(self.prefix + body[:self.room] + self.suffix)
        return out


class BatchTokenizer:
    """`encode(texts)`: the padded input_ids and attention_mask of a batch of texts, looked up in token
    tables where the text is there, else assembled from its words' ids (`WordPieces`) or tokenized now;
    identical either way (module docstring). A batch's rows are gathered from the tables in one NumPy
    operation: the host's part of a step costs microseconds per text, whatever the corpus's size."""

    SAMPLE = 256       # table texts on which word assembly is checked against the tokenizer's own ids

    def __init__(self, tokenizer, max_length: int, tables=()):
        self.tokenizer, self.max_length = tokenizer, max_length
        fingerprint = tokenizer_fingerprint(tokenizer) if tables else None
        self._row: dict[str, int] = {}
        parts, offsets, base = [], [np.zeros(1, dtype=np.int64)], 0
        for table in tables:
            where = table.meta.get("path", "a token table")
            if table.meta["fingerprint"] != fingerprint:
                raise ValueError(f"{where} was written for another tokenizer (fingerprint "
                                 f"{table.meta['fingerprint']}, this run's is {fingerprint}): rebuild it with "
                                 f"the run's backbone and added tokens")
            if table.meta["max_length"] != max_length:
                raise ValueError(f"{where} was truncated to {table.meta['max_length']} tokens, this run uses "
                                 f"max_seq_length {max_length}")
            for i, text in enumerate(table.texts):
                self._row.setdefault(text, base + i)
            parts.append(table.ids)
            offsets.append(table.offsets[1:] + offsets[-1][-1])
            base += len(table)
        self._ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        self._offsets = np.concatenate(offsets)
        self._lengths = np.diff(self._offsets)
        self.hits = self.misses = 0
        self.pieces = None
        if tables and max_length is not None:
            pieces = WordPieces(tokenizer, max_length)
            sample = [t for table in tables for t in table.texts[:self.SAMPLE]
                      if not t.startswith(TOKENS_PREFIX)][:self.SAMPLE]
            if pieces.agrees_with(sample, [self._ids[self._offsets[self._row[t]]:self._offsets[self._row[t] + 1]]
                                           for t in sample]):
                self.pieces = pieces

    def _fresh(self, texts: list[str]) -> list:
        """Ids of texts not in the tables: assembled from words where possible, the rest tokenized whole."""
        if not texts:
            return []
        out = self.pieces.assemble(texts) if self.pieces is not None else [None] * len(texts)
        whole = [i for i, ids in enumerate(out) if ids is None]
        for i, ids in zip(whole, token_ids(self.tokenizer, [texts[i] for i in whole], self.max_length)):
            out[i] = ids
        return out

    def sequences(self, texts: list[str]) -> list:
        rows = self.rows(texts)
        fresh = iter(self._fresh([t for t, r in zip(texts, rows) if r < 0]))
        return [next(fresh) if r < 0 else self._ids[self._offsets[r]:self._offsets[r + 1]] for r in rows]

    def rows(self, texts: list[str]) -> np.ndarray:
        """Each text's row in the tables, -1 where it is in none."""
        get = self._row.get
        return np.fromiter((get(t, -1) for t in texts), dtype=np.int64, count=len(texts))

    def encode(self, texts: list[str], width: int | None = None) -> dict[str, torch.Tensor]:
        """{"input_ids", "attention_mask"} (int64, on the CPU) of `texts`, padded to the longest (or `width`)."""
        rows = self.rows(texts)
        missing = np.flatnonzero(rows < 0)
        fresh = self._fresh([texts[i] for i in missing])
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        found = rows >= 0
        lengths = np.zeros(len(texts), dtype=np.int64)
        lengths[found] = self._lengths[rows[found]]
        lengths[missing] = [len(ids) for ids in fresh]
        longest = int(lengths.max()) if len(lengths) else 0
        if width is not None and width < longest:
            raise ValueError(f"cannot pad to {width} tokens: a sequence has {longest}")
        width = longest if width is None else width
        pad_id = self.tokenizer.pad_token_id
        if pad_id is None and (lengths < width).any():
            raise ValueError("the tokenizer has no padding token: cannot pad a batch of unequal lengths")
        positions = np.arange(width)
        left = self.tokenizer.padding_side == "left"
        first = width - lengths[:, None] if left else 0         # where each text's ids start in its row
        mask = (positions >= first) if left else (positions < lengths[:, None])
        source = self._offsets[np.where(found, rows, 0)][:, None] + positions - first
        ids = np.where(mask & found[:, None], self._ids[np.clip(source, 0, max(len(self._ids) - 1, 0))]
                       if len(self._ids) else 0, 0 if pad_id is None else pad_id).astype(np.int64)
        for i, seq in zip(missing, fresh):
            ids[i, mask[i]] = seq
        return {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask.astype(np.int64))}


def texts_of(path: str | os.PathLike) -> list[str]:
    """The texts a token file is built from: a corpus's lines (.txt) or a cache's augmented column (.parquet)."""
    path = Path(path)
    if path.suffix == ".parquet":
        from ..intermediates import read_cache

        return read_cache(path, columns=["augmented"])["augmented"].tolist()
    from ..data.corpus import read_corpus

    return [line.text for line in read_corpus(path)]


def build_token_file(texts_path, backbone_dir, max_length: int, out, add_tokens=(), progress: bool = True) -> dict:
    """`sentaug tokenize`: the ids of every text of a corpus or cache under the backbone's tokenizer."""
    from transformers import AutoTokenizer

    from ..io import sha256_file

    if not Path(texts_path).is_file():
        raise FileNotFoundError(f"texts not found: {texts_path}")
    tokenizer = AutoTokenizer.from_pretrained(str(backbone_dir))
    tokenizer.add_tokens(list(add_tokens))
    table = TokenTable.build(tokenizer, texts_of(texts_path), max_length, progress=progress,
                             source=str(texts_path), source_sha256=sha256_file(texts_path),
                             backbone=str(backbone_dir), add_tokens=list(add_tokens))
    table.save(out)
    return table.meta
