"""Representation analysis: geometry of an embedding space and of augmented sentences within it.

- `alignment` / `uniformity` (Wang & Isola 2020, as SimCSE reports them): alignment = E ||f(x) - f(y)||^alpha
  over positive pairs (alpha = 2), uniformity = log E exp(-t ||f(x) - f(y)||^2) over all distinct pairs
  (t = 2), both on L2-normalised vectors. The suite takes STS-B dev pairs with a gold score >= 4 as positives
  and every STS-B dev sentence for uniformity, as SimCSE does.
- `neighbourhood_stats` (VaSCL Figure 2a): for each instance its top-K nearest neighbours by cosine (itself
  excluded); purity = share of neighbours with the instance's label, and the mean distance to them, both
  averaged over all instances (StackOverflow: 20 classes x 1,000).
- `nli_distances` (VaSCL Figure 2b): for each premise with an entailed and a contradicting hypothesis, the
  distance to each (Euclidean between the L2-normalised vectors, the distance of Figure 2a's neighbourhoods;
  cosine distance is the monotone 1 - cos = d^2 / 2). The paper samples 20,000 premises of SNLI + MNLI
  train; offline there are SNLI's dev and test sets (SentEval layout, `nli/snli_senteval`), all of whose
  premises with both hypotheses are used (`nli_limit` caps them).
- `augmentation_cosine` (VaSCL Figure 3b/4b, AugCSE Figure 6 "Similarity"): cosine between each sentence and
  its augmentation.
- Isomorphism between the original and the augmented embedding samples (AugCSE Table 15 / Figure 6, after
  Dubossarsky et al. 2020 "The secret is in the spectra"): `cond_hm` (harmonic mean of the two effective
  condition numbers), `svg` (singular value gap) and `gromov_hausdorff` (see its docstring for the method).
  By default each sample is preprocessed as Dubossarsky et al. do (unit length, mean-centred, unit length).
- `perplexity_difference` (AugCSE Figure 6): mean of ppl(augmented) - ppl(original) under a causal LM
  (GPT-2 in the paper); a model that cannot be loaded offline is a clear error, and the suite records why
  the number is missing instead of failing.
"""
from __future__ import annotations

import math
import os
import time
from pathlib import Path

import numpy as np


