"""The registry of evaluation suites: a suite is one registered class holding everything about it, and the command
line (`sentaug evaluate <suite>`, its flags), the Python API (`sentaug.evaluate.evaluate`), the workflow's rules
(the data a job reads, its flags, the code it runs), the bill's workload and `docs/cli.md` are made from it.

    @register("sts")
    class STS(Suite):
        help = "STS12-16 ('all' setting), STS-B and SICK-R, SimCSE's SentEval protocol"
        folders = ("sts", "sick")         # data folders under a data root (outputs of data/sources.yaml)
        module = "sentaug.evaluate.sts"   # the code it runs: its jobs rerun when it changes
        flags = (Flag("--lowercase", action="store_true", help="..."),)
        workload = {"n": 26973, "basis": "measured"}      # sentences it embeds, for `sentaug cost`

        def run(self, a): ...             # `sentaug evaluate sts`, on its parsed (and resolved) arguments
        def sentences(self, data, **options): ...   # for `evaluate(model, ["sts"])`: (sentences, score)

The built-in suites are declared in `sentaug.evaluate.builtin` (their scoring code in their own modules);
suites from outside the package register the same way from a module imported as an installed plugin (an entry
point in the group `ENTRY_POINT_GROUP`) or by name (config key `suites.modules`, `sentaug evaluate --module`), as
augmentations and method parts do (`sentaug.plugins`, docs/extending.md). Importing this module imports nothing
heavy, nor does a suite's declaration: the Snakefile and every `sentaug evaluate` read them.
"""
from __future__ import annotations

from ..choices import unknown
from ..plugins import PluginError, PluginModules

ENTRY_POINT_GROUP = "sentaug.suites"
# The modules of the built-in suites, in the order of `sentaug evaluate`'s commands; a new built-in suite's module
# joins them here.
BUILT_IN = ("sentaug.evaluate.builtin",)
_PLUGINS = PluginModules("evaluation suite", ENTRY_POINT_GROUP, BUILT_IN)
_REGISTRY: dict[str, "Suite"] = {}


class Flag:
    """One command-line setting of a suite: the arguments of argparse's `add_argument`, given as they are."""

    def __init__(self, *names: str, **options):
        self.names, self.options = names, options


class Suite:
    """An evaluation suite. A subclass sets what it is (`help`: its line in `sentaug evaluate --help` and
    docs/cli.md; `folders`; `data_help`, what --data holds; `module`; `flags`; `tasks`, whether it takes --tasks;
    `workload`) and what it does (`run`, and `sentences` where `evaluate(model, ...)` may run it from Python)."""
    name: str = ""
    help: str = ""
    folders: tuple[str, ...] = ()
    data_help: str = ""
    module: str = ""           # the module whose code the suite runs (its jobs' code digest)
    flags: tuple[Flag, ...] = ()
    tasks: bool = True         # --tasks: a subset of its tasks / data sets
    # Sentences one evaluation embeds (every distinct sentence once), {"n": ..., "basis": "measured" (counted from
    # the files), "published" or "estimated" (an upper bound)}; None: not priced (`sentaug cost` says so).
    workload: dict | None = None
    origin: str = ""           # where it was registered (set by `register`)

    def add_arguments(self, parser) -> None:
        """Its own flags on `sentaug evaluate <suite>`'s parser, after those every suite shares."""
        for flag in self.flags:
            parser.add_argument(*flag.names, **flag.options)

    def run(self, a) -> None:
        """`sentaug evaluate <suite>` on its parsed arguments `a`: resolve them (`sentaug.evaluate.cli.resolved`)
        and write the record to `a.out`."""
        raise NotImplementedError(f"suite '{self.name}' ({self.where}) has no run(a)")

    def sentences(self, data, **options):
        """(the sentences it embeds, `score(vectors) -> its results`) on the data folder `data`, for
        `sentaug.evaluate.evaluate`; None where a suite needs more than sentence embeddings (GLUE fine-tunes)."""
        return None

    def fetch_folders(self, tasks) -> list[str]:
        """The data folders `sentaug evaluate` fetches for the --tasks given (None: all)."""
        return list(self.folders)

    def extra_folders(self, a) -> list[str]:
        """Data folders its parsed arguments `a` ask for beside `fetch_folders` (NLI's triplet sets)."""
        return []

    def workflow_folders(self, evaluations) -> list[str]:
        """The data folders its job reads at the workflow's scale (`evaluations`: the `Workflow`)."""
        return list(self.folders)

    def workflow_flags(self, evaluations) -> list[str]:
        """Flags of its job at the workflow's scale, before the scale's options of the suite."""
        return []

    @property
    def where(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__} ({self.origin})"


def register(name: str):
    """Class decorator: register a suite under `name` (one instance of the class)."""
    def deco(cls):
        where = f"{cls.__module__}.{cls.__qualname__} ({_PLUGINS.origin})"
        if not (isinstance(cls, type) and issubclass(cls, Suite)):
            raise PluginError(f"evaluation suite {name!r} ({where}): a suite is a class derived from "
                              f"sentaug.evaluate.suites.Suite")
        if cls.run is Suite.run:
            raise PluginError(f"evaluation suite {name!r} ({where}) has no run(a): what `sentaug evaluate {name}` "
                              f"does")
        if name in ("suites", "mteb"):
            raise PluginError(f"evaluation suite {name!r} ({where}): the name of a command of `sentaug evaluate`")
        known = _REGISTRY.get(name)
        if known is not None and type(known) is not cls:
            raise PluginError(f"evaluation suite {name!r} is registered twice: by {known.where} and by {where}")
        cls.name, cls.origin = name, _PLUGINS.origin
        cls.module = cls.module or cls.__module__
        _REGISTRY[name] = cls()
        return cls
    return deco


def shared(a) -> dict:
    """What every suite's command passes on from the flags all suites share: `run(a)` calls its scoring code with
    `**shared(a)` and its own settings."""
    return {key: getattr(a, key) for key in ("model", "pooler", "data", "out", "device", "scale")}


def load_modules(modules, origin: str = "config key suites.modules") -> None:
    """Import modules named by the user (config key `suites.modules`, `sentaug evaluate --module`) after the
    built-in suites and installed plugins, so that a name registered twice is reported with both."""
    _PLUGINS.load_modules(modules, origin)


def registered() -> dict[str, Suite]:
    """Every suite, by name: the built-in ones first, in their order, then the plugins'."""
    _PLUGINS.load()
    return dict(_REGISTRY)


def names() -> list[str]:
    return list(registered())


def get(name: str) -> Suite:
    suites = registered()
    if name not in suites:
        raise ValueError(unknown("evaluation suite", name, suites))
    return suites[name]


def folders(name: str) -> tuple[str, ...]:
    """The data folders of suite `name`; () for a name no suite registers (a record of another kind)."""
    suite = registered().get(name)
    return tuple(suite.folders) if suite is not None else ()


def is_plugin(name: str) -> bool:
    """Whether suite `name` comes from outside the package (its jobs import its module: --module)."""
    return not get(name).module.startswith("sentaug.")


def workload(name: str) -> tuple[int, str]:
    """(sentences one evaluation embeds, basis) of suite `name`, for the bill."""
    suite = get(name)
    if not suite.workload:
        raise ValueError(f"evaluation suite '{name}' ({suite.where}) declares no workload: the sentences one "
                         f"evaluation embeds ({{'n': ..., 'basis': 'measured'}}), which `sentaug cost` prices")
    return int(suite.workload["n"]), suite.workload["basis"]
