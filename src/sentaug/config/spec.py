"""The training spec: everything one (paper, backbone, method, seed) run needs, fully resolved, its digest
(the run's identity), and the augmentation caches it reads."""
from __future__ import annotations

import copy
import hashlib
import json

from .. import parts
from .scales import augmentation_language, backbone_language, scale_settings, stand_in
from .validation import ConfigError
from .variants import method_config, set_path, split_variant


def _merge(base: dict, *updates: dict) -> dict:
    out = copy.deepcopy(base)
    for u in updates:
        out.update({k: v for k, v in (u or {}).items()})
    return out


METHOD_KEYS = ("contrastive", "head", "augmented_view", "labels", "add_tokens")


def train_spec(config: dict, paper: dict | None, backbone: str, method: str, seed: int,
               scale: str | None = None) -> dict:
    """Everything one training run needs, fully resolved.

    Hyper-parameter precedence, lowest first: `train` defaults < the scale's `train` < (only at scales with
    `paper_recipes`) the backbone's recipe (SimCSE's) < the method's `train` (e.g. VaSCL's mean pooling and
    learning rates: a method keeps them over the backbone-wide rate, on the leaderboard too) < the paper's recipe
    for that backbone < that recipe's `methods: {method: {...}}` entry (for a paper whose methods differ, e.g.
    VaSCL: SimCSE at 3e-5 but VaSCL's backbone at 5e-6; a variant `<method>~...` takes its method's entry unless
    the recipe names the variant itself). The method's composition (positive and negative sources,
    contrastive loss, head, augmented view, objectives) is copied as declared, the sources as each resolves
    itself (`sentaug.parts.Part.resolve`: a cached positive carries its augmentation's settings).
    """
    scale = scale or config["scale"]
    s = scale_settings(config, scale)
    m = method_config(config, method)
    layers = [s["train"]]
    if s["paper_recipes"]:
        layers.append(config["backbones"][backbone].get("train", {}))
    layers.append(m.get("train", {}))
    if s["paper_recipes"]:
        recipe = dict(((paper or {}).get("recipes") or {}).get(backbone, {}))
        by_name = recipe.pop("methods", None) or {}
        by_method = dict(by_name.get(method) or by_name.get(split_variant(method)[0]) or {})
        if "objectives" in by_method:     # a paper's per-backbone objective weights (AugCSE Table 10's lambda)
            m["objectives"] = by_method.pop("objectives")
            for path, value in split_variant(method)[1].items():    # a variant's own objective settings win
                if path.split(".")[0] == "objectives":
                    set_path(m, path, value, method)
        layers += [recipe, by_method]
    hp = _merge(config["train"], *layers)
    hp["batch_size"] *= hp.pop("batch_multiplier", 1)   # e.g. CLEAR's double-batch baseline, at any scale
    composition = _compose(m, method)
    language = backbone_language(config, backbone)
    corpus = s["corpus"] if language == "en" else s.get(f"corpus_{language}")
    if corpus is None:
        raise ConfigError(f"backbone '{backbone}' ({language}) needs 'scales.{scale}.corpus_{language}'")
    for aug, _ in composition.caches(seed):
        if augmentation_language(config, aug) != language:
            raise ConfigError(f"method '{method}' on backbone '{backbone}' ({language}): augmentation '{aug}' "
                              f"applies to {augmentation_language(config, aug)} text")
    try:    # the parts' entries: a cached positive carries its augmentation's settings, an nli one its triplets
        resolved = parts.resolve(m, config, scale)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    positive, negatives = resolved["positive"], resolved["negatives"]
    corpus = composition.positive.corpus(positive, corpus)
    return {
        "scale": scale,
        "paper_backbone": backbone,
        "backbone": stand_in(config, backbone, scale),
        "method": method,
        "positive": positive,
        "negatives": negatives,
        "objectives": [dict(o) for o in m.get("objectives", [])],
        **{k: copy.deepcopy(m[k]) for k in METHOD_KEYS if k in m},
        "seed": seed,
        "corpus": corpus,
        **({"language": language} if language != "en" else {}),   # English specs stay as they were
        **hp,
    }


def spec_digest(spec: dict) -> str:
    """A run's identity: the hash of its resolved spec (checkpoints and spec files are keyed by it)."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def method_caches(spec: dict) -> list[tuple[str, int]]:
    """The (augmentation, seed) caches a run reads, in the order `sentaug train --positives` takes them
    (`sentaug.parts.Composition.caches`: the positive's, the augmented view's, the other parts'; CLEAR's two views
    are one augmentation under two seeds, the run's seed and seed + 100)."""
    return _compose(spec).caches(spec["seed"])


def method_index(spec: dict) -> dict | None:
    """The retrieval index a run reads ({"k": neighbours}; CARDS's retrieved negatives), None when it reads none."""
    return _compose(spec).index


def _compose(method: dict, name: str | None = None) -> parts.Composition:
    try:
        return parts.compose(method, name)
    except ValueError as e:
        raise ConfigError(str(e)) from None
