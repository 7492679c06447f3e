"""Measured training step times per device (`src/sentaug/resources/step_times/<device>.yaml`), how a setting
that was not measured is extrapolated from them, and the loader that fills a table from the JSON output of
`benchmarks/gpu_training.py` (and of `benchmarks/gpu_glue_eval.py`: GLUE's step, the embedding rate, the
start-up).

A table (YAML; `python -m sentaug.workflow.step_times --device h200 A.json B.json ...` writes one):

    device: NVIDIA H200                 the device the figures were measured on
    source: ...                         what measured them (files, date, code)
    length: 32                          tokens per sentence in every timed step
    steps:                              SimCSE steps (dropout positive, in-batch negatives): median ms per
      bert-base:                        optimizer step of a <arch>-<size> backbone, by batch size
        64: {ms: 12.521, path: graph, from: gpu_training.json}
    overhead:                           a method's step over SimCSE's, as a ratio, measured where it says
      cards: {ratio: 1.358, at: bert-base/64, from: gpu_training.json, path: graph}
    sharing:                            k runs on one GPU: the runs per hour over one run's (gpu_concurrency.py)
      4: 1.48
    evaluation:                         bert-base: one STS-B dev evaluation (`dev_sentences` sentences), one
      dev_ms: 327.5                     best-model write, one copy of the best model kept on the device
      dev_sentences: 2909               (optional), and the exact top-k of `knn_rows` vectors
      best_write_ms: 516.8
      best_snapshot_ms: 4.3              (dev_ms and checkpoint_ms, a resumable checkpoint's writes, may come
      checkpoint_ms: 3637               from a paper-length run's log: benchmarks/gpu_paper_run.py)
      knn_s: 58.31
      knn_rows: 1000000
    glue:                               optional (benchmarks/gpu_glue_eval.py): a GLUE fine-tuning step of a
      bert-base: {ms: 9.1, rdrop_ms: 17.2, width: 128, per_task_s: 6.1, rdrop_per_task_s: 7.4, task: RTE, ...}
                                        backbone at batch 32, its widest length bucket (`width` tokens: a bound
                                        for every step), without and with R-drop; each task's one-off seconds
                                        (tokenizing, warm-up steps, one CUDA graph per bucket)
    embedding: {ms_per_sentence: 0.05, precision: bf16, backbone: bert-base, ...}
                                        optional: an evaluation's embedding rate (STS-B dev and a transfer task)
    startup: {evaluation_s: 7.4, training_s: 14.2, ...}
                                        optional: an evaluation job's fresh process (Python, imports, the model
                                        on the device); a training job's wall time beyond its steps'
                                        (benchmarks/gpu_paper_run.py)
    settings:                           paper-scale training settings timed at their real shape
      roberta-base/b512/L32/retrieved1: {ms: 95.1, path: graph, from: calibration.json}
                                        (key: sentaug.workflow.cost.step_setting; benchmarks/gpu_calibrate.py)

A setting in `settings` is priced from its own measurement; any other is extrapolated (`StepTimes.step_ms`),
each use flagged in the result:
* batch sizes between two measured ones (a backbone's own, and those of backbones of the same shape: BERT-base
  and RoBERTa-base do the same work per token): linear in tokens per step; below the smallest measured batch, the
  smallest one's time (the step is bound by kernel launches there, not by work); above the largest, in
  proportion to the tokens (work-bound: never faster per token than the largest batch measured);
* other sequence lengths: the same, in tokens per step, times the ratio of FLOPs per token (attention);
* other backbones: the measured backbone of the same architecture (else bert-base) times the ratio of
  training FLOPs per token; for a smaller backbone at least the ratio of layers (launch-bound);
* a method's overhead measured at one setting is applied at every other one.
"""
from __future__ import annotations

import copy
import json
import math
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

TABLES = Path(str(resources.files("sentaug") / "resources" / "step_times"))
# Keys of a gpu_training.py `step` row that are not ways of running our trainer: the plain Hugging Face
# reference loops and the model timed alone. Every other entry with a median_step_ms is a path the trainer
# can take (graph, eager, and the older ours/ours_4d_mask): the fastest one is kept. Paths a run takes only when
# asked (`--compile`) are left out: the bill prices what a job runs by default.
NOT_A_TRAINER_PATH = ("reference", "model")
OPT_IN_PATHS = ("graph_compiled", "ours_compiled")


