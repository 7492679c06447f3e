"""Augmentation caches: one parquet per (augmentation, params, corpus, seed), plus a stats JSON beside it.

Format (every augmentation, present and future, writes this):

* ``<out>.parquet``: one row per corpus line, in corpus order, columns ``original`` (the line as read),
  ``augmented`` (the positive; equal to ``original`` when the rule did not apply), ``changed`` (bool),
  ``flag`` (the corpus flag: "" or empty / invalid_utf8 / long; flagged lines are never augmented).
  An ``anchored`` augmentation (SDA's released code, which rewrites the anchor as the spaCy-tokenised line)
  adds ``anchor``, the line as it is to be trained on; ``changed`` and the stats then compare ``augmented``
  with ``anchor`` (the released code counts a line as augmented when they differ).
* ``<out>.json`` (``out.with_suffix(".json")``): n, n_changed, share_changed (%), mean word-level edit
  distance and mean length change (whitespace tokens, over all lines), augmentation name/family/params,
  seed, corpus path and sha256, flag counts, parse provenance.
  With a tokenizer (``sentaug augment --tokenizer``), also ``tokens``: the mean length change in that
  tokenizer's tokens (over all lines) and the tokenizer used. ``cache_bytes`` and ``cache_sha256``: the
  parquet's size and digest, against which every reader checks it (`sentaug.intermediates.read_cache`).

Randomness: line i gets its own ``random.Random(f"{seed}:{i}")``, so the output does not depend on the
number of processes or the order lines are processed in, and two seeds give different caches. Batched
augmentations (masked-LM substitution, one forward pass over many lines) get one generator per fixed chunk
of `parse.CHUNK` lines, ``random.Random(f"{seed}:chunk{start}")``: the same guarantees, per chunk.

Processes: with a cached parse (``parse=``) the DocBin is read once and its chunks are augmented in
`workers` forked processes (reading it costs ~20k docs/s; the slowest WordNet rules run ~1k lines/s).
Without one, lines are parsed (when the augmentation needs it) and augmented in `workers` spawned
processes, chunk by chunk.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import random
from pathlib import Path
from typing import Sequence

from ..data.corpus import Line, flag_counts, read_corpus
from ..intermediates import file_digest
from ..io import atomic_path, sha256_file, write_json
from . import registry
from .parse import chunks, load_parse, map_chunks, model_info, parse_texts, worker_nlp

_PARSER_KEYS = ("pipeline", "pipeline_version", "spacy_version")


def line_rng(seed: int, i: int) -> random.Random:
    return random.Random(f"{seed}:{i}")


def apply_one(aug: registry.Augmentation, params: dict, x, line: Line, seed: int, i: int):
    """The augmented text of corpus line i (`x`: its Doc, or its text for parse-free augmentations); for an
    anchored augmentation, (anchor, augmented)."""
    if line.flag:
        return (line.text, line.text) if aug.anchored else line.text
    return checked_output(aug, aug.fn(x, line_rng(seed, i), **params), line, i)


def apply_chunk(aug: registry.Augmentation, params: dict, xs: Sequence, lines: Sequence[Line], seed: int,
                start: int) -> list[str]:
    """The augmented texts of corpus lines start, start+1, ... (`xs`: their Docs or texts)."""
    if not aug.batched:
        return [apply_one(aug, params, x, ln, seed, start + j) for j, (x, ln) in enumerate(zip(xs, lines))]
    out = [ln.text for ln in lines]
    keep = [j for j, ln in enumerate(lines) if not ln.flag]
    texts = aug.fn([xs[j] for j in keep], random.Random(f"{seed}:chunk{start}"), **params)
    if not isinstance(texts, list) or len(texts) != len(keep):
        raise ValueError(f"augmentation {aug.name!r} ({aug.where}) returned {_shown(texts)} for the "
                         f"{len(keep)} lines from corpus line {start + 1}: a batched augmentation returns a list "
                         f"with one output per line")
    for j, text in zip(keep, texts):
        out[j] = checked_output(aug, text, lines[j], start + j)
    return out


def checked_output(aug: registry.Augmentation, out, line: Line, i: int):
    """`out`, what `aug` made of corpus line i, if the cache can store it: a str, or for an anchored augmentation
    an (anchor, augmented) pair of str. Anything else is an error naming the augmentation and the line (a plugin's
    None or list would otherwise surface as a parquet error, or as a training text that is not one)."""
    if aug.anchored:
        if isinstance(out, tuple) and len(out) == 2 and all(isinstance(s, str) for s in out):
            return out
        wanted = "an (anchor, augmented) pair of str, as an anchored augmentation does"
    elif isinstance(out, str):
        return out
    else:
        wanted = "a str"
    raise ValueError(f"augmentation {aug.name!r} ({aug.where}) returned {_shown(out)} for corpus line {i + 1} "
                     f"({line.text[:60]!r}); it must return {wanted}")


def _shown(value) -> str:
    return f"{type(value).__name__} {repr(value)[:60]}"


def _augment_chunk(task) -> list[str]:
    """Worker: parse (if needed) and augment one chunk of lines. A spawned worker imports the module that
    registers the augmentation itself: a plugin named by the user is not among the modules it imports on its own."""
    name, module, params, seed, start, lines, model = task
    registry.load_modules([module])
    aug = registry.get(name)
    xs = parse_texts([ln.parse_text for ln in lines], model) if aug.needs_parse else [ln.text for ln in lines]
    return apply_chunk(aug, params, xs, lines, seed, start)


def _augment_with_parse(aug, params, seed, lines: Sequence[Line], parse_path, workers: int = 1
                        ) -> tuple[list[str], dict]:
    """Augment from a cached parse, checking line by line that it is the parse of this corpus, chunk by
    chunk (1M Docs do not fit in memory at once), in `workers` processes. Returns the augmented lines and
    the parse's metadata."""
    from .parse import CHUNK            # read at call time, as `chunks` does

    parsed = load_parse(parse_path)
    if len(parsed) != len(lines):
        raise ValueError(f"cached parse {parse_path} has {len(parsed)} docs but the corpus has {len(lines)} "
                         f"lines: it was built from another corpus; rebuild it with `sentaug parse`")
    global _FORKED
    _FORKED = (aug, params, seed, lines, parsed)
    ranges = [(start, min(start + CHUNK, len(lines))) for start in range(0, len(lines), CHUNK)]
    try:
        if workers <= 1 or len(ranges) == 1:
            out = [s for r in ranges for s in _augment_parsed_range(r)]
        else:   # fork: workers share the loaded DocBin instead of each reading it (no torch in this path)
            with mp.get_context("fork").Pool(min(workers, len(ranges))) as pool:
                out = [s for part in pool.imap(_augment_parsed_range, ranges) for s in part]
    finally:
        _FORKED = None
    return out, parsed.meta


