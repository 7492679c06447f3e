"""The configuration's validation: config.yaml (and any --configfile) against the schema
(`resources/config.schema.yaml`), then the names that refer to other sections (backbones, augmentations,
methods, papers), so that a typo fails before any job runs, with the key in the message."""
from __future__ import annotations

import functools
import os
from importlib import resources
from pathlib import Path

import yaml

from .. import parts
from ..choices import Mistake, unknown

# The schema of everything but a method's parts, whose entries (`methods.<name>.positive`, ...) come from the
# registered parts and their settings (`config_schema`); the file holds their outline, enough for Snakemake's own
# check of the file, and `check_references` checks each method against the complete schema.
SCHEMA_PATH = Path(str(resources.files("sentaug") / "resources" / "config.schema.yaml"))


class ConfigError(Mistake):
    """A configuration value is missing, unknown or inconsistent; the message names the key (a ValueError)."""


def load_yaml(path: str | os.PathLike) -> dict:
    with open(path, encoding="utf-8") as f:  # libyaml's safe loader when available: the same result, faster
        return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}


def validate(config: dict) -> None:
    """Schema validation (with the offending key in the message) plus cross-reference checks; a setting declared
    under its former name is read under its name of now, with a one-line note (`rename_former_settings`)."""
    load_plugins(config)
    rename_former_settings(config)
    first_error(_validator(_parts_registered(), methods_only=False), config, "")
    check_references(config)


_NOTED: set[str] = set()       # notes already printed by this process


def rename_former_settings(config: dict, note=None) -> list[str]:
    """Every method's settings declared under a former name (`sentaug.parts.Part.renamed`, e.g. a cached
    negative's `only_changed`, now `changed_only` as for a cached positive) renamed in place; each printed once
    per process as a one-line note on stderr (or given to `note`)."""
    import sys

    notes = []
    for name, method in (config.get("methods") or {}).items():
        if isinstance(method, dict):
            try:
                notes += parts.rename_settings(method, name)
            except ValueError as e:
                raise ConfigError(str(e)) from None
    for line in notes:
        if note is not None:
            note(line)
        elif line not in _NOTED:
            _NOTED.add(line)
            print(f"note: {line}", file=sys.stderr, flush=True)
    return notes


def first_error(validator, instance, prefix: str) -> None:
    """ConfigError naming the key of the first schema error of `instance` (its keys below `prefix`), if any."""
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = ".".join([prefix] * bool(prefix) + [str(p) for p in e.path]) or "<top level>"
        if e.validator == "enum":       # a name (scale, pooler, source...): the closest valid ones first
            raise ConfigError(f"config key '{where}': "
                              + unknown(_what(where), e.instance, e.validator_value, full_list=_full_list(where)))
        extra = _unexpected_key(e)
        if extra is not None:           # a misspelt setting: the closest valid keys first
            key = ".".join([*([where] if where != "<top level>" else []), str(extra)])
            valid = list(e.schema.get("properties") or {})
            raise ConfigError(f"config key '{key}': " + unknown("setting", extra, valid,
                                                                 f" of {_where_words(where)}"))
        raise ConfigError(f"config key '{where}': {e.message}")


def _unexpected_key(error) -> str | None:
    """The first key a mapping may not have (a schema's `additionalProperties: false`), or None."""
    if error.validator != "additionalProperties" or error.validator_value is not False:
        return None
    if not isinstance(error.instance, dict):
        return None
    allowed = error.schema.get("properties") or {}
    import re

    patterns = list((error.schema.get("patternProperties") or {}))
    return next((k for k in error.instance if k not in allowed and not any(re.search(p, k) for p in patterns)),
                None)


def _where_words(where: str) -> str:
    return "the configuration" if where == "<top level>" else f"'{where}'"


def _part_kind(where: str):
    """The kind of method part whose name is at config key `where` (`methods.m.objectives.0.name`, the short
    `methods.m.negatives`), None for any other key."""
    keys = where.split(".")
    if keys[0] != "methods" or len(keys) < 3:
        return None
    return next((kind for kind in parts.KINDS.values() if keys[2] == kind.key
                 and (len(keys) == 3 or keys[-1] == kind.field)), None)


def _what(where: str) -> str:
    """What the name at config key `where` is, in a message: a part's kind (objective, negative source), else the
    key itself (scale, pooler)."""
    kind = _part_kind(where)
    last = where.rsplit(".", 1)[-1]
    return kind.noun if kind else (last if not last.isdigit() else "value")


def _full_list(where: str) -> str:
    return "sentaug list parts" if _part_kind(where) else ""


def scale_names() -> list[str]:
    """The scales a configuration may select (the schema's `scale`)."""
    return list(load_yaml(SCHEMA_PATH)["properties"]["scale"]["enum"])


def method_validator():
    """The schema of one method declaration, with the registered parts (a method variant is checked with it)."""
    return _validator(_parts_registered(), methods_only=True)


def _parts_registered() -> tuple:
    return tuple(tuple(parts.names(kind)) for kind in parts.KINDS)


@functools.lru_cache(maxsize=4)
def _validator(registered: tuple, methods_only: bool):
    """The schema with the method parts registered now (`registered`: their names, which a plugin changes), parsed
    once (variants are checked for every job of a DAG)."""
    import jsonschema

    schema = load_yaml(SCHEMA_PATH)
    method = schema["properties"]["methods"]["additionalProperties"]
    method["properties"].update(parts.method_schema())
    if methods_only:
        schema = {**method, "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(schema)


def part_modules(config: dict) -> list[str]:
    """The modules config key `parts.modules` names: plugins that register method parts, imported by name."""
    return list((config.get("parts") or {}).get("modules") or [])


def load_plugins(config: dict) -> None:
    """Import the plugin modules the configuration names (`augment.modules`, `parts.modules`; installed plugins
    are imported on the first lookup): a plugin that fails to import raises its PluginError."""
    from ..augment import registry

    registry.load_modules(augment_modules(config))
    parts.load_modules(part_modules(config))


def check_references(config: dict) -> None:
    """Names that refer to other sections must exist (a typo should fail before any job runs), and every declared
    augmentation's operation must be registered (`check_augmentation_ops`), and every method's parts (checked
    against the registered ones)."""
    load_plugins(config)
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
        for key in ("revision", "revision_source"):
            if key in b and b["source"] != "hub":
                raise ConfigError(f"config key 'backbones.{name}.{key}': a revision pins a hub model's commit; "
                                  f"'{name}' has source '{b['source']}'")


def _check_method_references(config: dict, name: str, m: dict) -> None:
    """A method's parts against the registered ones (their settings, whether they go together) and the
    augmentations they name against config key `augmentations`."""
    first_error(method_validator(), m, f"methods.{name}")
    try:
        used = parts.augmentation_references({**m, "method": name})
    except ValueError as e:
        raise ConfigError(str(e)) from None
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
    from ..augment import registry

    known = registry.names()
    for name, declared in config["augmentations"].items():
        if declared["op"] not in known:
            raise ConfigError(f"config key 'augmentations.{name}.op': "
                              + unknown("augmentation", declared["op"], known, full_list="sentaug augment --list"))

