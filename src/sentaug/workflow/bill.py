"""`sentaug cost`: the bill of a set of targets before launch. Snakemake resolves the targets' DAG from the
Snakefile (the workflow's own target resolution, `sentaug.workflow.Workflow`), and every job of it is
priced with `sentaug.workflow.cost` on one device's step-time table: training runs, GLUE fine-tuning,
evaluation suites, analyses and retrieval indexes. Jobs already built (Snakemake would not rerun them) are
listed apart, with what their runs actually took (`train_seconds` in each run's train_summary.json).
"""
from __future__ import annotations

import json
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .. import config as sc
from ..choices import unknown
from . import cost
from .step_times import StepTimes, known_devices

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_DEVICE = "h200"
GPU_KINDS = ("train", "glue", "eval")     # priced on the device; the other jobs run on CPUs
STS_RULES = {"evaluate_run", "evaluate_run_pooler", "evaluate_run_lowercase", "evaluate_pretrained"}
SUITE_RULES = {"evaluate_suite", "evaluate_suite_pretrained"}
ANALYSIS_RULES = {"augmentation_analysis_run", "augmentation_analysis_pretrained"}
PROJECTION_RULES = {"projection_run", "projection_pretrained"}


@dataclass
class JobCost:
    kind: str                                   # train, glue, eval or cpu
    rule: str
    label: str
    built: bool
    projection: cost.Projection | None = None
    actual_s: float | None = None               # what a built job took (_actual)
    actual_device: str | None = None

    @property
    def wildcards(self) -> dict[str, str]:
        """The job's wildcards, as its label names them (_job_key)."""
        return dict(part.split("=", 1) for part in self.label.split(":", 1)[1].split(",") if part)


@dataclass
class Bill:
    scale: str
    times: StepTimes
    targets: dict[str, list[str]]               # target -> keys of the jobs it needs
    jobs: dict[str, JobCost]
    runs_per_gpu: int = 1
    sharing: float = 1.0
    speedup: float = 1.0
    notes: list[str] = field(default_factory=list)
    paths: object = None                        # the workflow's sentaug.workflow.Workflow

    def total(self, keys, kind: str | None = None, built: bool | None = None) -> float:
        return sum(j.projection.seconds for j in (self.jobs[k] for k in keys) if j.projection is not None
                   and (kind is None or j.kind == kind) and (built is None or j.built == built)) / 3600

    def training_hours(self, keys, built: bool = False) -> float:
        """Device-hours of the training runs, with the measured gain of sharing GPUs (1 when not measured)."""
        return self.total(keys, "train", built) / self.sharing


def _job_key(job) -> str:
    return f"{job.rule.name}:" + ",".join(f"{k}={v}" for k, v in sorted(job.wildcards_dict.items()))


@contextmanager
def _snakemake_dag(targets: list[str], config: dict, configfiles, workdir: Path):
    """(the workflow's Snakefile globals, its config, the DAG of `targets`) as Snakemake resolves them,
    without running or locking anything. Snakemake reads a Snakefile into the globals of its own module
    snakemake.workflow (the Snakefile's `Workflow`, sentaug's, replaces Snakemake's there): they are put
    back when done, so that a second bill in the same process finds Snakemake as it was."""
    from snakemake.api import SnakemakeApi     # before snakemake.workflow (which cannot be imported first)
    import snakemake.workflow
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

    module_globals = vars(snakemake.workflow)
    saved = dict(module_globals)
    try:
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            wf_api = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=workdir / "Snakefile",
                                  config_settings=ConfigSettings(config=config, configfiles=[Path(c) for c in configfiles]),
                                  workdir=workdir)
            wf_api.dag(DAGSettings(targets=set(targets)))
            workflow = wf_api._workflow
            try:
                workflow._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True)
                workflow._build_dag()
            except Exception as e:     # Snakemake's own message names what it could not resolve
                raise ValueError(f"cannot resolve {' '.join(targets)}: {str(e).rstrip('.')}. Targets are `all`, a table "
                                 f"(<results>/tables/<paper>/<table>.tex), a figure (<results>/figures/<paper>/"
                                 f"<figure>.pdf), a leaderboard (<results>/tables/<board>.tex) or another "
                                 f"output of the workflow") from None
            yield dict(workflow.globals), workflow.config, workflow.dag
    finally:
        module_globals.clear()
        module_globals.update(saved)


def _target_jobs(dag, target: str, workdir: Path):
    if target == "all":
        return [j for j in dag.targetjobs if j.rule.name == "all"]
    path = Path(target) if Path(target).is_absolute() else workdir / target
    return [j for j in dag.targetjobs if any(Path(f).resolve() == path.resolve() if Path(f).is_absolute()
                                             else (workdir / f).resolve() == path.resolve() for f in j.output)]


