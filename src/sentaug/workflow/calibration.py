"""A step-time table (`sentaug.workflow.step_times` documents its format) from the JSON files the GPU benchmarks
write: `benchmarks/gpu_training.py` (the SimCSE step, methods' overheads, the dev evaluation, the top-k),
`gpu_concurrency.py` (k runs per GPU), `gpu_calibrate.py` (paper settings and GLUE steps at their real shape),
`gpu_paper_run.py` (a paper-length run) and `gpu_glue_eval.py` (GLUE's step, the embedding rate, the start-up).

    python -m sentaug.workflow.calibration --device h200 A.json B.json ...   # -> resources/step_times/h200.yaml
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import yaml

from ..io import atomic_path
from .step_times import TABLES, shape_key

# Keys of a gpu_training.py `step` row that are not ways of running our trainer: the plain Hugging Face
# reference loops and the model timed alone. Every other entry with a median_step_ms is a path the trainer
# can take (graph, eager, and the older ours/ours_4d_mask): the fastest one is kept. Paths a run takes only when
# asked (`--compile`) are left out: the bill prices what a job runs by default.
NOT_A_TRAINER_PATH = ("reference", "model")
OPT_IN_PATHS = ("graph_compiled", "ours_compiled")
# Hub configurations of the backbones the benchmark times (random weights from these shapes).
BENCHMARK_SHAPES = {"base": {"layers": 12, "hidden": 768, "intermediate": 3072}}


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


class _Readings:
    """What the benchmark files measured, section by section, the fastest of several files kept."""

    def __init__(self):
        self.steps, self.overhead, self.evaluation, self.sharing, self.settings = {}, {}, {}, {}, {}
        self.glue, self.glue_shapes, self.embedding, self.startup = {}, {}, {}, {}
        self.lengths, self.devices = set(), set()

    def read(self, path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        args, name = data.get("args", {}), path.name
        if data.get("versions", {}).get("gpu"):
            self.devices.add(data["versions"]["gpu"])
        size = args.get("size", "base")
        tiny = args.get("tiny") in (True, "True")
        self.step_section(data.get("step") or {}, args, size, name)
        self.overhead_section(data.get("overhead") or {}, args, size, name)
        self.dev_section(data.get("dev_eval"))
        self.sharing_sections(data)
        if "settings" in data:      # gpu_calibrate.py: paper-scale settings and GLUE steps at their real shape
            self.settings_section(data["settings"] or {}, tiny, name)
            self.calibrated_glue_section(data.get("glue") or {}, tiny, name)
        else:
            glue_eval_sections(data, name, f"bert-{size}", self.glue, self.embedding, self.startup)
        if data.get("startup_and_end_s") is not None and data.get("returncode") == 0:    # gpu_paper_run.py
            self.paper_run(data)
        knn = data.get("knn")
        if knn and knn.get("torch_s") and knn["torch_s"] < self.evaluation.get("knn_s", math.inf):
            self.evaluation.update({"knn_s": knn["torch_s"], "knn_rows": knn["n"]})

    def step_section(self, rows: dict, args: dict, size: str, name: str) -> None:
        """gpu_training.py's SimCSE steps: per (backbone, batch) the fastest path the trainer takes by default."""
        for setting, row in rows.items():
            arch, batch = setting.split("/b")
            self.lengths.add(int(args.get("length", 32)))
            paths_ms = {k: v["median_step_ms"] for k, v in row.items() if isinstance(v, dict)
                        and v.get("median_step_ms") is not None and not k.startswith(NOT_A_TRAINER_PATH)
                        and k not in OPT_IN_PATHS}
            if paths_ms:
                fastest = min(paths_ms, key=paths_ms.get)
                _keep(self.steps.setdefault(f"{arch}-{size}", {}), int(batch),
                      {"ms": round(paths_ms[fastest], 3), "path": fastest, "from": name}, "ms")

    def overhead_section(self, rows: dict, args: dict, size: str, name: str) -> None:
        """gpu_training.py's methods: each one's step over SimCSE's on the same path."""
        for path_name, base in overhead_bases(rows):
            self.lengths.add(int(args.get("length", 32)))
            for method, row in rows.items():
                ms = (row.get(path_name) or {}).get("median_step_ms") if path_name else row.get("median_step_ms")
                if method != "simcse" and ms:
                    _keep(self.overhead, method, {"ratio": round(ms / base, 3), "at": f"bert-{size}/64", "from": name,
                                                  **({"path": path_name} if path_name else {})}, "ratio")

    def dev_section(self, dev: dict | None) -> None:
        """gpu_training.py's dev evaluation and best-model writes (the device copy of the best model: since issue
        43)."""
        if not dev:
            return
        for key, value in (("dev_ms", dev["ours"]["median_ms"]), ("best_write_ms", dev["best_checkpoint_write_ms"]),
                           ("best_snapshot_ms", dev.get("best_snapshot_on_device_ms"))):
            if value is not None:
                self.evaluation[key] = min(self.evaluation.get(key, math.inf), value)
        self.evaluation["dev_sentences"] = dev["n_sentences"]

    def sharing_sections(self, data: dict) -> None:
        """gpu_concurrency.py: k runs sharing one GPU, as runs per hour over one run's."""
        for config, rows_k in data.items():
            if "/" in config and isinstance(rows_k, list) and rows_k and rows_k[0].get("k") == 1:
                alone = sum(rows_k[0].get("train_seconds") or [0]) or None
                for r in rows_k[1:]:
                    if alone and r.get("train_seconds") and len(r["train_seconds"]) == r["k"]:
                        gain = r["k"] * alone / (sum(r["train_seconds"]) / r["k"])
                        self.sharing[r["k"]] = max(self.sharing.get(r["k"], 0.0), round(gain, 2))

    def settings_section(self, rows: dict, tiny: bool, name: str) -> None:
        """gpu_calibrate.py: the paper-scale training settings at their real shape (not its tiny test runs)."""
        for key, row in rows.items():
            if row.get("ms") and not tiny:
                _keep(self.settings, key, {"ms": round(row["ms"], 3), "path": row["path"], "from": name}, "ms")

    def calibrated_glue_section(self, rows: dict, tiny: bool, name: str) -> None:
        """gpu_calibrate.py: GLUE steps of the backbones at their real shape."""
        for row in rows.values():
            if row.get("ms") and row.get("shape") and not tiny:
                key = shape_key(row["shape"])
                self.glue_shapes[key] = {k: row["shape"][k] for k in ("arch", "layers", "hidden", "intermediate")}
                slot = self.glue.setdefault(key, {"width": row["width"], "from": name})
                slot["rdrop_ms" if row["rdrop"] else "ms"] = round(row["ms"], 3)
                slot.setdefault("path", row.get("path"))

    def paper_run(self, data: dict) -> None:
        """gpu_paper_run.py: a paper-length run's start-up and end, its dev evaluations and checkpoints."""
        self.startup["training_s"] = max(self.startup.get("training_s", 0.0), data["startup_and_end_s"])
        parts = run_parts(data["log_elapsed"], data.get("eval_steps", 125), data.get("save_steps", 5000))
        if parts["dev_ms"] < self.evaluation.get("dev_ms", math.inf):     # the trainer's own dev evaluation
            self.evaluation["dev_ms"] = parts["dev_ms"]
        if parts["checkpoints"]:
            self.evaluation["checkpoint_ms"] = parts["checkpoint_ms"]

    def table(self, paths, device_name: str | None, source: str | None) -> dict:
        if len(self.lengths) > 1:
            raise ValueError(f"the benchmark files time different sequence lengths ({sorted(self.lengths)}): one "
                             f"table holds one length")
        if not self.steps:
            raise ValueError(f"no `step` section in {', '.join(map(str, paths))}: nothing to fill a table with")
        missing = {"dev_ms", "best_write_ms", "dev_sentences", "knn_s", "knn_rows"} - set(self.evaluation)
        if missing:
            raise ValueError(f"the benchmark files lack {', '.join(sorted(missing))} (sections dev_eval and knn)")
        shapes = {key: _benchmark_shape(key) for key in self.steps}
        shapes.update({key: self.glue_shapes.get(key) or _benchmark_shape(key) for key in self.glue})
        optional = {"sharing": dict(sorted(self.sharing.items())), "glue": dict(sorted(self.glue.items())),
                    "embedding": self.embedding, "startup": self.startup,
                    "settings": dict(sorted(self.settings.items()))}
        return {"device": device_name or ", ".join(sorted(self.devices)) or "unknown",
                "source": source or "benchmarks/gpu_training.py: " + ", ".join(Path(p).name for p in paths),
                "length": self.lengths.pop(), "shapes": shapes,
                "steps": {k: dict(sorted(v.items())) for k, v in sorted(self.steps.items())},
                "overhead": dict(sorted(self.overhead.items())), "evaluation": self.evaluation,
                **{key: value for key, value in optional.items() if value}}


