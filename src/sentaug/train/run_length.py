"""How many optimizer steps a run takes, written once: the trainer runs them (its learning-rate schedule decays
over them) and the bill prices them (sentaug.pricing.cost). Importing this module imports nothing else."""
from __future__ import annotations

import math


def total_steps(spec: dict, examples: int) -> int:
    """`max_steps` when the spec sets it, else `epochs` passes over `examples` training examples in batches of
    `batch_size` (the last batch of an epoch may be short)."""
    return spec["max_steps"] or spec["epochs"] * math.ceil(examples / spec["batch_size"])
