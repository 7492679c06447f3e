"""The one interface of a method's parts, and the four kinds of part.

A part answers, for the workflow (no torch needed):
- `caches(seed)`, `index()`, `augmentations()`: what it reads (augmentation caches, the retrieval index) and the
  declared augmentations it names (checked against config key `augmentations`);
- `check(composition)`: whether it goes with the method's other parts (ValueError, via `error`);
- `resolve(declared, config, scale)`: its entry in the training spec;
- `overhead`, `step_overhead(times)`: what prices a run's steps (`sentaug.pricing.cost`), and `step_work`: what
  it adds to a step's device work, as the step-time table's measured settings are keyed (`cost.step_setting`);
and, for the trainer:
- `load(data, tables)`: the host's texts it needs per example (`sentaug.train.sources`);
- `build(context)`: its torch modules (their parameters train with the model);
- `prepare(step)`: the host's part of a step: texts to encode, tensors, draws from `step.generator` only;
- `compute(step)`: the device's part, from the step's tensors alone: (loss or None, named parts to log).

`prepare` gets a `sentaug.train.method.HostStep` and `compute` a `sentaug.train.method.DeviceStep`; every part
of a method sees the same step, in the order positive, negatives, contrastive, objectives (so draws and texts
come in that order). A part imports torch inside its methods: the workflow imports every part to check a
configuration, and must not wait for torch to do so.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..augment.registry import Param

CORPUS_LINES, NLI_TRIPLETS = "corpus lines", "NLI triplets"
# The step-time table's measured overhead of a third sentence per example (retrieved, cached or NLI hard negatives)
HARD_NEGATIVE = "simcse_retrieval"


@dataclass(frozen=True)
class Kind:
    """One kind of part and how a method declares it."""
    name: str              # positive, negatives, contrastive, objective
    key: str               # the method's key
    field: str             # the key that names the part in its mapping
    noun: str              # in messages
    default: str | None = None     # the part of a method that declares none (None: it must declare one)
    many: bool = False             # a list (objectives)
    short: bool = False            # may be written as a name alone (`negatives: in_batch`)
    resolved: bool = False         # the training spec records its resolved mapping (else as declared)
    common: dict[str, Param] = field(default_factory=dict)   # settings every part of the kind takes


KINDS = {k.name: k for k in (
    Kind("positive", "positive", "source", "positive source", resolved=True),
    Kind("negatives", "negatives", "source", "negative source", default="in_batch", short=True, resolved=True),
    Kind("contrastive", "contrastive", "name", "contrastive loss", default="infonce", short=True),
    Kind("objective", "objectives", "name", "objective", many=True,
         common={"weight": Param(1.0, "its weight in the loss")}),
)}


class Part:
    """A registered building block of a method (module docstring). Set by `register`: name, description, params,
    origin, where. Set per method: `settings` (declared, with defaults, checked), `key` (where it is declared,
    for messages: "negatives", "objectives.mlm") and `method`."""
    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    origin: ClassVar[str] = "sentaug"
    where: ClassVar[str] = ""
    # The measured overhead (a step-time table's `overhead:` entry, sentaug.pricing.step_times) that stands for
    # this part's work per step beyond SimCSE's; None: it adds none (an objective always adds some: one without a
    # measurement is counted as SimCSE, and the bill says so).
    overhead: ClassVar[str | None] = None
    feature: ClassVar[str] = ""           # what it is, in the bill's basis (default: its name)
    needs_views: ClassVar[bool] = False   # its step encodes the anchors and positives
    needs_lm_head: ClassVar[bool] = False  # it needs the backbone's masked-LM head
    # Former names of its settings ({former: now}): a declaration that uses one is read with the name of now and a
    # one-line note (`sentaug.parts.registry.rename_settings`), so that one idea has one name in every part.
    renamed: ClassVar[dict[str, str]] = {}

    def __init__(self, settings: dict[str, Any], key: str, method: str):
        self.settings, self.key, self.method = settings, key, method
        self.module = None

    def error(self, message: str) -> ValueError:
        return ValueError(f"method '{self.method}': {message}")

    @classmethod
    def carried(cls, entry: dict) -> set[str]:
        """Keys of a resolved spec's `entry` that `resolve` added: not settings to check."""
        return set()

    # -- the workflow's side
    def caches(self, seed: int) -> list[tuple[str, int]]:
        return []

    def index(self) -> dict | None:
        return None

    def augmentations(self) -> list[tuple[str, str]]:
        """(setting, declared augmentation) of each augmentation it names."""
        return []

    def check(self, composition) -> None:
        pass

    def resolve(self, declared: dict, config: dict, scale: str) -> dict:
        return declared

    @property
    def adds_work(self) -> bool:
        return self.overhead is not None

    def step_overhead(self, times) -> float | None:
        """Its step's time over SimCSE's, from the step-time table `times` (None: not measured)."""
        return times.overhead(self.overhead)

    @property
    def step_work(self) -> str | None:
        """The device work its step adds to SimCSE's two views, in the words of a measured setting's key
        (`sentaug.pricing.cost.step_setting`: `retrieved4`, `hard_negative`, `mlmx2`); None: it adds none, or
        only on the host (where positives come from, sampling modes, proportions), so that runs differing only
        there share one measurement."""
        return None

    # -- the trainer's side
    def changed_only(self) -> list[int]:
        """Which of its caches (positions in `caches`) restrict the run to the lines they changed."""
        return []

    def load(self, data, tables: list) -> Any:
        """Keep what it needs of the examples of `data` (`sentaug.train.sources`) and of its cache `tables`."""
        return None

    def build(self, context) -> Any:
        """Its torch module (None: it has none); `context` holds spec, encoder, tokenizer, data, lm_head,
        index_path, temperature and hidden_size."""
        return None

    def positions_room(self, batch_size: int, width: int) -> int | None:
        """Token positions its tensors need at most when every step has one shape (a CUDA graph), else None."""
        return None

    def prepare(self, step) -> None:
        pass

    def compute(self, step) -> tuple[Any, dict]:
        return None, {}

    def weighted(self, loss, world: int):
        """Its term of the loss (a loss over the gathered global batch as it is)."""
        return loss

    @property
    def log_key(self) -> str:
        return self.name


