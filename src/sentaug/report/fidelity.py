"""The recipe page (docs/fidelity.md): for every paper x backbone x method trained at paper scale, each setting as
we train it (read from the resolved training specs, so the page cannot drift from what runs), the authors' released
code's value with its repository, file and line at a pinned commit, the paper's words, and the verdict: `equal`,
`deliberate` (with the reason) or `variant` (the paper and the released code disagree; both are declared, one as a
labelled variant). The GLUE fine-tuning of the papers' GLUE tables (config.yaml `glue.recipes`) likewise.

The references are data (src/sentaug/resources/fidelity.yaml): the authors' repositories at pinned commits, and
verdict rules, each matching runs by their path's paper component, backbone and method (shell globs), and one or
more settings; the first rule that matches a run's setting gives its verdict. For a method variant
(`cards~negatives.s=4`) the settings the variant changes are matched by the variant's full name only, the others by
its method's name too. `check` lists what is wrong: a paper-scale setting with no verdict, a `deliberate` or
`variant` verdict without its reason, and an `equal` verdict whose reference value is not ours.

`sentaug generate-docs fidelity --out docs/fidelity.md` writes the page (sentaug.docgen builds the paper-scale
Workflow this module is handed: the report imports none of the workflow); `sentaug describe spec --paper P` points a
run to its section (`anchor`).
"""
from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from .. import config as sc

FIDELITY_FILE = Path(__file__).resolve().parents[1] / "resources" / "fidelity.yaml"
PAGE = "docs/fidelity.md"
VERDICTS = ("equal", "deliberate", "variant")
# The trainer's fixed choices, as written in sentaug.train (its tests pin them): AdamW with torch's defaults, bf16
# autocast on CUDA, a linear schedule without warm-up unless `schedule: constant`. `max_grad_norm` is a spec key
# whose default is the Hugging Face Trainer's 1.0.
PRECISION = "bf16 autocast (CUDA)"
DEFAULT_MAX_GRAD_NORM = 1.0

# The settings of a training run, in the page's order: name -> what the row says.
SETTINGS = {
    "optimizer": "optimizer",
    "weight_decay": "weight decay",
    "schedule": "learning-rate schedule",
    "max_grad_norm": "gradient clipping (max norm)",
    "precision": "precision",
    "batch_size": "batch size",
    "length": "training length",
    "learning_rate": "learning rate (backbone)",
    "head_learning_rate": "learning rate (head, objectives)",
    "pooler": "training pooler + projection head",
    "eval_pooler": "evaluation pooler",
    "evaluation": "dev evaluation (checkpoint kept: best)",
    "corpus": "training corpus",
    "max_seq_length": "max tokens",
    "temperature": "temperature",
    "dropout": "backbone dropout",
    "seeds": "seeds",
    "positive": "positives",
    "negatives": "negatives",
    "contrastive": "contrastive loss",
    "objectives": "extra objectives",
    "extra": "other method settings",
}
EXTRA_KEYS = ("augmented_view", "labels", "add_tokens", "lowercase")
# A variant's setting path (its first segment) -> the row it changes
VARIANT_ROWS = {"positive": "positive", "negatives": "negatives", "contrastive": "contrastive",
                "objectives": "objectives", "head": "pooler", "augmented_view": "extra", "labels": "extra",
                "add_tokens": "extra"}
# The settings of a GLUE fine-tuning (sentaug.evaluate.glue.FinetuneConfig), in the page's order.
GLUE_SETTINGS = {
    "learning_rate": "learning rate",
    "batch_size": "batch size",
    "epochs": "epochs",
    "warmup": "warm-up",
    "weight_decay": "weight decay",
    "adam": "Adam betas, eps",
    "max_grad_norm": "gradient clipping (max norm)",
    "max_seq_length": "max tokens",
    "head_dropout": "dropout before the head",
    "head": "head",
    "init": "starting checkpoint",
    "evaluated": "score reported",
    "precision": "precision",
}


# -- our values ------------------------------------------------------------------------------------------------
@functools.cache
def _adamw_defaults() -> tuple[tuple[float, float], float]:
    import inspect

    import torch

    params = inspect.signature(torch.optim.AdamW).parameters
    return tuple(params["betas"].default), params["eps"].default


