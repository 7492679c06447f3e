"""Registry of named, parameterised sentence augmentations.

Each augmentation family lives in one module (``sda.py`` now; CLEAR, nlpaug, CARDS, AugCSE later) and
registers its operations with the `register` decorator::

    @register("punctuation_insertion", family="sda", needs_parse=True,
              description="SDA Alg. 1: insert a comma/quotes/duplicate mark/'!' chosen by a rule",
              mode=Param("random", "how a rule is chosen", choices=("first", "random")))
    def punctuation_insertion(doc, rng, mode="random") -> str: ...

An operation is called as ``fn(x, rng, **params)`` and returns the augmented text (the original text when
nothing applies). ``x`` is a spaCy ``Doc`` when ``needs_parse`` (the cached parse of the line) and the line's
``str`` otherwise; ``rng`` is a ``random.Random`` private to the line, so outputs do not depend on the order
or process in which lines are augmented.

An ``anchored`` operation returns ``(anchor, positive)`` instead of the positive alone: the anchor is the
line as that augmentation rewrites it too (SDA's released code trains on the spaCy-tokenised sentence), and
the cache stores it beside the positive (`sentaug.augment.cache`).

A ``batched`` operation (masked-LM substitution: one forward pass for many lines) is called as
``fn(xs, rng, **params)`` on a list and returns a list; the cache builder calls it once per fixed chunk of
lines with a ``rng`` private to the chunk, so outputs still do not depend on workers or order.

To add a family: write ``sentaug/augment/<family>.py`` with its ``@register`` calls and append its module
name to `FAMILY_MODULES`. Family modules are imported lazily (on the first `get`/`names`/`describe`), and
must not import heavy libraries at module level, so that ``sentaug augment --list`` stays fast.

Augmentations from outside the package (docs/extending.md) register the same way, from a module that is
imported either as an installed plugin, declaring an entry point in the group `ENTRY_POINT_GROUP` (imported
with the families), or by name (`load_modules`: config key ``augment.modules``, ``sentaug augment --module``).
A name is global: registering one twice is an error naming both registrations.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

from ..params import Param
from ..plugins import BUILT_IN, PluginError, PluginModules  # noqa: F401 (PluginError: raised by `get` & co.)

FAMILY_MODULES = ("sentaug.augment.sda", "sentaug.augment.sda_zh", "sentaug.augment.sda_official",
                  "sentaug.augment.cards", "sentaug.augment.clear",
                  "sentaug.augment.baselines", "sentaug.augment.explicit", "sentaug.augment.augcse")
ENTRY_POINT_GROUP = "sentaug.augmentations"


@dataclass(frozen=True)
class Augmentation:
    name: str
    family: str
    fn: Callable[..., str]
    needs_parse: bool
    description: str
    params: dict[str, Param] = field(default_factory=dict)
    batched: bool = False
    anchored: bool = False
    origin: str = BUILT_IN       # where its module was named: sentaug, an entry point, a config key

    @property
    def where(self) -> str:
        """The function and where its module was named, for messages."""
        return f"{self.fn.__module__}.{self.fn.__qualname__} ({self.origin})"

    def resolve(self, given: dict | None) -> dict:
        """Defaults updated with `given`, checked: unknown keys, wrong types and bad choices raise ValueError."""
        given = dict(given or {})
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise ValueError(f"augmentation {self.name!r} has no parameter {unknown[0]!r} "
                             f"(parameters: {', '.join(self.params) or 'none'})")
        return {k: p.check(given.get(k, p.default), f"augmentation {self.name!r}: parameter {k!r}")
                for k, p in self.params.items()}

    def __call__(self, x, rng, **params) -> str:
        if self.batched:
            return self.fn([x], rng, **self.resolve(params))[0]
        return self.fn(x, rng, **self.resolve(params))


_REGISTRY: dict[str, Augmentation] = {}
_PLUGINS = PluginModules("augmentation", ENTRY_POINT_GROUP, FAMILY_MODULES)


def register(name: str, *, family: str, needs_parse: bool, description: str, batched: bool = False,
             anchored: bool = False, **params: Param):
    """Decorator: register `fn` under `name` (names are global across families and plugins, so they must be
    unique)."""
    def deco(fn):
        aug = Augmentation(name, family, fn, needs_parse, description, dict(params), batched, anchored,
                           _PLUGINS.origin)
        if name in _REGISTRY and _REGISTRY[name].fn is not fn:
            raise ValueError(f"augmentation {name!r} is registered twice: by {_REGISTRY[name].where} and by "
                             f"{aug.where}")
        _REGISTRY[name] = aug
        return fn
    return deco


def _load() -> None:
    """The built-in families, then every installed plugin (entry points of ENTRY_POINT_GROUP)."""
    _PLUGINS.load()


def load_modules(modules, origin: str = "config key augment.modules") -> None:
    """Import modules named by the user (config key `augment.modules`, `sentaug augment --module`) after the
    built-in families and installed plugins, so that a name registered twice is reported with both."""
    _PLUGINS.load_modules(modules, origin)


def names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def get(name: str) -> Augmentation:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown augmentation {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def describe() -> str:
    """The text of ``sentaug augment --list``: every augmentation by family, with its parameters."""
    _load()
    lines = []
    for fam in sorted({a.family for a in _REGISTRY.values()}):
        lines.append(f"[{fam}]")
        for a in sorted((a for a in _REGISTRY.values() if a.family == fam), key=lambda a: a.name):
            lines.append(f"  {a.name}{'  (needs spaCy parse)' if a.needs_parse else ''}"
                         f"{'  (rewrites the anchor too)' if a.anchored else ''}"
                         f"{f'  (plugin: {a.where})' if a.origin != BUILT_IN else ''}")
            lines.append(f"      {a.description}")
            for k, p in a.params.items():
                choices = f" {{{'|'.join(map(str, p.choices))}}}" if p.choices else ""
                shown = p.default if isinstance(p.default, str) else json.dumps(p.default)  # as --param takes it
                lines.append(f"      --param {k}={shown}{choices}  {p.help}")
    return "\n".join(lines)
