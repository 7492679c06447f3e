"""What a backbone's forward must not do inside a CUDA graph capture, taken out of it.

DeBERTa-v2 (CARDS Table 6's 1.5B GLUE model) builds its relative positions on every forward with
`torch.tensor(mid - 1).type_as(relative_pos)`: a host-to-device copy, which a capture refuses ("Cannot copy
between CPU and CUDA tensors during CUDA graph capture unless the CPU tensor is pinned"; H200, 2026-11-27). The
positions depend only on the two lengths, the bucket count, the largest position and the device, so they are
built once per such key, in the eager warm-up steps before a capture, and the capture reads that tensor
(DeBERTa only indexes with it, never writes it). The values are the function's own: outputs are unchanged.
"""
from __future__ import annotations

import functools
import importlib


def _memoized_relative_position(build):
    """`build(query_layer, key_layer, bucket_size, max_position)` computed once per key and returned after."""
    built: dict = {}

    @functools.wraps(build)
    def relative_position(query_layer, key_layer, bucket_size: int = -1, max_position: int = -1):
        key = (query_layer.size(-2), key_layer.size(-2), query_layer.device, key_layer.device, bucket_size,
               max_position)
        if key not in built:
            built[key] = build(query_layer, key_layer, bucket_size=bucket_size, max_position=max_position)
        return built[key]

    relative_position.unmemoized = build
    return relative_position


def make_capturable() -> list[str]:
    """Install the memoized relative positions in the transformers modules that build them per forward (once;
    a module transformers does not have is skipped); the names of the modules patched."""
    patched = []
    for name in ("transformers.models.deberta_v2.modeling_deberta_v2",):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if not hasattr(module.build_relative_position, "unmemoized"):
            module.build_relative_position = _memoized_relative_position(module.build_relative_position)
        patched.append(name)
    return patched
