"""Pearson's r and Spearman's rho in numpy, as scipy.stats computes them (tests/evaluate/test_sts.py checks them against
scipy). Kept out of scipy.stats on purpose: importing it costs every evaluation and training process ~0.9 s of
start-up. Used by the STS protocol (SentEval's Spearman) and GLUE's STS-B metric."""
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
