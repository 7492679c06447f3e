"""Measured training step times per device (`src/sentaug/resources/step_times/<device>.yaml`) and how a setting
that was not measured is extrapolated from them. A table is filled from the benchmarks' JSON output by
`sentaug.pricing.calibration` (`python -m sentaug.pricing.calibration --device h200 A.json B.json ...`).

A table (YAML; every measured row carries `from`: its file under benchmarks/results, `commit`: the code that ran,
`date`: when; `measured` gives the same for the scalar figures of `evaluation` and `startup`):

    device: NVIDIA H200                 the device the figures were measured on
    source: ...                         what measured them (files, date, code)
    sources:                            every file read, with the commit and date it measured
      h200-2026-11-28-floor/call1/calibration.json: {commit: 23998d9, date: '2026-11-28'}
    length: 32                          tokens per sentence in every timed step
    steps:                              SimCSE steps (dropout positive, in-batch negatives): median ms per
      bert-base:                        optimizer step of a <arch>-<size> backbone, by batch size
        64: {ms: 12.521, path: graph, from: ..., commit: 21dcf42, date: '2026-11-26'}
    overhead:                           a part's step over SimCSE's, as a ratio, under the part's key
      switch_case: {ratio: 1.358, at: bert-base/64, method: cards, path: graph, from: ..., commit: ..., date: ...}
                                        (sentaug.parts: `Part.overhead`), measured where it says (`at`) on a
                                        method (`method`) whose step adds that part's work to SimCSE's
    sharing:                            k runs on one GPU at once: their aggregate steps per second over ONE STEADY
      bert-base/b64/L32/simcse:         run's (gpu_concurrency.py), per shape (<arch>-<size>/b<batch>/L<length>/
        4: {gain: 1.38, mps: true, ...} <work>); a shape without one gains nothing (1.0)
    evaluation:                         bert-base: one STS-B dev evaluation (`dev_sentences` sentences), one
      dev_ms: 327.5                     best-model write, one copy of the best model kept on the device
      dev_sentences: 2909               (optional), and the exact top-k of `knn_rows` vectors
      best_write_ms: 516.8
      best_snapshot_ms: 4.3              (dev_ms and checkpoint_ms, a resumable checkpoint's writes, may come
      checkpoint_ms: 3637               from a paper-length run's log: benchmarks/gpu_paper_run.py)
      knn_s: 58.31
      knn_rows: 1000000
    glue:                               optional (benchmarks/gpu_glue_eval.py, gpu_calibrate.py): a GLUE fine-tuning
      bert-base: {ms: 11.7, rdrop_ms: 22.8, width: 128, per_task_s: 3.2, rdrop_per_task_s: 3.3, task: RTE,
                  ms_by_width: {48: 7.6, 64: 8.3, 88: 9.6, 128: 11.7}, rdrop_ms_by_width: {...}, ...}
                                        step of a backbone at batch 32 per bucket width (the median of that
                                        width's graph-replayed steps), without and with R-drop (`ms`: at the
                                        widest, `width`); each task's one-off seconds (tokenizing, warm-up steps,
                                        one CUDA graph per bucket: its wall time beyond its steady steps)
    embedding: {ms_per_sentence: 0.05, precision: bf16, backbone: bert-base, ...}
                                        optional: an evaluation's embedding rate (STS-B dev and a transfer task)
    startup: {evaluation_s: 7.4, client_s: 0.4, training_s: 14.2}
                                        optional: an evaluation job's fresh process (Python, imports, the model
                                        on the device); a job whose command a model's evaluation process runs
                                        (`sentaug.evaluate.service`: Python and the command line only); a
                                        training job's wall time beyond its steps' (benchmarks/gpu_paper_run.py)
    settings:                           paper-scale training settings timed at their real shape
      roberta-base/b512/L32/retrieved1: {ms: 95.1, path: graph, peak_memory_gib: 22.0, from: ..., commit: ...,
                                         date: ...}
                                        (key: sentaug.pricing.cost.step_setting; benchmarks/gpu_calibrate.py;
                                        the peak memory it allocated, as a GLUE row's `peak_memory_gib` and
                                        `rdrop_peak_memory_gib`: what the bill checks against a device's memory)

A device without a table of its own is priced from the measured reference's, calibrated from datasheet rates
(`sentaug.pricing.datasheet.load`): every row of it carries `calibrated: <the reference>`, and the table a
`calibrated: {from, note}` section.

A setting in `settings` is priced from its own measurement; any other is extrapolated (`StepTimes.step_ms`),
each use flagged in the result:
* batch sizes between two measured ones (a backbone's own, and those of backbones of the same shape: BERT-base
  and RoBERTa-base do the same work per token): linear in tokens per step; below the smallest measured batch, the
  smallest one's time (the step is bound by kernel launches there, not by work); above the largest, in
  proportion to the tokens (work-bound: never faster per token than the largest batch measured);
* other sequence lengths: the same, in tokens per step, times the ratio of FLOPs per token (attention);
* other backbones: the measured backbone of the same architecture (else bert-base) times the ratio of
  training FLOPs per token; for a smaller backbone at least the ratio of layers (launch-bound);
* a method's overhead measured at one setting is applied at every other one;
* a GLUE step at an unmeasured bucket width: linear between measured widths, the smallest measured width's
  time below it (launch-bound: an upper bound), in proportion to the tokens above the widest; a backbone
  measured at one width only (DeBERTa-v2-xxlarge, bound by its work at any width) in proportion to the tokens.

Each figure a projection uses is returned with it (`StepTime.sources`, `Source`): what it is, the code it
times (`kind`, sentaug.pricing.freshness) and the commit and date it was measured at.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable

import yaml

TABLES = Path(str(resources.files("sentaug") / "resources" / "step_times"))


def known_devices() -> list[str]:
    """The devices with a measured step-time table (TABLES/<device>.yaml); sentaug.pricing.datasheet adds those
    calibrated from one."""
    return sorted(p.stem for p in TABLES.glob("*.yaml"))


def flops_per_token(shape: dict, length: int) -> float:
    """Training FLOPs per token of a transformer encoder (forward + backward = 3 forwards): per layer the
    four attention projections and the two feed-forward matrices (2 FLOPs per multiply-add) and the
    attention scores and their weighted sum over `length` positions. Embeddings and heads are left out."""
    h, i, layers = shape["hidden"], shape["intermediate"], shape["layers"]
    return 3 * layers * (2 * (4 * h * h + 2 * h * i) + 4 * length * h)


UNKNOWN = "unknown"


@dataclass(frozen=True)
class Source:
    """A measured figure a projection uses: what it is, which code it times (`kind`: train, glue, evaluation or
    index; sentaug.pricing.freshness), the commit and date it was measured at, and its file."""
    figure: str
    kind: str
    commit: str = UNKNOWN
    date: str = UNKNOWN
    file: str = ""
    calibrated: str = ""        # the measured table a calibrated figure comes from (sentaug.pricing.datasheet)


def source(figure: str, kind: str, row: dict | None) -> Source:
    row = row or {}
    return Source(figure, kind, str(row.get("commit", UNKNOWN)), str(row.get("date", UNKNOWN)),
                  str(row.get("from", "")), str(row.get("calibrated", "")))


@dataclass
class StepTime:
    """A projected step time and how it was obtained: `basis` is empty when the setting was measured; `sources`:
    the measured figures it comes from."""
    ms: float
    basis: list[str] = field(default_factory=list)
    sources: list = field(default_factory=list)

    @property
    def measured(self) -> bool:
        return not self.basis


@dataclass
class StepTimes:
    name: str
    table: dict

    @classmethod
    def load(cls, name: str) -> "StepTimes":
        """The device's measured table (sentaug.pricing.datasheet.load: else one calibrated from datasheet
        rates)."""
        path = TABLES / f"{name}.yaml"
        if not path.is_file():
            raise ValueError(f"no step-time table for device '{name}' (known: {', '.join(known_devices())}; "
                             f"tables live in {TABLES})")
        return cls(name, yaml.safe_load(path.read_text(encoding="utf-8")))

    @property
    def calibrated(self) -> str | None:
        """What a table calibrated from datasheet rates says of itself; None for a measured one."""
        return (self.table.get("calibrated") or {}).get("note")

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
        points, borrowed, _ = self._points(key)
        return points, borrowed

    def _points(self, key: str):
        shapes, steps = self.table["shapes"], self.table["steps"]
        own = {int(b): (float(row["ms"]), source(f"SimCSE step {key}/b{b}", "train", row))
               for b, row in steps[key].items()}
        borrowed = []
        for other in sorted(steps):
            if other != key and same_work(shapes[other], shapes[key]):
                for b, row in steps[other].items():
                    if int(b) not in own:
                        own[int(b)] = (float(row["ms"]), source(f"SimCSE step {other}/b{b}", "train", row))
                        borrowed.append(f"{key} at batch {b}: {other}'s measured step (the same shape)")
        ordered = sorted((2 * b * self.length, ms, src) for b, (ms, src) in own.items())
        return [(t, ms) for t, ms, _ in ordered], borrowed, {t: src for t, _, src in ordered}

    def base_ms(self, key: str, tokens: float) -> StepTime:
        """SimCSE's step time of measured backbone `key` at `tokens` per step (2 x batch x length when
        measured), interpolated over the measured batches (its own and those of backbones of its shape)."""
        points, borrowed, sources = self._points(key)
        measured = dict(points)
        if tokens in measured:
            batch = int(tokens) // (2 * self.length)
            return StepTime(measured[tokens], [b for b in borrowed if f" at batch {batch}:" in b], [sources[tokens]])
        for (t0, ms0), (t1, ms1) in zip(points, points[1:]):
            if t0 < tokens < t1:
                return StepTime(ms0 + (ms1 - ms0) * (tokens - t0) / (t1 - t0),
                                [f"linear in tokens per step between measured {key} steps", *borrowed],
                                [sources[t0], sources[t1]])
        (t_min, ms_min), (t_max, ms_max) = points[0], points[-1]
        if tokens < t_min:
            return StepTime(ms_min, [f"below the smallest measured {key} batch: its time (launch-bound)", *borrowed],
                            [sources[t_min]])
        return StepTime(ms_max * tokens / t_max,
                        [f"above the largest measured {key} batch: in proportion to tokens", *borrowed],
                        [sources[t_max]])

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
        return StepTime(time.ms * ratio, basis, time.sources)

    def setting(self, key: str) -> StepTime | None:
        """The measured step of a paper-scale training setting (`cost.step_setting`'s key), None when the
        table's `settings` do not hold it."""
        row = (self.table.get("settings") or {}).get(key)
        return StepTime(float(row["ms"]), [], [source(f"setting {key}", "train", row)]) if row else None

    def setting_peak(self, key: str) -> float | None:
        """The peak memory (GiB) measured for a training setting's step (`settings.<key>.peak_memory_gib`)."""
        row = (self.table.get("settings") or {}).get(key) or {}
        return row.get("peak_memory_gib")

    def glue_peak(self, shape: dict, rdrop: bool) -> tuple[float, str] | None:
        """(peak memory in GiB, what it was measured at) of GLUE fine-tuning a backbone of `shape`: its own `glue`
        row's (batch 32 at the row's width), with R-drop or without; None where none was measured."""
        found = self.glue_row(shape)
        if found is None or not found[1]:
            return None
        row = self.table["glue"][found[0]]
        peak = row.get(f"{'rdrop_' if rdrop else ''}peak_memory_gib")
        return None if peak is None else (float(peak), f"GLUE step of {found[0]}{' R-drop' if rdrop else ''} at "
                                                       f"batch 32 x {row['width']}")

    def scaled(self, speedup: float) -> "StepTimes":
        """This table with every figure of work on the device `speedup` times faster than measured (a what-if;
        `device_work`)."""
        return self if speedup == 1.0 else self.device_work(lambda figure, ms: ms / speedup)

    def device_work(self, new: Callable[[tuple, float], float]) -> "StepTimes":
        """A copy of this table with each figure of work on the device replaced by `new(figure, value)`: the
        training steps (`("steps", backbone, batch)`, `("settings", key)`), the GLUE steps (`("glue", backbone,
        width, rdrop)`), the dev evaluation, the copy of the best model on the device and the top-k
        (`("evaluation", what)`) and the embedding rate (`("embedding",)`). The start-ups, a GLUE task's one-off
        work (tokenizing, warm-up steps, the graphs' captures) and the writes to disk are the host's, and kept."""
        table = copy.deepcopy(self.table)
        for key, rows in table["steps"].items():
            for batch, row in rows.items():
                row["ms"] = new(("steps", key, int(batch)), row["ms"])
        for key, row in (table.get("settings") or {}).items():
            row["ms"] = new(("settings", key), row["ms"])
        for key, row in (table.get("glue") or {}).items():
            for part, rdrop in (("", False), ("rdrop_", True)):
                if f"{part}ms" in row:
                    row[f"{part}ms"] = new(("glue", key, int(row["width"]), rdrop), row[f"{part}ms"])
                if f"{part}ms_by_width" in row:
                    row[f"{part}ms_by_width"] = {w: new(("glue", key, int(w), rdrop), ms)
                                                 for w, ms in row[f"{part}ms_by_width"].items()}
        for what in ("dev_ms", "best_snapshot_ms", "knn_s"):
            if what in table["evaluation"]:
                table["evaluation"][what] = new(("evaluation", what), table["evaluation"][what])
        if table.get("embedding"):
            table["embedding"]["ms_per_sentence"] = new(("embedding",), table["embedding"]["ms_per_sentence"])
        return StepTimes(self.name, table)

    def sharing(self, runs_per_gpu: int, shape: dict, batch: int, length: int,
                work: str = "simcse") -> tuple[float, Source | None]:
        """The measured gain of `runs_per_gpu` runs sharing one GPU over one steady run alone, for a run of
        `shape` at `batch` and `length` whose step does `work` (cost.step_setting's last part): the table's
        `sharing` row of a backbone of the same layers and sizes at the same batch, length and work; (1.0, None),
        no gain, where none was measured."""
        if runs_per_gpu == 1:
            return 1.0, None
        shapes = self.table["shapes"]
        for key, rows in (self.table.get("sharing") or {}).items():
            backbone, b, length_, work_ = key.split("/")
            row = rows.get(runs_per_gpu) or rows.get(str(runs_per_gpu))
            if row and backbone in shapes and same_work(shapes[backbone], shape) and \
                    (int(b[1:]), int(length_[1:]), work_) == (batch, length, work):
                return float(row["gain"]), source(f"{runs_per_gpu} runs sharing a GPU ({key})", "train", row)
        return 1.0, None

    def overhead(self, key: str) -> float | None:
        row = (self.table.get("overhead") or {}).get(key)
        return float(row["ratio"]) if row else None

    def overhead_at(self, key: str) -> str | None:
        row = (self.table.get("overhead") or {}).get(key)
        return row.get("at") if row else None

    def overhead_source(self, key: str) -> Source | None:
        row = (self.table.get("overhead") or {}).get(key)
        return source(f"{key}'s overhead", "train", row) if row else None

    def overhead_timing(self, method: str) -> str | None:
        """The key of the overhead that was measured on `method` itself (its row's `method`), whose ratio is then
        this method's whole step over SimCSE's; None when no row timed it."""
        return next((key for key, row in (self.table.get("overhead") or {}).items() if row.get("method") == method),
                    None)

    def evaluation(self, what: str) -> float:
        return float(self.table["evaluation"][what])

    def scalar_source(self, section: str, what: str) -> Source:
        """The provenance of a scalar figure (`evaluation`, `startup`), from the table's `measured`."""
        kind = {"knn_s": "index", "evaluation_s": "evaluation", "client_s": "evaluation"}.get(what, "train")
        return source(f"{section} {what}", kind, (self.table.get("measured") or {}).get(f"{section}.{what}"))

    def embedding_source(self) -> Source | None:
        row = self.table.get("embedding")
        return source("embedding rate", "evaluation", row) if row else None

    def glue_row(self, shape: dict) -> tuple[str, bool] | None:
        """(the `glue` row pricing a backbone of `shape`, whether it is of that backbone's layers and sizes):
        the measured backbone of the same shape, else bert-base's (scaled by FLOPs); None without any."""
        rows = self.table.get("glue") or {}
        if not rows:
            return None
        key = next((k for k in sorted(rows) if same_work(self.table["shapes"][k], shape)), None)
        return (key, True) if key else ("bert-base" if "bert-base" in rows else sorted(rows)[0], False)

    def glue_widths(self, shape: dict, rdrop: bool) -> dict[int, float]:
        """The measured GLUE steps (ms) by bucket width of the row pricing `shape`."""
        found = self.glue_row(shape)
        if found is None:
            return {}
        row = self.table["glue"][found[0]]
        by_width = row.get("rdrop_ms_by_width" if rdrop else "ms_by_width")
        if by_width is None and (row.get("rdrop_ms") if rdrop else row.get("ms")) is not None:
            by_width = {row["width"]: row["rdrop_ms" if rdrop else "ms"]}
        return {int(w): float(ms) for w, ms in (by_width or {}).items()}

    def glue_step(self, shape: dict, rdrop: bool, width: int | None = None) -> StepTime | None:
        """A GLUE fine-tuning step (batch 32) of pairs padded to `width` tokens (default: the widest measured
        bucket) on a backbone of `shape`, with R-drop or without: the measured backbone of the same shape, else
        bert-base's scaled by the FLOPs per token; None when the table has no GLUE step. An unmeasured width is
        extrapolated as the module docstring says; R-drop's step, where not measured, is two plain steps."""
        found = self.glue_row(shape)
        if found is None:
            return None
        measured, own = found
        row, basis = self.table["glue"][measured], []
        by_width = self.glue_widths(shape, rdrop)
        if not by_width:
            by_width = {w: 2 * ms for w, ms in self.glue_widths(shape, False).items()}
            basis.append("R-drop's step as two of the measured GLUE steps (not measured with R-drop)")
        width = int(width or row["width"])
        ms, how = _at_width(by_width, width)
        if how:
            basis.append(f"GLUE step of {measured} at width {width}: {how}")
        if not own:
            ref = self.table["shapes"][measured]
            r = flops_per_token(shape, width) / flops_per_token(ref, width)
            r = max(r, shape["layers"] / ref["layers"]) if r < 1 else r
            basis.append(f"GLUE step of {shape_key(shape)} from {measured}'s: by the ratio of their FLOPs per token "
                         f"(at least of their layers)")
            ms *= r
        return StepTime(float(ms), basis, [source(f"GLUE step {measured}{' R-drop' if rdrop else ''}", "glue", row)])

    def _glue_task_row(self, shape: dict) -> tuple[str | None, bool]:
        """(the `glue` row whose one-off seconds a task of `shape` takes, whether it is of that shape): its own
        row's where it has them, else bert-base's (else any row's)."""
        rows = self.table.get("glue") or {}
        own = next((k for k in sorted(rows) if same_work(self.table["shapes"][k], shape)
                    and "per_task_s" in rows[k]), None)
        if own:
            return own, True
        return next((k for k in ["bert-base", *sorted(rows)] if "per_task_s" in rows.get(k, {})), None), False

    def glue_task_s(self, shape: dict, rdrop: bool) -> float:
        """A GLUE task's one-off seconds (tokenizing, warm-up steps, the graphs' captures), as measured: a
        backbone's own, else bert-base's (`glue_task_basis` says so); 0 without any."""
        key, _ = self._glue_task_row(shape)
        row = (self.table.get("glue") or {}).get(key) or {}
        return float(row.get("rdrop_per_task_s" if rdrop else "per_task_s", row.get("per_task_s", 0.0)))

    def glue_task_basis(self, shape: dict) -> list[str]:
        key, own = self._glue_task_row(shape)
        return [] if own or key is None else [f"a GLUE task's one-off seconds as {key}'s (not measured for "
                                              f"{shape_key(shape)})"]

    def glue_task_source(self, shape: dict) -> Source | None:
        """The provenance of `glue_task_s`'s figure."""
        key, _ = self._glue_task_row(shape)
        return source(f"GLUE task one-off {key}", "glue", self.table["glue"][key]) if key else None


def _at_width(by_width: dict[int, float], width: int) -> tuple[float, str]:
    """A GLUE step at `width` from the measured widths: (ms, how it was extrapolated; "" when measured)."""
    if width in by_width:
        return by_width[width], ""
    widths = sorted(by_width)
    if len(widths) == 1:
        return by_width[widths[0]] * width / widths[0], f"in proportion to the tokens from the measured {widths[0]}"
    for w0, w1 in zip(widths, widths[1:]):
        if w0 < width < w1:
            return (by_width[w0] + (by_width[w1] - by_width[w0]) * (width - w0) / (w1 - w0),
                    f"linear between the measured widths {w0} and {w1}")
    if width < widths[0]:
        return by_width[widths[0]], f"the smallest measured width's ({widths[0]}: launch-bound, an upper bound)"
    return by_width[widths[-1]] * width / widths[-1], f"in proportion to the tokens from the widest measured " \
                                                      f"({widths[-1]})"


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