def known_devices() -> list[str]:
    return sorted(p.stem for p in TABLES.glob("*.yaml"))


def flops_per_token(shape: dict, length: int) -> float:
    """Training FLOPs per token of a transformer encoder (forward + backward = 3 forwards): per layer the
    four attention projections and the two feed-forward matrices (2 FLOPs per multiply-add) and the
    attention scores and their weighted sum over `length` positions. Embeddings and heads are left out."""
    h, i, layers = shape["hidden"], shape["intermediate"], shape["layers"]
    return 3 * layers * (2 * (4 * h * h + 2 * h * i) + 4 * length * h)


@dataclass
class StepTime:
    """A projected step time and how it was obtained: `basis` is empty when the setting was measured."""
    ms: float
    basis: list[str] = field(default_factory=list)

    @property
    def measured(self) -> bool:
        return not self.basis


@dataclass
class StepTimes:
    name: str
    table: dict

    @classmethod
    def load(cls, name: str) -> "StepTimes":
        path = TABLES / f"{name}.yaml"
        if not path.is_file():
            raise ValueError(f"no step-time table for device '{name}' (known: {', '.join(known_devices())}; "
                             f"tables live in {TABLES})")
        return cls(name, yaml.safe_load(path.read_text(encoding="utf-8")))

    @property
    def device(self) -> str:
        return self.table["device"]

    @property
    def length(self) -> int:
        return int(self.table["length"])

    def reference(self, arch: str) -> str:
        """The measured backbone extrapolations start from: the same architecture's, else bert-base's."""
        steps = self.table["steps"]
        same = sorted(k for k in steps if k.split("-")[0] == arch)
        return same[0] if same else ("bert-base" if "bert-base" in steps else sorted(steps)[0])

    def points(self, key: str) -> tuple[list[tuple[int, float]], list[str]]:
        """(tokens per step, ms) of backbone `key`'s measured batches, and of every other measured backbone of the
        same shape (BERT-base and RoBERTa-base do the same work per token) at batches `key` was not measured at;
        the second list names those borrowed."""
        shapes, steps = self.table["shapes"], self.table["steps"]
        own = {int(b): float(row["ms"]) for b, row in steps[key].items()}
        borrowed = []
        for other in sorted(steps):
            if other != key and same_work(shapes[other], shapes[key]):
                for b, row in steps[other].items():
                    if int(b) not in own:
                        own[int(b)] = float(row["ms"])
                        borrowed.append(f"{key} at batch {b}: {other}'s measured step (the same shape)")
        return sorted((2 * b * self.length, ms) for b, ms in own.items()), borrowed

    def base_ms(self, key: str, tokens: float) -> StepTime:
        """SimCSE's step time of measured backbone `key` at `tokens` per step (2 x batch x length when
        measured), interpolated over the measured batches (its own and those of backbones of its shape)."""
        points, borrowed = self.points(key)
        measured = dict(points)
        if tokens in measured:
            batch = int(tokens) // (2 * self.length)
            return StepTime(measured[tokens], [b for b in borrowed if f" at batch {batch}:" in b])
        for (t0, ms0), (t1, ms1) in zip(points, points[1:]):
            if t0 < tokens < t1:
                return StepTime(ms0 + (ms1 - ms0) * (tokens - t0) / (t1 - t0),
                                [f"linear in tokens per step between measured {key} steps", *borrowed])
        (t_min, ms_min), (t_max, ms_max) = points[0], points[-1]
        if tokens < t_min:
            return StepTime(ms_min, [f"below the smallest measured {key} batch: its time (launch-bound)", *borrowed])
        return StepTime(ms_max * tokens / t_max,
                        [f"above the largest measured {key} batch: in proportion to tokens", *borrowed])

    def step_ms(self, shape: dict, batch: int, length: int, views: int = 2) -> StepTime:
        """One optimizer step of SimCSE-like work on a backbone of `shape` ({arch, layers, hidden,
        intermediate}): `views` sentences of `length` tokens for each of `batch` examples."""
        key = self.reference(shape["arch"])
        ref = self.table["shapes"][key]
        time = self.base_ms(key, views * batch * length)
        basis, ratio = list(time.basis), 1.0
        if length != self.length:       # tokens are counted above; attention's work per token grows with length
            ratio = flops_per_token(ref, length) / flops_per_token(ref, self.length)
            basis.append(f"length {length} from the measured {self.length}: FLOPs per token ratio {ratio:.3f}")
        if not same_shape(shape, ref):
            r = flops_per_token(shape, length) / flops_per_token(ref, length)
            if r < 1:
                r = max(r, shape["layers"] / ref["layers"])
                basis.append(f"{shape_key(shape)} from {key}: FLOP ratio, at least the layer ratio "
                             f"(launch-bound): {r:.3f}")
            else:
                basis.append(f"{shape_key(shape)} from {key}: training FLOPs per token ratio {r:.2f}")
            ratio *= r
        return StepTime(time.ms * ratio, basis)

    def setting(self, key: str) -> StepTime | None:
        """The measured step of a paper-scale training setting (`cost.step_setting`'s key), None when the
        table's `settings` do not hold it."""
        row = (self.table.get("settings") or {}).get(key)
        return StepTime(float(row["ms"])) if row else None

    def scaled(self, speedup: float) -> "StepTimes":
        """This table with every step `speedup` times faster than measured (a what-if)."""
        if speedup == 1.0:
            return self
        table = copy.deepcopy(self.table)
        for rows in table["steps"].values():
            for row in rows.values():
                row["ms"] = row["ms"] / speedup
        for row in (table.get("settings") or {}).values():
            row["ms"] = row["ms"] / speedup
        for row in (table.get("glue") or {}).values():
            for key in ("ms", "rdrop_ms"):
                if key in row:
                    row[key] = row[key] / speedup
        return StepTimes(self.name, table)

    def sharing(self, runs_per_gpu: int) -> float:
        """The measured gain in runs per hour of `runs_per_gpu` runs sharing one GPU over one run alone (the
        table's optional `sharing: {k: gain}`); 1.0, no gain, when it was not measured."""
        if runs_per_gpu == 1:
            return 1.0
        return float((self.table.get("sharing") or {}).get(runs_per_gpu, 1.0))

    def overhead(self, method: str) -> float | None:
        row = (self.table.get("overhead") or {}).get(method)
        return float(row["ratio"]) if row else None

    def overhead_at(self, method: str) -> str | None:
        row = (self.table.get("overhead") or {}).get(method)
        return row.get("at") if row else None

    def evaluation(self, what: str) -> float:
        return float(self.table["evaluation"][what])

    def glue_step(self, shape: dict, rdrop: bool) -> StepTime | None:
        """A GLUE fine-tuning step (batch 32, the widest bucket) on a backbone of `shape`, with R-drop or without:
        the measured backbone of the same shape, else bert-base's scaled by the FLOPs per token; None when the
        table has no GLUE step."""
        rows = self.table.get("glue") or {}
        if not rows:
            return None
        shapes = self.table["shapes"]
        key = next((k for k in sorted(rows) if same_work(shapes[k], shape)), None)
        measured = key or ("bert-base" if "bert-base" in rows else sorted(rows)[0])
        row, basis = rows[measured], []
        ms = row.get("rdrop_ms") if rdrop else row["ms"]
        if ms is None:
            ms = 2 * row["ms"]
            basis.append("R-drop's step as two of the measured GLUE steps (not measured with R-drop)")
        if key is None:
            ref = shapes[measured]
            r = flops_per_token(shape, row["width"]) / flops_per_token(ref, row["width"])
            r = max(r, shape["layers"] / ref["layers"]) if r < 1 else r
            basis.append(f"GLUE step of {shape_key(shape)} from {measured}'s: FLOPs per token ratio {r:.3f}")
            ms *= r
        return StepTime(float(ms), basis)

    def glue_task_s(self, shape: dict, rdrop: bool) -> float:
        """A GLUE task's one-off seconds (tokenizing, warm-up steps, the graphs' captures), as measured."""
        rows = self.table.get("glue") or {}
        row = next((rows[k] for k in sorted(rows) if same_work(self.table["shapes"][k], shape)),
                   rows.get("bert-base") or next(iter(rows.values()), {}))
        return float(row.get("rdrop_per_task_s" if rdrop else "per_task_s", row.get("per_task_s", 0.0)))