def _unit(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def alignment(x, y, alpha: float = 2.0) -> float:
    """E ||x_i - y_i||^alpha over row-aligned positive pairs, on L2-normalised rows (0 = perfectly aligned)."""
    x, y = _unit(x), _unit(y)
    if x.shape != y.shape or len(x) == 0:
        raise ValueError(f"alignment needs two non-empty row-aligned arrays, got {x.shape} and {y.shape}")
    return float(np.mean(np.linalg.norm(x - y, axis=1) ** alpha))


def uniformity(x, t: float = 2.0, chunk: int = 2048) -> float:
    """log E_{i<j} exp(-t ||x_i - x_j||^2) on L2-normalised rows (lower = more uniform; >= -4 on the sphere
    when t = 2). Computed in row blocks, so a few thousand sentences need little memory."""
    x = _unit(x)
    n = len(x)
    if n < 2:
        raise ValueError(f"uniformity needs at least 2 vectors, got {n}")
    total, count = 0.0, n * (n - 1) // 2
    for s in range(0, n, chunk):
        block = x[s:s + chunk]
        sq = np.clip(2.0 - 2.0 * block @ x.T, 0.0, None)  # ||a - b||^2 for unit vectors
        rows = np.arange(s, s + len(block))[:, None]
        mask = np.arange(n)[None, :] > rows                 # each unordered pair once
        total += float(np.exp(-t * sq[mask]).sum())
    return math.log(total / count)


def neighbourhood_stats(emb, labels, ks=(1, 5, 10, 20, 50, 100), chunk: int = 1024) -> dict:
    """Purity and mean distance of each instance's top-K cosine neighbours (self excluded), averaged over all
    instances, for each K in `ks`. Distances: cosine distance (1 - cos) and the Euclidean distance between
    the normalised vectors (sqrt(2 - 2 cos)). Exact search in row blocks (torch matmul + topk)."""
    import torch

    x = torch.as_tensor(_unit(emb), dtype=torch.float64)
    labels = np.asarray(labels)
    n = len(x)
    if len(labels) != n:
        raise ValueError(f"neighbourhood_stats: {n} vectors but {len(labels)} labels")
    kmax = max(ks)
    if not 0 < kmax < n:
        raise ValueError(f"neighbourhood_stats: K must be between 1 and {n - 1}, got {kmax}")
    lab = torch.as_tensor(np.unique(labels, return_inverse=True)[1])
    same = torch.zeros(n, kmax, dtype=torch.float64)
    cos = torch.zeros(n, kmax, dtype=torch.float64)
    for s in range(0, n, chunk):
        sim = x[s:s + chunk] @ x.T
        rows = torch.arange(s, min(s + chunk, n))
        sim[rows - s, rows] = -math.inf                 # exclude self
        order = torch.topk(sim, kmax, dim=1, sorted=True).indices
        cos[rows] = torch.gather(sim, 1, order)
        same[rows] = (lab[order] == lab[rows][:, None]).double()
    out = {}
    for k in ks:
        c = cos[:, :k]
        out[str(k)] = {"purity": float(same[:, :k].mean()), "cosine_distance": float((1 - c).mean()),
                       "euclidean_distance": float(torch.sqrt(torch.clamp(2 - 2 * c, min=0)).mean())}
    return out


def nli_triples(pairs) -> list[tuple[str, str, str]]:
    """(premise, entailed hypothesis, contradicting hypothesis) for every premise that has both, in order of
    the premise's first appearance; with several of a kind, the first."""
    found: dict[str, dict[str, str]] = {}
    for premise, hypothesis, label in pairs:
        found.setdefault(premise, {}).setdefault(label, hypothesis)
    return [(p, h["entailment"], h["contradiction"]) for p, h in found.items()
            if "entailment" in h and "contradiction" in h]


def nli_distances(premises, entailed, contradicted) -> dict:
    """Per premise, the Euclidean distance between unit vectors to its entailed and to its contradicting
    hypothesis (rows aligned), with their means and the share of premises closer to the entailed one."""
    p, e, c = _unit(premises), _unit(entailed), _unit(contradicted)
    if not p.shape == e.shape == c.shape or len(p) == 0:
        raise ValueError(f"nli_distances: shapes {p.shape}, {e.shape}, {c.shape} must be equal and non-empty")
    d_e, d_c = np.linalg.norm(p - e, axis=1), np.linalg.norm(p - c, axis=1)
    return {"n": len(p), "distance": "euclidean between unit vectors",
            "mean_entailment": float(d_e.mean()), "mean_contradiction": float(d_c.mean()),
            "share_entailment_closer": float(np.mean(d_e < d_c)),
            "entailment": [round(float(v), 5) for v in d_e], "contradiction": [round(float(v), 5) for v in d_c]}


def augmentation_cosine(orig, aug) -> np.ndarray:
    """Row-wise cosine between each sentence's embedding and its augmentation's."""
    a, b = _unit(orig), _unit(aug)
    if a.shape != b.shape:
        raise ValueError(f"augmentation_cosine: shapes {a.shape} and {b.shape} differ")
    return (a * b).sum(1)


# ----------------------------------------------------------------------------------------- isomorphism

def preprocess(x) -> np.ndarray:
    """Dubossarsky et al.'s normalisation: unit length, mean-centred, unit length again."""
    x = _unit(x)
    return _unit(x - x.mean(0, keepdims=True))


def spectrum(x, normalize: bool = True) -> np.ndarray:
    """Singular values, descending."""
    x = preprocess(x) if normalize else np.asarray(x, dtype=np.float64)
    return np.linalg.svd(x, compute_uv=False)


def effective_rank(s) -> int:
    """floor(exp(H(s / sum s))) (Roy & Vetterli's effective rank, floored as Dubossarsky et al.'s code does;
    a 1e-9 tolerance keeps exp(log 4) = 3.999... from flooring to 3)."""
    s = np.asarray(s, dtype=np.float64)
    p = s / s.sum()
    p = p[p > 0]
    return max(1, int(math.floor(math.exp(-(p * np.log(p)).sum()) + 1e-9)))


def effective_condition_number(s) -> float:
    """sigma_1 / sigma_erank: the condition number restricted to the directions that carry the spectrum."""
    s = np.sort(np.asarray(s, dtype=np.float64))[::-1]
    tail = s[effective_rank(s) - 1]
    return float("inf") if tail == 0 else float(s[0] / tail)


def cond_hm(x, y, normalize: bool = True, spectra: bool = False) -> float:
    """Harmonic mean of the effective condition numbers of samples `x` and `y` (COND-HM / HM-COND). With
    `spectra=True`, `x` and `y` are singular values instead of embedding matrices."""
    sx, sy = (x, y) if spectra else (spectrum(x, normalize), spectrum(y, normalize))
    kx, ky = effective_condition_number(sx), effective_condition_number(sy)
    return 2 * kx * ky / (kx + ky)


def svg(x, y, normalize: bool = True, spectra: bool = False) -> float:
    """Singular value gap: sum_i (log sigma_i(x) - log sigma_i(y))^2 over the shared leading singular values
    (0 for isomorphic spectra). Zero singular values are floored at 1e-12 before the log."""
    sx, sy = (x, y) if spectra else (spectrum(x, normalize), spectrum(y, normalize))
    sx, sy = np.sort(np.asarray(sx, float))[::-1], np.sort(np.asarray(sy, float))[::-1]
    k = min(len(sx), len(sy))
    lx, ly = np.log(np.maximum(sx[:k], 1e-12)), np.log(np.maximum(sy[:k], 1e-12))
    return float(((lx - ly) ** 2).sum())


def rips_h0_deaths(x) -> np.ndarray:
    """Death times of the finite 0-dimensional bars of the Vietoris-Rips filtration of the point set `x`
    (Euclidean), i.e. the edge lengths of its minimum spanning tree (every bar is born at 0; the one infinite
    bar is left out). Prim's algorithm on the dense distance matrix, O(n^2), exact with duplicate points."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n < 2:
        return np.zeros(0)
    sq = (x * x).sum(1)
    dist = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0.0))
    in_tree = np.zeros(n, dtype=bool)
    in_tree[0] = True
    best = dist[0].copy()
    deaths = []
    for _ in range(n - 1):
        cand = np.where(in_tree, np.inf, best)
        j = int(np.argmin(cand))
        deaths.append(cand[j])
        in_tree[j] = True
        best = np.minimum(best, dist[j])
    return np.sort(np.asarray(deaths))


def bottleneck_h0(a, b) -> float:
    """Exact bottleneck distance between two 0-dimensional diagrams given by their death times (births 0):
    a point (0, d) costs |d - d'| to match (0, d') (L-infinity) and d / 2 to send to the diagonal. Binary
    search over the candidate values with a perfect-matching test (Hopcroft-Karp, scipy)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    a, b = np.asarray(a, float), np.asarray(b, float)
    n, m = len(a), len(b)
    if n == 0 and m == 0:
        return 0.0
    cost_ab = np.abs(a[:, None] - b[None, :])
    candidates = np.unique(np.concatenate([cost_ab.ravel(), a / 2, b / 2]))

    def feasible(eps: float) -> bool:
        # left: a_0..a_{n-1}, diag copies of b (n..n+m-1); right: b_0..b_{m-1}, diag copies of a (m..m+n-1)
        rows, cols = np.nonzero(cost_ab <= eps)
        r = [rows, np.nonzero(a / 2 <= eps)[0]]
        c = [cols, m + np.nonzero(a / 2 <= eps)[0]]
        jb = np.nonzero(b / 2 <= eps)[0]
        r.append(n + jb), c.append(jb)
        dd_r, dd_c = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")  # diag-diag: always free
        r.append(n + dd_r.ravel()), c.append(m + dd_c.ravel())
        rr, cc = np.concatenate(r), np.concatenate(c)
        graph = csr_matrix((np.ones(len(rr), dtype=np.int8), (rr, cc)), shape=(n + m, m + n))
        return bool((maximum_bipartite_matching(graph, perm_type="column") >= 0).all())

    lo, hi = 0, len(candidates) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(candidates[mid]):
            hi = mid
        else:
            lo = mid + 1
    return float(candidates[lo])


