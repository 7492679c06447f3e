"""`sentaug cost`: the bill of a set of targets before launch. Snakemake's dry run lists the targets' jobs
(sentaug.workflow.planned: every job of their DAG, and those it would run), and every job of a rule on a GPU
(sentaug.workflow.jobs declares which; sentaug.pricing.prices, how each is priced) is priced with `cost` on one
device's step-time table: training runs, GLUE fine-tuning, evaluation suites, analyses and retrieval indexes. Jobs
already built (Snakemake would not rerun them) are listed apart, with what their runs actually took
(`train_seconds` in each run's train_summary.json).

At a scale on GPUs the evaluations of one model run in one process (sentaug.evaluate.service): the bill counts
its start-up once per model, the model's first new job (by its key) starting it and the others as clients.
Training runs sharing GPUs (`runs_per_gpu`) are counted at the measured gain of their shape against one steady
run (StepTimes.sharing; none where none was measured). The bill says which share of the new device-hours is
priced from figures measured on the code that runs, from figures older than it (sentaug.pricing.freshness
states the rule), from figures calibrated from datasheet rates (a device without a measured table:
sentaug.pricing.datasheet), and from estimates. A job whose measured peak memory does not fit in the device's
(datasheet.fits) is left out of the device-hours and named apart, with what it would take.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import config as sc
from ..choices import Mistake, unknown
from ..workflow.jobs import rule_kind
from ..workflow.planned import PlannedJob, planned_and_new
from . import cost, datasheet, freshness
from .datasheet import known_devices
from .prices import GPU_KINDS, TRAIN, price
from .step_times import StepTimes

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_DEVICE = "h200"


@dataclass
class JobCost:
    kind: str                                   # train, glue, eval or cpu
    rule: str
    label: str
    built: bool
    projection: cost.Projection | None = None
    actual_s: float | None = None               # what a built job took (_actual)
    actual_device: str | None = None
    gain: float = 1.0                           # a training run's measured gain of sharing a GPU (runs_per_gpu)
    gain_source: object = None                  # the figure of that gain (step_times.Source)
    fits: bool | None = None                    # in the device's memory; None: not known (fit_in_memory)

    @property
    def hours(self) -> float:
        """Its projected device-hours: a training run's with its gain of sharing a GPU."""
        return 0.0 if self.projection is None else self.projection.seconds / 3600 / self.gain

    @property
    def wildcards(self) -> dict[str, str]:
        """The job's wildcards, as its label names them (PlannedJob.key)."""
        return dict(part.split("=", 1) for part in self.label.split(":", 1)[1].split(",") if part)


@dataclass
class Bill:
    scale: str
    times: StepTimes
    targets: dict[str, list[str]]               # target -> keys of the jobs it needs
    jobs: dict[str, JobCost]
    runs_per_gpu: int = 1
    speedup: float = 1.0
    notes: list[str] = field(default_factory=list)
    workflow: object = None                     # the workflow's sentaug.workflow.Workflow

    def total(self, keys, kind: str | None = None, built: bool | None = None) -> float:
        """Device-hours of the jobs `keys` (of one column, built or not), training runs with their gain of
        sharing GPUs; a job that does not fit in the device's memory is not counted (`too_large`)."""
        return sum(j.hours for j in (self.jobs[k] for k in keys) if j.projection is not None and j.fits is not False
                   and (kind is None or j.kind == kind) and (built is None or j.built == built))

    def too_large(self) -> list[JobCost]:
        """The new device jobs whose measured peak memory does not fit in the device's."""
        return [j for j in self.jobs.values() if j.fits is False and not j.built]

    def training_hours(self, keys, built: bool = False) -> float:
        """Device-hours of the training runs, with the measured gain of sharing GPUs (1 when not measured)."""
        return self.total(keys, "train", built)

    def provenance(self) -> dict:
        """The new device-hours by what prices them (module docstring): `current` (figures measured on the code
        that runs: sentaug.pricing.freshness), `older` (at least one figure measured on older code; by figure
        kind, commit and the paths changed since: `older_by`), `calibrated` (at least one figure calibrated from
        datasheet rates, not measured on the device), `estimated` (no measurement), and `total`."""
        out = {"current": 0.0, "older": 0.0, "calibrated": 0.0, "estimated": 0.0, "total": 0.0,
               "older_by": defaultdict(float)}
        for j in self.jobs.values():
            if j.kind not in GPU_KINDS or j.built or j.projection is None or j.fits is False:
                continue
            old_gain = j.gain != 1.0 and j.gain_source is not None and not freshness.is_current(j.gain_source)
            for _, seconds, sources in j.projection.pieces:
                hours = seconds / 3600 / j.gain
                out["total"] += hours
                if sources is None:
                    out["estimated"] += hours
                    continue
                if any(x is not None and x.calibrated for x in sources):
                    out["calibrated"] += hours
                    continue
                old = [x for x in sources if not freshness.is_current(x)] + ([j.gain_source] if old_gain else [])
                if not old:
                    out["current"] += hours
                    continue
                out["older"] += hours
                first = old[0]
                out["older_by"][(first.kind, first.commit, first.date)] += hours
        out["older_by"] = dict(out["older_by"])
        return out