def run_settings(spec: dict, seeds) -> dict:
    """A run's settings (SETTINGS), as comparable values, from its resolved training spec."""
    betas, eps = _adamw_defaults()
    head = spec.get("head") or ("mlp" if spec["pooler"] == "cls" else "none")
    extra = {k: spec[k] for k in EXTRA_KEYS if k in spec}
    return {
        "optimizer": f"AdamW, betas {tuple(betas)}, eps {eps:g}",
        "weight_decay": spec["weight_decay"],
        "schedule": spec.get("schedule", "linear"),
        "max_grad_norm": spec.get("max_grad_norm", DEFAULT_MAX_GRAD_NORM),
        "precision": PRECISION,
        "batch_size": spec["batch_size"],
        "length": f"{spec['max_steps']} steps" if spec.get("max_steps") else spec["epochs"],
        "learning_rate": spec["learning_rate"],
        "head_learning_rate": spec.get("head_learning_rate") or spec["learning_rate"],
        "pooler": f"{spec['pooler']} + {head}",
        "eval_pooler": spec["eval_pooler"],
        "evaluation": spec["eval_steps"],
        "corpus": spec["corpus"],
        "max_seq_length": spec["max_seq_length"],
        "temperature": spec["temperature"],
        "dropout": spec.get("dropout"),
        "seeds": ", ".join(map(str, seeds)),
        "positive": spec["positive"],
        "negatives": spec["negatives"],
        "contrastive": spec.get("contrastive", "infonce"),
        "objectives": {o["name"]: {k: v for k, v in o.items() if k != "name"} for o in spec["objectives"]},
        "extra": extra or None,
    }


def show(setting: str, value, spec: dict | None = None) -> str:
    """A value as the page writes it."""
    if setting == "schedule":
        return {"linear": "linear to 0, no warm-up", "constant": "constant, no warm-up"}.get(value, str(value))
    if setting == "max_grad_norm":
        return "none" if value is None else f"{value:g}"
    if setting == "length":
        return value if isinstance(value, str) else f"{value} epoch{'s' if value != 1 else ''}"
    if setting == "evaluation":
        dev = "CNSD dev" if (spec or {}).get("language") == "zh" else "STS-B dev"
        return f"{dev} every {value} steps"
    if setting == "dropout":
        return "the backbone's (0.1)" if value is None else f"{value:g}"
    if setting in ("objectives", "extra") and not value:
        return "none"
    return _compact(value)


def _compact(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_compact(v)}" if not isinstance(v, dict) else f"{k} ({_compact(v)})"
                         for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_compact(v) for v in value) + "]"
    return str(value)


