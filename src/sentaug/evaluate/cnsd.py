"""Chinese STS-B (CNSD), SDA Table 5: Spearman x100 between the cosine of the two sentence embeddings and the
gold score, unsupervised, on the test split (dev recorded): the protocol of the English STS-B column
(`sentaug.evaluate.sts`), on `<data>/cnsd/cnsd-sts-{dev,test}.txt` (read by `sentaug.data.cnsd`)."""
from __future__ import annotations

import time

from ..correlation import correlations, cosine
from ..data.senteval import Pairs

SPLITS = ("dev", "test")


def score_cnsd(splits: dict[str, Pairs], vectors) -> dict:
    """{CNSD: test Spearman, CNSD_dev: dev Spearman, details}. `vectors(sentences) -> array`, row-aligned."""
    details = {s: correlations(cosine(vectors(p.s1), vectors(p.s2)), p.gold) for s, p in splits.items()}
    return {"CNSD": details["test"]["spearman"], "CNSD_dev": details["dev"]["spearman"], "details": details}


def evaluate_cnsd_cli(model, pooler, data, out, batch_size=128, device=None, scale=None, normalize=False) -> dict:
    """`sentaug evaluate cnsd`: read both splits (fail fast), embed every distinct sentence once, score."""
    import torch
    import transformers

    import sentaug

    from ..data.cnsd import read_cnsd_split
    from ..io import write_json
    from ..models.encoder import embed, load_pretrained

    start = time.perf_counter()
    splits = {s: read_cnsd_split(data, s) for s in SPLITS}
    net, tokenizer = load_pretrained(model, device)
    sentences = list(dict.fromkeys(x for p in splits.values() for x in (*p.s1, *p.s2)))
    row = {x: i for i, x in enumerate(sentences)}
    emb = embed(net, tokenizer, sentences, poolers=(pooler,), batch_size=batch_size, progress=True,
                normalize=normalize)[pooler]
    res = score_cnsd(splits, lambda xs: emb[[row[x] for x in xs]])
    from ..models.hub import model_source

    record = {"model": str(model), "model_source": model_source(model), "pooler": pooler, "normalize": normalize,
              "data": str(data), "scale": scale, **res,
              "n_pairs": {s: len(p.gold) for s, p in splits.items()}, "seconds": round(time.perf_counter() - start, 2),
              "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                           "sentaug": sentaug.__version__}}
    write_json(out, record)
    print(f"{model} [{pooler}] CNSD test {res['CNSD']:.2f} (dev {res['CNSD_dev']:.2f})")
    return record