def snakefile_config(workdir: Path, configfiles=(), overrides: dict | None = None) -> dict:
    """The configuration the Snakefile runs with: its config.yaml, then each of `configfiles`, then `overrides`
    (as `--config`), merged as Snakemake merges them, validated with the schema's defaults filled in."""
    from snakemake.utils import update_config, validate

    import sentaug.config as sc

    config = sc.load_yaml(Path(workdir) / "config.yaml")
    for path in configfiles:
        update_config(config, sc.load_yaml(path))
    update_config(config, dict(overrides or {}))
    validate(config, str(sc.SCHEMA_PATH))
    return config


def _dag(targets: list[str], configfiles, overrides: dict, workdir: Path) -> tuple[list[PlannedJob], set[str]]:
    """Every job of the targets' DAG and the keys of those to run, from Snakemake's dry runs with this
    configuration (`overrides` go last, as a configuration file: Snakemake merges it as it would --config)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(overrides, f)
    try:
        return planned_and_new([*targets, "--configfile", *map(str, configfiles), f.name], workdir)
    except Mistake:             # a mistyped target: our answer alone
        raise
    except ValueError as e:     # Snakemake's own message names what it could not resolve
        raise ValueError(f"cannot resolve {' '.join(targets)}: {str(e).rstrip('.')}. Targets are `all`, a table "
                         f"(<results>/tables/<paper>/<table>.tex), a figure (<results>/figures/<paper>/"
                         f"<figure>.pdf), a leaderboard (<results>/tables/<board>.tex) or another "
                         f"output of the workflow") from None
    finally:
        os.unlink(f.name)


def _target_jobs(jobs: list[PlannedJob], target: str, workdir: Path) -> list[PlannedJob]:
    """The jobs of the DAG a target needs: the job that makes it and those it depends on (each once)."""
    made_by = {os.path.normpath(workdir / f): job for job in jobs for f in job.output}
    root = [j for j in jobs if j.rule == "all"] if target == "all" else \
        [made_by[p] for p in [os.path.normpath(workdir / target)] if p in made_by]
    needed, queue = {}, list(root)
    while queue:
        job = queue.pop()
        if job.key in needed:
            continue
        needed[job.key] = job
        for f in job.input:
            path = os.path.normpath(workdir / f)
            while path not in made_by and os.path.dirname(path) != path:    # a file inside a folder a job makes
                path = os.path.dirname(path)
            if path in made_by:
                queue.append(made_by[path])
    return list(needed.values())


def _actual(job: PlannedJob, kind: str, workdir: Path) -> tuple[float | None, str | None]:
    """(seconds, device) a built job took: a run's `train_seconds` (its train_summary.json), an evaluation's or
    GLUE fine-tuning's `seconds` (its result JSON); None where its output records none."""
    path = workdir / job.output[0]
    path = path / "train_summary.json" if kind == TRAIN else path
    if path.suffix != ".json" or not path.is_file():
        return None, None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("train_seconds" if kind == "train" else "seconds"), data.get("device")


