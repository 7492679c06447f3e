"""The dev score a training run selects its checkpoint by: Spearman x100 of the cosine similarities on STS-B dev
(or CNSD dev for a Chinese run), scored as `sentaug.evaluate.sts` scores the STS suite, with the same readers,
embedding and correlations, which stand below both (tests/test_module_graph.py: training imports no evaluation).
"""
from __future__ import annotations

import os

import numpy as np
import torch

from ..correlation import correlations, cosine
from ..data.senteval import STS_YEARS, Pairs, read_split, read_sts_year, task_folder
from ..models.encoder import batching, embed, tokenized_batches


class DevEvaluator:
    """Fast dev-set check for training (default STS-B dev, 1,500 pairs): pairs are loaded once.

    `task` is STSBenchmark or SICKRelatedness with `split` train/dev/test, or an STS12-16 year ("all"
    Spearman; `split` ignored); or `pairs` given directly (CNSD dev for a Chinese run). Calling it returns
    Spearman x100 for `pooler`; `embed` restores the model's train/eval state, so it is safe to call between
    optimiser steps. On a GPU it embeds in bf16 and large batches (`sentaug.models.encoder.embed`; fp32 within
    `embedding_precision("fp32")`). The sentences are tokenized,
    length-sorted and padded once, at the first call, and those batches are reused by every later call with
    the same tokenizer and batch size (the vectors, hence the score, are those of `embed`).
    """

    def __init__(self, data_dir: str | os.PathLike | None = None, task: str = "STSBenchmark", split: str = "dev",
                 pairs: Pairs | None = None):
        self.task, self.split = task, split
        if pairs is not None:
            self.pairs = pairs
        elif task in STS_YEARS:
            topics = read_sts_year(task_folder(data_dir, task))
            self.pairs = Pairs([s for p in topics.values() for s in p.s1], [s for p in topics.values() for s in p.s2],
                               np.concatenate([p.gold for p in topics.values()]))
        else:
            self.pairs = read_split(data_dir, task, split)
        self.sentences = list(dict.fromkeys([*self.pairs.s1, *self.pairs.s2]))
        row = {s: i for i, s in enumerate(self.sentences)}
        self._i1 = np.array([row[s] for s in self.pairs.s1], dtype=np.int64)
        self._i2 = np.array([row[s] for s in self.pairs.s2], dtype=np.int64)
        self._batches, self._batched_by = None, None

    def __call__(self, model, tokenizer, pooler: str = "cls_before_pooler", batch_size: int | None = None) -> float:
        plan = batching(torch.device(getattr(model, "device", "cpu")), batch_size)    # (a Hugging Face model's)
        if self._batched_by is None or self._batched_by[0] is not tokenizer or self._batched_by[1] != plan:
            self._batches = list(tokenized_batches(tokenizer, self.sentences, plan[0], max_tokens=plan[1]))
            self._batched_by = (tokenizer, plan)
        v = embed(model, tokenizer, self.sentences, poolers=(pooler,), batch_size=plan[0],
                  batches=self._batches)[pooler]
        return correlations(cosine(v[self._i1], v[self._i2]), self.pairs.gold)["spearman"]