def _keep(slot: dict, key, value: dict, by: str) -> None:
    """`value` in `slot[key]` unless what is there is lower `by` its measure."""
    if key not in slot or value[by] < slot[key][by]:
        slot[key] = value


def _benchmark_shape(key: str) -> dict:
    """The shape of a table key the benchmarks time (`bert-base`)."""
    return {"arch": key.split("-")[0], **BENCHMARK_SHAPES[key.split("-", 1)[1]]}


def table_from_benchmark(paths, device_name: str | None = None, source: str | None = None) -> dict:
    """A step-time table from the JSON files `benchmarks/gpu_training.py` wrote (a_step.json, d_overhead.json,
    b_dev.json, c_knn.json, ...; any of its sections, in any files), and those of gpu_concurrency.py,
    gpu_calibrate.py, gpu_paper_run.py and gpu_glue_eval.py. Per (backbone, batch) the fastest trainer path of
    every file is kept, and which path and file it was; a method's overhead is the lowest measured ratio to
    SimCSE's step in the same file; evaluation times are the lowest medians."""
    readings = _Readings()
    for path in map(Path, paths):
        readings.read(path)
    return readings.table(paths, device_name, source)


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
# Written by `python -m sentaug.workflow.calibration --device {name} <benchmarks' JSON files>`.
"""


def write_table(table: dict, name: str, folder: Path = TABLES) -> Path:
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
