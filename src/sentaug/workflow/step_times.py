"""Measured training step times per device (`src/sentaug/resources/step_times/<device>.yaml`) and how a setting
that was not measured is extrapolated from them. A table is filled from the benchmarks' JSON output by
`sentaug.workflow.calibration` (`python -m sentaug.workflow.calibration --device h200 A.json B.json ...`).

A table (YAML):

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
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

TABLES = Path(str(resources.files("sentaug") / "resources" / "step_times"))
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