def overhead_bases(rows: dict):
    """(path, SimCSE's ms on it) to take a method's overhead against: the rows of gpu_training.py's `overhead`
    section hold one timing per path (graph, eager) since issue 43 (the fastest SimCSE path: what jobs run),
    one timing alone before it (path None)."""
    simcse = rows.get("simcse") or {}
    if simcse.get("median_step_ms"):
        return [(None, simcse["median_step_ms"])]
    paths = {k: v["median_step_ms"] for k, v in simcse.items() if isinstance(v, dict) and v.get("median_step_ms")
             and k not in OPT_IN_PATHS}
    return [min(((k, ms) for k, ms in paths.items()), key=lambda kv: kv[1])] if paths else []


def same_work(a: dict, b: dict) -> bool:
    """The same layers and sizes: the same work per token, whatever the architecture's name (BERT, RoBERTa)."""
    return all(a[k] == b[k] for k in ("layers", "hidden", "intermediate"))


def same_shape(a: dict, b: dict) -> bool:
    return all(a[k] == b[k] for k in ("arch", "layers", "hidden", "intermediate"))


def shape_key(shape: dict) -> str:
    """<arch>-<size> of a shape: `base` for 12 x 768, `large` for 24 x 1024, else <layers>x<hidden>."""
    size = {(12, 768): "base", (24, 1024): "large"}.get((shape["layers"], shape["hidden"]),
                                                       f"{shape['layers']}x{shape['hidden']}")
    return f"{shape['arch']}-{size}"