_FORKED = None      # (aug, params, seed, lines, parsed corpus) of the running `_augment_with_parse`


def _augment_parsed_range(bounds: tuple[int, int]) -> list[str]:
    aug, params, seed, lines, parsed = _FORKED
    start, stop = bounds
    docs = list(parsed.docs(start=start, stop=stop))
    for i, (doc, line) in enumerate(zip(docs, lines[start:stop]), start):
        if doc.text != line.parse_text or doc.user_data.get("flag", "") != line.flag:
            raise ValueError(f"cached parse {parsed.path} does not match the corpus at line {i + 1}: "
                             f"{doc.text[:60]!r} vs {line.parse_text[:60]!r}; rebuild it with `sentaug parse`")
    return apply_chunk(aug, params, docs, lines[start:stop], seed, start)


def word_edit_distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance over tokens. Common prefix/suffix are cut first: augmentations are local
    edits, so what is left is short and the quadratic part costs little even over 1M lines."""
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    a, b = a[p:], b[p:]
    s = 0
    while s < len(a) and s < len(b) and a[-1 - s] == b[-1 - s]:
        s += 1
    a, b = a[:len(a) - s], b[:len(b) - s]
    if not a or not b:
        return max(len(a), len(b))
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def cache_stats(originals: Sequence[str], augmented: Sequence[str]) -> dict:
    n = len(originals)
    n_changed = sum(o != a for o, a in zip(originals, augmented))
    dist = len_change = 0
    for o, a in zip(originals, augmented):
        if o != a:
            ot, at = o.split(), a.split()
            dist += word_edit_distance(ot, at)
            len_change += len(at) - len(ot)
    return {"n": n, "n_changed": n_changed, "share_changed": round(100 * n_changed / n, 4) if n else 0.0,
            "mean_token_edit_distance": round(dist / n, 6) if n else 0.0,
            "mean_length_change": round(len_change / n, 6) if n else 0.0}


def token_lengths(texts: Sequence[str], tokenizer) -> list[int]:
    """Length in tokens (no special tokens) of each text under a Hugging Face tokenizer. A token-level cache
    entry (`sentaug.models.token_sequences`) counts its stored tokens."""
    from ..models.token_sequences import decode_tokens

    out, plain = [0] * len(texts), []
    for i, t in enumerate(texts):
        toks = decode_tokens(t)
        if toks is None:
            plain.append(i)
        else:
            out[i] = len(toks)
    for start in range(0, len(plain), 4096):
        idx = plain[start:start + 4096]
        enc = tokenizer([texts[i] for i in idx], add_special_tokens=False)["input_ids"]
        for i, ids in zip(idx, enc):
            out[i] = len(ids)
    return out


def token_stats(originals: Sequence[str], augmented: Sequence[str], tokenizer_ref: str) -> dict:
    """Mean length change in tokens (augmented - original, over all lines) under `tokenizer_ref` (a path, hub
    id or ``mirror:``/``package:``/``bundled:`` reference, see `sentaug.models.backbones.resolve_tokenizer`)."""
    from transformers import AutoTokenizer

    from ..models import hub
    from ..models.backbones import resolve_tokenizer

    path = resolve_tokenizer(tokenizer_ref)
    try:
        tok = hub.from_pretrained(AutoTokenizer, path)
    except OSError as e:
        raise FileNotFoundError(f"tokenizer {tokenizer_ref!r}: cannot load {path} ({e.__class__.__name__})") from e
    changed = [i for i, (o, a) in enumerate(zip(originals, augmented)) if o != a]
    lo = token_lengths([originals[i] for i in changed], tok)
    la = token_lengths([augmented[i] for i in changed], tok)
    n = len(originals)
    return {"tokenizer": str(tokenizer_ref), "tokenizer_path": str(path),
            "mean_length_change_tokens": round(sum(b - a for a, b in zip(lo, la)) / n, 6) if n else 0.0}


def build_cache(name: str, corpus: str | os.PathLike, out: str | os.PathLike, seed: int, params: dict | None = None,
                parse: str | os.PathLike | None = None, workers: int = 1,
                spacy_model: str = "en_core_web_sm", tokenizer: str | None = None) -> dict:
    """Augment every line of `corpus` with registry augmentation `name`; write `out` (parquet) and
    ``out.with_suffix(".json")`` (stats, returned). See the module docstring for the format. With
    `tokenizer`, the stats also hold the mean length change in that tokenizer's tokens (`token_stats`)."""
    import pandas as pd

    aug = registry.get(name)
    params = aug.resolve(params)
    if int(seed) != seed:
        raise ValueError(f"seed must be an integer, got {seed!r}")
    seed = int(seed)
    lines = read_corpus(corpus)
    parser = None                       # provenance of the parse, for parse-based augmentations
    if aug.needs_parse and parse is not None:
        augmented, meta = _augment_with_parse(aug, params, seed, lines, parse, workers)
        parser = {"cached_parse": str(parse), **{k: meta.get(k) for k in _PARSER_KEYS}}
    else:
        if aug.needs_parse:             # load here first: a missing pipeline fails before any work
            nlp = worker_nlp(spacy_model)
            parser = {"cached_parse": None, **{k: model_info(nlp)[k] for k in _PARSER_KEYS}}
        tasks = [(name, aug.fn.__module__, params, seed, start, list(part), spacy_model)
                 for start, part in chunks(lines)]
        augmented = [s for res in map_chunks(_augment_chunk, tasks, workers, len(lines),
                                             [len(t[5]) for t in tasks], f"augment {name}") for s in res]
    originals = [ln.text for ln in lines]
    if len(augmented) != len(originals):     # e.g. a StopIteration escaping an augmentation into a generator
        raise RuntimeError(f"augmentation {name!r} returned {len(augmented)} lines for {len(originals)}")
    columns = {"original": originals}
    anchors = originals
    if aug.anchored:
        anchors = [a for a, _ in augmented]
        augmented = [p for _, p in augmented]
        columns["anchor"] = anchors
    table = pd.DataFrame({**columns, "augmented": augmented,
                          "changed": [o != a for o, a in zip(anchors, augmented)],
                          "flag": [ln.flag for ln in lines]})
    stats = {"augmentation": name, "family": aug.family, "params": params, "seed": seed, "anchored": aug.anchored,
             **cache_stats(anchors, augmented),
             "flags": flag_counts(lines), "corpus": str(corpus), "corpus_sha256": sha256_file(corpus),
             "parser": parser}
    if tokenizer:
        stats["tokens"] = token_stats(anchors, augmented, tokenizer)
    out = Path(out)
    with atomic_path(out) as tmp:
        table.to_parquet(tmp, index=False)
        stats.update(file_digest(tmp, "cache"))
    write_json(out.with_suffix(".json"), stats)
    return stats