def same(ours, theirs) -> bool:
    """Whether a reference's value is ours: numbers by value, a dict by the keys the reference gives."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        return all(k in ours and same(ours[k], v) for k, v in theirs.items())
    if isinstance(theirs, (int, float)) and isinstance(ours, (int, float)) and not isinstance(ours, bool):
        return abs(float(ours) - float(theirs)) <= 1e-12 * max(1.0, abs(float(theirs)))
    if isinstance(theirs, list) and isinstance(ours, (list, tuple)):
        return len(theirs) == len(ours) and all(same(a, b) for a, b in zip(ours, theirs))
    return ours == theirs


# -- the runs at paper scale -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    paper: str          # the run's path component: a paper, a quoted recipe (simcse) or the leaderboard
    backbone: str       # the paper backbone
    method: str


def paper_runs(wf) -> list[Run]:
    """Every run a paper-scale Workflow (`wf`, sentaug.workflow.Workflow: the caller's, this package imports none of
    the workflow) trains for the declared tables, figures and leaderboards."""
    return [Run(*r) for r in wf.trained_runs()]


def run_seeds(wf, run: Run) -> list[int]:
    if run.paper == "leaderboard":
        from .leaderboard import board_seeds

        return board_seeds(wf.leaderboard, wf.scale)
    return list(wf.seeds)


# -- the rules -------------------------------------------------------------------------------------------------
def load_fidelity(path: str | Path = FIDELITY_FILE) -> dict:
    return sc.load_yaml(path)


def _names(rule: dict, key: str) -> list[str]:
    value = rule.get(key, "*")
    return value if isinstance(value, list) else [value]


def _globs(patterns: list[str], names: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(n, p) for p in patterns for n in names)


def changed_rows(method: str) -> set[str]:
    """The rows (SETTINGS) a method variant changes."""
    rows = set()
    for path in sc.split_variant(method)[1]:
        first, _, rest = path.partition(".")
        rows.add(rest.split(".")[0] if first == "train" and rest.split(".")[0] in SETTINGS else
                 "extra" if first == "train" else VARIANT_ROWS.get(first, first))
    if any(p.startswith("train.dropout") for p in sc.split_variant(method)[1]):
        rows.add("dropout")
    return rows


def verdict_rule(rules: list[dict], run: Run, setting: str) -> dict | None:
    """The first rule matching a run's setting (a variant's changed settings by its full name only)."""
    base = sc.split_variant(run.method)[0]
    names = [run.method] if setting in changed_rows(run.method) else [run.method, base]
    for rule in rules:
        if (setting in _names(rule, "settings") and _globs(_names(rule, "papers"), [run.paper])
                and _globs(_names(rule, "backbones"), [run.backbone]) and _globs(_names(rule, "methods"), names)):
            return rule
    return None


def check(fidelity: dict, cells: list[dict]) -> list[str]:
    """What is wrong with the page's cells (`table_cells`): no verdict, a verdict without its reason, an unknown
    verdict or reference, an `equal` whose reference value is not ours."""
    problems = []
    for cell in cells:
        where = f"{cell['run'].paper}/{cell['run'].backbone}/{cell['run'].method}: {cell['setting']}"
        rule = cell["rule"]
        if rule is None:
            problems.append(f"{where}: no verdict")
            continue
        problems += [f"{where}: {p}" for p in rule_problems(fidelity, rule)]
        for code in _code_refs(rule) if rule["verdict"] == "equal" else []:
            if "value" in code and not same(cell["ours"], code["value"]):
                problems.append(f"{where}: verdict equal, but the code's value {code['value']!r} is not ours "
                                f"{cell['ours']!r}")
    return list(dict.fromkeys(problems))


def rule_problems(fidelity: dict, rule: dict) -> list[str]:
    problems = []
    if rule.get("verdict") not in VERDICTS:
        problems.append(f"verdict {rule.get('verdict')!r} is not one of {', '.join(VERDICTS)}")
    if rule.get("verdict") in ("deliberate", "variant") and not rule.get("why"):
        problems.append(f"verdict {rule['verdict']} without its reason (`why`)")
    for code in _code_refs(rule):
        if code.get("repo") not in fidelity["repositories"]:
            problems.append(f"unknown repository {code.get('repo')!r} (fidelity.yaml repositories)")
    return problems


def _code_refs(rule: dict) -> list[dict]:
    code = rule.get("code")
    return [] if code is None else code if isinstance(code, list) else [code]


# -- the cells and the page ------------------------------------------------------------------------------------
def table_cells(config: dict, wf, fidelity: dict | None = None) -> tuple[list[dict], list[dict]]:
    """(training cells, GLUE cells): per run (or GLUE row and task) and setting, our value and its rule; `wf`: the
    paper-scale Workflow."""
    fidelity = fidelity or load_fidelity()
    runs = paper_runs(wf)
    cells = []
    for run in runs:
        spec = wf.specs.run_spec(run.paper, run.backbone, run.method, run_seeds(wf, run)[0])
        for setting, ours in run_settings(spec, run_seeds(wf, run)).items():
            cells.append({"run": run, "setting": setting, "ours": ours, "shown": show(setting, ours, spec),
                          "rule": verdict_rule(fidelity["training"], run, setting)})
    return cells, glue_cells(config, wf, fidelity)


def glue_settings(config: dict, recipe: str | None, task: str) -> dict:
    """A GLUE task's fine-tuning settings (GLUE_SETTINGS) under a recipe (config.yaml glue.recipes)."""
    from ..evaluate.glue import FinetuneConfig, task_config

    recipes = (config.get("glue") or {}).get("recipes") or {}
    cfg = task_config(FinetuneConfig(), task, recipes.get(recipe) if recipe else None)
    betas, eps = _adamw_defaults()
    return {
        "learning_rate": cfg.learning_rate,
        "batch_size": cfg.batch_size,
        "epochs": cfg.epochs,
        "warmup": f"{cfg.warmup_steps} steps" if cfg.warmup_steps is not None else f"{cfg.warmup_ratio:g} of the steps",
        "weight_decay": cfg.weight_decay,
        "adam": f"{tuple(cfg.adam_betas or betas)}, {cfg.adam_eps if cfg.adam_eps is not None else eps:g}",
        "max_grad_norm": cfg.max_grad_norm,
        "max_seq_length": cfg.max_seq_length,
        "head_dropout": cfg.head_dropout,
        "head": "linear on the pooled [CLS] vector",
        "init": "the pre-trained (or our trained) checkpoint",
        "evaluated": "the last step's model",
        "precision": PRECISION,
    }


