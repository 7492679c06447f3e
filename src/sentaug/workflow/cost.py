"""What one job of the workflow costs on a device: a training run, a GLUE fine-tuning, an evaluation, a
retrieval index. Projected from the step-time table of the device (`sentaug.workflow.step_times`) and the
sizes of the work (`src/sentaug/resources/workload.yaml`); `sentaug.workflow.bill` adds them up over the
jobs of a DAG, and `train_runtime_minutes` is what a training job asks SLURM for.

A training run of `steps` optimizer steps costs

    start-up + steps x SimCSE's step time x the method's overhead
             + its dev evaluations x (one STS-B dev evaluation + keeping the best model on the device)
             + one best-model write at the end
             + its checkpoints x (3 best-model writes (model and AdamW's two moments) + the best model's write)

(on the GPU the trainer keeps the best model on the device and writes it with each checkpoint and at the end;
a table without a measured device copy counts a write at every evaluation, as the trainer did before)

with the dev evaluation and the writes scaled by the backbone's FLOP ratio to the measured bert-base. Every
projection lists what in it was not measured (`basis`); a projection with an empty basis is measured.
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
from ..parts import NLI_TRIPLETS, compose
from .step_times import StepTimes, flops_per_token

WORKLOAD = Path(str(resources.files("sentaug") / "resources" / "workload.yaml"))
# Seconds before a job's first step: Python, torch and CUDA start, backbone and token tables load (~6 s at
# wiki1m scale, benchmarks/gpu_notes.md), and the first steps' one-off work on the GPU: the prefetching workers
# start, 3 eager warm-up steps, the graph's capture (measured on an H200: 1.4-3.0 s in a fresh process,
# benchmarks/gpu_notes.md). The process start is not measured on a GPU: an estimate.
STARTUP_S = 30.0
# Writing a resumable checkpoint writes the model and AdamW's two moments: three best-model writes.
CHECKPOINT_WRITES = 3
# The runtime a training job asks SLURM for: the projection times RUNTIME_FACTOR plus RUNTIME_EXTRA_MIN, at least
# RUNTIME_FLOOR_MIN (queue start-up, a slow node) and at most RUNTIME_CAP_MIN (a common GPU partition limit; a
# longer run resumes from its last checkpoint when requeued: profiles/slurm restarts a job once).
RUNTIME_FACTOR, RUNTIME_EXTRA_MIN, RUNTIME_FLOOR_MIN, RUNTIME_CAP_MIN = 1.5, 10, 15, 2880
# GLUE fine-tuning (sentaug.evaluate.glue defaults): batch, epochs, tokens per sentence (pair) at most.
GLUE_BATCH, GLUE_EPOCHS, GLUE_LENGTH = 32, 3.0, 128


@lru_cache(maxsize=1)
def workload() -> dict:
    return yaml.safe_load(WORKLOAD.read_text(encoding="utf-8"))


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
    """Projected seconds of one job, its parts, and what in it was not measured."""
    seconds: float
    steps: int = 0
    parts: dict = field(default_factory=dict)
    basis: list[str] = field(default_factory=list)

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
        stats = Path(paths.triplets_file(name)).with_suffix(".json")
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


def method_overhead(times: StepTimes, spec: dict, setting: str) -> tuple[float, list[str]]:
    """The ratio of a method's step to SimCSE's at `setting` (<backbone key>/<batch>), from the measured
    overheads of its features."""
    method = spec["method"]
    if times.overhead(method) is not None:
        at = times.overhead_at(method)
        return times.overhead(method), [] if at == setting else [f"{method}'s overhead measured at {at}"]
    # each part that adds work to SimCSE's step, priced by the measured overhead that stands for it (sentaug.parts)
    factors = [part for part in compose(spec).parts if part.adds_work]
    ratio, basis = 1.0, []
    for part in factors:
        feature = part.feature or part.name
        r = part.step_overhead(times) if part.overhead else None
        if r is None:
            basis.append(f"{feature}: no overhead measured, counted as SimCSE")
            continue
        ratio *= r
        basis.append(f"{feature}: overhead of {part.overhead} ({times.overhead_at(part.overhead)}) x{r:.3f}")
    if not factors and split_variant(method)[0] != "simcse":   # a SimCSE variant is SimCSE's step
        basis.append(f"{method}: counted as SimCSE (same sentences per step; its own overhead not measured)")
    return ratio, basis


def project_run(paths, spec: dict, times: StepTimes, config: dict) -> Projection:
    """Seconds of one training run (a resolved spec) on the table's device, from scratch."""
    shape = backbone_shape(config, spec["backbone"])
    n, basis = run_examples(paths, spec)
    steps = spec["max_steps"] or spec["epochs"] * math.ceil(n / spec["batch_size"])
    step = times.step_ms(shape, spec["batch_size"], spec["max_seq_length"])
    overhead, method_basis = method_overhead(times, spec, f"{times.reference(shape['arch'])}/{spec['batch_size']}")
    evals = steps // spec["eval_steps"] + (1 if steps % spec["eval_steps"] else 0)
    checkpoints = steps // spec["save_steps"]
    ratio = _flop_ratio(times, shape)
    write_s = times.evaluation("best_write_ms") / 1000 * ratio
    kept = "best_snapshot_ms" in times.table["evaluation"]     # the best model kept on the device
    keep_s = times.evaluation("best_snapshot_ms") / 1000 * ratio if kept else write_s
    parts = {"startup": STARTUP_S, "steps": steps * step.ms * overhead / 1000,
             "dev": evals * (times.evaluation("dev_ms") / 1000 * ratio + keep_s) + (write_s if kept else 0.0),
             "checkpoints": checkpoints * (CHECKPOINT_WRITES + kept) * write_s}
    return Projection(sum(parts.values()), steps, {**parts, "step_ms": step.ms * overhead},
                      basis + step.basis + method_basis)


