"""The training spec: everything one (paper, backbone, method, seed) run needs, fully resolved, its digest
(the run's identity), and the augmentation caches it reads."""
from __future__ import annotations

import copy
import hashlib
import json

from .scales import augmentation_language, backbone_language, scale_settings, stand_in
from .validation import ConfigError
from .variants import method_config


def _merge(base: dict, *updates: dict) -> dict:
    out = copy.deepcopy(base)
    for u in updates:
        out.update({k: v for k, v in (u or {}).items()})
    return out


METHOD_KEYS = ("contrastive", "head", "augmented_view", "labels", "add_tokens")


def train_spec(config: dict, paper: dict | None, backbone: str, method: str, seed: int,
               scale: str | None = None) -> dict:
    """Everything one training run needs, fully resolved.

    Hyper-parameter precedence, lowest first: `train` defaults < the scale's `train` < the method's `train`
    (e.g. VaSCL's mean pooling and learning rates) < (only at scales with `paper_recipes`) the backbone's
    recipe < the paper's recipe for that backbone < that recipe's `methods: {method: {...}}` entry (for a
    paper whose methods differ, e.g. VaSCL: SimCSE at 3e-5 but VaSCL's backbone at 5e-6; a backbone-wide
    rate alone would override the method's own). The method's composition (positive and negative sources,
    contrastive loss, head, augmented view, objectives) is copied as declared; a cached positive carries its
    augmentation's settings.
    """
    scale = scale or config["scale"]
    s = scale_settings(config, scale)
    m = method_config(config, method)
    layers = [s["train"], m.get("train", {})]
    if s["paper_recipes"]:
        layers.append(config["backbones"][backbone].get("train", {}))
        recipe = dict(((paper or {}).get("recipes") or {}).get(backbone, {}))
        by_method = dict((recipe.pop("methods", None) or {}).get(method) or {})
        if "objectives" in by_method:     # a paper's per-backbone objective weights (AugCSE Table 10's lambda)
            m["objectives"] = by_method.pop("objectives")
        layers += [recipe, by_method]
    hp = _merge(config["train"], *layers)
    hp["batch_size"] *= hp.pop("batch_multiplier", 1)   # e.g. CLEAR's double-batch baseline, at any scale
    positive = dict(m["positive"])
    if positive["source"] in ("cache", "two_views"):
        positive.update(config["augmentations"][positive["augmentation"]])
    negatives = m.get("negatives", "in_batch")
    language = backbone_language(config, backbone)
    corpus = s["corpus"] if language == "en" else s.get(f"corpus_{language}")
    if corpus is None:
        raise ConfigError(f"backbone '{backbone}' ({language}) needs 'scales.{scale}.corpus_{language}'")
    for aug, _ in method_caches({"seed": seed, "positive": positive, "augmented_view": m.get("augmented_view")}):
        if augmentation_language(config, aug) != language:
            raise ConfigError(f"method '{method}' on backbone '{backbone}' ({language}): augmentation '{aug}' "
                              f"applies to {augmentation_language(config, aug)} text")
    if positive["source"] == "nli":
        positive["triplets"] = corpus = nli_triplet_set(config, positive, scale)
    negatives = {"source": negatives} if isinstance(negatives, str) else dict(negatives)
    if negatives["source"] == "cache":   # its settings ride along, so that changing them retrains
        negatives["settings"] = dict(config["augmentations"][negatives["augmentation"]])
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


def nli_triplet_set(config: dict, positive: dict, scale: str | None = None) -> str:
    """The triplet file (its name under results/nli/<origin>/) of an `nli` positive at this scale: the scale's
    `nli_sets` entry for `positive.data` (nli: SNLI + MNLI, anli: ANLI), sampled down to the size of the
    `positive.sample_as` set when one is named (`<set>.as_<other set>`)."""
    sets = scale_settings(config, scale).get("nli_sets") or {}
    wanted = [("data", positive.get("data", "nli"))]
    if positive.get("sample_as"):
        wanted.append(("sample_as", positive["sample_as"]))
    for key, data in wanted:
        if data not in sets:
            raise ConfigError(f"config key 'scales.{scale or config['scale']}.nli_sets' has no '{data}' "
                              f"(positive.{key} of an nli method)")
    return ".as_".join(sets[data] for _, data in wanted)


def spec_digest(spec: dict) -> str:
    """A run's identity: the hash of its resolved spec (checkpoints and spec files are keyed by it)."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def method_caches(spec: dict) -> list[tuple[str, int]]:
    """The (augmentation, seed) caches a run reads, in the order `sentaug train --positives` takes them.

    CLEAR's two views are the same augmentation under two seeds: the run's seed and seed + 100. A cached
    negative source comes last."""
    seed, positive = spec["seed"], spec["positive"]
    caches = []
    if positive["source"] == "cache":
        caches.append((positive["augmentation"], seed))
    elif positive["source"] == "two_views":
        caches += [(positive["augmentation"], seed), (positive["augmentation"], seed + 100)]
    caches += [(a, seed) for a in spec.get("augmented_view") or []]
    if spec.get("negatives", {}).get("source") == "cache":     # AugCSE Table 1: cached hard negatives
        caches.append((spec["negatives"]["augmentation"], seed))
    return caches
