"""What an evaluation of a model is, from its result's file name, and what its job reads and is given.

A trained run's results are `<run's eval folder>/<evaluation>.json` (PATTERNS["run_eval"]): `sts` or any suite
under the run's eval pooler, `<suite>.<pooler>` under another pooler (CLEAR Table 2's -mean rows), `sts_lowercase`
with every sentence lower-cased (CARDS Table 4). A pre-trained backbone's are `<backbone's folder>/<evaluation>.json`
(PATTERNS["pretrained_eval"]): `<pooler>` for STS, `<suite>/<pooler>`, and `glue~<settings>/<pooler>` for GLUE
with R-drop / switch-case settings (CARDS Table 6). One rule per kind of model evaluates them all
(rules/evaluate.smk): the suites are those of the registry, sentaug.evaluate.suites (with the plugins of config key
`suites.modules`, `load_suites`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..evaluate import suites as registry

# Settings of `sentaug evaluate glue` a table row may give (`glue: {rdrop: 1.0, switch_case: 0.1, recipe: cards}`,
# CARDS Table 6), as they appear in the result's path and on the command line. A `recipe` names config.yaml's
# `glue.recipes.<name>` (a paper's fine-tuning settings): its path component is the name, its flag the settings.
GLUE_OPTIONS = {"rdrop": "--rdrop", "switch_case": "--switch-case", "recipe": "--recipe"}
LOWERCASE = "sts_lowercase"      # STS with every sentence lower-cased


def load_suites(config: dict) -> None:
    """Import the modules config key `suites.modules` names: plugins that register evaluation suites."""
    registry.load_modules((config.get("suites") or {}).get("modules") or [])


# The {evaluation} wildcard of each kind of model (the pooler and GLUE's settings: one path component each), over
# the suites registered when asked (after `load_suites`). A run's GLUE evaluation may name a recipe
# (`glue~recipe=roberta`, CLEAR Tables 1 and 3).
def run_evaluation_pattern() -> str:
    return rf"(?:{_suites_pattern()})(?:\.[^/.]+)?|glue~[^/.]+|{LOWERCASE}"


def pretrained_evaluation_pattern() -> str:
    return rf"(?:(?:{_suites_pattern()})/|glue~[^/]+/)?[^/.]+"


def _suites_pattern() -> str:
    return "|".join(re.escape(s) for s in registry.names())


def __getattr__(name):      # RUN_EVALUATION, PRETRAINED_EVALUATION: the patterns over the suites registered now
    patterns = {"RUN_EVALUATION": run_evaluation_pattern, "PRETRAINED_EVALUATION": pretrained_evaluation_pattern}
    if name in patterns:
        return patterns[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Evaluation:
    """An evaluation of a model: its suite, its pooler (None: the run's eval pooler) and further flags."""
    suite: str
    pooler: str | None = None
    options: str = ""           # GLUE's settings, as named in the path (Evaluations.glue_options)
    lowercase: bool = False


def run_evaluation(name: str) -> Evaluation:
    """The evaluation of a trained run that `<name>.json` holds."""
    if name == LOWERCASE:
        return Evaluation("sts", lowercase=True)
    if name.startswith("glue~"):
        return Evaluation("glue", options=name.partition("~")[2])
    suite, _, pooler = name.partition(".")
    return Evaluation(_suite(suite, name), pooler or None)


def pretrained_evaluation(name: str) -> Evaluation:
    """The evaluation of a pre-trained backbone that `<name>.json` holds."""
    folder, _, pooler = name.rpartition("/")
    if not folder:
        return Evaluation("sts", pooler)
    suite, _, options = folder.partition("~")
    return Evaluation(_suite(suite, name), pooler, options)


def _suite(suite: str, name: str) -> str:
    if suite not in registry.names():
        raise ValueError(f"evaluation '{name}': unknown suite '{suite}' (known: {', '.join(registry.names())})")
    return suite


class Evaluations:
    """The data each evaluation reads and the flags it is given at the workflow's scale (a part of `Workflow`), and
    the result files of GLUE's evaluations, among `paths` (the workflow's sentaug.workflow.paths.Paths)."""

    def __init__(self, paths):
        self.paths = paths
        self.config, self.scale, self.S = paths.config, paths.scale, paths.S

    @property
    def glue_tasks(self) -> list[str]:
        """The GLUE tasks the scale fine-tunes on (`scales.<scale>.glue_tasks`; all eight when not given)."""
        from ..data.glue import TASKS

        return list(self.S.get("glue_tasks") or TASKS)

    def suite_options(self, suite: str) -> dict:
        """The options of `sentaug evaluate SUITE` the scale sets (`scales.<scale>.evaluate.<suite>`)."""
        return dict((self.S.get("evaluate") or {}).get(suite) or {})

    def glue_max_steps(self) -> int | None:
        """Steps of GLUE fine-tuning per task at this scale (None: the papers' epochs)."""
        return self.suite_options("glue").get("max_steps")

    def suite(self, name: str):
        """The registered suite `name` (the configuration's plugins loaded first)."""
        load_suites(self.config)
        return registry.get(name)

    def suite_folders(self, suite: str) -> list[str]:
        """The names of the data folders a suite reads at this scale (`glue/CoLA`, `sts`, ...)."""
        return list(dict.fromkeys(self.suite(suite).workflow_folders(self)))

    def suite_data(self, suite: str, origin: str | None = None) -> list[str]:
        """The data folders a suite reads: the scale's own (bundled demo data at demo scale) unless `origin`."""
        return [self.paths.data_folder(folder, origin) for folder in self.suite_folders(suite)]

    def suite_args(self, suite: str) -> str:
        """Extra command-line flags of `sentaug evaluate SUITE` at this scale: the suite's own (GLUE's tasks, the NLI
        triplet sets), a plugin's --module, then the scale's options of the suite (`suite_options`), in order."""
        flags = self.suite(suite).workflow_flags(self)
        if registry.is_plugin(suite):       # its job imports the plugin's module before the suite is a command
            flags.append(f"--module {self.suite(suite).module}")
        flags += [f"--{key.replace('_', '-')} {value}" for key, value in self.suite_options(suite).items()]
        return " ".join(flags)

    def suite_code(self, suite: str) -> str:
        """The code a suite's job runs, as an entry of the rules' code digest: a path under src/sentaug, or the
        absolute path of a plugin's module."""
        module = self.suite(suite).module
        if registry.is_plugin(suite):
            import sys
            from pathlib import Path

            return str(Path(sys.modules[module].__file__).resolve())
        return module.removeprefix("sentaug.").replace(".", "/") + ".py"

    def evaluation_args(self, evaluation: Evaluation) -> str:
        """The flags of an evaluation's command beside its model, pooler, data and scale."""
        flags = [self.suite_args(evaluation.suite), self.glue_option_args(evaluation.options),
                 "--lowercase" if evaluation.lowercase else ""]
        return " ".join(f for f in flags if f)

    def glue_unbuilt_reason(self) -> str | None:
        """Why a GLUE table has empty columns at this scale (None when it runs all eight tasks)."""
        from ..data.glue import TASKS

        if set(TASKS) <= set(self.glue_tasks):
            return None
        missing = ", ".join(f"glue/{t}/train.tsv" for t in TASKS if t not in self.glue_tasks)
        return f"not in scales.{self.scale}.glue_tasks: their training sets are not available offline ({missing})"

    @staticmethod
    def glue_options(options: dict | None) -> str:
        """The path component of a GLUE run with `options` ("rdrop=1.0~switch_case=0.1~recipe=cards"), "" for
        none."""
        unknown = sorted(set(options or {}) - set(GLUE_OPTIONS))
        if unknown:
            raise ValueError(f"unknown GLUE setting '{unknown[0]}' (known: {', '.join(GLUE_OPTIONS)})")
        return "~".join(f"{k}={options[k] if k == 'recipe' else float(options[k])}" for k in GLUE_OPTIONS
                        if k in (options or {}))

    def glue_option_args(self, options: str) -> str:
        """Command-line flags for a path component made by `glue_options` (a recipe: its settings, as JSON)."""
        import json
        import shlex

        flags = []
        for item in filter(None, options.split("~")):
            key, _, value = item.partition("=")
            if key not in GLUE_OPTIONS:
                raise ValueError(f"unknown GLUE setting '{key}' in '{options}' (known: {', '.join(GLUE_OPTIONS)})")
            if key == "recipe":
                settings = {k: v for k, v in self.glue_recipe(value).items() if k != "source"}
                flags.append(f"--recipe {shlex.quote(json.dumps(settings, sort_keys=True))}")
            else:
                flags.append(f"{GLUE_OPTIONS[key]} {float(value)}")
        return " ".join(flags)

    def glue_recipe(self, name: str) -> dict:
        """config.yaml `glue.recipes.<name>`: a paper's fine-tuning settings ({source, all, tasks})."""
        recipes = (self.config.get("glue") or {}).get("recipes") or {}
        if name not in recipes:
            raise ValueError(f"unknown GLUE recipe '{name}' (config.yaml glue.recipes: {', '.join(recipes)})")
        return recipes[name]

    def glue_row_options(self, options: dict | None) -> dict:
        """A table row's GLUE settings at this scale: a paper's recipe applies where the papers' training recipes
        do (`paper_recipes`); below, each task runs the scale's few steps with the default settings."""
        return {k: v for k, v in (options or {}).items() if k != "recipe" or self.S["paper_recipes"]}

    def run_glue_eval(self, paper: str, backbone: str, method: str, seed: int, options: dict | None = None) -> str:
        """GLUE fine-tuning of a trained run, with a recipe when `options` names one (`{recipe: roberta}`)."""
        options = self.glue_row_options(options)
        suite = "glue" + (f"~{self.glue_options(options)}" if options else "")
        return self.paths.run_eval(paper, backbone, method, seed, suite)

    def pretrained_glue_eval(self, backbone: str, pooler: str, options: dict | None = None, **origin) -> str:
        """GLUE fine-tuning of a pre-trained backbone, with R-drop / switch-case / recipe `options` when given."""
        options = self.glue_row_options(options)
        suite = "glue" + (f"~{self.glue_options(options)}" if options else "")
        return self.paths.pretrained_suite_eval(backbone, suite, pooler, **origin)