def glue_show(setting: str, value) -> str:
    if setting == "max_grad_norm":
        return "none" if value is None else f"{value:g}"
    if setting == "head_dropout" and value is None:
        return "the backbone's (0.1)"
    return _compact(value)


@dataclass(frozen=True)
class GlueRow:
    paper: str
    table: str
    label: str
    recipe: str | None


def glue_cells(config: dict, wf, fidelity: dict) -> list[dict]:
    from ..data.glue import TASKS

    cells = []
    for p, paper in wf.papers.items():
        for tname, table in paper.get("tables", {}).items():
            if not table["kind"].startswith("glue"):
                continue
            for row in sc.iter_rows(table):
                g = GlueRow(p, tname, row["label"], (row.get("glue") or {}).get("recipe"))
                for task in TASKS:
                    for setting, ours in glue_settings(config, g.recipe, task).items():
                        cells.append({"glue": g, "task": task, "setting": setting, "ours": ours,
                                      "rule": glue_rule(fidelity["glue"], g, setting)})
    return cells


def glue_rule(rules: list[dict], row: GlueRow, setting: str) -> dict | None:
    for rule in rules:
        if (setting in _names(rule, "settings") and _globs(_names(rule, "papers"), [row.paper])
                and _globs(_names(rule, "recipes"), [row.recipe or "none"])):
            return rule
    return None


def glue_check(fidelity: dict, cells: list[dict]) -> list[str]:
    problems = []
    for cell in cells:
        g = cell["glue"]
        where = f"{g.paper} {g.table} '{g.label}' {cell['task']}: {cell['setting']}"
        rule = cell["rule"]
        if rule is None:
            problems.append(f"{where}: no verdict")
            continue
        problems += [f"{where}: {p}" for p in rule_problems(fidelity, rule)]
        values = (rule.get("code") or {}).get("values") if isinstance(rule.get("code"), dict) else None
        if rule["verdict"] == "equal" and values and cell["task"] in values \
                and not same(cell["ours"], values[cell["task"]]):
            problems.append(f"{where}: verdict equal, but the code's value {values[cell['task']]!r} is not ours "
                            f"{cell['ours']!r}")
    return list(dict.fromkeys(problems))


def anchor(paper: str, backbone: str) -> str:
    """The page's anchor of a run's section (`sentaug describe spec --paper`)."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{paper}-{backbone}".lower()).strip("-")


def _link(fidelity: dict, code: dict) -> str:
    repo = fidelity["repositories"][code["repo"]]
    ref = repo["commit"]
    url = f"https://github.com/{repo['github']}/blob/{ref}/{code['path']}"
    line = code.get("line")
    at = f"{code['path']}" + (f" L{line}" if line else "")
    short = ref[:7] if re.fullmatch(r"[0-9a-f]{40}", ref) else ref
    quote = f": `{_cell_text(code['quote'])}`" if code.get("quote") else ""
    return f"[{repo['github']}@{short} {at}]({url}{f'#L{line}' if line else ''}){quote}"


def _cell_text(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|").replace("`", "'")


def _code_cell(fidelity: dict, rule: dict | None) -> str:
    refs = _code_refs(rule or {})
    if not refs:
        return (rule or {}).get("no_code", "—")
    return "; ".join(_link(fidelity, c) for c in refs)


def _verdict_cell(rule: dict | None) -> str:
    if rule is None:
        return "**none**"
    why = f": {_cell_text(rule['why'])}" if rule.get("why") else ""
    return f"**{rule['verdict']}**{why}"


def _methods(methods: list[str], every: set[str]) -> str:
    """The runs a row covers: `all` when they are every run of the section, else each method once, its variants
    counted ('`cards` (+4 variants)', '`sda_pi~...` (3 variants)')."""
    if set(methods) == every:
        return "all"
    by_base: dict[str, list[str]] = {}
    for m in methods:
        by_base.setdefault(sc.split_variant(m)[0], []).append(m)
    parts = []
    for base, names in by_base.items():
        variants = [n for n in names if n != base]
        if not variants:
            parts.append(f"`{base}`")
        elif base in names:
            parts.append(f"`{base}` (+{len(variants)} variant{'s' if len(variants) > 1 else ''})")
        elif len(variants) == 1:
            parts.append(f"`{variants[0]}`")
        else:
            parts.append(f"`{base}~...` ({len(variants)} variants)")
    return ", ".join(parts)


def merged(setting: str, values: list, shown: list[str]) -> str:
    """One cell for the values a row's runs have: the one value, or the parts they share with the varying ones
    listed ('source retrieved, k 64, s 1 / 2 / 4')."""
    distinct = list(dict.fromkeys(shown))
    if len(distinct) == 1:
        return distinct[0]
    dicts = [v for v in values if isinstance(v, dict)]
    if len(dicts) == len(values) and len({tuple(d) for d in dicts}) == 1:
        keys = list(dicts[0])
        parts = []
        for k in keys:
            vals = list(dict.fromkeys(_compact(d[k]) for d in dicts))
            parts.append(f"{k} {' / '.join(sorted(vals, key=_order))}")
        return ", ".join(parts)
    return " / ".join(sorted(distinct, key=_order))


def _order(text: str):
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


HEADER = """# Recipe fidelity: every paper-scale setting against the authors' code and text