# Hub configurations of the backbones the benchmark times (random weights from these shapes).
BENCHMARK_SHAPES = {"base": {"layers": 12, "hidden": 768, "intermediate": 3072}}


def table_from_benchmark(paths, device_name: str | None = None, source: str | None = None) -> dict:
    """A step-time table from the JSON files `benchmarks/gpu_training.py` wrote (a_step.json, d_overhead.json,
    b_dev.json, c_knn.json, ...; any of its sections, in any files). Per (backbone, batch) the fastest trainer
    path of every file is kept, and which path and file it was; a method's overhead is the lowest measured
    ratio to SimCSE's step in the same file; evaluation times are the lowest medians."""
    steps, overhead, evaluation, lengths, devices, sharing = {}, {}, {}, set(), set(), {}
    glue, embedding, startup, settings, glue_shapes = {}, {}, {}, {}, {}

    def keep(slot: dict, key, value: dict, by: str):
        if key not in slot or value[by] < slot[key][by]:
            slot[key] = value

    for path in map(Path, paths):
        data = json.loads(path.read_text(encoding="utf-8"))
        args, name = data.get("args", {}), path.name
        if data.get("versions", {}).get("gpu"):
            devices.add(data["versions"]["gpu"])
        size = args.get("size", "base")
        for setting, row in (data.get("step") or {}).items():
            arch, batch = setting.split("/b")
            lengths.add(int(args.get("length", 32)))
            paths_ms = {k: v["median_step_ms"] for k, v in row.items() if isinstance(v, dict)
                        and v.get("median_step_ms") is not None and not k.startswith(NOT_A_TRAINER_PATH)
                        and k not in OPT_IN_PATHS}
            if paths_ms:
                fastest = min(paths_ms, key=paths_ms.get)
                keep(steps.setdefault(f"{arch}-{size}", {}), int(batch),
                     {"ms": round(paths_ms[fastest], 3), "path": fastest, "from": name}, "ms")
        rows = data.get("overhead") or {}
        for path_name, base in overhead_bases(rows):      # each path's ratios against SimCSE on that path
            lengths.add(int(args.get("length", 32)))
            for method, row in rows.items():
                ms = (row.get(path_name) or {}).get("median_step_ms") if path_name else row.get("median_step_ms")
                if method != "simcse" and ms:
                    keep(overhead, method, {"ratio": round(ms / base, 3), "at": f"bert-{size}/64", "from": name,
                                            **({"path": path_name} if path_name else {})}, "ratio")
        dev = data.get("dev_eval")
        if dev:
            for key, value in (("dev_ms", dev["ours"]["median_ms"]), ("best_write_ms", dev["best_checkpoint_write_ms"]),
                               ("best_snapshot_ms", dev.get("best_snapshot_on_device_ms"))):
                if value is not None:       # (the device copy of the best model: measured since issue 43)
                    evaluation[key] = min(evaluation.get(key, math.inf), value)
            evaluation["dev_sentences"] = dev["n_sentences"]
        for config, rows_k in data.items():       # gpu_concurrency.py: k runs sharing one GPU
            if "/" in config and isinstance(rows_k, list) and rows_k and rows_k[0].get("k") == 1:
                alone = sum(rows_k[0].get("train_seconds") or [0]) or None
                for r in rows_k[1:]:
                    if alone and r.get("train_seconds") and len(r["train_seconds"]) == r["k"]:
                        gain = r["k"] * alone / (sum(r["train_seconds"]) / r["k"])    # runs per hour, k over 1
                        sharing[r["k"]] = max(sharing.get(r["k"], 0.0), round(gain, 2))
        for key, row in (data.get("settings") or {}).items():      # gpu_calibrate.py: paper-scale settings
            if row.get("ms") and not data.get("args", {}).get("tiny") in (True, "True"):
                keep(settings, key, {"ms": round(row["ms"], 3), "path": row["path"], "from": name}, "ms")
        if data.get("startup_and_end_s") is not None and data.get("returncode") == 0:    # gpu_paper_run.py
            startup["training_s"] = max(startup.get("training_s", 0.0), data["startup_and_end_s"])
            parts = run_parts(data["log_elapsed"], data.get("eval_steps", 125), data.get("save_steps", 5000))
            if parts["dev_ms"] < evaluation.get("dev_ms", math.inf):     # the trainer's own dev evaluation
                evaluation["dev_ms"] = parts["dev_ms"]
            if parts["checkpoints"]:
                evaluation["checkpoint_ms"] = parts["checkpoint_ms"]
        if "settings" in data:      # gpu_calibrate.py's GLUE steps of backbones at their real shape
            for key, row in (data.get("glue") or {}).items():
                if row.get("ms") and row.get("shape") and data.get("args", {}).get("tiny") not in (True, "True"):
                    glue_key = shape_key(row["shape"])
                    glue_shapes[glue_key] = {k: row["shape"][k] for k in ("arch", "layers", "hidden", "intermediate")}
                    slot = glue.setdefault(glue_key, {"width": row["width"], "from": name})
                    slot["rdrop_ms" if row["rdrop"] else "ms"] = round(row["ms"], 3)
                    slot.setdefault("path", row.get("path"))
        knn = data.get("knn")
        if knn and knn.get("torch_s") and knn["torch_s"] < evaluation.get("knn_s", math.inf):
            evaluation.update({"knn_s": knn["torch_s"], "knn_rows": knn["n"]})
        if "settings" not in data:
            glue_eval_sections(data, name, f"bert-{size}", glue, embedding, startup)
    if len(lengths) > 1:
        raise ValueError(f"the benchmark files time different sequence lengths ({sorted(lengths)}): one table "
                         f"holds one length")
    if not steps:
        raise ValueError(f"no `step` section in {', '.join(map(str, paths))}: nothing to fill a table with")
    missing = {"dev_ms", "best_write_ms", "dev_sentences", "knn_s", "knn_rows"} - set(evaluation)
    if missing:
        raise ValueError(f"the benchmark files lack {', '.join(sorted(missing))} (sections dev_eval and knn)")
    shapes = {key: {"arch": key.split("-")[0], **BENCHMARK_SHAPES[key.split("-", 1)[1]]} for key in steps}
    shapes.update({key: glue_shapes.get(key) or {"arch": key.split("-")[0], **BENCHMARK_SHAPES[key.split("-", 1)[1]]}
                   for key in glue})
    return {"device": device_name or ", ".join(sorted(devices)) or "unknown",
            "source": source or "benchmarks/gpu_training.py: " + ", ".join(Path(p).name for p in paths),
            "length": lengths.pop(), "shapes": shapes,
            "steps": {k: dict(sorted(v.items())) for k, v in sorted(steps.items())},
            "overhead": dict(sorted(overhead.items())), "evaluation": evaluation,
            **({"sharing": dict(sorted(sharing.items()))} if sharing else {}),
            **({"glue": dict(sorted(glue.items()))} if glue else {}),
            **({"embedding": embedding} if embedding else {}), **({"startup": startup} if startup else {}),
            **({"settings": dict(sorted(settings.items()))} if settings else {})}


