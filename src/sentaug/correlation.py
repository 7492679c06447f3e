"""Pearson's r and Spearman's rho in numpy, as scipy.stats computes them (tests/evaluate/test_sts.py checks them against
scipy), and SentEval's row-wise cosine. Kept out of scipy.stats on purpose: importing it costs every evaluation and
training process ~0.9 s of start-up. Used by the STS protocol (SentEval's Spearman), GLUE's STS-B metric and the
trainer's dev score (`sentaug.train.dev_score`): at the bottom of the package, below both."""
from __future__ import annotations

import numpy as np


def pearson(x, y) -> float:
    """Pearson's r in float64; NaN when either side is constant (as scipy.stats.pearsonr gives)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    x, y = x - x.mean(), y - y.mean()
    norm = np.linalg.norm(x) * np.linalg.norm(y)
    return float(np.clip((x @ y) / norm, -1.0, 1.0)) if norm > 0 else float("nan")


def average_ranks(x) -> np.ndarray:
    """Ranks 1..n, ties sharing their mean rank (scipy.stats.rankdata's default)."""
    x = np.asarray(x)
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])   # first index of each run of ties
    ends = np.r_[starts[1:], len(x)]
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)
    return ranks


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's r of the average ranks."""
    return pearson(average_ranks(x), average_ranks(y))


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine in float64, NaN-safe like SentEval (nan_to_num on inputs and result: 0/0 -> 0)."""
    a = np.nan_to_num(np.asarray(a, dtype=np.float64))
    b = np.nan_to_num(np.asarray(b, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.nan_to_num(cos)


def correlations(sys: np.ndarray, gold: np.ndarray) -> dict:
    """Spearman and Pearson x100 (NaN when either side is constant or has < 2 pairs, as scipy gives)."""
    if len(gold) < 2:
        return {"spearman": float("nan"), "pearson": float("nan"), "n": len(gold)}
    return {"spearman": 100 * spearman(sys, gold), "pearson": 100 * pearson(sys, gold), "n": len(gold)}
