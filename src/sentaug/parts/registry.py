"""The registry of a method's parts, and a method's declaration composed of them (`compose`).

A part is a class derived from one of the four kinds' bases (`PositiveSource`, `NegativeSource`,
`ContrastiveLoss`, `Objective`), registered under a name with `register`, its settings declared as `Param`s as an
augmentation's parameters are::

    @register("cache", description="the cached augmentation of the anchor",
              augmentation=Param(None, "the declared augmentation", type=str, required=True))
    class CachedPositive(PositiveSource): ...

Every question about parts is asked here, by kind and name, never answered by matching a name elsewhere: the
config schema of a method (`method_schema`), what a run reads (`Composition.caches`, `Composition.index`), the
references a method makes to declared augmentations, the training spec's resolved entries (`Part.resolve`), the
overhead that prices a run (`Part.overhead`, `Part.step_overhead`), whether the backbone's masked-LM head is
loaded (`needs_lm_head`), and, for the trainer, each part's host and device work (`sentaug.parts.base`).

Parts from outside the package register the same way, from a module imported as an installed plugin (an entry
point in the group `ENTRY_POINT_GROUP`) or by name (config key `parts.modules`, `sentaug train --module`). A name
is global within its kind: registering one twice is an error naming both registrations.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..params import Param
from ..choices import did_you_mean
from ..plugins import PluginError, PluginModules
from .base import CORPUS_LINES, KINDS, ContrastiveLoss, NegativeSource, Objective, Part, PositiveSource

ENTRY_POINT_GROUP = "sentaug.parts"
# The built-in contrastive losses and objectives: every module and package of the folder of sentaug.objectives (a
# new one is a file there, and nothing else), imported by the package sentaug.parts after its own sources.
OBJECTIVES = Path(__file__).resolve().parents[1] / "objectives"
_PLUGINS = PluginModules("method part", ENTRY_POINT_GROUP)
_REGISTRY: dict[tuple[str, str], type[Part]] = {}


def register(name: str, *, description: str, **params: Param):
    """Class decorator: register a part under `name` in its kind (from its base class), with its settings."""
    def deco(cls):
        where = f"{cls.__module__}.{cls.__qualname__} ({_PLUGINS.origin})"
        kind = getattr(cls, "kind", "")
        if not (inspect.isclass(cls) and issubclass(cls, Part) and kind in KINDS):
            bases = ", ".join(b.__name__ for b in (PositiveSource, NegativeSource, ContrastiveLoss, Objective))
            raise PluginError(f"method part {name!r} ({where}): a part is a class derived from one of {bases} "
                              f"(sentaug.parts)")
        bad = [k for k, p in params.items() if not isinstance(p, Param)]
        reserved = [k for k in params if k == KINDS[kind].field or k in KINDS[kind].common]
        if bad or reserved:
            raise PluginError(f"{KINDS[kind].noun} {name!r} ({where}): setting {(bad or reserved)[0]!r} "
                              + ("is not a Param" if bad else f"is a name every {KINDS[kind].noun} has"))
        if kind in ("contrastive", "objective") and cls.compute is Part.compute:
            raise PluginError(f"{KINDS[kind].noun} {name!r} ({where}) has no compute(step): the loss it adds")
        known = _REGISTRY.get((kind, name))
        if known is not None and known is not cls:
            raise PluginError(f"{KINDS[kind].noun} {name!r} is registered twice: by {known.where} and by {where}")
        cls.name, cls.description, cls.params = name, description, dict(params)
        cls.origin, cls.where = _PLUGINS.origin, where
        _REGISTRY[(kind, name)] = cls
        return cls
    return deco


def import_objectives() -> None:
    """Import every module and package of OBJECTIVES, in the order of their names: each registers its parts. By
    name found in the folder, as plugins are imported: a training job's code digest names the folder
    (rules/common.smk), which no import it makes reaches."""
    for module in pkgutil.iter_modules([str(OBJECTIVES)]):
        importlib.import_module(f"sentaug.objectives.{module.name}")


def load_modules(modules, origin: str = "config key parts.modules") -> None:
    """Import modules named by the user (config key `parts.modules`, `sentaug train --module`) after the built-in
    parts and installed plugins, so that a name registered twice is reported with both."""
    _PLUGINS.load_modules(modules, origin)


def names(kind: str) -> list[str]:
    _PLUGINS.load()
    return sorted(n for k, n in _REGISTRY if k == kind)


def get(kind: str, name: str) -> type[Part]:
    _PLUGINS.load()
    try:
        return _REGISTRY[(kind, name)]
    except KeyError:
        raise ValueError(f"unknown {KINDS[kind].noun} {name!r}; registered: {', '.join(names(kind))}") from None


def declared(kind: str, value) -> dict:
    """A part as a method declares it, in its mapping form: the short form (`negatives: in_batch`, `contrastive:
    nt_xent`) expanded, or the kind's default when not declared (None: none)."""
    k = KINDS[kind]
    value = k.default if value is None else value
    if value is None:
        return None
    return {k.field: value} if isinstance(value, str) else dict(value)


