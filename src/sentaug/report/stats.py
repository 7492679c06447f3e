"""Confidence intervals over seeds (the leaderboard).

With n seeds the mean's 95 % interval is mean ± t(0.975, n - 1) · s / sqrt(n), s the sample standard
deviation: Student's t, as n is small (3 seeds: t = 4.303). A difference between two methods is *paired* by
seed (the same seed gives both runs the same data order and initial head), so its interval is the one-sample
interval of the per-seed differences, narrower than two independent intervals when the seeds' effects are
shared.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    mean: float
    half_width: float        # nan with fewer than two values
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def t_quantile(confidence: float, dof: int) -> float:
    """The two-sided Student t critical value: P(|T| <= q) = confidence with `dof` degrees of freedom."""
    from scipy.stats import t

    return float(t.ppf((1 + confidence) / 2, dof))


def t_interval(values: list[float], confidence: float = 0.95) -> Interval:
    values = [float(v) for v in values]
    if not values:
        raise ValueError("an interval needs at least one value")
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return Interval(mean, math.nan, n)
    return Interval(mean, t_quantile(confidence, n - 1) * statistics.stdev(values) / math.sqrt(n), n)


def paired_difference(values: dict, baseline: dict, confidence: float = 0.95) -> Interval:
    """Interval of the mean of values[s] - baseline[s] over the seeds s both have (keys: seeds)."""
    seeds = [s for s in values if s in baseline]
    if not seeds:
        raise ValueError("a paired difference needs seeds present on both sides")
    return t_interval([values[s] - baseline[s] for s in seeds], confidence)