def train_runtime_minutes(projection: Projection, runs_per_gpu: int = 1, sharing: float = 1.0) -> int:
    """The runtime (minutes) a training job asks SLURM for: its projection with the safety margin, each of
    `runs_per_gpu` runs sharing a GPU taking runs_per_gpu / `sharing` times as long (sharing: the measured
    gain in runs per hour; 1 when not measured)."""
    minutes = projection.seconds / 60 * runs_per_gpu / sharing
    return int(min(RUNTIME_CAP_MIN, max(RUNTIME_FLOOR_MIN, math.ceil(RUNTIME_FACTOR * minutes + RUNTIME_EXTRA_MIN))))


def project_embedding(times: StepTimes, shape: dict, sentences: int, basis=()) -> Projection:
    """Embedding `sentences` sentences (as the STS-B dev evaluation does: fp32, batches of 128)."""
    ms = times.evaluation("dev_ms") / times.evaluation("dev_sentences") * _flop_ratio(times, shape)
    return Projection(STARTUP_S + sentences * ms / 1000, 0, {"sentences": sentences}, list(basis))


def project_suite(times: StepTimes, shape: dict, suite: str) -> Projection:
    """An evaluation suite's embeddings; its classifiers and K-means run on the CPU and are not counted."""
    n, basis = _count("suite_sentences", suite)
    return project_embedding(times, shape, n, basis + ["embedding time from the STS-B dev evaluation's"])


def project_glue(times: StepTimes, shape: dict, tasks, max_steps: int | None, rdrop: bool) -> Projection:
    """GLUE fine-tuning of every task (batch 32, 3 epochs or `max_steps` each, pairs of at most 128 tokens
    counted at 128; R-drop runs two forward passes)."""
    steps, basis = 0, [f"GLUE steps as SimCSE steps of {GLUE_BATCH} x {GLUE_LENGTH} tokens"]
    for task in tasks:
        n, b = _count("glue_train", task)
        steps += max_steps or max(1, math.ceil(GLUE_EPOCHS * math.ceil(n / GLUE_BATCH)))
        basis += b
    # one view per example of GLUE_LENGTH tokens = SimCSE's two views of half as many examples
    step = times.step_ms(shape, GLUE_BATCH * (2 if rdrop else 1), GLUE_LENGTH, views=1)
    return Projection(STARTUP_S + steps * step.ms / 1000, steps, {"step_ms": step.ms}, basis + step.basis)


def project_index(times: StepTimes, shape: dict, corpus: str) -> Projection:
    """CARDS's retrieval index: the corpus embedded, then the exact top-k, whose work grows with rows^2."""
    n, basis = _count("examples", corpus)
    embed = project_embedding(times, shape, n)
    knn = times.evaluation("knn_s") * (n / times.evaluation("knn_rows")) ** 2
    return Projection(embed.seconds + knn, 0, {"sentences": n, "knn_s": knn},
                      basis + (["top-k time scaled by rows^2 from the measured one"] if n != times.evaluation("knn_rows")
                               else []))
