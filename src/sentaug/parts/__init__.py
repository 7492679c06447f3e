"""A method's parts as registered building blocks: positive sources, negative sources, contrastive losses and
objectives (docs/extending.md, "Add your own objective or source").

A method (config key `methods:`) is a composition of one part of each kind but objectives, of which it may have
any number::

    positive:      {source: dropout | cache | switch_case | two_views | augmented_view | nli, ...settings}
    negatives:     in_batch | {source: in_batch | retrieved | cache | nli, ...settings}
    contrastive:   infonce | nt_xent | none | {name: ..., ...settings}
    objectives:    [{name: virtual_augmentation | discriminator | mlm, weight: w, ...settings}]

(and, beside them, `head`, `augmented_view`, `labels`, `add_tokens`, `train`). `sentaug list parts` lists every
registered part with its settings. The sources live here, a module per kind (`positives`, `negatives`); the
contrastive losses and objectives in `sentaug.objectives`, one file or package each, which this package imports
by listing that folder (`registry.import_objectives`). Each is registered with `register` (`registry`) on a class
derived from the kind's base (`base`: the one interface every part has, and what a part is given: `BuildContext`,
`HostStep`, `DeviceStep`); `sentaug.train.method.Method` composes them in a loop.
"""
from ..params import Param
from . import negatives, positives  # noqa: F401 (the built-in parts register on import)
from .base import (CORPUS_LINES, KINDS, NLI_TRIPLETS, BuildContext, ContrastiveLoss, DeviceStep, HostStep,
                   NegativeSource, Objective, Part, PositiveSource)
from .registry import (ENTRY_POINT_GROUP, Composition, augmentation_references, compose, declared, get,
                       import_objectives, load_modules, method_schema, names, needs_lm_head, register,
                       rename_settings, resolve)

__all__ = ["Param", "CORPUS_LINES", "KINDS", "NLI_TRIPLETS", "BuildContext", "ContrastiveLoss", "DeviceStep",
           "HostStep", "NegativeSource", "Objective", "Part", "PositiveSource", "ENTRY_POINT_GROUP", "Composition",
           "augmentation_references", "compose", "declared", "get", "load_modules", "method_schema", "names",
           "needs_lm_head", "register", "rename_settings", "resolve"]

import_objectives()     # last: their modules import this package's names