def gromov_hausdorff(x, y, sample: int | None = 500, seed: int = 0, normalize: bool = True) -> float:
    """Gromov-Hausdorff distance between two embedding samples, approximated as the isomorphism literature
    does (Patra et al. 2019; Vulic et al. 2020; Dubossarsky et al. 2020, whose code takes Rips persistence
    diagrams in dimension 0 only): the bottleneck distance between the 0-dimensional Vietoris-Rips
    persistence diagrams of the two point clouds. Here those diagrams are computed exactly (MST edge
    lengths) and the bottleneck distance exactly, without gudhi. Chazal et al. (2009) give
    d_B <= 2 d_GH, so the value is a lower bound on twice the true GH distance (0 for isometric samples).
    At most `sample` rows of each (the same rows of both when they are aligned) are used, drawn with `seed`.
    """
    x = preprocess(x) if normalize else np.asarray(x, float)
    y = preprocess(y) if normalize else np.asarray(y, float)
    rng = np.random.default_rng(seed)
    if sample and len(x) == len(y) and len(x) > sample:  # row-aligned samples keep their pairing
        idx = np.sort(rng.choice(len(x), sample, replace=False))
        x, y = x[idx], y[idx]
    if sample and len(x) > sample:
        x = x[np.sort(rng.choice(len(x), sample, replace=False))]
    if sample and len(y) > sample:
        y = y[np.sort(rng.choice(len(y), sample, replace=False))]
    return bottleneck_h0(rips_h0_deaths(x), rips_h0_deaths(y))