def compute_bill(targets: list[str], scale: str | None = None, device: str | None = None, config: dict | None = None,
                 configfiles=(), speedup: float = 1.0, sharing_gain: float | None = None,
                 workdir: Path = ROOT) -> Bill:
    """The bill of `targets` (output paths or `all`) at `scale` on `device`'s step times. What-ifs: every
    step `speedup` times faster; runs sharing GPUs with `sharing_gain` times the runs per hour of one."""
    from ..workflow import Workflow

    if not targets:
        raise ValueError("name at least one target: `all`, or a table, figure or leaderboard output")
    for name, value in (("--speedup", speedup), ("--sharing-gain", sharing_gain)):
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")
    if scale and scale not in sc.scale_names():     # before the DAG, as the device: a typo costs no wait
        raise sc.ConfigError(unknown("scale", scale, sc.scale_names()))
    overrides = {**(config or {}), **({"scale": scale} if scale else {})}
    workdir = Path(workdir)
    wf_config = snakefile_config(workdir, configfiles, overrides)
    results = wf_config.get("results", "results")       # as the Snakefile reads it: from the working directory
    W = Workflow(wf_config, results=results if Path.cwd() == workdir.resolve() else str(workdir / results))
    device = device or W.S.get("step_times") or DEFAULT_DEVICE
    if device not in known_devices():       # before the DAG: a typo costs no wait (the valid ones named)
        where = "" if device != W.S.get("step_times") else f"scales.{W.scale}.step_times; "
        raise ValueError(unknown("device", device, known_devices(), f" ({where.rstrip('; ')})" if where else ""))
    times = datasheet.load(device).scaled(speedup)
    dag, new = _dag(targets, configfiles, overrides, workdir)
    needed_by, every = {}, {}
    for target in targets:
        needed = _target_jobs(dag, target, workdir)
        if not needed:
            raise ValueError(f"unknown target '{target}': no job of the DAG makes it")
        needed_by[target] = [job.key for job in needed]
        every.update({job.key: job for job in needed})
    startups = evaluation_startups(W, every.values(), new)
    k = W.resources.runs_per_gpu()
    jobs = {}
    for key, job in every.items():
        kind, projection = price(job.rule, W, job.wildcards, times, startups.get(key, cost.OWN))
        built = key not in new
        actual, actual_device = _actual(job, kind, workdir) if kind in GPU_KINDS and built else (None, None)
        jobs[key] = JobCost(kind, job.rule, key, built, projection, actual, actual_device,
                            fits=fit_in_memory(projection, times))
        if kind == TRAIN and (k > 1 or sharing_gain is not None):
            w = job.wildcards
            spec = W.specs.run_spec(w["paper"], w["backbone"], w["method"], int(w["seed"]))
            gain, source = cost.sharing_gain(times, W.config, spec, k) if sharing_gain is None else (1.0, None)
            jobs[key].gain, jobs[key].gain_source = (gain, source) if sharing_gain is None else (sharing_gain, None)
    notes = sharing_notes(jobs, k, times) if sharing_gain is None else []
    if speedup != 1.0:
        notes.append(f"what-if: every figure of work on the device {speedup:g}x faster than measured (training and "
                     f"GLUE steps, dev evaluations, the embedding rate, the top-k; not the start-ups, a GLUE task's "
                     f"one-off work and the writes to disk)")
    if sharing_gain is not None:
        notes.append(f"what-if: runs sharing GPUs train {sharing_gain:g}x the runs per hour of one run alone")
    return Bill(W.scale, times, needed_by, jobs, k, speedup, notes, W)


