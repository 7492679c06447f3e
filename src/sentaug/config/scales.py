"""A scale's settings as one job needs them: the stand-in backbone of a paper's, an augmentation's call (its
operation, parameters and the backbone folders it reads), languages, the data and model mirrors."""
from __future__ import annotations

import os
from pathlib import Path

from ..choices import unknown
from .validation import ConfigError


def augmentation_set(config: dict, name: str, scale: str | None = None) -> list[str]:
    """The augmentations of set `name` (config key `augmentation_sets`) used at `scale`."""
    sets = config.get("augmentation_sets") or {}
    if name not in sets:
        raise ConfigError(f"unknown augmentation set '{name}' (config key 'augmentation_sets')")
    return list((sets[name].get("scales") or {}).get(scale or config["scale"], sets[name]["augmentations"]))


def scale_settings(config: dict, scale: str | None = None) -> dict:
    return config["scales"][scale or config["scale"]]


def papers_scale(config: dict) -> str:
    """The scale whose numbers compare with the papers' (`scales.<scale>.compares_with_papers`), the first of
    config key `scales` that says so: the one whose runs, settings and bill stand beside the papers'."""
    found = [scale for scale, settings in config["scales"].items() if settings["compares_with_papers"]]
    if not found:
        raise ConfigError("no scale compares with the papers: set scales.<scale>.compares_with_papers: true on one")
    return found[0]


def stand_in(config: dict, backbone: str, scale: str | None = None) -> str:
    """The backbone actually trained at this scale in place of the paper's `backbone`."""
    return scale_settings(config, scale)["backbones"].get(backbone, backbone)


def augmentation_backbone(config: dict, ref: str, scale: str | None = None) -> str:
    """The backbone an augmentation parameter ``backbone:<name>`` stands for at this scale: the stand-in of
    a paper backbone (CARDS's RoBERTa tokenizer), or with ``backbone:masked_lm`` the scale's masked LM
    (CTxt's substitutes; `scales.<scale>.masked_lm`, bert-base-uncased's stand-in when not given). A
    sequence-to-sequence backbone (`task: seq2seq`: AugCSE's translation and style models) is replaced by the
    scale's `seq2seq` stand-in where one is given."""
    name = ref.split(":", 1)[1]
    s = scale_settings(config, scale)
    if name == "masked_lm":
        return s.get("masked_lm") or stand_in(config, "bert-base-uncased", scale)
    if config["backbones"].get(name, {}).get("task") == "seq2seq" and s.get("seq2seq"):
        return s["seq2seq"]
    return stand_in(config, name, scale)


def augmentation_call(config: dict, name: str, backbones_dir: str | os.PathLike,
                      scale: str | None = None) -> tuple[str, dict, list[str]]:
    """A declared augmentation as (registry op, parameters, backbone folders it reads): the scale's
    `augmentation_params` of it set over its declaration; each ``backbone:`` parameter becomes the folder of
    its backbone at this scale under `backbones_dir`."""
    if name not in config["augmentations"]:
        raise ConfigError(unknown("augmentation", name, config["augmentations"],
                                  full_list="sentaug list augmentations"))
    at_scale = scale_settings(config, scale).get("augmentation_params") or {}
    params = {**config["augmentations"][name], **at_scale.get(name, {})}
    op, folders = params.pop("op"), []
    params.pop("language", None)        # which corpus it applies to, not a parameter of the operation
    for key, value in params.items():
        if isinstance(value, str) and value.startswith("backbone:"):
            params[key] = str(Path(backbones_dir) / augmentation_backbone(config, value, scale))
            folders.append(params[key])
    return op, params, sorted(set(folders))


def augmentation_language(config: dict, name: str) -> str:
    """The language of the corpus a declared augmentation applies to (`language:`, default en)."""
    return config["augmentations"][name].get("language", "en")


def backbone_language(config: dict, backbone: str) -> str:
    """The language of a (paper) backbone (`language:`, default en): zh backbones train on the scale's
    `corpus_zh` and select checkpoints on CNSD dev (SDA Table 5)."""
    return config["backbones"][backbone].get("language", "en")


def mirror_dir(config: dict) -> str | None:
    return config["data"].get("mirror") or os.environ.get("SENTAUG_MIRROR") or None


def model_mirror_dir(config: dict) -> str | None:
    return config["data"].get("model_mirror") or os.environ.get("SENTAUG_MODEL_MIRROR") or None