Generated by `make docs-fidelity` (`sentaug generate-docs fidelity --out docs/fidelity.md`) from the training specs
paper scale resolves (`sentaug.config.train_spec`), config.yaml's GLUE recipes and the references in
`src/sentaug/resources/fidelity.yaml`: do not edit by hand; `tests/report/test_fidelity.py` fails when it is out of
date, when a paper-scale setting has no verdict, or when a reference marked equal disagrees with our value. For each
paper x backbone, each setting's value as we train it (the methods that share it named in the row), the authors'
released code (repository, file and line at a pinned commit), the paper's words, and the verdict: **equal**,
**deliberate** (with the reason) or **variant** (paper and released code disagree; both are declared, the other one as
the variant named). A run's `sentaug describe spec --spec JSON --paper P --out FILE` names its section. How a recipe
reaches a run: [scales.md](scales.md), [methods.md](methods.md). This page compares settings; how each objective
computes its loss and gradients against the authors' code is for the objectives' conformance tests. Common to every
run and not repeated below: the trainer also scores the dev set at the last step (the Hugging Face Trainer only
every `eval_steps`), shuffles with its own seeded order, and keeps the best model on the device.

"""


def _counts(rows: list[tuple]) -> dict[str, int]:
    counts = dict.fromkeys(VERDICTS, 0)
    for row in rows:
        if row[-1] is not None:
            counts[row[-1]["verdict"]] += 1
    return counts


def fidelity_markdown(config: dict, wf) -> str:
    """docs/fidelity.md (`wf`: the paper-scale Workflow of `config`; sentaug.docgen builds it)."""
    fidelity = load_fidelity()
    cells, gcells = table_cells(config, wf, fidelity)
    sections: dict[tuple[str, str], dict] = {}
    for cell in cells:
        run = cell["run"]
        group = sections.setdefault((run.paper, run.backbone), {})
        row = group.setdefault((cell["setting"], id(cell["rule"])), {"cells": [], "rule": cell["rule"]})
        row["cells"].append(cell)
    body, all_rows = [], []
    titles = {p: sc.load_paper(config, p).get("short", p) for p in config["papers"]}
    titles.update({name: f"{q['source']}: rows quoted from it, trained with its recipe"
                   for name, q in (config.get("quoted_recipes") or {}).items()})
    titles["leaderboard"] = "Leaderboard (every method on equal terms, SimCSE's recipe per backbone)"
    order = [*config["papers"], *(config.get("quoted_recipes") or {}), "leaderboard"]
    for paper, backbone in sorted(sections, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1])):
        rows = sections[(paper, backbone)]
        every = {c["run"].method for row in rows.values() for c in row["cells"]}
        lines = ["| setting | runs | ours | released code | paper | verdict |", "|---|---|---|---|---|---|"]
        section_rows = []
        for setting in SETTINGS:
            for (s, _), row in rows.items():
                if s != setting:
                    continue
                rule, methods = row["rule"], list(dict.fromkeys(c["run"].method for c in row["cells"]))
                ours = merged(setting, [c["ours"] for c in row["cells"]], [c["shown"] for c in row["cells"]])
                section_rows.append((setting, rule))
                lines.append(f"| {SETTINGS[setting]} | {_methods(methods, every)} | {_cell_text(ours)} | "
                             f"{_sources_and_verdict(fidelity, rule)}")
        all_rows += section_rows
        counts = _counts(section_rows)
        body += ["", f'<a id="{anchor(paper, backbone)}"></a>', "",
                 f"## {titles.get(paper, paper)}: {backbone}", "",
                 f"{len(every)} runs' methods: {_methods(sorted(every), set())}. {len(section_rows)} rows: "
                 f"{counts['equal']} equal, {counts['deliberate']} deliberate, {counts['variant']} variant.", "",
                 *lines]
    glue_body, glue_rows = _glue_sections(config, fidelity, gcells, titles)
    all_rows += glue_rows
    counts = _counts(all_rows)
    runs = {c["run"] for c in cells}
    summary = (f"Paper scale trains {len(runs)} runs (paper x backbone x method, each over its seeds) and fine-tunes "
               f"{len({c['glue'] for c in gcells})} GLUE rows. This page's {len(all_rows)} rows: "
               f"**{counts['equal']} equal, {counts['deliberate']} deliberate, {counts['variant']} variant**; "
               f"{sum(r[-1] is None for r in all_rows)} without a verdict.\n")
    repos = ["", "## The authors' code, as pinned here", "", "| repository | commit | what it is |", "|---|---|---|"]
    repos += [f"| [{r['github']}](https://github.com/{r['github']}) | `{r['commit']}` | {_cell_text(r['what'])} |"
              for r in fidelity["repositories"].values()]
    return HEADER + summary + "\n".join(repos + body + glue_body).rstrip() + "\n"


def _sources_and_verdict(fidelity: dict, rule: dict | None) -> str:
    """A row's last three cells: the released code's line, the paper's words and the verdict."""
    return f"{_code_cell(fidelity, rule)} | {_cell_text((rule or {}).get('paper', '—'))} | {_verdict_cell(rule)} |"