def fit_in_memory(projection: cost.Projection | None, times: StepTimes) -> bool | None:
    """Whether a job fits in the memory of the device of `times` (its datasheet's): its measured peak against it
    (datasheet.fits); None where that is not known: no peak measured, a device without a datasheet, or a peak that
    fits but was measured on less work than the job's (cost.Peak.lower_bound)."""
    on = datasheet.device(times.name)
    if projection is None or projection.peak is None or on is None:
        return None
    fits = datasheet.fits(projection.peak.gib, on)
    return None if fits and projection.peak.lower_bound else fits


def evaluation_startups(W, jobs, new: set[str]) -> dict[str, str]:
    """Which new jobs start their model's evaluation process and which start as its clients (cost.OWN, SHARED):
    at a scale on GPUs the jobs of a rule that names its model (jobs.JobKind.model) run their commands in the
    model's one process (sentaug.evaluate.service), whose start-up the model's first new job (by key) is
    counted with. Elsewhere every job starts its own process."""
    if not W.resources.on_gpus():
        return {}
    seen, out = set(), {}
    for job in sorted(jobs, key=lambda j: j.key):
        model = rule_kind(job.rule).model
        if model is None or job.key not in new:
            continue
        folder = model(W, job.wildcards)
        out[job.key] = cost.SHARED if folder in seen else cost.OWN
        seen.add(folder)
    return out


def sharing_notes(jobs: dict, k: int, times: StepTimes) -> list[str]:
    """What the bill counts of `k` runs sharing a GPU: the measured gain of each shape, none for the others."""
    if k == 1:
        return []
    runs = [j for j in jobs.values() if j.kind == TRAIN and not j.built]
    gaining = defaultdict(int)
    for j in runs:
        if j.gain != 1.0:
            gaining[(j.gain_source.figure, j.gain)] += 1
    said = [f"{n} runs at x{gain:g} ({figure}, measured against one steady run)" for (figure, gain), n in
            sorted(gaining.items())]
    rest = len(runs) - sum(gaining.values())
    return [f"runs_per_gpu {k}: " + "; ".join([*said, f"{rest} runs at none (no steady gain measured for their "
                                                       f"shape on {times.device})"])]


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
        if j.kind == "train" and not j.built and j.fits is not False:
            w = j.wildcards
            groups[(w["backbone"], j.projection.steps, round(j.projection.parts["step_ms"], 1), j.gain)].append(j)
    rows = []
    for (backbone, steps, step_ms, gain), js in sorted(groups.items(), key=lambda kv: (-sum(j.hours for j in kv[1]),
                                                                                       kv[0])):
        rows.append({"backbone": backbone, "steps": steps, "step_ms": step_ms, "runs": len(js), "gain": gain,
                     "h_per_run": js[0].hours, "h": sum(j.hours for j in js),
                     "measured": sum(j.projection.measured for j in js)})
    return rows


