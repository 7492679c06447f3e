"""STS-B paraphrase retrieval, an evaluation suite registered from outside sentaug (docs/extending.md).

Each STS-B test pair whose gold similarity is at least THRESHOLD (of 5: "mostly" or "completely equivalent") is
a query: its first sentence must find its second among every distinct second sentence of the split, ranked by
cosine. Reported x100: the mean reciprocal rank (MRR) and recall@1 (the partner ranked first). A candidate tied
with the partner ranks above it (a model that maps everything to one vector scores 1 / candidates, not 100).
It reads the `sts` data folder the built-in STS suite reads, so it needs no data of its own.
"""
from __future__ import annotations

import time

from sentaug.evaluate.suites import Flag, Suite, register

THRESHOLD = 4.0
TIE = 1e-9          # cosines this close are tied: equal vectors' cosines differ by rounding alone


def retrieval_scores(queries, partners, candidates, vectors) -> dict:
    """MRR and recall@1 (x100) of each query finding its partner among `candidates`; `vectors(sentences) ->
    array` gives the sentence embeddings, row-aligned."""
    import numpy as np

    def unit(x):
        x = np.asarray(x, dtype=np.float64)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    q, c = unit(vectors(queries)), unit(vectors(candidates))
    cosine = q @ c.T                                               # queries x candidates
    index = {s: i for i, s in enumerate(candidates)}
    own = cosine[np.arange(len(queries)), [index[p] for p in partners]]
    rank = (cosine >= own[:, None] - TIE).sum(axis=1)               # the partner itself, and those tied or above
    return {"mrr": round(float(100 * np.mean(1.0 / rank)), 4), "recall_at_1": round(float(100 * np.mean(rank == 1)), 4),
            "n_queries": len(queries), "n_candidates": len(candidates), "threshold": THRESHOLD}


def load_queries(data):
    """(queries, their partners, every distinct second sentence) of STS-B's test split under `data`."""
    from sentaug.data.senteval import read_split

    test = read_split(data, "STSBenchmark", "test")
    pairs = [(a, b) for a, b, gold in zip(test.s1, test.s2, test.gold) if gold >= THRESHOLD]
    return [a for a, _ in pairs], [b for _, b in pairs], list(dict.fromkeys(test.s2))


@register("stsb_retrieval")
class STSBRetrieval(Suite):
    help = "STS-B paraphrase retrieval: MRR and recall@1 of each near-paraphrase among the test split's sentences"
    folders = ("sts",)
    data_help = "sts/STSBenchmark"
    tasks = False
    flags = (Flag("--top", type=int, default=None, help="score only the first N queries (default: all)"),)
    # the distinct sentences it embeds (338 queries, 1,337 candidates), counted from the official STS-B test file
    workload = {"n": 1634, "basis": "measured"}

    def sentences(self, data, top: int | None = None):
        queries, partners, candidates = load_queries(data)
        queries, partners = queries[:top], partners[:top]
        return [*queries, *candidates], lambda vectors: retrieval_scores(queries, partners, candidates, vectors)

    def run(self, a):
        from sentaug.evaluate.embeddings import embed_lookup, load_model, run_metadata
        from sentaug.io import write_json

        start = time.perf_counter()
        sentences, score = self.sentences(a.data, a.top)          # the data first: a wrong folder fails fast
        net, tokenizer = load_model(a.model, a.device)
        res = score(embed_lookup(net, tokenizer, sentences, a.pooler, a.batch_size, normalize=a.normalize))
        write_json(a.out, {**run_metadata(a.model, a.pooler, a.data, a.scale, start, a.normalize),
                           "suite": self.name, **res})
        print(f"{a.model} [{a.pooler}] STS-B retrieval: MRR {res['mrr']:.2f}, recall@1 {res['recall_at_1']:.2f} "
              f"({res['n_queries']} queries, {res['n_candidates']} candidates)")
