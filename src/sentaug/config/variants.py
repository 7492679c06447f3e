"""Method variants: a declared method with some of its settings changed, named
"<method>~<key.path>=<value>[~...]" (figures sweep a setting this way, one run per value, without a config
entry per point), resolved and checked against the schema of one method declaration."""
from __future__ import annotations

import copy
import json

import yaml

from .. import parts
from ..choices import unknown
from .validation import ConfigError, _check_method_references, method_validator

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


def set_path(node, path: str, value, where: str) -> None:
    """Set the setting at `path` ("positive.p", "objectives.discriminator.alpha") of a method declaration."""
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
    elif isinstance(node[seg], str):   # the short form of a part (negatives: in_batch)
        kind = next((k for k in parts.KINDS.values() if k.key == seg and k.short), None)
        if kind is None:
            raise ConfigError(f"method variant '{where}': '{path}' goes below a value")
        node[seg] = parts.declared(kind.name, node[seg])
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
        set_path(method, path, value, name)
    error = next(iter(method_validator().iter_errors(method)), None)
    if error is not None:
        where = ".".join(str(p) for p in error.path) or "<method>"
        raise ConfigError(f"method variant '{name}': {where}: {error.message}")
    _check_method_references(config, name, method)
    return method


def is_method(config: dict, name: str) -> bool:
    return split_variant(name)[0] in config["methods"]

