"""`sentaug.evaluate.evaluate(model, suites)`: the papers' embedding suites from Python, on any model.

`model` is a model folder or a Hugging Face hub id, read as `sentaug evaluate --model` reads it (checked before
any data is fetched; the pooler a run was trained with, else the folder's sentence-transformers pooling and
normalisation, unless `pooler` is given), or any object with `encode(list[str]) -> array` of shape (n, dim): a
SentenceTransformer, an encoder of your own.

    from sentaug.evaluate import evaluate
    scores = evaluate("sentence-transformers/all-MiniLM-L6-v2", ["sts", "transfer"])
    scores["sts"]["avg"], scores["transfer"]["avg"]

Each suite's distinct sentences are encoded in one `encode` call and scored by the suite's own scoring function
with its defaults (those of `sentaug evaluate <suite>`; `options={"transfer": {"mode": "test"}}` changes
them), so a model folder gets the command line's figures exactly. With `results_dir`, each suite's record goes
to <results_dir>/<model>/<suite>.json, as `sentaug evaluate` files it without --out (a folder's with MTEB's result
files beside it, `sentaug.evaluate.mteb_results`), with the versions that
made it. GLUE fine-tunes a model's weights and the analysis suite reads its tokens: they take a folder, through
`sentaug evaluate glue|analysis --model`.
"""
from __future__ import annotations

import os
import time
from typing import Callable

import numpy as np


def embedding_suites() -> list[str]:
    """The suites `evaluate` runs: those scored from sentence embeddings alone (a suite's `sentences`)."""
    from . import suites as registry
    from .suites import Suite

    return [name for name, suite in registry.registered().items() if type(suite).sentences is not Suite.sentences]


class FolderEncoder:
    """A model folder (or hub id) as an encoder: the sentence embedding `sentaug evaluate --model` computes."""

    def __init__(self, model: str | os.PathLike, pooler: str | None = None, batch_size: int = 128,
                 device: str | None = None):
        from ..models.model_folder import choose_embedding, resolve_model

        self.folder = resolve_model(model)
        embedding = choose_embedding(self.folder, pooler)
        self.pooler, self.normalize = embedding.pooler, embedding.normalize
        self.batch_size, self.device = batch_size, device
        self._loaded = None

    def encode(self, sentences: list[str]) -> np.ndarray:
        from ..models.encoder import embed, load_pretrained

        if self._loaded is None:
            self._loaded = load_pretrained(self.folder.path, self.device)
        net, tokenizer = self._loaded
        return embed(net, tokenizer, sentences, poolers=(self.pooler,), batch_size=self.batch_size,
                     normalize=self.normalize)[self.pooler]


def lookup(encode: Callable, sentences: list[str]) -> Callable[[list[str]], np.ndarray]:
    """Encode the distinct `sentences` in one call; returns `vectors(list) -> array`, row-aligned."""
    unique = list(dict.fromkeys(sentences))
    vectors = np.asarray(encode(unique))
    if vectors.ndim != 2 or vectors.shape[0] != len(unique):
        raise ValueError(f"encode() returned an array of shape {vectors.shape} for {len(unique)} sentences; "
                         f"expected ({len(unique)}, dimension)")
    row = {s: i for i, s in enumerate(unique)}
    return lambda ss: vectors[np.fromiter((row[s] for s in ss), dtype=np.int64, count=len(ss))]


def evaluate(model, suites: str | list[str] = "sts", *, data: str | os.PathLike | None = None,
             origin: str = "official", pooler: str | None = None, results_dir: str | os.PathLike | None = None,
             name: str | None = None, options: dict | None = None, batch_size: int = 128,
             device: str | None = None) -> dict[str, dict]:
    """{suite: its results} of `model` (a folder, a hub id, or an object with `encode`) on `suites` (module
    docstring). `data`: a data folder holding the suites' data (default: fetched once, as `sentaug evaluate`
    does); `name`: what results are filed under (default: the hub id or folder path; an object's class name)."""
    from . import suites as registry
    from .cli import suite_data
    from .embeddings import run_metadata

    suites = [suites] if isinstance(suites, str) else list(suites)
    embedded = embedding_suites()
    unknown = [s for s in suites if s not in embedded]
    if unknown:
        others = [s for s in registry.names() if s not in embedded]
        raise ValueError(f"unknown suite '{unknown[0]}' for evaluate(); choose from {', '.join(embedded)} ("
                         f"{', '.join(others)}: `sentaug evaluate {'|'.join(others)} --model FOLDER`)")
    if hasattr(model, "encode") and not isinstance(model, (str, os.PathLike)):
        encoder, described = model, {"model": name or type(model).__name__, "pooler": None, "normalize": None,
                                     "encoder": f"{type(model).__module__}.{type(model).__qualname__}"}
        name = name or type(model).__name__
    else:
        encoder = FolderEncoder(model, pooler, batch_size, device)     # checked before any data is fetched
        described = {"model": str(encoder.folder.path), "pooler": encoder.pooler, "normalize": encoder.normalize}
        name = name or encoder.folder.name
    results = {}
    for suite in suites:
        start = time.perf_counter()
        folder = suite_data(suite, data, origin, (options or {}).get(suite, {}).get("tasks"))
        sentences, score = registry.get(suite).sentences(folder, **(options or {}).get(suite, {}))
        res = score(lookup(encoder.encode, sentences))
        meta = run_metadata(described["model"], described["pooler"], folder, None, start, described["normalize"])
        results[suite] = {**meta, **described, "suite": suite, **res}
        if results_dir is not None:
            from ..io import write_json
            from .cli import result_file

            write_json(result_file(results_dir, name, suite), results[suite])
            if not hasattr(model, "encode") or isinstance(model, (str, os.PathLike)):   # a folder: MTEB's files too
                from .mteb_results import export

                export(result_file(results_dir, name, suite), encoder.folder.path, suite, name)
    return results