def format_bill(bill: Bill, runs: bool = False) -> str:
    t = bill.times
    # what prices a figure the bill calls measured: on a device without a measured table, a calibration
    measured = "measured" if t.calibrated is None else "calibrated"
    table = f"{t.name}.yaml" if t.calibrated is None else f"{t.table['calibrated']['from']}.yaml calibrated to {t.name}"
    out = [f"Bill at scale {bill.scale} on {t.device} (step times: {table}; {t.table['source']})", ""]
    if t.calibrated is not None:
        out[-1:-1] = [f"Every figure of this bill is {t.calibrated}: no {t.device} step time was measured; the "
                      f"model is a roofline split of each measured figure (docs/cost-and-gpus.md, Other GPUs)"]
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
            basis = measured if s["measured"] == s["runs"] else (
                "extrapolated" if not s["measured"] else f"{s['measured']} {measured}, the rest extrapolated")
            out.append(f"  {s['backbone']:<26} {s['steps']:>8,} {s['step_ms']:>8.1f} {s['runs']:>5} "
                       f"{s['h_per_run']:>7.3f} {s['h']:>8.2f}  {basis}"
                       + (f", {bill.runs_per_gpu} per GPU at x{s['gain']:g}" if s["gain"] != 1 else ""))
    parts = defaultdict(float)
    priced = [j for j in bill.jobs.values() if j.fits is not False]     # those too large: named apart, below
    for j in priced:
        if j.kind == "train" and not j.built:
            for name in ("steps", "dev", "checkpoints", "startup"):
                parts[name] += j.projection.parts[name] / 3600 / j.gain
    if parts:
        shared = any(j.gain != 1 for j in bill.jobs.values() if j.kind == "train")
        out += ["", f"Training hours: steps {parts['steps']:.2f}, dev evaluations and best-model writes "
                    f"{parts['dev']:.2f}, checkpoints {parts['checkpoints']:.2f}, start-up {parts['startup']:.2f}"
                + (" (with the measured gains of sharing GPUs)" if shared else "")]
    glue = [j for j in priced if j.kind == "glue" and not j.built]
    evals = [j for j in priced if j.kind == "eval" and not j.built]
    if glue or evals:
        def part(js, name):
            return sum(seconds for j in js for n, seconds, _ in j.projection.pieces if n == name) / 3600

        starts = sum(1 for j in glue + evals if j.projection.parts.get("startup", 0) > cost.startup_s(t, "client"))
        out += [f"GLUE hours: steps {part(glue, 'steps'):.2f} (each at its bucket width), the tasks' one-off work "
                f"{part(glue, 'tasks_once'):.2f}, start-up {part(glue, 'startup'):.2f}; evaluation hours: start-up "
                f"{part(evals, 'startup'):.2f}, the rest embedding ({len(glue) + len(evals)} jobs in {starts} "
                f"processes of their own)"]
    cpu = defaultdict(int)
    for j in bill.jobs.values():
        if j.kind == "cpu" and not j.built:
            cpu[j.rule] += 1
    new = [j for j in priced if j.kind in GPU_KINDS and not j.built]
    extrapolated = sum(j.projection.seconds for j in new if not j.projection.measured)
    bounded = sum(j.projection.seconds for j in new if j.projection.sizes)
    total = sum(j.projection.seconds for j in new)
    out += ["", f"Extrapolated: {extrapolated / total:.0%} of the new device-hours (the rest priced from {measured} "
                f"step times and start-ups); sizes estimated or upper bounds (caches not built yet): "
                f"{bounded / total:.0%}" if total else "Nothing new to run on the device.",
            *(provenance_lines(bill) if total else []), *memory_lines(bill),
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
                           f"{actual}" + (f"  [{'; '.join(p.basis)}]" if p.basis else f"  [{measured}]")
                           + ("  DOES NOT FIT in the device's memory" if j.fits is False else "")
                           + (f"  sizes: {'; '.join(p.sizes)}" if p.sizes else ""))
    return "\n".join(line for line in out if line is not None)


def provenance_lines(bill: Bill) -> list[str]:
    """What prices the new device-hours: figures measured on the code that runs, older figures (which, and what
    changed since), estimates (Bill.provenance; the rule: sentaug.pricing.freshness)."""
    p = bill.provenance()
    if not p["total"]:
        return []
    share = lambda h: f"{h / p['total']:.0%}"      # noqa: E731
    calibrated = (f"calibrated from datasheet rates, not measured: {share(p['calibrated'])}; "
                  if p["calibrated"] else "")
    lines = [f"Measured on the code that runs ({freshness.head()}): {share(p['current'])} of the new device-hours; "
             f"priced from figures measured on older code: {share(p['older'])}; {calibrated}from estimates: "
             f"{share(p['estimated'])} (not measured at the current code: "
             f"{share(p['older'] + p['calibrated'] + p['estimated'])})"]
    for (kind, commit, date), hours in sorted(p["older_by"].items(), key=lambda kv: -kv[1]):
        changed = freshness.changed_since(commit, kind)
        why = "cannot be checked" if changed is None else "changed since: " + ", ".join(changed)
        lines.append(f"  {hours:.2f} h from {kind} figures measured at {commit} ({date}); {why}")
    return lines