def _entries(method: dict) -> list[tuple[str, str, dict]]:
    """(kind, key in messages, declared mapping) of every part a method declares, in composing order."""
    out = []
    for kind, k in KINDS.items():
        if k.many:
            out += [(kind, f"{k.key}.{o.get(k.field, i)}", declared(kind, o))
                    for i, o in enumerate(method.get(k.key) or [])]
        elif (entry := declared(kind, method.get(k.key))) is not None:
            out.append((kind, k.key, entry))
    return out


@dataclass
class Composition:
    """A method's parts, built from its declaration or resolved spec, checked together."""
    method: str
    positive: PositiveSource
    negatives: NegativeSource
    contrastive: ContrastiveLoss
    objectives: list[Objective]
    augmented_view: list[str]

    @property
    def parts(self) -> list[Part]:
        """Every part, in the order each step visits them (texts encoded, random draws, losses added)."""
        return [self.positive, self.negatives, self.contrastive, *self.objectives]

    def caches(self, seed: int) -> list[tuple[str, int]]:
        """The (augmentation, seed) caches the run reads, in the order `sentaug train --positives` takes them:
        the positive's, the augmented view's, then the other parts'."""
        return (self.positive.caches(seed) + [(a, seed) for a in self.augmented_view]
                + [c for part in self.parts[1:] for c in part.caches(seed)])

    def cache_owners(self, seed: int) -> list[Part | None]:
        """The part reading each cache of `caches` (None: the augmented view)."""
        return ([self.positive] * len(self.positive.caches(seed)) + [None] * len(self.augmented_view)
                + [part for part in self.parts[1:] for _ in part.caches(seed)])

    def changed_only(self, seed: int) -> list[tuple[str, int]]:
        """The caches whose changed lines alone the run trains on (`Part.changed_only`)."""
        return [part.caches(seed)[i] for part in self.parts for i in part.changed_only()]

    @property
    def index(self) -> dict | None:
        """The retrieval index a part reads ({"k": ...}), None when none does."""
        return next((i for part in self.parts if (i := part.index()) is not None), None)

    @property
    def views(self) -> bool:
        """Whether a step encodes the anchors and positives (not when the objectives alone need neither)."""
        return any(part.needs_views for part in self.parts)


def compose(method: dict, name: str | None = None) -> Composition:
    """The parts of a method's declaration or resolved spec (`name` for messages: the spec's `method`), each
    with its settings checked, then checked together (ValueError naming the method, setting and valid choices)."""
    name = name or method.get("method", "?")
    if "positive" not in method:
        raise ValueError(f"method '{name}' declares no positive source (positive: {{source: ...}})")
    built: dict[str, list[Part]] = {kind: [] for kind in KINDS}
    for kind, key, entry in _entries(method):
        field = KINDS[kind].field
        if field not in entry:
            raise ValueError(f"method '{name}': {key} names no {field} ({', '.join(names(kind))})")
        cls = get(kind, entry[field])
        built[kind].append(cls(settings(cls, key, entry, name), key, name))
    composition = Composition(name, built["positive"][0], built["negatives"][0], built["contrastive"][0],
                              built["objective"], list(method.get("augmented_view") or []))
    _check_together(composition)
    for part in composition.parts:
        part.check(composition)
    return composition


def _check_together(c: Composition) -> None:
    """What every method's parts must agree on: the examples a negative source or the augmented view needs are
    the positive source's, and a negative source's extra columns go to a contrastive loss that takes them."""
    neg, pos = c.negatives, c.positive
    if neg.examples is not None and pos.examples != neg.examples:
        raise neg.error(f"{neg.name} negatives need {neg.examples}; positive source '{pos.name}' gives {pos.examples}")
    if c.augmented_view and pos.examples != CORPUS_LINES:
        raise pos.error(f"augmented_view needs {CORPUS_LINES}; positive source '{pos.name}' gives {pos.examples}")
    if neg.adds_columns and not c.contrastive.takes_negatives:
        takes = [n for n in names("contrastive") if get("contrastive", n).takes_negatives]
        raise neg.error(f"{neg.name} negatives need a contrastive loss that takes extra negatives "
                        f"({', '.join(takes)}), not '{c.contrastive.name}'")