# ----------------------------------------------------------------------------------------- perplexity

def load_causal_lm(lm: str, device=None):
    """A causal LM and its tokenizer from a local folder or a hub id, pinned as ``<id>@<commit>`` where given
    (`sentaug.models.hub`; the workflow passes config.yaml's pin of gpt2); a clear error when offline."""
    from transformers import AutoModelForCausalLM

    from ..models.backbones import from_pretrained
    from ..models.encoder import pick_device

    model, tok = from_pretrained(AutoModelForCausalLM, lm, f"causal LM {lm!r} cannot be loaded (not a local folder "
                                 f"and not in the Hugging Face cache; offline runs need --lm PATH to a local copy "
                                 f"of GPT-2)")
    return model.to(pick_device(device)).eval(), tok


def perplexities(model, tokenizer, sentences: list[str], batch_size: int = 32) -> np.ndarray:
    """exp(mean token NLL) of each sentence. The tokenizer's BOS token (GPT-2: <|endoftext|>) is prepended
    so that every token of the sentence is predicted; without one the first token is only context."""
    import torch
    import torch.nn.functional as F

    device = next(model.parameters()).device
    bos = tokenizer.bos_token_id
    out = np.zeros(len(sentences))
    with torch.inference_mode():
        for s in range(0, len(sentences), batch_size):
            ids = [([bos] if bos is not None else []) + tokenizer(t, add_special_tokens=False)["input_ids"]
                   for t in sentences[s:s + batch_size]]
            width = max(2, max(len(i) for i in ids))
            pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
            inp = torch.tensor([i + [pad] * (width - len(i)) for i in ids], device=device)
            mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i in ids], device=device)
            logits = model(input_ids=inp, attention_mask=mask).logits.float()
            nll = F.cross_entropy(logits[:, :-1].transpose(1, 2), inp[:, 1:], reduction="none")
            m = mask[:, 1:].float()
            mean_nll = (nll * m).sum(1) / m.sum(1).clamp(min=1)
            out[s:s + len(ids)] = torch.exp(mean_nll).cpu().numpy()
    return out


def perplexity_difference(originals: list[str], augmented: list[str], lm: str = "gpt2", device=None,
                          batch_size: int = 32) -> dict:
    """AugCSE Figure 6: mean over pairs of ppl(augmented) - ppl(original) under causal LM `lm`."""
    if len(originals) != len(augmented):
        raise ValueError(f"perplexity_difference: {len(originals)} originals but {len(augmented)} augmentations")
    model, tok = load_causal_lm(lm, device)
    po, pa = perplexities(model, tok, originals, batch_size), perplexities(model, tok, augmented, batch_size)
    return {"lm": lm, "difference": float(np.mean(pa - po)), "original": float(np.mean(po)),
            "augmented": float(np.mean(pa)), "n": len(po)}


# ------------------------------------------------------------------------------------------------ suite