def memory_lines(bill: Bill) -> list[str]:
    """The new jobs that do not fit in the device's memory (left out of its hours), grouped by the measured peak
    that says so, and how many jobs' fit is not known, on a device with datasheet figures."""
    on = datasheet.device(bill.times.name)
    if on is None:
        return []
    groups = defaultdict(list)
    for j in bill.too_large():
        groups[(j.kind, j.projection.peak.at, j.projection.peak.gib)].append(j)
    lines = [f"Does not fit in the {on.memory_gb:g} GB of one {bill.times.device} (measured peak + "
             f"{datasheet.MEMORY_HEADROOM_GIB:g} GiB; left out of the hours above): "
             + "; ".join(f"{len(js)} {kind} job{'s' if len(js) > 1 else ''} ({at}: {gib:g} GiB peak on "
                         f"{bill.times.table.get('calibrated', {}).get('from', bill.times.name)}), "
                         f"{sum(j.hours for j in js):.2f} h if they did"
                         for (kind, at, gib), js in sorted(groups.items()))] if groups else []
    # the evaluations and indexes only embed, in batches: their memory is not measured and not checked
    new = [j for j in bill.jobs.values() if j.kind in ("train", "glue") and not j.built]
    unknown = [j for j in new if j.fits is None]
    if unknown:
        larger = sum(1 for j in unknown if j.projection.peak is not None)
        lines.append(f"Memory not checked for {len(unknown)} of the {len(new)} new training and GLUE jobs: no peak "
                     f"measured for what prices them" + (f" or ({larger}) one measured on smaller batches or pairs "
                                                         f"than theirs" if larger else ""))
    return lines


def add_cost_command(sub) -> None:
    """`sentaug cost`, under the command line's subparsers `sub`."""
    c = sub.add_parser("cost", help="the bill of targets before launch: training runs (new and built), steps, "
                                    "projected device-hours, GLUE and evaluations")
    c.add_argument("targets", nargs="+", help="`all`, or outputs: results/tables/<paper>/<table>.tex, "
                                              "results/figures/<paper>/<figure>.pdf, results/tables/<board>.tex")
    c.add_argument("--scale", help=f"{', '.join(sc.scale_names())} (default: config.yaml's `scale`)")
    c.add_argument("--device", help=f"{', '.join(known_devices())}: the device's measured step-time table "
                                    f"(src/sentaug/resources/step_times/<device>.yaml), else one calibrated from "
                                    f"datasheet rates (src/sentaug/resources/devices.yaml); default: "
                                    f"scales.<scale>.step_times, else {DEFAULT_DEVICE}")
    c.add_argument("--config", nargs="*", metavar="KEY=VALUE", help="config overrides, as snakemake --config")
    c.add_argument("--configfile", nargs="*", default=[], help="config files, as snakemake --configfile")
    c.add_argument("--snakemake-args", default="", metavar="FLAGS",
                   help="Snakemake command-line flags (make report passes SNAKEFLAGS): their --config and "
                        "--configfile apply, the others are ignored")
    c.add_argument("--speedup", type=float, default=1.0,
                   help="what-if: every figure of work on the device (training and GLUE steps, dev evaluations, "
                        "the embedding rate, the top-k) this many times faster than measured; start-ups, a GLUE "
                        "task's one-off work and writes to disk as measured")
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

        paper = bill if bill.workflow.S["compares_with_papers"] else compute_bill(
            a.targets, sc.papers_scale(bill.workflow.config), a.device, config, [*snakemake.configfile, *a.configfile],
            a.speedup, a.sharing_gain)
        print(f"front page data: {write_report_data(bill, paper)}")
