"""The Hugging Face hub models a scale loads, and which of them no commit pins (config.yaml `backbones.<name>.
revision`, docs/data.md): the workflow names each of those in one line at its start (`warn_unpinned`, called by
the Snakefile), so that a paper-scale dry run says, before anything is spent, which models load whatever the hub
serves that day."""
from __future__ import annotations

import sys

from .scales import scale_settings


def hub_models(config: dict, scale: str | None = None) -> dict[str, dict]:
    """{backbone name: its entry} of every hub model `scale` loads: each hub backbone of config key `backbones`,
    or the stand-in the scale puts in its place (`scales.<scale>.backbones`, `.seq2seq`), and the scale's masked
    LM; the stand-ins that are not hub models (random, package) drop out."""
    s = scale_settings(config, scale)
    backbones = config["backbones"]
    used = set()
    for name, entry in backbones.items():
        if entry["source"] != "hub":
            continue
        if name in s["backbones"]:
            used.add(s["backbones"][name])
        elif entry.get("task") == "seq2seq" and s.get("seq2seq"):
            used.add(s["seq2seq"])
        else:
            used.add(name)
    if s.get("masked_lm"):
        used.add(s["masked_lm"])
    return {name: backbones[name] for name in sorted(used) if backbones[name]["source"] == "hub"}


def unpinned(config: dict, scale: str | None = None) -> list[tuple[str, str]]:
    """(backbone name, hub id) of each hub model `scale` loads that no commit pins."""
    return [(name, entry["id"]) for name, entry in hub_models(config, scale).items() if not entry.get("revision")]


def unpinned_lines(config: dict, scale: str | None = None) -> list[str]:
    """One line per hub model `scale` loads unpinned, naming it and the config key that would pin it."""
    scale = scale or config["scale"]
    return [f"sentaug: unpinned hub model {hub_id} (config key 'backbones.{name}.revision'): scale {scale} loads "
            f"whatever the hub serves (docs/data.md, Pinned models)" for name, hub_id in unpinned(config, scale)]


def warn_unpinned(config: dict, file=None) -> list[str]:
    """Print `unpinned_lines` of the configured scale (on stderr by default); returns them."""
    lines = unpinned_lines(config)
    for line in lines:
        print(line, file=file or sys.stderr, flush=True)
    return lines