def _price(job, W, times: StepTimes, config: dict) -> tuple[str, cost.Projection | None]:
    rule, w = job.rule.name, job.wildcards_dict
    shape = (lambda name: cost.backbone_shape(config, name))
    if rule == "train":
        spec = W.run_spec(w["paper"], w["backbone"], w["method"], int(w["seed"]))
        return "train", cost.project_run(W, spec, times, config)
    if rule in STS_RULES:
        return "eval", cost.project_suite(times, shape(w["backbone"]), "sts")
    if rule in SUITE_RULES and w["suite"] == "glue" or rule == "evaluate_glue_pretrained_options":
        steps = {"demo": 20, "small": 100}.get(W.scale)       # Workflow.suite_args: `--max-steps` below paper scale
        rdrop = "rdrop" in w.get("options", "")
        return "glue", cost.project_glue(times, shape(w["backbone"]), W.glue_tasks, steps, rdrop)
    if rule in SUITE_RULES:
        return "eval", cost.project_suite(times, shape(w["backbone"]), w["suite"])
    if rule in ANALYSIS_RULES:    # each changed pair embedded, and scored by GPT-2's perplexity
        n = 2 * W.augmentation_analysis_sample() * len(W.augmentation_set(w["set"]))
        p = cost.project_embedding(times, shape(w["backbone"]), n, ["sample size as an upper bound"])
        lm = cost.project_embedding(times, cost.workload()["shapes"]["gpt2"], n)
        return "eval", cost.Projection(p.seconds + lm.seconds - cost.startup_s(times), 0, {"sentences": 2 * n},
                                       p.basis, p.sizes)
    if rule in PROJECTION_RULES:
        n = 2 * int(w["sample"]) * len(W.projection_augmentations(w["augs"]))
        return "eval", cost.project_embedding(times, shape(w["backbone"]), n, ["sample size as an upper bound"])
    if rule == "index":
        return "eval", cost.project_index(times, shape(w["backbone"]), w["corpus"])
    return "cpu", None


def _actual(job, kind: str) -> tuple[float | None, str | None]:
    """(seconds, device) a built job took: a run's `train_seconds` (its train_summary.json), an evaluation's or
    GLUE fine-tuning's `seconds` (its result JSON); None where its output records none."""
    path = Path(job.output[0]) / "train_summary.json" if kind == "train" else Path(job.output[0])
    if path.suffix != ".json" or not path.is_file():
        return None, None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("train_seconds" if kind == "train" else "seconds"), data.get("device")


def compute_bill(targets: list[str], scale: str | None = None, device: str | None = None, config: dict | None = None,
                 configfiles=(), speedup: float = 1.0, sharing_gain: float | None = None,
                 workdir: Path = ROOT) -> Bill:
    """The bill of `targets` (output paths or `all`) at `scale` on `device`'s step times. What-ifs: every
    step `speedup` times faster; runs sharing GPUs with `sharing_gain` times the runs per hour of one."""
    if not targets:
        raise ValueError("name at least one target: `all`, or a table, figure or leaderboard output")
    for name, value in (("--speedup", speedup), ("--sharing-gain", sharing_gain)):
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")
    if scale and scale not in sc.scale_names():     # before the DAG, as the device: a typo costs no wait
        raise sc.ConfigError(unknown("scale", scale, sc.scale_names()))
    for name in filter(None, [device]):     # before the DAG: a typo costs no wait
        if name not in known_devices():
            raise ValueError(unknown("device", name, known_devices()))
    overrides = dict(config or {})
    if scale:
        overrides["scale"] = scale
    with _snakemake_dag(targets, overrides, configfiles, Path(workdir)) as (snakefile_globals, wf_config, dag):
        W = snakefile_globals["W"]
        device = device or W.S.get("step_times") or DEFAULT_DEVICE
        if device not in known_devices():
            raise ValueError(f"unknown device '{device}' (scales.{W.scale}.step_times; known: "
                             f"{', '.join(known_devices())})")
        times = StepTimes.load(device).scaled(speedup)
        jobs, bill_targets = {}, {}
        for target in targets:
            roots = _target_jobs(dag, target, Path(workdir))
            if not roots:
                raise ValueError(f"unknown target '{target}': no job of the DAG makes it")
            keys = []
            for job in dag.bfs(dag.dependencies, *roots):
                key = _job_key(job)
                keys.append(key)
                if key not in jobs:
                    kind, projection = _price(job, W, times, wf_config)
                    built = not dag.needrun(job)
                    actual, actual_device = _actual(job, kind) if kind in GPU_KINDS and built else (None, None)
                    jobs[key] = JobCost(kind, job.rule.name, key, built, projection, actual, actual_device)
            bill_targets[target] = keys
    k = W.runs_per_gpu()
    sharing = times.sharing(k) if sharing_gain is None else sharing_gain
    notes = [] if k == 1 or sharing != 1.0 else [
        f"runs_per_gpu {k}: the gain of {k} runs sharing a GPU is not measured on {times.device}: counted as none"]
    if speedup != 1.0:
        notes.append(f"what-if: every training and GLUE step {speedup:g}x faster than measured")
    if sharing_gain is not None:
        notes.append(f"what-if: runs sharing GPUs train {sharing_gain:g}x the runs per hour of one run alone")
    return Bill(W.scale, times, bill_targets, jobs, k, sharing, speedup, notes, W)


