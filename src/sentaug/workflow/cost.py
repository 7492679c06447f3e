"""What one job of the workflow costs on a device: a training run, a GLUE fine-tuning, an evaluation, a
retrieval index. Projected from the step-time table of the device (`sentaug.workflow.step_times`) and the
sizes of the work (`src/sentaug/resources/workload.yaml`); `sentaug.workflow.bill` adds them up over the
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
costs its start-up, each task's one-off work and its steps at the table's measured GLUE step (`project_glue`);
an evaluation its start-up and its sentences at the measured bf16 embedding rate (`project_embedding`). The
start-up is the table's measured one where it has one (`startup_s`), else STARTUP_S. Every projection lists
what in its time was not measured (`basis`: extrapolated step times, estimated start-ups); a projection with an
empty basis is measured. What in its size is not counted from the data (`sizes`: an estimated size, an upper
bound until the caches it depends on are built) is listed apart: those are the job's work, not its speed.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from ..config import split_variant
from ..train.run_length import total_steps
from .step_times import StepTimes, flops_per_token

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
# Method features and the benchmark's overhead measurement that stands for each (config `methods:`). A hard
# negative is a third sentence per example (retrieved, cached or the NLI contradiction); switch-case positives
# are drawn on the host per step (CARDS = switch-case + retrieval).
HARD_NEGATIVE, SWITCH_CASE = "simcse_retrieval", "cards"
OBJECTIVE_OVERHEAD = {"virtual_augmentation": "vascl", "discriminator": "augcse", "mlm": "simcse_mlm"}
# GLUE fine-tuning (sentaug.evaluate.glue defaults): batch, epochs, tokens per sentence (pair) at most.
GLUE_BATCH, GLUE_EPOCHS, GLUE_LENGTH = 32, 3.0, 128


@lru_cache(maxsize=1)
def workload() -> dict:
    return yaml.safe_load(WORKLOAD.read_text(encoding="utf-8"))


def startup_s(times: StepTimes, job: str = "evaluation") -> float:
    """Seconds before a job's first step or sentence: the table's measured start-up of that kind of job
    (`startup: {evaluation_s: ...}`: a fresh process's Python, imports and model load on the device), else
    STARTUP_S."""
    return float((times.table.get("startup") or {}).get(f"{job}_s", STARTUP_S))


def startup_basis(times: StepTimes, job: str = "evaluation") -> list[str]:
    """What `startup_s` says of its figure where it is not measured."""
    measured = f"{job}_s" in (times.table.get("startup") or {})
    return [] if measured else [f"{job} start-up estimated at {STARTUP_S:g} s (not measured on {times.device})"]


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


@dataclass
class Projection:
    """Projected seconds of one job, its parts, what in its time was not measured (`basis`) and what in its size
    is an estimate or an upper bound (`sizes`)."""
    seconds: float
    steps: int = 0
    parts: dict = field(default_factory=dict)
    basis: list[str] = field(default_factory=list)
    sizes: list[str] = field(default_factory=list)

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
    if spec["positive"]["source"] == "nli":
        name = spec["positive"]["triplets"]
        stats = Path(paths.triplets_stats_file(name))
        if stats.is_file():
            return int(json.loads(stats.read_text())["n"]), []
        sizes = [_count("examples", part) for part in name.split(".as_")]
        return sizes[-1][0] if len(sizes) == 1 else min(n for n, _ in sizes), [b for _, bs in sizes for b in bs]
    n, basis = _count("examples", spec["corpus"])
    from ..config import method_caches

    changed = []
    if spec["positive"].get("changed_only"):
        changed.append(method_caches(spec)[0])
    if spec["negatives"]["source"] == "cache" and spec["negatives"].get("only_changed", True):
        changed.append(method_caches(spec)[-1])
    for augmentation, seed in changed:
        stats = Path(paths.cache_stats(augmentation, seed, spec["corpus"]))
        if stats.is_file():
            n = min(n, int(json.loads(stats.read_text())["n_changed"]))
        else:
            basis.append(f"only lines {augmentation} changed: all {n} lines counted (its cache is not built)")
    return n, basis


def step_setting(spec: dict) -> str:
    """What decides a training step's device time, as the step-time table's measured `settings` are keyed:
    `<backbone>/b<batch>/L<length>/<work>`, the work being the texts and objectives the step adds to SimCSE's
    two views (`retrieved<s>`: s retrieved negatives per anchor; `hard_negative`: one cached or NLI negative
    per anchor; each objective by name, MLM with its number of masked copies; a contrastive loss other than
    InfoNCE). What a method changes on the host alone (where its positives come from, sampling modes,
    proportions, dropout rates) does not change the key: runs that differ only there share one measurement."""
    negatives = spec["negatives"]
    work = []
    if negatives["source"] == "retrieved":
        work.append(f"retrieved{int(negatives.get('s', 1))}")
    elif negatives["source"] != "in_batch":
        work.append("hard_negative")
    for objective in spec.get("objectives") or []:
        work.append(objective["name"] + (f"x{int(objective.get('copies', 1))}" if objective["name"] == "mlm" else ""))
    contrastive = spec.get("contrastive") or "infonce"
    contrastive = contrastive if isinstance(contrastive, str) else contrastive["name"]
    if contrastive != "infonce":
        work.append(contrastive)
    return f"{spec['backbone']}/b{spec['batch_size']}/L{spec['max_seq_length']}/{'+'.join(work) or 'simcse'}"


def method_overhead(times: StepTimes, spec: dict, setting: str) -> tuple[float, list[str]]:
    """The ratio of a method's step to SimCSE's at `setting` (<backbone key>/<batch>), from the measured
    overheads of its features."""
    method = spec["method"]
    if times.overhead(method) is not None:
        at = times.overhead_at(method)
        return times.overhead(method), [] if at == setting else [f"{method}'s overhead measured at {at}"]
    factors = []
    if spec["negatives"]["source"] != "in_batch":
        factors.append((HARD_NEGATIVE, "a hard negative"))
    if spec["positive"]["source"] == "switch_case":
        factors.append((SWITCH_CASE, "switch-case positives"))
    for objective in spec.get("objectives") or []:
        factors.append((OBJECTIVE_OVERHEAD[objective["name"]], objective["name"]) if objective["name"] in
                       OBJECTIVE_OVERHEAD else (None, objective["name"]))
    ratio, basis = 1.0, []
    copies = {o["name"]: int(o.get("copies", 1)) for o in spec.get("objectives") or []}
    for measured, feature in factors:
        r = times.overhead(measured) if measured else None
        if r is None:
            basis.append(f"{feature}: no overhead measured, counted as SimCSE")
            continue
        if measured == SWITCH_CASE:    # CARDS = switch-case x retrieval
            r = r / times.overhead(HARD_NEGATIVE)
        if feature == "mlm":
            r = 1 + copies["mlm"] * (r - 1)
        ratio *= r
        basis.append(f"{feature}: overhead of {measured} ({times.overhead_at(measured)}) x{r:.3f}")
    if not factors and split_variant(method)[0] != "simcse":   # a SimCSE variant is SimCSE's step
        basis.append(f"{method}: counted as SimCSE (same sentences per step; its own overhead not measured)")
    return ratio, basis


def project_run(paths, spec: dict, times: StepTimes, config: dict) -> Projection:
    """Seconds of one training run (a resolved spec) on the table's device, from scratch."""
    shape = backbone_shape(config, spec["backbone"])
    n, sizes = run_examples(paths, spec)
    steps = total_steps(spec, n)
    measured = times.setting(step_setting(spec))
    if measured is not None:        # this setting's own step, timed at its real shape
        step, overhead, method_basis = measured, 1.0, []
    else:
        step = times.step_ms(shape, spec["batch_size"], spec["max_seq_length"])
        overhead, method_basis = method_overhead(times, spec, f"{times.reference(shape['arch'])}/{spec['batch_size']}")
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
    return Projection(sum(parts.values()), steps, {**parts, "step_ms": step.ms * overhead},
                      step.basis + method_basis + startup_basis(times, "training"), sizes)


def train_runtime_minutes(projection: Projection, runs_per_gpu: int = 1, sharing: float = 1.0) -> int:
    """The runtime (minutes) a job on a GPU asks SLURM for: its projection with the safety margin; for training,
    each of `runs_per_gpu` runs sharing a GPU taking runs_per_gpu / `sharing` times as long (sharing: the measured
    gain in runs per hour; 1 when not measured)."""
    minutes = projection.seconds / 60 * runs_per_gpu / sharing
    return int(min(RUNTIME_CAP_MIN, max(RUNTIME_FLOOR_MIN, math.ceil(RUNTIME_FACTOR * minutes + RUNTIME_EXTRA_MIN))))


def project_embedding(times: StepTimes, shape: dict, sentences: int, sizes=(), precision: str = "bf16") -> Projection:
    """Embedding `sentences` sentences in one job: its start-up, then the sentences at the table's measured
    bf16 rate (`embedding`, an evaluation's default on a GPU), or at the STS-B dev evaluation's rate (batches of
    128) for `precision` fp32 (the index) or where no bf16 rate was measured (the basis says so)."""
    rate, basis = times.table.get("embedding"), startup_basis(times)
    if precision == "bf16" and rate:
        ms = float(rate["ms_per_sentence"])
    else:
        ms = times.evaluation("dev_ms") / times.evaluation("dev_sentences")
        if precision == "bf16":
            basis.append("embedding at the STS-B dev evaluation's rate (no evaluation embedding rate measured)")
    ms *= _flop_ratio(times, shape)
    return Projection(startup_s(times) + sentences * ms / 1000, 0, {"sentences": sentences, "ms_per_sentence": ms},
                      basis, list(sizes))


def project_suite(times: StepTimes, shape: dict, suite: str) -> Projection:
    """An evaluation suite's embeddings; its classifiers and K-means run on the CPU and are not counted."""
    n, sizes = _count("suite_sentences", suite)
    return project_embedding(times, shape, n, sizes)


def project_glue(times: StepTimes, shape: dict, tasks, max_steps: int | None, rdrop: bool) -> Projection:
    """GLUE fine-tuning of every task (batch 32, 3 epochs or `max_steps` each): the job's start-up, each task's
    one-off work (tokenizing, warm-up steps, a CUDA graph per length bucket) and its steps, each at the table's
    measured GLUE step of the widest bucket (`glue`: pairs of at most 128 tokens, an upper bound), with R-drop's
    second pass where asked. A table without it counts the steps as SimCSE steps of 32 x 128 tokens (R-drop
    twice that) and says so."""
    tasks, steps, basis, sizes = list(tasks), 0, startup_basis(times), []
    for task in tasks:
        n, b = _count("glue_train", task)
        steps += max_steps or max(1, math.ceil(GLUE_EPOCHS * math.ceil(n / GLUE_BATCH)))
        sizes += b
    step, once = times.glue_step(shape, rdrop), 0.0
    if step is None:
        basis.append(f"GLUE steps as SimCSE steps of {GLUE_BATCH} x {GLUE_LENGTH} tokens")
        # one view per example of GLUE_LENGTH tokens = SimCSE's two views of half as many examples
        step = times.step_ms(shape, GLUE_BATCH * (2 if rdrop else 1), GLUE_LENGTH, views=1)
    else:
        once = len(tasks) * times.glue_task_s(shape, rdrop)
    start = startup_s(times)
    return Projection(start + once + steps * step.ms / 1000, steps, {"step_ms": step.ms, "startup": start,
                                                                     "tasks_once": once}, basis + step.basis, sizes)


def project_index(times: StepTimes, shape: dict, corpus: str) -> Projection:
    """CARDS's retrieval index: the corpus embedded, then the exact top-k, whose work grows with rows^2."""
    n, sizes = _count("examples", corpus)
    embed = project_embedding(times, shape, n, precision="fp32")      # the index embeds in fp32 (its neighbours)
    knn = times.evaluation("knn_s") * (n / times.evaluation("knn_rows")) ** 2
    scaled = ["top-k time scaled by rows^2 from the measured one"] if n != times.evaluation("knn_rows") else []
    return Projection(embed.seconds + knn, 0, {"sentences": n, "knn_s": knn}, embed.basis + scaled, sizes)