def run_parts(log: list, eval_steps: int, save_steps: int) -> dict:
    """A training run's time by part, from its log's (step, elapsed seconds) every few steps (`train_log.jsonl`,
    whose elapsed time is taken before a step's dev evaluation and checkpoint): the mean step over the windows
    holding neither; a dev evaluation (median) and a checkpoint (median, its evaluation taken off) as what the
    windows starting at such a step took beyond their steps."""
    import statistics

    plain, evals, saves = [], [], []
    for (s0, t0), (s1, t1) in zip(log, log[1:]):
        if s0 and s0 % save_steps == 0:
            saves.append((t1 - t0, s1 - s0))
        elif s0 and s0 % eval_steps == 0:
            evals.append((t1 - t0, s1 - s0))
        else:
            plain.append((t1 - t0, s1 - s0))
    step = sum(t for t, _ in plain) / sum(n for _, n in plain)
    dev = statistics.median(t - n * step for t, n in evals) if evals else 0.0
    save = statistics.median(t - n * step - dev for t, n in saves) if saves else 0.0
    return {"step_ms": round(1000 * step, 3), "dev_ms": round(1000 * dev, 1), "checkpoint_ms": round(1000 * save, 1),
            "evaluations": len(evals) + len(saves), "checkpoints": len(saves)}