def _h(seconds_or_hours: float) -> str:
    return f"{seconds_or_hours:,.2f}"


def target_rows(bill: Bill) -> list[dict]:
    rows = []
    for target, keys in [*bill.targets.items(), *([("total (each job once)", list(bill.jobs))]
                                                  if len(bill.targets) > 1 else [])]:
        runs = [bill.jobs[k] for k in keys if bill.jobs[k].kind == "train"]
        new = [j for j in runs if not j.built]
        rows.append({"target": target, "runs": len(runs), "new": len(new), "built": len(runs) - len(new),
                     "steps": sum(j.projection.steps for j in new),
                     "train_h": bill.training_hours(keys), "glue_h": bill.total(keys, "glue", False),
                     "eval_h": bill.total(keys, "eval", False),
                     "built_projected_h": bill.training_hours(keys, built=True),
                     "built_actual_h": sum(j.actual_s or 0 for j in runs if j.built) / 3600})
        rows[-1]["total_h"] = rows[-1]["train_h"] + rows[-1]["glue_h"] + rows[-1]["eval_h"]
    return rows


def setting_rows(bill: Bill) -> list[dict]:
    """The new training runs grouped by backbone, batch and steps."""
    groups = defaultdict(list)
    for j in bill.jobs.values():
        if j.kind == "train" and not j.built:
            w = j.wildcards
            groups[(w["backbone"], j.projection.steps, round(j.projection.parts["step_ms"], 1))].append(j)
    rows = []
    for (backbone, steps, step_ms), js in sorted(groups.items(), key=lambda kv: -sum(j.projection.seconds
                                                                                   for j in kv[1])):
        rows.append({"backbone": backbone, "steps": steps, "step_ms": step_ms, "runs": len(js),
                     "h_per_run": js[0].projection.seconds / 3600, "h": sum(j.projection.seconds for j in js) / 3600,
                     "measured": sum(j.projection.measured for j in js)})
    return rows


def format_bill(bill: Bill, runs: bool = False) -> str:
    t = bill.times
    out = [f"Bill at scale {bill.scale} on {t.device} (step times: {t.name}.yaml; {t.table['source']})", ""]
    head = (f"{'target':<48} {'runs':>5} {'new':>5} {'built':>5} {'steps (new)':>13} {'train h':>9} "
            f"{'GLUE h':>8} {'eval h':>8} {'total h':>9}  {'built: projected / actual h':>27}")
    out += [head, "-" * len(head)]
    for r in target_rows(bill):
        out.append(f"{r['target']:<48} {r['runs']:>5} {r['new']:>5} {r['built']:>5} {r['steps']:>13,} "
                   f"{_h(r['train_h']):>9} {_h(r['glue_h']):>8} {_h(r['eval_h']):>8} {_h(r['total_h']):>9}  "
                   f"{_h(r['built_projected_h']) + ' / ' + _h(r['built_actual_h']) if r['built'] else '':>27}")
    settings = setting_rows(bill)
    if settings:
        out += ["", "New training runs by setting (step time with the method's overhead):",
                f"  {'backbone':<26} {'steps':>8} {'ms/step':>8} {'runs':>5} {'h/run':>7} {'h':>8}  basis"]
        for s in settings:
            basis = "measured" if s["measured"] == s["runs"] else (
                "extrapolated" if not s["measured"] else f"{s['measured']} measured, the rest extrapolated")
            out.append(f"  {s['backbone']:<26} {s['steps']:>8,} {s['step_ms']:>8.1f} {s['runs']:>5} "
                       f"{s['h_per_run']:>7.3f} {s['h']:>8.2f}  {basis}")
    parts = defaultdict(float)
    for j in bill.jobs.values():
        if j.kind == "train" and not j.built:
            for name in ("steps", "dev", "checkpoints", "startup"):
                parts[name] += j.projection.parts[name] / 3600 / bill.sharing
    if parts:
        out += ["", f"Training hours: steps {parts['steps']:.2f}, dev evaluations and best-model writes "
                    f"{parts['dev']:.2f}, checkpoints {parts['checkpoints']:.2f}, start-up {parts['startup']:.2f}"
                + (f" (with the sharing gain {bill.sharing:g})" if bill.sharing != 1 else "")]
    cpu = defaultdict(int)
    for j in bill.jobs.values():
        if j.kind == "cpu" and not j.built:
            cpu[j.rule] += 1
    new = [j for j in bill.jobs.values() if j.kind in GPU_KINDS and not j.built]
    extrapolated = sum(j.projection.seconds for j in new if not j.projection.measured)
    bounded = sum(j.projection.seconds for j in new if j.projection.sizes)
    total = sum(j.projection.seconds for j in new)
    out += ["", f"Extrapolated: {extrapolated / total:.0%} of the new device-hours (the rest priced from measured "
                f"step times and start-ups); sizes estimated or upper bounds (caches not built yet): "
                f"{bounded / total:.0%}" if total else "Nothing new to run on the device.",
            "Not in device-hours: the CPU jobs (" + ", ".join(f"{n} {r}" for r, n in sorted(cpu.items())) + ")"
            if cpu else "", "and the suites' classifiers and K-means (CPU). Evaluations: their embeddings only.",
            *[f"Note: {n}" for n in bill.notes]]
    if runs:
        out += ["", "Runs:"]
        for j in sorted(bill.jobs.values(), key=lambda j: j.label):
            if j.kind in GPU_KINDS:
                p = j.projection
                actual = (f", took {j.actual_s:,.0f} s" + (f" on {j.actual_device}" if j.actual_device else "")
                          if j.actual_s is not None else "")
                out.append(f"  {'built' if j.built else 'new':<5} {j.label}: {p.steps:,} steps, {p.seconds:,.0f} s"
                           f"{actual}" + (f"  [{'; '.join(p.basis)}]" if p.basis else "  [measured]")
                           + (f"  sizes: {'; '.join(p.sizes)}" if p.sizes else ""))
    return "\n".join(line for line in out if line is not None)