def read_labelled_csv(path: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    df = pd.read_csv(path, keep_default_na=False)
    missing = {"text", "label"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    return df["text"].astype(str).tolist(), df["label"].to_numpy()


def read_cache_rows(path: str | os.PathLike):
    """An augmentation cache (checked) and the mask of its usable rows: changed, neither side blank."""
    from ..intermediates import read_cache

    path = Path(path)
    df = read_cache(path)
    missing = {"original", "augmented", "changed"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    ok = df["changed"].astype(bool) & (df["original"].str.strip() != "") & (df["augmented"].str.strip() != "")
    return df, ok.to_numpy()


def read_augmentations(path: str | os.PathLike) -> tuple[list[str], list[str]]:
    """(originals, augmentations) of the rows an augmentation changed (AugCSE drops unchanged ones)."""
    df, ok = read_cache_rows(path)
    df = df[ok]
    return df["original"].tolist(), df["augmented"].tolist()


def augmentation_name(path: str | os.PathLike) -> str:
    """`results/augment/<corpus>/<augmentation>/seed<S>.parquet` -> `<augmentation>/seed<S>`."""
    p = Path(path)
    return f"{p.parent.name}/{p.stem}"


def analyse_augmentations(model, tokenizer, pooler: str, path, iso_sample: int = 5000, gh_sample: int = 500,
                          lm: str | None = "gpt2", seed: int = 0, batch_size: int = 128, device=None) -> dict:
    from ..models.encoder import embed

    originals, augmented = read_augmentations(path)
    res = {"file": str(path), "n_changed": len(originals)}
    if len(originals) < 2:
        res["skipped"] = "fewer than 2 changed rows"
        return res
    rng = np.random.default_rng(seed)
    if iso_sample and len(originals) > iso_sample:
        keep = np.sort(rng.choice(len(originals), iso_sample, replace=False))
        originals, augmented = [originals[i] for i in keep], [augmented[i] for i in keep]
    res["n_used"] = len(originals)
    emb = embed(model, tokenizer, originals + augmented, poolers=(pooler,), batch_size=batch_size,
                progress=True)[pooler]
    eo, ea = emb[:len(originals)], emb[len(originals):]
    cos = augmentation_cosine(eo, ea)
    res["cosine"] = {"mean": float(cos.mean()), "std": float(cos.std()), "median": float(np.median(cos))}
    res["cond_hm"] = cond_hm(eo, ea)
    res["svg"] = svg(eo, ea)
    if gh_sample:   # the same rows of both samples, so GH compares a set with its own augmentation
        res["gromov_hausdorff"] = gromov_hausdorff(eo, ea, sample=gh_sample, seed=seed)
    if lm:
        try:
            res["perplexity"] = perplexity_difference(originals, augmented, lm, device)
        except FileNotFoundError as e:
            res["perplexity"] = {"skipped": str(e)}
    return res


NLI_SPLITS = ("dev", "test")


def _sample(n: int, limit: int | None, seed: int):
    """The sorted indices of `limit` of `n` items drawn without replacement, or None where all are kept."""
    if not limit or n <= limit:
        return None
    return np.sort(np.random.default_rng(seed).choice(n, limit, replace=False))


def _alignment_uniformity(data: Path, vectors, **_) -> dict | str:
    """Alignment of STS-B dev's positive pairs (gold >= 4) and uniformity of its sentences, or why not."""
    from ..data.senteval import read_split

    sts_dev = data / "sts" / "STSBenchmark" / "sts-dev.csv"
    if not sts_dev.is_file():
        return f"{sts_dev} not found"
    pairs = read_split(data, "STSBenchmark", "dev")
    pos = pairs.gold >= 4.0
    s1 = [s for s, keep in zip(pairs.s1, pos) if keep]
    s2 = [s for s, keep in zip(pairs.s2, pos) if keep]
    sentences = list(dict.fromkeys([*pairs.s1, *pairs.s2]))
    v = vectors(sentences)
    row = {s: i for i, s in enumerate(sentences)}
    return {"alignment": alignment(v[[row[s] for s in s1]], v[[row[s] for s in s2]]), "uniformity": uniformity(v),
            "alignment_uniformity_n": {"positive_pairs": int(pos.sum()), "sentences": len(sentences)}}


def _stackoverflow(data: Path, vectors, ks, stackoverflow_limit, seed, **_) -> dict | str:
    """The label purity of StackOverflow's nearest neighbours (a sample of `stackoverflow_limit`), or why not."""
    so_csv = data / "clustering" / "stackoverflow.csv"
    if not so_csv.is_file():
        return f"{so_csv} not found"
    texts, labels = read_labelled_csv(so_csv)
    keep = _sample(len(texts), stackoverflow_limit, seed)
    if keep is not None:
        texts, labels = [texts[i] for i in keep], labels[keep]
    return {"stackoverflow": {"n": len(texts), "top_k": neighbourhood_stats(vectors(texts), labels, ks)}}


def _nli(data: Path, vectors, nli_limit, seed, **_) -> dict | str:
    """Distances within SNLI's (premise, entailment, contradiction) triples (a sample of `nli_limit`), or why not."""
    from ..data.nli import read_nli_pairs

    nli_dir = data / "nli" / "snli_senteval"
    splits = [sp for sp in NLI_SPLITS if (nli_dir / f"labels.{sp}").is_file()]
    if not splits:
        return f"{nli_dir}: no SNLI split ({', '.join(NLI_SPLITS)}) found"
    triples = nli_triples([pair for sp in splits for pair in read_nli_pairs(nli_dir, sp)])
    keep = _sample(len(triples), nli_limit, seed)
    if keep is not None:
        triples = [triples[i] for i in keep]
    v = vectors([t for triple in triples for t in triple]).reshape(len(triples), 3, -1)
    return {"nli": {"splits": splits, **nli_distances(v[:, 0], v[:, 1], v[:, 2])}}


# The analysis's parts on the data folder: each gives its entries of the record, or why it was skipped; the
# augmentations' part reads the caches given instead (`analyse_augmentations`).
DATA_PARTS = {"alignment_uniformity": _alignment_uniformity, "stackoverflow": _stackoverflow, "nli": _nli}
PARTS = (*DATA_PARTS, "augmentations")


def evaluate_analysis_cli(model, pooler, data, out, augmentations=(), ks=(1, 5, 10, 20, 50, 100), parts=None,
                          stackoverflow_limit: int | None = None, iso_sample: int = 5000, gh_sample: int = 500,
                          lm: str | None = "gpt2", seed: int = 0, batch_size: int = 128, device=None,
                          scale=None, nli_limit: int | None = None) -> dict:
    """`sentaug evaluate analysis`: compute what the inputs allow (of `parts`, default all); write one JSON
    atomically. What cannot be computed is listed under `skipped` with the reason."""
    import torch
    import transformers

    import sentaug

    from ..io import write_json
    from ..models.encoder import embed, load_pretrained

    start = time.perf_counter()
    data = Path(data)
    if not data.is_dir():
        raise FileNotFoundError(f"{data}: data folder not found")
    parts = tuple(parts or PARTS)
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise ValueError(f"unknown analysis part {unknown[0]!r}; choose from {', '.join(PARTS)}")
    augmentations = augmentations if "augmentations" in parts else ()
    for path in augmentations:
        if not Path(path).is_file():
            raise FileNotFoundError(f"{path}: augmentation cache not found")
    net, tokenizer = load_pretrained(model, device)
    from ..models.hub import model_source

    record = {"model": str(model), "model_source": model_source(model), "pooler": pooler, "data": str(data),
              "scale": scale, "skipped": {}}

    def vectors(sentences):
        return embed(net, tokenizer, sentences, poolers=(pooler,), batch_size=batch_size, progress=True)[pooler]

    for name, part in DATA_PARTS.items():
        if name in parts:
            result = part(data, vectors, ks=ks, stackoverflow_limit=stackoverflow_limit, nli_limit=nli_limit,
                          seed=seed)
            if isinstance(result, str):
                record["skipped"][name] = result
            else:
                record.update(result)
    record["augmentations"] = {
        augmentation_name(p): analyse_augmentations(net, tokenizer, pooler, p, iso_sample, gh_sample, lm, seed,
                                                    batch_size, device)
        for p in augmentations}
    record["seconds"] = round(time.perf_counter() - start, 2)
    record["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__,
                          "sentaug": sentaug.__version__}
    write_json(out, record)
    return record
