"""What one job of the workflow costs on a device: a training run, a GLUE fine-tuning, an evaluation, a
retrieval index. Projected from the step-time table of the device (`sentaug.pricing.step_times`) and the
sizes of the work (`src/sentaug/resources/workload.yaml`); `sentaug.pricing.bill` adds them up over the
jobs of a DAG, and `train_runtime_minutes` is what a job on a GPU (a training run, an index, an evaluation) asks
SLURM for.

A training run of `steps` optimizer steps costs

    start-up + steps x SimCSE's step time x the method's overhead
             + its dev evaluations x (one STS-B dev evaluation + keeping the best model on the device)
             + one best-model write at the end
             + its checkpoints x (3 best-model writes (model and AdamW's two moments) + the best model's write,
                                  or the table's measured `checkpoint_ms`)

(on the GPU the trainer keeps the best model on the device and writes it with each checkpoint and at the end;
a table without a measured device copy counts a write at every evaluation, as the trainer did before)

with the dev evaluation and the writes scaled by the backbone's FLOP ratio to the measured bert-base. A GLUE job
costs its start-up, each task's one-off work and its steps, each at the table's measured GLUE step of its
bucket width (`project_glue`, `glue_task_steps`: the task's pairs by length, workload.yaml's `glue_lengths`);
an evaluation its start-up and its sentences at the measured bf16 embedding rate (`project_embedding`). The
start-up is the table's measured one where it has one (`startup_s`), else an estimate (STARTUP_S for a training
run, EVALUATION_STARTUP_S for an evaluation); at a scale on GPUs the evaluations of one model run in one process
(`sentaug.evaluate.service`), so that all but one of them (`startup=SHARED`) start in a client's time only
(CLIENT_STARTUP_S, or the table's `client_s`). Every projection lists what in its time was
not measured (`basis`: extrapolated step times, estimated start-ups); a projection with an empty basis is
measured. What in its size is not counted from the data (`sizes`: an estimated size, an upper bound until the
caches it depends on are built) is listed apart: those are the job's work, not its speed. Its time is also
given in `pieces`: (part, seconds, the measured figures it is priced from, or None for an estimate), from which
the bill tells which hours rest on figures older than the code they price (sentaug.pricing.freshness).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from ..parts import NLI_TRIPLETS, compose
from ..train.run_length import total_steps
from .step_times import Source, StepTimes, flops_per_token

WORKLOAD = Path(str(resources.files("sentaug") / "resources" / "workload.yaml"))
# Seconds before a job's first step: Python, torch and CUDA start, backbone and token tables load (~6 s at
# wiki1m scale, benchmarks/gpu_notes.md), and the first steps' one-off work on the GPU: the prefetching workers
# start, 3 eager warm-up steps, the graph's capture (measured on an H200: 1.4-3.0 s in a fresh process,
# benchmarks/gpu_notes.md). An estimate, counted where the table has no measured start-up (`startup_s`).
STARTUP_S = 30.0
# Writing a resumable checkpoint writes the model and AdamW's two moments: three best-model writes.
CHECKPOINT_WRITES = 3
# The runtime a GPU job asks SLURM for: the projection times RUNTIME_FACTOR plus RUNTIME_EXTRA_MIN, at least
# RUNTIME_FLOOR_MIN (queue start-up, a slow node) and at most RUNTIME_CAP_MIN (a common GPU partition limit; a
# longer run resumes from its last checkpoint when requeued: profiles/slurm restarts a job once).
RUNTIME_FACTOR, RUNTIME_EXTRA_MIN, RUNTIME_FLOOR_MIN, RUNTIME_CAP_MIN = 1.5, 10, 15, 2880
# GLUE fine-tuning (sentaug.evaluate.glue defaults): batch, epochs, tokens per sentence (pair) at most.
GLUE_BATCH, GLUE_EPOCHS, GLUE_LENGTH = 32, 3.0, 128
# Seconds before an evaluation job's first sentence in a process of its own (Python, the imports, the model
# loaded): measured on the 2-core CPU machine, 11.8 to 14.8 s of wall time (7.3 to 8.1 s of CPU) for a BERT-base
# model (benchmarks/gpu_glue_eval.py --sections startup; benchmarks/results/cpu-2026-11-28-startup). On a GPU
# CUDA's start adds to it and an idle node's imports take less. The slowest, rounded up, is the estimate counted
# where the table has no `evaluation_s` measured on its device.
EVALUATION_STARTUP_S = 15.0
# Seconds before the first sentence of an evaluation whose command the model's evaluation process runs
# (sentaug.evaluate.service): Python and the command line, measured there at 0.19 to 0.42 s (its wait for its
# turn is the other commands' time, counted with them). The estimate where the table has no `client_s`.
CLIENT_STARTUP_S = 0.5
# Jobs starting in their own process, or in the model's evaluation process beside others (`startup` arguments)
OWN, SHARED = "own", "shared"


@lru_cache(maxsize=1)
def workload() -> dict:
    return yaml.safe_load(WORKLOAD.read_text(encoding="utf-8"))


def startup_s(times: StepTimes, job: str = "evaluation") -> float:
    """Seconds before a job's first step or sentence: the table's measured start-up of that kind of job
    (`startup: {evaluation_s: ...}`: a fresh process's Python, imports and model load on the device; `client_s`:
    a job whose command the model's evaluation process runs), else STARTUP_S (EVALUATION_STARTUP_S,
    CLIENT_STARTUP_S)."""
    estimate = {"client": CLIENT_STARTUP_S, "evaluation": EVALUATION_STARTUP_S}.get(job, STARTUP_S)
    return float((times.table.get("startup") or {}).get(f"{job}_s", estimate))


def startup_basis(times: StepTimes, job: str = "evaluation") -> list[str]:
    """What `startup_s` says of its figure where it is not measured."""
    measured = f"{job}_s" in (times.table.get("startup") or {})
    return [] if measured else [f"{job} start-up estimated at {startup_s(times, job):g} s (not measured on "
                                f"{times.device}{'' if job == 'training' else '; measured on a CPU machine'})"]


def startup_sources(times: StepTimes, job: str = "evaluation") -> list | None:
    """The measured figure behind `startup_s`; None for the estimate."""
    return [times.scalar_source("startup", f"{job}_s")] if f"{job}_s" in (times.table.get("startup") or {}) else None


def _evaluation_start(times: StepTimes, startup: str) -> tuple[float, list[str], list | None]:
    """(seconds, basis, sources) of an evaluation job's start: its own process's, or a client's of the model's
    evaluation process."""
    job = "evaluation" if startup == OWN else "client"
    return startup_s(times, job), startup_basis(times, job), startup_sources(times, job)


def backbone_shape(config: dict, name: str) -> dict:
    """{arch, layers, hidden, intermediate} of a backbone (config name): its `size` for a random one, else the
    published configuration in workload.yaml."""
    spec = config["backbones"][name]
    if spec.get("source") == "random":
        return {"arch": spec["arch"], **{k: spec["size"][k] for k in ("layers", "hidden", "intermediate")}}
    shapes = workload()["shapes"]
    if name not in shapes:
        raise ValueError(f"backbone '{name}': no shape in {WORKLOAD} (add its layers, hidden and intermediate size)")
    return dict(shapes[name])


@dataclass(frozen=True)
class Peak:
    """The device memory a job needs: the peak measured for what prices it (`at`), GiB; `lower_bound` where the
    job's work is larger than the measured one (a GLUE recipe's larger batches or longer pairs)."""
    gib: float
    at: str
    lower_bound: bool = False


@dataclass
class Projection:
    """Projected seconds of one job, its parts, what in its time was not measured (`basis`) and what in its size
    is an estimate or an upper bound (`sizes`); `pieces`: its seconds by part, each with the measured figures
    (step_times.Source) it is priced from, None for an estimate; `peak`: the memory it needs where measured."""
    seconds: float
    steps: int = 0
    parts: dict = field(default_factory=dict)
    basis: list[str] = field(default_factory=list)
    sizes: list[str] = field(default_factory=list)
    pieces: list = field(default_factory=list)
    peak: Peak | None = None

    @property
    def measured(self) -> bool:
        return not self.basis


def _flop_ratio(times: StepTimes, shape: dict) -> float:
    """Inference and write time of `shape` relative to the measured bert-base: the FLOPs per token ratio, for
    a smaller backbone at least the ratio of layers (as `StepTimes.step_ms`)."""
    ref = times.table["shapes"][times.reference("bert")]
    ratio = flops_per_token(shape, times.length) / flops_per_token(ref, times.length)
    return ratio if ratio >= 1 else max(ratio, shape["layers"] / ref["layers"])


def _count(table: str, key: str) -> tuple[int, list[str]]:
    entry = workload()[table].get(key)
    if entry is None:
        raise ValueError(f"no size for '{key}' under '{table}' in {WORKLOAD}")
    return int(entry["n"]), ([] if entry["basis"] != "estimated" else [f"{key}: size estimated ({WORKLOAD.name})"])


def run_examples(paths, spec: dict) -> tuple[int, list[str]]:
    """Training examples of a run: the triplets of its NLI set, or the corpus lines (only those its
    augmentations changed for `changed_only` positives and `only_changed` negatives: counted from the built
    caches' stats, else all lines, an upper bound)."""
    composition = compose(spec)
    if composition.positive.examples == NLI_TRIPLETS:
        name = spec["corpus"]          # the triplet file the positive source resolved
        stats = Path(paths.triplets_stats_file(name))
        if stats.is_file():
            return int(json.loads(stats.read_text())["n"]), []
        sizes = [_count("examples", part) for part in name.split(".as_")]
        return sizes[-1][0] if len(sizes) == 1 else min(n for n, _ in sizes), [b for _, bs in sizes for b in bs]
    n, basis = _count("examples", spec["corpus"])
    for augmentation, seed in composition.changed_only(spec["seed"]):
        stats = Path(paths.cache_stats(augmentation, seed, spec["corpus"]))
        if stats.is_file():
            n = min(n, int(json.loads(stats.read_text())["n_changed"]))
        else:
            basis.append(f"only lines {augmentation} changed: all {n} lines counted (its cache is not built)")
    return n, basis


def step_setting(spec: dict) -> str:
    """What decides a training step's device time, as the step-time table's measured `settings` are keyed:
    `<backbone>/b<batch>/L<length>/<work>`, the work being the texts and objectives the step adds to SimCSE's
    two views, each part's `step_work` (sentaug.parts: `retrieved<s>`: s retrieved negatives per anchor;
    `hard_negative`: one cached or NLI negative per anchor; each objective by name, MLM with its number of masked
    copies; a contrastive loss other than InfoNCE), negatives first, then the objectives, then the loss. What a
    method changes on the host alone (where its positives come from, sampling modes, proportions, dropout rates)
    does not change the key: runs that differ only there share one measurement."""
    composition = compose(spec)
    parts = [composition.negatives, *composition.objectives, composition.contrastive]
    work = [part.step_work for part in parts if part.step_work is not None]
    return f"{spec['backbone']}/b{spec['batch_size']}/L{spec['max_seq_length']}/{'+'.join(work) or 'simcse'}"


def overhead_sources(times: StepTimes, spec: dict) -> list[Source]:
    """The measured overheads `method_overhead` prices a method's step from."""
    if (timed := times.overhead_timing(spec["method"])) is not None:
        return [times.overhead_source(timed)]
    return [times.overhead_source(part.overhead) for part in compose(spec).parts
            if part.adds_work and part.overhead and times.overhead(part.overhead) is not None]


def sharing_gain(times: StepTimes, config: dict, spec: dict, runs_per_gpu: int) -> tuple[float, Source | None]:
    """The measured gain of `runs_per_gpu` runs of this run's shape (backbone's layers and sizes, batch, length,
    the work of its step) sharing one GPU, over one steady run alone: 1.0, none, where it was not measured."""
    work = step_setting(spec).rsplit("/", 1)[1]
    return times.sharing(runs_per_gpu, backbone_shape(config, spec["backbone"]), spec["batch_size"],
                         spec["max_seq_length"], work)


def method_overhead(times: StepTimes, spec: dict, setting: str) -> tuple[float, list[str]]:
    """The ratio of a method's step to SimCSE's at `setting` (<backbone key>/<batch>): the measured overhead that
    timed this method itself (`StepTimes.overhead_timing`), else the product of its parts' measured overheads,
    each under the part's own key (`Part.overhead`)."""
    method = spec["method"]
    if (timed := times.overhead_timing(method)) is not None:
        at = times.overhead_at(timed)
        return times.overhead(timed), [] if at == setting else [f"{method}'s overhead measured at {at}"]
    # each part that adds work to SimCSE's step, priced by the measured overhead that stands for it (sentaug.parts)
    parts = compose(spec).parts
    factors = [part for part in parts if part.adds_work]
    ratio, basis = 1.0, []
    for part in factors:
        feature = part.feature or part.name
        r = part.step_overhead(times) if part.overhead else None
        if r is None:
            basis.append(f"{feature}: no overhead measured, counted as SimCSE")
            continue
        ratio *= r
        basis.append(f"{feature}: overhead of {part.overhead} ({times.overhead_at(part.overhead)}) x{r:.3f}")
    if not factors and not all(part.simcse_step for part in parts):   # SimCSE's own parts: its measured step
        basis.append(f"{method}: counted as SimCSE (same sentences per step; its own overhead not measured)")
    return ratio, basis


def project_run(paths, spec: dict, times: StepTimes, config: dict) -> Projection:
    """Seconds of one training run (a resolved spec) on the table's device, from scratch."""
    shape = backbone_shape(config, spec["backbone"])
    n, sizes = run_examples(paths, spec)
    steps = total_steps(spec, n)
    setting = step_setting(spec)
    measured = times.setting(setting)
    peak_gib = times.setting_peak(setting)
    if measured is not None:        # this setting's own step, timed at its real shape
        step, overhead, method_basis, step_sources = measured, 1.0, [], measured.sources
    else:
        step = times.step_ms(shape, spec["batch_size"], spec["max_seq_length"])
        overhead, method_basis = method_overhead(times, spec, f"{times.reference(shape['arch'])}/{spec['batch_size']}")
        step_sources = step.sources + overhead_sources(times, spec)
    evals = steps // spec["eval_steps"] + (1 if steps % spec["eval_steps"] else 0)
    checkpoints = steps // spec["save_steps"]
    ratio = _flop_ratio(times, shape)
    write_s = times.evaluation("best_write_ms") / 1000 * ratio
    kept = "best_snapshot_ms" in times.table["evaluation"]     # the best model kept on the device
    keep_s = times.evaluation("best_snapshot_ms") / 1000 * ratio if kept else write_s
    measured_checkpoint = times.table["evaluation"].get("checkpoint_ms")
    checkpoint_s = (measured_checkpoint / 1000 * ratio if measured_checkpoint is not None
                    else (CHECKPOINT_WRITES + kept) * write_s)      # measured, else counted in best-model writes
    parts = {"startup": startup_s(times, "training"), "steps": steps * step.ms * overhead / 1000,
             "dev": evals * (times.evaluation("dev_ms") / 1000 * ratio + keep_s) + (write_s if kept else 0.0),
             "checkpoints": checkpoints * checkpoint_s}
    ev = lambda *what: [times.scalar_source("evaluation", w) for w in what]     # noqa: E731
    pieces = [("startup", parts["startup"], startup_sources(times, "training")),
              ("steps", parts["steps"], step_sources),
              ("dev", parts["dev"], ev("dev_ms", "best_write_ms", *(["best_snapshot_ms"] if kept else []))),
              ("checkpoints", parts["checkpoints"],
               ev("checkpoint_ms") if measured_checkpoint is not None else ev("best_write_ms"))]
    return Projection(sum(parts.values()), steps, {**parts, "step_ms": step.ms * overhead},
                      step.basis + method_basis + startup_basis(times, "training"), sizes, pieces,
                      None if peak_gib is None else Peak(float(peak_gib), f"setting {setting}"))


def train_runtime_minutes(projection: Projection, runs_per_gpu: int = 1, sharing: float = 1.0) -> int:
    """The runtime (minutes) a job on a GPU asks SLURM for: its projection with the safety margin; for training,
    each of `runs_per_gpu` runs sharing a GPU taking runs_per_gpu / `sharing` times as long (sharing: the measured
    gain in runs per hour; 1 when not measured)."""
    minutes = projection.seconds / 60 * runs_per_gpu / sharing
    return int(min(RUNTIME_CAP_MIN, max(RUNTIME_FLOOR_MIN, math.ceil(RUNTIME_FACTOR * minutes + RUNTIME_EXTRA_MIN))))


def project_embedding(times: StepTimes, shape: dict, sentences: int, sizes=(), precision: str = "bf16",
                      startup: str = OWN) -> Projection:
    """Embedding `sentences` sentences in one job: its start-up (`startup`: OWN, a process of its own; SHARED, a
    command the model's evaluation process runs), then the sentences at the table's measured bf16 rate
    (`embedding`, an evaluation's default on a GPU), or at the STS-B dev evaluation's rate (batches of 128) for
    `precision` fp32 (the index) or where no bf16 rate was measured (the basis says so)."""
    rate = times.table.get("embedding")
    start, basis, start_sources = _evaluation_start(times, startup)
    if precision == "bf16" and rate:
        ms, rate_sources = float(rate["ms_per_sentence"]), [times.embedding_source()]
    else:
        ms = times.evaluation("dev_ms") / times.evaluation("dev_sentences")
        rate_sources = [times.scalar_source("evaluation", "dev_ms")]
        if precision == "bf16":
            basis.append("embedding at the STS-B dev evaluation's rate (no evaluation embedding rate measured)")
    ms *= _flop_ratio(times, shape)
    work = sentences * ms / 1000
    return Projection(start + work, 0, {"sentences": sentences, "ms_per_sentence": ms, "startup": start},
                      basis, list(sizes), [("startup", start, start_sources), ("embedding", work, rate_sources)])


def project_suite(times: StepTimes, shape: dict, suite: str, startup: str = OWN) -> Projection:
    """An evaluation suite's embeddings; its classifiers and K-means run on the CPU and are not counted."""
    n, sizes = suite_size(suite)
    return project_embedding(times, shape, n, sizes, startup=startup)


def suite_size(suite: str) -> tuple[int, list[str]]:
    """The sentences one evaluation of `suite` embeds, as its registered suite declares them
    (`sentaug.evaluate.suites`), and what is estimated about them."""
    from ..evaluate.suites import workload as suite_workload

    n, basis = suite_workload(suite)
    return n, ([] if basis != "estimated" else [f"{suite}: size estimated (its suite's declared workload)"])


@lru_cache(maxsize=None)
def glue_epoch(task: str, batch: int = GLUE_BATCH, limit: int = GLUE_LENGTH) -> tuple[dict[int, int], list[str]]:
    """One epoch of GLUE fine-tuning of `task` on a GPU (`sentaug.evaluate.glue_steps`, batching `buckets`) in
    batches of `batch` pairs cut at `limit` tokens: {bucket width: steps}, from its pairs' lengths (workload.yaml's
    `glue_lengths`, counted up to GLUE_LENGTH tokens), and what in it is estimated. The widths are those
    `bucket_widths` picks for these lengths; each bucket's pairs fill whole batches, the buckets' remainders are
    pooled in bucket order into the epoch's last batches, each padded to its longest pair's bucket. Without
    lengths for the task, every step at the widest width (an upper bound)."""
    import numpy as np

    from ..evaluate.glue_steps import bucket_widths

    n, sizes = _count("glue_train", task)
    entry = (workload().get("glue_lengths") or {}).get(task)
    widest = min(limit, GLUE_LENGTH)
    if limit > GLUE_LENGTH:
        sizes = [*sizes, f"{task}: pairs longer than the {GLUE_LENGTH} tokens counted priced at {GLUE_LENGTH} "
                         f"(its recipe cuts at {limit}: a lower bound)"]
    if entry is None:
        return {widest: math.ceil(n / batch)}, [*sizes, f"{task}: no pair lengths, every step at {widest} tokens "
                                                        f"(an upper bound)"]
    counts: dict[int, int] = {}
    for w, c in sorted(entry["counts"].items()):
        counts[min(int(w), widest)] = counts.get(min(int(w), widest), 0) + int(c)
    if sum(counts.values()) != n:
        raise ValueError(f"{WORKLOAD.name}: glue_lengths of {task} count {sum(counts.values())} pairs, glue_train "
                         f"{n}")
    if entry.get("basis") == "estimated":
        sizes = [*sizes, f"{task}: pair lengths estimated ({entry.get('note', WORKLOAD.name)})"]
    widths = bucket_widths(np.repeat(list(counts), list(counts.values())), widest)
    in_bucket: dict[int, int] = {}
    for length, c in counts.items():
        bucket = next(w for w in widths if w >= length)
        in_bucket[bucket] = in_bucket.get(bucket, 0) + c
    steps = {w: c // batch for w, c in in_bucket.items()}
    pooled = [w for w, c in sorted(in_bucket.items()) for _ in range(c % batch)]   # in bucket order
    for start in range(0, len(pooled), batch):
        last = pooled[min(start + batch, len(pooled)) - 1]
        steps[last] = steps.get(last, 0) + 1
    return {w: c for w, c in sorted(steps.items()) if c}, sizes


def glue_settings(task: str, recipe: dict | None) -> tuple[int, float, int]:
    """(batch, epochs, token limit) of fine-tuning `task`: a recipe's (config.yaml `glue.recipes`), else the
    defaults of `sentaug evaluate glue` (GLUE_BATCH, GLUE_EPOCHS, GLUE_LENGTH)."""
    from ..evaluate.glue import FinetuneConfig, task_config

    cfg = task_config(FinetuneConfig(batch_size=GLUE_BATCH, epochs=GLUE_EPOCHS, max_seq_length=GLUE_LENGTH), task,
                      recipe)
    return cfg.batch_size, cfg.epochs, cfg.max_seq_length


def glue_task_steps(task: str, max_steps: int | None, recipe: dict | None = None) -> tuple[dict[int, float], list[str]]:
    """Steps of fine-tuning `task` by bucket width: its epochs (the recipe's, else GLUE_EPOCHS) of `glue_epoch` in
    its batches and token limit (each whole epoch's mix exactly; a part of one, or `max_steps`, in the epoch's
    proportions), and what in it is estimated."""
    batch, epochs, limit = glue_settings(task, recipe)
    epoch, sizes = glue_epoch(task, batch, limit)
    per_epoch = sum(epoch.values())
    total = max_steps or max(1, math.ceil(epochs * per_epoch))
    full, rest = divmod(total, per_epoch)
    return {w: full * c + rest * c / per_epoch for w, c in epoch.items()}, sizes


def project_glue(times: StepTimes, shape: dict, tasks, max_steps: int | None, rdrop: bool,
                 startup: str = OWN, recipe: dict | None = None) -> Projection:
    """GLUE fine-tuning of every task (a recipe's batches, epochs and token limits, else batch 32, 3 epochs and 128
    tokens; or `max_steps` each) in one process: the job's start-up (`startup`, as project_embedding's), each
    task's one-off work (tokenizing, warm-up steps, a CUDA graph per length bucket) and its steps, each at the
    table's measured GLUE step of its bucket width (`glue_task_steps`; an unmeasured width extrapolated,
    StepTimes.glue_step), scaled by its batch's pairs over the measured batch's 32, with R-drop's second pass where
    asked. A table without GLUE steps counts every step as a SimCSE step of 32 x 128 tokens (R-drop twice that)
    and says so."""
    tasks = list(tasks)
    start, basis, start_sources = _evaluation_start(times, startup)
    by_width, steps_by_width, sizes = {}, {}, []    # by_width: {width: steps of 32 pairs' work} (b pairs: b / 32)
    for task in tasks:
        steps, task_sizes = glue_task_steps(task, max_steps, recipe)
        batch = glue_settings(task, recipe)[0]
        sizes += task_sizes
        for w, n in steps.items():
            by_width[w] = by_width.get(w, 0.0) + n * batch / GLUE_BATCH
            steps_by_width[w] = steps_by_width.get(w, 0.0) + n
    if recipe and any(glue_settings(t, recipe)[0] != GLUE_BATCH for t in tasks):
        basis.append(f"steps of other batches than the measured {GLUE_BATCH} pairs scaled by their pairs")
    if shape["arch"] != "roberta" and times.glue_row(shape) is not None:
        sizes.append(f"GLUE pair lengths counted with roberta-base's tokenizer, not {shape['arch']}'s")
    n_steps = round(sum(steps_by_width.values()))
    if times.glue_row(shape) is None:
        basis.append(f"GLUE steps as SimCSE steps of {GLUE_BATCH} x {GLUE_LENGTH} tokens")
        # one view per example of GLUE_LENGTH tokens = SimCSE's two views of half as many examples
        step = times.step_ms(shape, GLUE_BATCH * (2 if rdrop else 1), GLUE_LENGTH, views=1)
        work, once, once_sources, step_sources = sum(by_width.values()) * step.ms / 1000, 0.0, [], step.sources
        basis += step.basis
        widest = step.ms
    else:
        work, step_sources, how = 0.0, [], {}
        for w, n in sorted(by_width.items()):
            step = times.glue_step(shape, rdrop, w)
            work += n * step.ms / 1000
            for line in step.basis:         # "... at width <w>: <how>" collected per how
                head, at, rest = line.partition(f" at width {w}: ")
                how.setdefault((head, rest) if at else (line, None), []).append(w)
            step_sources += [x for x in step.sources if x not in step_sources]
        for (head, rest), widths in how.items():
            line = head if rest is None else \
                f"{head} at width{'s' if len(widths) > 1 else ''} {', '.join(map(str, widths))}: {rest}"
            basis.append(line)
        once = len(tasks) * times.glue_task_s(shape, rdrop)
        basis += [b for b in times.glue_task_basis(shape) if b not in basis]
        once_sources = [times.glue_task_source(shape)]
        widest = times.glue_step(shape, rdrop).ms
    measured_peak = times.glue_peak(shape, rdrop)
    peak = None
    if measured_peak is not None:   # measured at batch 32 and the row's width: a larger batch or width needs more
        width = times.table["glue"][times.glue_row(shape)[0]]["width"]
        larger = any(b > GLUE_BATCH or limit > width for b, _, limit in (glue_settings(t, recipe) for t in tasks))
        peak = Peak(*measured_peak, lower_bound=larger)
    return Projection(start + once + work, n_steps,
                      {"step_ms": 1000 * work / n_steps if n_steps else widest, "widest_step_ms": widest,
                       "steps_by_width": {w: round(n, 1) for w, n in sorted(steps_by_width.items())}, "startup": start,
                       "tasks_once": once},
                      basis, sizes, [("startup", start, start_sources), ("tasks_once", once, once_sources),
                                     ("steps", work, step_sources)], peak)


def project_index(times: StepTimes, shape: dict, corpus: str) -> Projection:
    """CARDS's retrieval index: the corpus embedded, then the exact top-k, whose work grows with rows^2."""
    n, sizes = _count("examples", corpus)
    embed = project_embedding(times, shape, n, precision="fp32")      # the index embeds in fp32 (its neighbours)
    knn = times.evaluation("knn_s") * (n / times.evaluation("knn_rows")) ** 2
    scaled = ["top-k time scaled by rows^2 from the measured one"] if n != times.evaluation("knn_rows") else []
    return Projection(embed.seconds + knn, 0, {"sentences": n, "knn_s": knn}, embed.basis + scaled, sizes,
                      [*embed.pieces, ("knn", knn, [times.scalar_source("evaluation", "knn_s")])])