class PositiveSource(Part):
    """Gives each example's anchor and positive text (`pair`) from the examples it makes (`examples`)."""
    kind = "positive"
    examples: ClassVar[str] = CORPUS_LINES

    def corpus(self, resolved: dict, corpus: str) -> str:
        """What the run trains on: the scale's corpus, or (NLI triplets) the file `resolve` named."""
        return corpus

    def pair(self, data, idx: list[int], step: int) -> tuple[list[str], list[str]]:
        raise NotImplementedError


class NegativeSource(Part):
    """Adds negatives beside the in-batch ones: hard negatives per example (`load` returns them) and/or columns
    of the contrastive loss (`compute` sets `step.negatives`)."""
    kind = "negatives"
    examples: ClassVar[str | None] = None       # the examples it needs (None: any)
    adds_columns: ClassVar[bool] = False        # it gives the contrastive loss extra columns


class ContrastiveLoss(Part):
    """The loss over the anchors and positives of the global batch (and a negative source's columns)."""
    kind = "contrastive"
    needs_views = True
    takes_negatives: ClassVar[bool] = False

    @property
    def log_key(self) -> str:
        return "contrastive"

    @property
    def step_work(self) -> str | None:
        return self.name       # a loss other than InfoNCE (which overrides this) is work of its own


class Objective(Part):
    """A loss added to the contrastive one with its `weight`, over this rank's slice of the batch."""
    kind = "objective"

    @property
    def adds_work(self) -> bool:
        return True

    @property
    def step_work(self) -> str | None:
        return self.name

    def weighted(self, loss, world: int):
        # the objectives are over this rank's slice: 1/world, so that summing the ranks' gradients gives the mean
        return self.settings["weight"] / world * loss