def settings(cls: type[Part], key: str, entry: dict, method: str) -> dict[str, Any]:
    """A part's declared settings with the defaults of those not declared, each checked (a resolved spec's keys
    that the part itself adds, `Part.carried`, are left out). A required setting is the schema's to ask for: the
    trainer reads the files it is given, whatever their augmentation's name."""
    k = KINDS[cls.kind]
    params = {**k.common, **cls.params}
    given = {cls.renamed.get(s, s): v for s, v in entry.items()     # a spec recorded under a former name reads
             if s != k.field and s not in cls.carried(entry)}         # as the name of now (rename_settings)
    for setting in given:
        if setting not in params:
            others = [n for n in names(cls.kind) if setting in get(cls.kind, n).params]
            why = (f"{setting} needs {k.noun} {' or '.join(repr(n) for n in others)}" if others else
                   f"{k.noun} {cls.name!r} takes: {', '.join(params) or 'no settings'}")
            guess = did_you_mean(setting, params)
            raise ValueError(f"method '{method}': {key}.{setting} does not apply to {k.field} {cls.name!r}"
                             + (f" (did you mean '{guess}'?)" if guess and not others else "") + f" ({why})")
    return {s: p.check(given.get(s, p.default), f"method '{method}': {key}.{s}") for s, p in params.items()}


def rename_settings(method: dict, name: str) -> list[str]:
    """Rename, in place, each setting `method` declares under a part's former name (`Part.renamed`), keeping its
    place; returns one note per renamed setting. Both names given is an error (ValueError naming both)."""
    notes = []
    for kind, k in KINDS.items():
        raw = method.get(k.key)
        for i, entry in enumerate((raw or []) if k.many else [raw]):
            if not isinstance(entry, dict) or (kind, entry.get(k.field)) not in _REGISTRY:
                continue    # a name alone, or an unknown part: the schema answers that
            key = f"{k.key}.{entry.get(k.field, i)}" if k.many else k.key
            for old, new in _REGISTRY[(kind, entry[k.field])].renamed.items():
                if old not in entry:
                    continue
                if new in entry:
                    raise ValueError(f"method '{name}': {key}.{old} and {key}.{new} are one setting ({old} is its "
                                     f"former name): keep {new}")
                renamed = {(new if s == old else s): v for s, v in entry.items()}
                entry.clear()
                entry.update(renamed)
                notes.append(f"method '{name}': {key}.{old} is now called {key}.{new} (read as such; rename it "
                             f"in your configuration)")
    return notes


def needs_lm_head(spec: dict) -> bool:
    """Whether a part of the run (declared or resolved spec, or a part of one) needs the backbone's masked-LM
    head: the trainer then loads the checkpoint with it."""
    return any(get(kind, entry[KINDS[kind].field]).needs_lm_head for kind, _, entry in _entries(spec))


def augmentation_references(method: dict) -> list[tuple[str, str]]:
    """(config key below the method, augmentation) of every declared augmentation a method names."""
    composition = compose(method)
    return ([(f"{part.key}.{s}", a) for part in composition.parts for s, a in part.augmentations()]
            + [("augmented_view", a) for a in composition.augmented_view])


def resolve(method: dict, config: dict, scale: str) -> dict[str, Any]:
    """The method's parts as the training spec records them ({positive: ..., negatives: ...}; objectives as
    declared): each part's `resolve` of its declared mapping (a cached positive carries its augmentation's
    settings, so that changing them retrains)."""
    composition = compose(method)
    out = {}
    for part in composition.parts:
        k = KINDS[part.kind]
        if k.resolved:
            out[k.key] = part.resolve(declared(part.kind, method.get(k.key)), config, scale)
    return out


def _param_schema(p: Param) -> dict:
    types = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    kind = p.type or (type(p.default) if p.default is not None else None)
    out: dict[str, Any] = {}
    if kind is not None:
        out["type"] = ["integer", "number"] if kind is float else types[kind]
    if p.choices is not None:
        out["enum"] = list(p.choices)
    if p.minimum is not None:
        out["minimum"] = p.minimum
    if p.maximum is not None:
        out["maximum"] = p.maximum
    return out


def kind_schema(kind: str) -> dict:
    """The JSON schema of one part of `kind` in a method declaration: the mapping naming a registered part, with
    that part's settings (and, for a kind with a short form, a name alone)."""
    k = KINDS[kind]
    _PLUGINS.load()
    classes = [get(kind, n) for n in names(kind)]
    branches = [{"if": {"properties": {k.field: {"const": c.name}}, "required": [k.field]},
                 "then": {"properties": {k.field: {}, **{s: _param_schema(p) for s, p in {**k.common,
                                                                                          **c.params}.items()}},
                          "required": [s for s, p in c.params.items() if p.required], "additionalProperties": False}}
                for c in classes]
    mapping = {"type": "object", "required": [k.field], "properties": {k.field: {"enum": [c.name for c in classes]}},
               "allOf": branches}
    if not k.short:
        return mapping
    short = [c.name for c in classes if not any(p.required for p in c.params.values())]
    return {"if": {"type": "string"}, "then": {"enum": short}, "else": mapping}


def method_schema() -> dict:
    """The schema's entries of a method's parts (`methods.<name>.<key>`), from the registered parts."""
    return {k.key: ({"type": "array", "items": kind_schema(kind)} if k.many else kind_schema(kind))
            for kind, k in KINDS.items()}