def _glue_sections(config: dict, fidelity: dict, gcells: list[dict], titles: dict) -> tuple[list[str], list]:
    """One section per GLUE table: per setting, the value per task (one value when every task shares it)."""
    body, rows_out = [], []
    tables: dict[tuple, dict] = {}
    for cell in gcells:
        g = cell["glue"]
        tables.setdefault((g.paper, g.table), {}).setdefault((g.recipe, cell["setting"]), {"labels": [],
                                                                                           "tasks": {}, "rule": None})
        entry = tables[(g.paper, g.table)][(g.recipe, cell["setting"])]
        if g.label not in entry["labels"]:
            entry["labels"].append(g.label)
        entry["tasks"][cell["task"]] = cell["ours"]
        entry["rule"] = cell["rule"]
    for (paper, table), entries in tables.items():
        lines = ["| setting | rows (recipe) | ours, per task | released code | paper | verdict |",
                 "|---|---|---|---|---|---|"]
        section_rows = []
        for setting in GLUE_SETTINGS:
            for (recipe, s), entry in entries.items():
                if s != setting:
                    continue
                values = {t: glue_show(setting, v) for t, v in entry["tasks"].items()}
                shown = next(iter(values.values())) if len(set(values.values())) == 1 else \
                    ", ".join(f"{t} {v}" for t, v in values.items())
                rule = entry["rule"]
                section_rows.append((setting, rule))
                lines.append(f"| {GLUE_SETTINGS[setting]} | {', '.join(entry['labels'])} (`{recipe or 'default'}`) | "
                             f"{_cell_text(shown)} | {_sources_and_verdict(fidelity, rule)}")
        rows_out += section_rows
        counts = _counts(section_rows)
        body += ["", f'<a id="{anchor(paper, table)}-glue"></a>', "",
                 f"## {titles.get(paper, paper)} {table}: GLUE fine-tuning", "",
                 f"{len(section_rows)} rows: {counts['equal']} equal, {counts['deliberate']} deliberate, "
                 f"{counts['variant']} variant.", "", *lines]
    return body, rows_out


def fidelity_problems(config: dict, wf) -> list[str]:
    """Everything `check` and `glue_check` find (the test's and `make docs-fidelity`'s)."""
    fidelity = load_fidelity()
    cells, gcells = table_cells(config, wf, fidelity)
    return check(fidelity, cells) + glue_check(fidelity, gcells)
