"""Token-embedding geometry (CARDS Figure 1): a 2-D PCA of a backbone's input token embeddings, each token
labelled with its case / sub-token category and its frequency in a corpus.

CARDS calls the first token of a word its *beginning* token and the rest *sub-tokens*, and shows that the
pre-trained RoBERTa's token embeddings separate into lower-case beginnings, upper-case beginnings and
sub-tokens (Fig. 1a) and drift with token frequency (Fig. 1b). Which vocabulary entries begin a word depends on
the tokenizer's scheme:
- byte-level BPE (RoBERTa, GPT-2): a beginning token carries the leading-space marker "Ġ";
- WordPiece (BERT): a sub-token carries the prefix "##";
- SentencePiece: a beginning token carries "▁".
A marker-less BPE or SentencePiece entry is ambiguous: "The" continues a word inside "AlThe" but begins the
first word of a sentence. Given a corpus, such an entry takes the role it plays most often there (the first
token of a pre-tokenized word, or a later one); entries the corpus never uses keep the marker's reading.
Only tokens whose text (marker removed) is ASCII letters are kept: punctuation, digits, special tokens and
byte fragments have no case. With an uncased vocabulary (bert-base-uncased) there is no upper-case category.

`separation` measures how far the categories separate: the accuracy of a nearest-centroid classifier of the
category (in the full embedding space, and in the 2-D projection), next to the majority share that a space
without bias gives. A randomly initialised backbone gives about the majority share.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np

from ..io import write_json

CATEGORIES = ("lower", "upper", "subtoken")
_LETTERS = re.compile(r"[A-Za-z]+")


def scheme(vocab: dict[str, int]) -> str:
    """The tokenizer's word-boundary convention: bpe (Ġ marks a beginning), wordpiece (## marks a sub-token) or
    sentencepiece (▁ marks a beginning)."""
    tokens = list(vocab)
    if any(t.startswith("Ġ") for t in tokens):
        return "bpe"
    if any(t.startswith("##") for t in tokens):
        return "wordpiece"
    if any(t.startswith("▁") for t in tokens):
        return "sentencepiece"
    raise ValueError("cannot tell the tokenizer's word-boundary convention (no Ġ, ## or ▁ tokens)")


def categorise(token: str, kind: str, begins_in_corpus: bool | None = None) -> str | None:
    """`lower`, `upper` (a word-beginning token by its first letter's case) or `subtoken`; None for a token with
    anything but ASCII letters. `begins_in_corpus` settles a marker-less BPE/SentencePiece entry."""
    if kind == "wordpiece":
        begins = not token.startswith("##")
        text = token if begins else token[2:]
    else:
        marker = "Ġ" if kind == "bpe" else "▁"
        begins = token.startswith(marker)
        text = token[len(marker):] if begins else token
        if not begins and begins_in_corpus is not None:
            begins = begins_in_corpus
    if not _LETTERS.fullmatch(text):
        return None
    if not begins:
        return "subtoken"
    return "upper" if text[0].isupper() else "lower"


def pca_2d(x: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Projection of the rows of `x` on their first two principal components, and the share of variance each
    explains."""
    x = np.asarray(x, dtype=np.float64)
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    variance = s ** 2
    return centred @ vt[:2].T, [float(v) for v in variance[:2] / variance.sum()]


def nearest_centroid_accuracy(x: np.ndarray, labels: list[str]) -> float:
    """Share of rows whose nearest (Euclidean) category centroid is their own category's."""
    x = np.asarray(x, dtype=np.float64)
    names = sorted(set(labels))
    y = np.array([names.index(label) for label in labels])
    centroids = np.stack([x[y == k].mean(axis=0) for k in range(len(names))])
    d = ((x ** 2).sum(1)[:, None] - 2 * x @ centroids.T + (centroids ** 2).sum(1)[None, :])
    return float((d.argmin(axis=1) == y).mean())


def token_usage(tokenizer, lines: list[str], batch: int = 1000) -> tuple[Counter, Counter]:
    """How often each token id occurs in `lines`, and how often as the first token of a (pre-tokenized) word."""
    counts: Counter = Counter()
    beginnings: Counter = Counter()
    tokenizer.model_max_length = 1 << 30          # counting only: long lines are not fed to a model
    for start in range(0, len(lines), batch):
        encoded = tokenizer(lines[start:start + batch], add_special_tokens=False)
        for row, ids in enumerate(encoded["input_ids"]):
            counts.update(ids)
            words = encoded.word_ids(row)
            beginnings.update(t for j, t in enumerate(ids) if j == 0 or words[j] != words[j - 1])
    return counts, beginnings


def token_pca(model_dir: str, corpus: str | None = None) -> dict:
    """Every alphabetic vocabulary entry's category, corpus frequency and 2-D PCA coordinates."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir)
    weights = model.get_input_embeddings().weight.detach().cpu().numpy()
    vocab = tokenizer.get_vocab()
    kind = scheme(vocab)
    counts, beginnings = Counter(), Counter()
    if corpus:
        from ..data.corpus import read_corpus

        counts, beginnings = token_usage(tokenizer, [ln.text for ln in read_corpus(corpus) if ln.flag != "empty"])

    def role(i: int) -> bool | None:
        return 2 * beginnings[i] > counts[i] if counts[i] else None

    kept = sorted((i, t, c) for t, i in vocab.items() if i < len(weights) and (c := categorise(t, kind, role(i))))
    if not kept:
        raise ValueError(f"{model_dir}: no alphabetic tokens in the vocabulary")
    ids = [i for i, _, _ in kept]
    categories = [c for _, _, c in kept]
    coords, explained = pca_2d(weights[ids])
    tally = Counter(categories)
    return {
        "model": str(model_dir), "corpus": str(corpus) if corpus else None, "scheme": kind,
        "n_tokens": len(ids), "vocabulary": len(vocab), "explained_variance": explained,
        "categories": {c: tally.get(c, 0) for c in CATEGORIES},
        "separation": {"nearest_centroid_full": nearest_centroid_accuracy(weights[ids], categories),
                       "nearest_centroid_pca": nearest_centroid_accuracy(coords, categories),
                       "majority_share": max(tally.values()) / len(categories)},
        "tokens": {"id": ids, "token": [t for _, t, _ in kept], "category": categories,
                   "pc1": [round(float(v), 5) for v in coords[:, 0]],
                   "pc2": [round(float(v), 5) for v in coords[:, 1]],
                   "frequency": [counts.get(i, 0) for i in ids]},
    }


def token_pca_cli(model: str, out: str, corpus: str | None = None) -> None:
    result = token_pca(model, corpus)
    write_json(Path(out), result)
    sep = result["separation"]
    print(f"{result['n_tokens']} tokens ({result['scheme']}): "
          + ", ".join(f"{c} {n}" for c, n in result["categories"].items())
          + f"; nearest-centroid accuracy {sep['nearest_centroid_full']:.3f} (full), "
            f"{sep['nearest_centroid_pca']:.3f} (2-D), majority share {sep['majority_share']:.3f}")