def glue_eval_sections(data: dict, name: str, backbone: str, glue: dict, embedding: dict, startup: dict) -> None:
    """The sections of a `benchmarks/gpu_glue_eval.py` JSON, into the table's `glue`, `embedding` and `startup`
    (the fastest of several files): a GLUE step at its widest bucket, without and with R-drop, and a task's
    one-off seconds; the bf16 embedding rate; the slower of an evaluation job's two start-ups."""
    g = data.get("glue") or {}
    row = {}
    for part, prefix in (("rdrop_off", ""), ("rdrop_on", "rdrop_")):
        new = (g.get(part) or {}).get("new") or {}
        by_width = {int(w): ms for w, ms in (new.get("median_ms_by_width") or {}).items() if ms is not None}
        if by_width:
            width = max(by_width)
            row.update({f"{prefix}ms": by_width[width], "width": width, f"{prefix}per_task_s": new["one_off_s"]})
            row.setdefault("path", (new.get("step_path") or {}).get("path"))
    if "ms" in row and ("ms" not in glue.get(backbone, {}) or row["ms"] < glue[backbone]["ms"]):
        glue[backbone] = {**row, "task": g.get("task"), "from": name}
    bf16 = (data.get("embedding") or {}).get("bf16") or {}
    if bf16.get("sentences_per_s"):
        ms = round(1000 / bf16["sentences_per_s"], 4)
        if ms < embedding.get("ms_per_sentence", math.inf):
            embedding.update({"ms_per_sentence": ms, "precision": "bf16", "backbone": backbone, "from": name})
    runs = (data.get("startup") or {}).get(backbone) or {}
    seconds = [r["total_s"] for r in runs.values() if isinstance(r, dict) and r.get("total_s")]
    if seconds and max(seconds) < startup.get("evaluation_s", math.inf):
        startup.update({"evaluation_s": round(max(seconds), 2), "from": name})


HEADER = """\
# Training step times of one device, read by `sentaug cost` and by the runtime each training job asks SLURM
# for (sentaug.workflow.step_times documents the format and how unmeasured settings are extrapolated).
# Written by `python -m sentaug.workflow.step_times --device {name} <gpu_training.py JSON files>`.
"""


def write_table(table: dict, name: str, folder: Path = TABLES) -> Path:
    from ..io import atomic_path

    path = Path(folder) / f"{name}.yaml"
    with atomic_path(path) as tmp:
        tmp.write_text(HEADER.format(name=name) + yaml.safe_dump(table, sort_keys=False, width=110, default_flow_style=None),
                       encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description="Fill a step-time table from benchmarks/gpu_training.py (and "
                                            "gpu_glue_eval.py) JSON files.")
    p.add_argument("files", nargs="+",
                   help="JSON files written by benchmarks/gpu_training.py and gpu_glue_eval.py --out")
    p.add_argument("--device", required=True, help="the table's name, e.g. h200 (-> resources/step_times/h200.yaml)")
    p.add_argument("--device-name", help="the device as the table states it (default: the files' GPU name)")
    p.add_argument("--source", help="what measured the figures (default: the files' names)")
    p.add_argument("--out-dir", default=str(TABLES))
    a = p.parse_args(argv)
    path = write_table(table_from_benchmark(a.files, a.device_name, a.source), a.device, Path(a.out_dir))
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
