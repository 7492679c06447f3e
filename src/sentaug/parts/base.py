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

`build` gets a `BuildContext`, `prepare` a `HostStep` and `compute` a `DeviceStep` (below: what a part may rely
on; the trainer, `sentaug.train.method.Method`, makes them); every part of a method sees the same step, in the
order positive, negatives, contrastive, objectives (so draws and texts come in that order). A part imports torch
inside its methods: the workflow imports every part to check a configuration, and must not wait for torch to do
so (this module imports none either).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

from ..params import Param

CORPUS_LINES, NLI_TRIPLETS = "corpus lines", "NLI triplets"
# The step-time table's key of the measured overhead of a third sentence per example (retrieved, cached or NLI hard
# negatives): one key for the parts that add that work
HARD_NEGATIVE = "hard_negative"


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
    # The key of the measured overhead (a step-time table's `overhead:` entry, sentaug.pricing.step_times) that
    # stands for this part's work per step beyond SimCSE's; None: it adds none (an objective always adds some: one
    # without a measurement is counted as SimCSE, and the bill says so).
    overhead: ClassVar[str | None] = None
    # The keys of other parts' overheads that its measurement includes (it was timed on a method with those parts
    # too): `step_overhead` divides them out.
    overhead_with: ClassVar[tuple[str, ...]] = ()
    # The table's SimCSE step (`steps:`, the base every overhead is a ratio to) runs this part: a method of such
    # parts alone is that measured step, any other part not measured is counted as SimCSE's and the bill says so.
    simcse_step: ClassVar[bool] = False
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
        """Its step's time over SimCSE's, from the step-time table `times` (None: not measured): its overhead's
        ratio over those of the parts it was measured with (`overhead_with`)."""
        measured = times.overhead(self.overhead)
        if measured is None:
            return None
        for other in self.overhead_with:
            measured /= times.overhead(other)
        return measured

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


# -- what a part is given: at build, and each step on the host and on the device
@dataclass
class BuildContext:
    """What a part's `build` may use."""
    spec: dict
    encoder: Any            # sentaug.models.encoder's module: backbone, pooler and head
    tokenizer: object
    data: object
    lm_head: Any | None     # the backbone's masked-LM head, where a part needs it (`Part.needs_lm_head`)
    index_path: str | None
    temperature: float
    hidden_size: int


class HostStep:
    """The host's part of one step as the parts see it in `prepare`: this rank's slice of the batch (`mine`,
    `size` examples), the step's `generator` (the only source of its random draws), the fixed `shape` (or None),
    the texts to encode in the step's forward pass, by block (`encode`), and its `tensors`. `tokenize(texts,
    width)` gives the ids of texts as the step's own are given (`sentaug.models.tokens.BatchTokenizer.encode`)."""

    def __init__(self, method: str, batch, generator, shape, mine: slice, hidden_size: int,
                 tokenize: Callable[[list[str], int | None], dict]):
        self.batch, self.generator, self.shape = batch, generator, shape
        self.mine = mine
        self.size = len(batch.anchors[self.mine])
        self.hidden_size = hidden_size
        self.texts: list[str] = []
        self.layout: list[tuple[str, int]] = []
        self.tensors: dict[str, Any] = {}
        self._method, self._tokenize = method, tokenize

    def encode(self, block: str, texts: list[str]) -> None:
        """Encode `texts` in the step's forward pass, as the block `block` (`DeviceStep.blocks`)."""
        if any(name == block for name, _ in self.layout):
            raise ValueError(f"two parts of method '{self._method}' encode a block named {block!r}")
        self.layout.append((block, len(texts)))
        self.texts += texts

    def tokenize(self, texts: list[str]) -> dict:
        """Ids and attention mask of `texts` on their own (an MLM's sentences), padded as the step pads."""
        return self._tokenize(texts, self.shape.width if self.shape else None)


class DeviceStep:
    """The device's part of one step as the parts see it in `compute`: the step's `tensors`, the representations
    `e` of every encoded text (before the head) and their projections `z`, `blocks` (name -> rows of e and z, in
    the order of `layout`: (block, texts) pairs), `z1` and `z2` (the anchors' and positives' projections over the
    global batch, `gathered`), `encoder` and `world` (the number of processes). A negative source sets
    `negatives`: (extra columns, mask) for the contrastive loss. `gather` concatenates a tensor's rows over the
    processes, this process's own in the graph (`sentaug.train.distributed.gather_with_grad`)."""

    def __init__(self, encoder, tensors: dict, layout, world: int, gather: Callable):
        from ..models import packing

        self.encoder, self.tensors, self.world, self._gather = encoder, tensors, world, gather
        self.blocks, start = {}, 0
        for name, n in layout:
            self.blocks[name], start = slice(start, start + n), start + n
        self.negatives = None
        if self.blocks:
            packed = {k: self.tensors[k] for k in packing.PACKED} if "pack_ids" in self.tensors else None
            self.e = encoder.represent(self.tensors.get("input_ids"), self.tensors["attention_mask"], packed=packed)
            self.z = encoder.project(self.e)
            self.z1, self.z2 = self.gathered("anchors"), self.gathered("positives")

    def gathered(self, block: str):
        """The projections of block `block` over the global batch: every process's rows in rank order, this
        process's own in the graph."""
        return self._gather(self.z[self.blocks[block]])
