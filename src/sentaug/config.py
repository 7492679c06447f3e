"""Configuration: scales, backbones, methods, papers.

`config.yaml` is the single source of settings. The Snakefile validates it against
`resources/config.schema.yaml` and then asks this module to resolve what one job needs (a training spec,
the stand-in backbone at the chosen scale, the paper tables to expand). Rules pass the resolved values to
the command line as parameters, so Snakemake reruns exactly the jobs whose settings changed.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
from importlib import resources
from pathlib import Path

import yaml

from .choices import Mistake, unknown

SCHEMA_PATH = Path(str(resources.files("sentaug") / "resources" / "config.schema.yaml"))
STS_COLUMNS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]


class ConfigError(Mistake):
    """A configuration value is missing, unknown or inconsistent; the message names the key (a ValueError)."""


def load_yaml(path: str | os.PathLike) -> dict:
    with open(path, encoding="utf-8") as f:  # libyaml's safe loader when available: the same result, faster
        return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}


def validate(config: dict) -> None:
    """Schema validation (with the offending key in the message) plus cross-reference checks."""
    import jsonschema

    schema = load_yaml(SCHEMA_PATH)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(config), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = ".".join(str(p) for p in e.path) or "<top level>"
        if e.validator == "enum":       # a name (scale, pooler, source...): the closest valid ones first
            what = e.path[-1] if e.path and isinstance(e.path[-1], str) else "value"
            raise ConfigError(f"config key '{where}': {unknown(what, e.instance, e.validator_value)}")
        raise ConfigError(f"config key '{where}': {e.message}")
    check_references(config)


def scale_names() -> list[str]:
    """The scales a configuration may select (the schema's `scale`)."""
    return list(load_yaml(SCHEMA_PATH)["properties"]["scale"]["enum"])


def check_references(config: dict) -> None:
    """Names that refer to other sections must exist (a typo should fail before any job runs), and every declared
    augmentation's operation must be registered (`check_augmentation_ops`)."""
    check_augmentation_ops(config)
    for scale, s in config["scales"].items():
        for paper_bb, stand_in in s["backbones"].items():
            for name in (paper_bb, stand_in):
                if name not in config["backbones"]:
                    raise ConfigError(f"config key 'scales.{scale}.backbones': unknown backbone '{name}'")
        for key in ("masked_lm", "seq2seq"):
            if key in s and s[key] not in config["backbones"]:
                raise ConfigError(f"config key 'scales.{scale}.{key}': unknown backbone '{s[key]}'")
    for name, m in config["methods"].items():
        _check_method_references(config, name, m)
    for name, aset in (config.get("augmentation_sets") or {}).items():
        for scale, subset in [(None, aset["augmentations"]), *(aset.get("scales") or {}).items()]:
            key = f"augmentation_sets.{name}" + (f".scales.{scale}" if scale else ".augmentations")
            unknown = [a for a in subset if a not in config["augmentations"]]
            if unknown:
                raise ConfigError(f"config key '{key}': unknown augmentation '{unknown[0]}'")
            if scale and scale not in config["scales"]:
                raise ConfigError(f"config key '{key}': unknown scale '{scale}'")
    for target in config.get("add_rows") or {}:
        if target != "leaderboard" and target.partition("/")[0] not in config["papers"]:
            raise ConfigError(f"config key 'add_rows.{target}': not 'leaderboard' or '<paper>/<table>' of a paper "
                              f"of config key 'papers' ({', '.join(config['papers'])})")
    for name, b in config["backbones"].items():
        needed = {"hub": ["id"], "package": ["package"], "random": ["arch", "tokenizer", "size"]}[b["source"]]
        for key in needed:
            if key not in b:
                raise ConfigError(f"config key 'backbones.{name}.{key}' is required for source '{b['source']}'")


def _check_method_references(config: dict, name: str, m: dict) -> None:
    pos = m["positive"]
    used = [("positive.augmentation", pos.get("augmentation"))] if pos["source"] in ("cache", "two_views") else []
    used += [("augmented_view", a) for a in m.get("augmented_view") or []]
    negatives = m.get("negatives")
    if isinstance(negatives, dict) and negatives.get("source") == "cache":
        if "augmentation" not in negatives:
            raise ConfigError(f"config key 'methods.{name}.negatives.augmentation' is required for source 'cache'")
        used.append(("negatives.augmentation", negatives["augmentation"]))
    for key, aug in used:
        if aug not in config["augmentations"]:
            raise ConfigError(f"config key 'methods.{name}.{key}': "
                              + unknown("augmentation", aug, config["augmentations"],
                                        full_list="sentaug list augmentations"))


def augment_modules(config: dict) -> list[str]:
    """The modules config key `augment.modules` names: plugins that register augmentations, imported by name."""
    return list((config.get("augment") or {}).get("modules") or [])


def check_augmentation_ops(config: dict) -> None:
    """Every declared augmentation's `op` is registered: built in, by an installed plugin (an entry point) or by a
    module of `augment.modules` (imported here; a plugin that fails to import raises its PluginError)."""
    from .augment import registry

    registry.load_modules(augment_modules(config))
    known = registry.names()
    for name, declared in config["augmentations"].items():
        if declared["op"] not in known:
            raise ConfigError(f"config key 'augmentations.{name}.op': "
                              + unknown("augmentation", declared["op"], known, full_list="sentaug augment --list"))


def augmentation_set(config: dict, name: str, scale: str | None = None) -> list[str]:
    """The augmentations of set `name` (config key `augmentation_sets`) used at `scale`."""
    sets = config.get("augmentation_sets") or {}
    if name not in sets:
        raise ConfigError(f"unknown augmentation set '{name}' (config key 'augmentation_sets')")
    return list((sets[name].get("scales") or {}).get(scale or config["scale"], sets[name]["augmentations"]))


def scale_settings(config: dict, scale: str | None = None) -> dict:
    return config["scales"][scale or config["scale"]]


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


# A method variant is a declared method with some of its keys set: "<method>~<key.path>=<value>[~...]", e.g.
# "cards~positive.p=0.1" or "augcse~objectives.discriminator.alpha=-10". Figures sweep a setting this way
# (one run per value) without a config entry per point. A path walks the method's mapping; in a list of
# objectives a segment names the objective. Values are read as YAML scalars.
VARIANT_SEP = "~"


def split_variant(name: str) -> tuple[str, dict]:
    """"cards~positive.p=0.1" -> ("cards", {"positive.p": 0.1})."""
    base, *settings = name.split(VARIANT_SEP)
    overrides = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or not key:
            raise ConfigError(f"method variant '{name}': '{setting}' is not key.path=value")
        overrides[key] = yaml.safe_load(value)
    return base, overrides


def variant_name(method: str, overrides: dict | None = None) -> str:
    """The run name of `method` with `overrides` set (the inverse of `split_variant`)."""
    def scalar(v):
        if isinstance(v, bool) or v is None:
            return json.dumps(v)
        return str(v)

    return method + "".join(f"{VARIANT_SEP}{k}={scalar(v)}" for k, v in (overrides or {}).items())


def _set_path(node, path: str, value, where: str) -> None:
    *parents, leaf = path.split(".")
    for seg in parents:
        node = _child(node, seg, path, where, create=True)
    if isinstance(node, list):
        raise ConfigError(f"method variant '{where}': '{path}' names a list element, not a setting")
    node[leaf] = value


def _child(node, seg: str, path: str, where: str, create: bool):
    if isinstance(node, list):      # objectives: the element with that name, or an index
        for i, item in enumerate(node):
            if (isinstance(item, dict) and item.get("name") == seg) or seg == str(i):
                return item
        raise ConfigError(f"method variant '{where}': no '{seg}' in '{path}'")
    if not isinstance(node, dict):
        raise ConfigError(f"method variant '{where}': '{path}' goes below a value")
    if seg not in node:
        if not create:
            raise ConfigError(f"method variant '{where}': no '{seg}' in '{path}'")
        node[seg] = {}
    elif isinstance(node[seg], str):   # the short form of a source (negatives: in_batch)
        node[seg] = {"source": node[seg]} if seg == "negatives" else {"name": node[seg]}
    return node[seg]


def get_setting(method: dict, path: str):
    """The value at `path` in a method declaration (ConfigError when it is not set)."""
    node = method
    for seg in path.split("."):
        node = _child(node, seg, path, path, create=False)
    return node


def method_config(config: dict, name: str) -> dict:
    """The declaration of method `name` (a declared method or a variant of one), checked against the schema."""
    base, overrides = split_variant(name)
    if base not in config["methods"]:
        raise ConfigError(unknown("method", base, config["methods"], full_list="sentaug list methods"))
    method = copy.deepcopy(config["methods"][base])
    if not overrides:
        return method
    for path, value in overrides.items():
        _set_path(method, path, value, name)
    error = next(iter(_method_validator().iter_errors(method)), None)
    if error is not None:
        where = ".".join(str(p) for p in error.path) or "<method>"
        raise ConfigError(f"method variant '{name}': {where}: {error.message}")
    _check_method_references(config, name, method)
    return method


@functools.lru_cache(maxsize=1)
def _method_validator():
    """The schema of one method declaration, parsed once (variants are checked for every job of a DAG)."""
    import jsonschema

    schema = load_yaml(SCHEMA_PATH)
    method_schema = {**schema["properties"]["methods"]["additionalProperties"], "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(method_schema)


def is_method(config: dict, name: str) -> bool:
    return split_variant(name)[0] in config["methods"]


# A row that the configuration adds to a paper table or a leaderboard (config key `add_rows`: `<paper>/<table>` or
# `leaderboard`, every board) is marked in its label and by `added: true`: none of its numbers is a paper's.
ADDED_MARK = " †"
ADDED_NOTE = "† a row added by the configuration (config key {key}), not from the paper."


def added_rows(config: dict, target: str) -> list[dict]:
    """The rows config key `add_rows.<target>` adds, each marked (label + ADDED_MARK, `added: true`)."""
    return [{**row, "label": row["label"] + ADDED_MARK, "added": True}
            for row in (config.get("add_rows") or {}).get(target) or []]


def add_table_rows(table: dict, rows: list[dict], where: str) -> dict:
    """A paper table's declaration with the added `rows` (from `added_rows`; `where`: their config key) after its
    own, with no reported values. In a table of blocks a row names its block (`block: <title>`) and goes last in
    it, taking the block's backbone."""
    table = copy.deepcopy(table)
    titles = [b["title"] for b in table.get("blocks", [])]
    for row in rows:
        row = {**row, "paper": [None] * len(table["columns"])}
        block = row.pop("block", None)
        if titles and block not in titles:
            raise ConfigError(f"config key '{where}': row '{row['label']}' must name its block (block: one of "
                              f"{', '.join(repr(t) for t in titles)})")
        if not titles and block is not None:
            raise ConfigError(f"config key '{where}': row '{row['label']}' names a block, but the table has none")
        rows_of = table["blocks"][titles.index(block)]["rows"] if titles else table.setdefault("rows", [])
        rows_of.append(row)
    return table


def load_paper(config: dict, name: str) -> dict:
    """papers/<name>.yaml with the rows the configuration adds to its tables (`add_rows`), checked."""
    path = Path(config.get("papers_dir", "papers")) / f"{name}.yaml"
    if not path.exists():
        raise ConfigError(f"config key 'papers': no paper file {path}")
    paper = load_yaml(path)
    for target in config.get("add_rows") or {}:
        paper_name, _, tname = target.partition("/")
        if paper_name == name:
            if tname not in paper.get("tables", {}):
                raise ConfigError(f"config key 'add_rows.{target}': {path} has no table '{tname}'")
            paper["tables"][tname] = add_table_rows(paper["tables"][tname], added_rows(config, target),
                                                    f"add_rows.{target}")
    for backbone, recipe in (paper.get("recipes") or {}).items():
        if backbone not in config["backbones"]:
            raise ConfigError(f"{path}: recipes: unknown backbone '{backbone}'")
        for method in (recipe.get("methods") or {}):
            if method not in config["methods"]:
                raise ConfigError(f"{path}: recipes.{backbone}.methods: unknown method '{method}'")
    for tname, table in paper.get("tables", {}).items():
        ncols = len(table["columns"])
        for row in iter_rows(table):
            if len(row["paper"]) != ncols:
                raise ConfigError(f"{path}: table {tname} row '{row['label']}' has {len(row['paper'])} "
                                  f"reported values for {ncols} columns")
            if "method" in row:
                try:
                    method_config(config, row["method"])
                except ConfigError as e:
                    raise ConfigError(f"{path}: table {tname} row '{row['label']}': {e}") from None
            augs = row.get("augmentation", [])
            augs = augs if isinstance(augs, list) else [augs]
            if isinstance(row.get("augmentation"), list) and len(augs) != ncols:
                raise ConfigError(f"{path}: table {tname} row '{row['label']}' names {len(augs)} augmentations "
                                  f"for {ncols} columns")
            for aug in augs:
                if aug not in config["augmentations"]:
                    raise ConfigError(f"{path}: table {tname} row '{row['label']}': unknown augmentation '{aug}'")
    return paper


def iter_rows(table: dict):
    """Rows of a table, with the block's backbone attached to each row of a block table."""
    for row in table.get("rows", []):
        yield row
    for block in table.get("blocks", []):
        for row in block["rows"]:
            yield {**row, "backbone": block["backbone"], "block": block["title"]}


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
