"""What an evaluation of a model is, from its result's file name, and what its job reads and is given.

A trained run's results are `<run's eval folder>/<evaluation>.json` (PATTERNS["run_eval"]): `sts` or any suite
under the run's eval pooler, `<suite>.<pooler>` under another pooler (CLEAR Table 2's -mean rows), `sts_lowercase`
with every sentence lower-cased (CARDS Table 4). A pre-trained backbone's are `<backbone's folder>/<evaluation>.json`
(PATTERNS["pretrained_eval"]): `<pooler>` for STS, `<suite>/<pooler>`, and `glue~<settings>/<pooler>` for GLUE
with R-drop / switch-case settings (CARDS Table 6). One rule per kind of model evaluates them all
(rules/evaluate.smk): the suites are sentaug.evaluate.suites.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..evaluate.suites import SUITES

# Settings of `sentaug evaluate glue` a table row may give (`glue: {rdrop: 1.0, switch_case: 0.1}`, CARDS
# Table 6), as they appear in the result's path and on the command line.
GLUE_OPTIONS = {"rdrop": "--rdrop", "switch_case": "--switch-case"}
# GLUE fine-tuning's steps per task below paper scale (`--max-steps`; paper scale runs the papers' 3 epochs).
GLUE_MAX_STEPS = {"demo": 20, "small": 100, "test": 4}
# ... and its batches below the papers' (the test scale: seconds per task on the CPU, batch 32 x 128 tokens take
# seconds a step there).
GLUE_BATCHES = {"test": "--train-batch-size 8 --max-seq-length 64"}
LOWERCASE = "sts_lowercase"      # STS with every sentence lower-cased

_SUITE = "|".join(re.escape(s) for s in SUITES)
# The {evaluation} wildcard of each kind of model (the pooler and GLUE's settings: one path component each).
RUN_EVALUATION = rf"(?:{_SUITE})(?:\.[^/.]+)?|{LOWERCASE}"
PRETRAINED_EVALUATION = rf"(?:(?:{_SUITE})/|glue~[^/]+/)?[^/.]+"


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
    if suite not in SUITES:
        raise ValueError(f"evaluation '{name}': unknown suite '{suite}' (known: {', '.join(SUITES)})")
    return suite


class Evaluations:
    """The data each evaluation reads and the flags it is given at the workflow's scale (a part of `Workflow`)."""

    @property
    def glue_tasks(self) -> list[str]:
        """The GLUE tasks the scale fine-tunes on (`scales.<scale>.glue_tasks`; all eight when not given)."""
        from ..data.glue import TASKS

        return list(self.S.get("glue_tasks") or TASKS)

    def glue_max_steps(self) -> int | None:
        """Steps of GLUE fine-tuning per task at this scale (None: the papers' epochs)."""
        return GLUE_MAX_STEPS.get(self.scale)

    def suite_folders(self, suite: str) -> list[str]:
        """The names of the data folders a suite reads at this scale (`glue/CoLA`, `sts`, ...)."""
        folders = [f"glue/{t}" for t in self.glue_tasks] if suite == "glue" else list(SUITES[suite])
        if suite == "nli":      # the isomorphism part reads the scale's triplet sets (AugCSE Table 15)
            folders += [self.nli_set_folder(name) for name in self.S.get("nli_sets", {}).values()]
        return list(dict.fromkeys(folders))

    def suite_data(self, suite: str, origin: str | None = None) -> list[str]:
        """The data folders a suite reads: the scale's own (bundled demo data at demo scale) unless `origin`."""
        return [self.data_folder(folder, origin) for folder in self.suite_folders(suite)]

    def suite_args(self, suite: str) -> str:
        """Extra command-line flags of `sentaug evaluate SUITE` at this scale."""
        if suite == "transfer":
            return f"--mode {'test' if self.scale == 'paper' else 'fast'}"
        if suite == "glue":
            steps = self.glue_max_steps()
            return (f"--tasks {' '.join(self.glue_tasks)}" + (f" --max-steps {steps}" if steps else "")
                    + (f" {GLUE_BATCHES[self.scale]}" if self.scale in GLUE_BATCHES else ""))
        if suite == "nli":      # AugCSE Table 15: the scale's NLI triplet sets (nli: SNLI + MNLI, anli: ANLI)
            return " ".join(f"--set {k}={v}" for k, v in self.S.get("nli_sets", {}).items())
        if self.scale == "demo":   # seconds per model on the demo data; the numbers are not comparable anyway
            return {"analysis": "--stackoverflow-limit 4000", "intent": "--iterations 200"}.get(suite, "")
        if self.scale == "test":   # the real data's slices (scales.test.slices): seconds per model as well
            return {"analysis": "--iso-sample 200 --gh-sample 50 --nli-limit 100", "intent": "--iterations 100",
                    "clustering": "--seeds 2"}.get(suite, "")
        return ""

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
        """The path component of a GLUE run with `options` ("rdrop=1.0~switch_case=0.1"), "" for none."""
        unknown = sorted(set(options or {}) - set(GLUE_OPTIONS))
        if unknown:
            raise ValueError(f"unknown GLUE setting '{unknown[0]}' (known: {', '.join(GLUE_OPTIONS)})")
        return "~".join(f"{k}={float(options[k])}" for k in GLUE_OPTIONS if k in (options or {}))

    @staticmethod
    def glue_option_args(options: str) -> str:
        """Command-line flags for a path component made by `glue_options`."""
        flags = []
        for item in filter(None, options.split("~")):
            key, _, value = item.partition("=")
            if key not in GLUE_OPTIONS:
                raise ValueError(f"unknown GLUE setting '{key}' in '{options}' (known: {', '.join(GLUE_OPTIONS)})")
            flags.append(f"{GLUE_OPTIONS[key]} {float(value)}")
        return " ".join(flags)

    def pretrained_glue_eval(self, backbone: str, pooler: str, options: dict | None = None, **origin) -> str:
        """GLUE fine-tuning of a pre-trained backbone, with R-drop / switch-case `options` when given."""
        return self.pretrained_suite_eval(backbone, "glue" + (f"~{self.glue_options(options)}" if options else ""),
                                          pooler, **origin)