def bill_total_hours(bill: Bill) -> float:
    """Device-hours of every new job of the bill (training with the sharing gain, GLUE and evaluations)."""
    keys = list(bill.jobs)
    return bill.training_hours(keys) + bill.total(keys, "glue", False) + bill.total(keys, "eval", False)


def add_cost_command(sub) -> None:
    """`sentaug cost`, under the command line's subparsers `sub`."""
    c = sub.add_parser("cost", help="the bill of targets before launch: training runs (new and built), steps, "
                                    "projected device-hours, GLUE and evaluations")
    c.add_argument("targets", nargs="+", help="`all`, or outputs: results/tables/<paper>/<table>.tex, "
                                              "results/figures/<paper>/<figure>.pdf, results/tables/<board>.tex")
    c.add_argument("--scale", help=f"{', '.join(sc.scale_names())} (default: config.yaml's `scale`)")
    c.add_argument("--device", help=f"step-time table (src/sentaug/resources/step_times/<device>.yaml; default: "
                                    f"scales.<scale>.step_times, else {DEFAULT_DEVICE})")
    c.add_argument("--config", nargs="*", metavar="KEY=VALUE", help="config overrides, as snakemake --config")
    c.add_argument("--configfile", nargs="*", default=[], help="config files, as snakemake --configfile")
    c.add_argument("--snakemake-args", default="", metavar="FLAGS",
                   help="Snakemake command-line flags (make report passes SNAKEFLAGS): their --config and "
                        "--configfile apply, the others are ignored")
    c.add_argument("--speedup", type=float, default=1.0,
                   help="what-if: every training and GLUE step this many times faster than measured")
    c.add_argument("--sharing-gain", type=float,
                   help="what-if: runs sharing GPUs (runs_per_gpu) train this many times the runs per hour of one "
                        "(default: the table's measured gain for the scale's runs_per_gpu, else none)")
    c.add_argument("--runs", action="store_true", help="also list every job priced on the device")
    c.add_argument("--front-page", action="store_true",
                   help="also write what the report's front page shows, as data: this bill, the paper scale's and "
                        "the paper tables' files (<results>/report/bill.<scale>.json, which `make report` renders)")
    c.set_defaults(func=cmd_cost)


def cmd_cost(a) -> None:
    import shlex

    from snakemake.cli import get_argument_parser, parse_config

    snakemake = get_argument_parser().parse_args(shlex.split(a.snakemake_args))
    config = {**parse_config(snakemake.config or []), **parse_config(a.config or [])}
    bill = compute_bill(a.targets, a.scale, a.device, config, [*snakemake.configfile, *a.configfile], a.speedup,
                        a.sharing_gain)
    print(format_bill(bill, runs=a.runs))
    if a.front_page:     # the front page sets the build beside the paper scale's projection
        from .report_data import write_report_data

        paper = bill if bill.scale == "paper" else compute_bill(
            a.targets, "paper", a.device, config, [*snakemake.configfile, *a.configfile], a.speedup, a.sharing_gain)
        print(f"front page data: {write_report_data(bill, paper)}")
