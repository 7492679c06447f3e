"""A step-time table (`sentaug.pricing.step_times` documents its format) from the JSON files the GPU benchmarks
write: `benchmarks/gpu_training.py` (the SimCSE step, methods' overheads, the dev evaluation, the top-k),
`gpu_concurrency.py` (k runs per GPU), `gpu_calibrate.py` (paper settings and GLUE steps at their real shape),
`gpu_paper_run.py` (a paper-length run) and `gpu_glue_eval.py` (GLUE's step, the embedding rate, the start-up).

    python -m sentaug.pricing.calibration --device h200 A.json B.json ...   # -> resources/step_times/h200.yaml

Every figure keeps where it was measured: its file (`from`, relative to benchmarks/results), the commit of the code
that ran and the date (`commit`, `date`; `measured` for the scalar sections `evaluation` and `startup`), and the
table lists each file read with its commit and date (`sources`). The commit is, in this order: the `measured.yaml`
of the file's folder or a folder above it (a record written where the JSON's own is missing or wrong), the
calibration's `settings_commit`, the benchmark's `versions.commit` (not one of a tree with changes:
"<sha>+changes"); else `unknown`. The date likewise (`versions.date`), else `unknown`.

Where several files measure the same figure, the newest one is kept (the code it measured is the nearest to the
code that runs); among files of one date, the fastest (a repeat on the same code: the slower one was disturbed).
A gain of k runs sharing a GPU is kept only against a steady one-run baseline (`sharing_sections`).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from .. import config as sc
from ..io import atomic_path
from ..parts import compose
from .step_times import TABLES, shape_key

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"
# The methods the benchmarks time, as they declare them (gpu_training.py's `overhead` rows are config.yaml's methods)
CONFIG = Path(__file__).resolve().parents[3] / "config.yaml"
MEASURED = "measured.yaml"       # a folder's record of the commit and date its figures were measured at
UNKNOWN = "unknown"
# A one-run baseline is steady when its window starts this many steps in (past the capture and the warm-up
# steps) and ends before the final evaluation, as gpu_concurrency.py's `--skip 100` windows do since 23998d9.
# The runs of 2026-11-26/27 started theirs at step 20 (or 0) and ended them after the final evaluation and the
# best model's write: against such a slow baseline any packing looks like a gain.
STEADY_SKIP = 100

# Keys of a gpu_training.py `step` row that are not ways of running our trainer: the plain Hugging Face
# reference loops and the model timed alone. Every other entry with a median_step_ms is a path the trainer
# can take (graph, eager, and the older ours/ours_4d_mask): the fastest one is kept. Paths a run takes only when
# asked (`--compile`) are left out: the bill prices what a job runs by default.
NOT_A_TRAINER_PATH = ("reference", "model")
OPT_IN_PATHS = ("graph_compiled", "ours_compiled")
# Hub configurations of the backbones the benchmark times (random weights from these shapes).
BENCHMARK_SHAPES = {"base": {"layers": 12, "hidden": 768, "intermediate": 3072}}


def overhead_key(method: str, methods: dict) -> str | None:
    """The key under which the step-time table keeps the overhead that a timed method measures: of the method's
    parts with a measured overhead (`Part.overhead`), the one measured with all the others (`overhead_with`:
    CARDS times switch-case positives with retrieved negatives); None for a method of SimCSE's step's parts
    alone (`Part.simcse_step`), the base the others are taken against."""
    parts = compose(methods[method], method).parts
    keyed = [part for part in parts if part.overhead]
    if not keyed and all(part.simcse_step for part in parts):
        return None
    for part in keyed:
        if {other.overhead for other in keyed if other is not part} <= set(part.overhead_with):
            return part.overhead
    raise ValueError(f"benchmark method '{method}': no part of it stands for its measured overhead (its parts' "
                     f"overheads: {', '.join(p.overhead for p in keyed) or 'none'})")


def overhead_bases(rows: dict, methods: dict):
    """(path, SimCSE's ms on it) to take a method's overhead against: the rows of gpu_training.py's `overhead`
    section hold one timing per path (graph, eager) since issue 43 (the fastest SimCSE path: what jobs run),
    one timing alone before it (path None). SimCSE's row: the method that `overhead_key` finds to be the base."""
    simcse = next((row for method, row in rows.items() if overhead_key(method, methods) is None), {})
    if simcse.get("median_step_ms"):
        return [(None, simcse["median_step_ms"])]
    paths = {k: v["median_step_ms"] for k, v in simcse.items() if isinstance(v, dict) and v.get("median_step_ms")
             and k not in OPT_IN_PATHS}
    return [min(((k, ms) for k, ms in paths.items()), key=lambda kv: kv[1])] if paths else []


class _Readings:
    """What the benchmark files measured, section by section, the fastest of several files kept."""

    def __init__(self):
        self.steps, self.overhead, self.evaluation, self.settings = {}, {}, {}, {}
        self.glue, self.glue_shapes, self.embedding, self.startup = {}, {}, {}, {}
        self.glue_peaks: dict[tuple[str, str], tuple[str, float]] = {}    # (backbone, key) -> (date, GiB)
        self.measured, self.sources = {}, {}            # scalar figures' provenance; every file read
        self.methods = sc.load_yaml(CONFIG)["methods"]  # what the benchmarks' timed methods are made of
        self.concurrency: list[dict] = []               # gpu_concurrency.py's rows, paired in `sharing_sections`
        self.lengths, self.devices = set(), set()

    def read(self, path: Path) -> None:
        data = json.loads(path.read_text(encoding="utf-8"))
        args, name = data.get("args", {}), source_name(path)
        at = measured_at(path, data)
        self.sources[name] = at
        if data.get("versions", {}).get("gpu"):
            self.devices.add(data["versions"]["gpu"])
        size = args.get("size", "base")
        tiny = args.get("tiny") in (True, "True")
        where = {"from": name, **at}
        self.step_section(data.get("step") or {}, args, size, where)
        self.overhead_section(data.get("overhead") or {}, args, size, where)
        self.dev_section(data.get("dev_eval"), where)
        self.concurrency_rows(data, args, size, where)
        if "settings" in data:      # gpu_calibrate.py: paper-scale settings and GLUE steps at their real shape
            self.settings_section(data["settings"] or {}, tiny, where)
            self.calibrated_glue_section(data.get("glue") or {}, tiny, where)
        else:
            glue_eval_sections(data, where, f"bert-{size}", self.glue, self.embedding, self.startup, self.measured)
        if data.get("startup_and_end_s") is not None and data.get("returncode") == 0:    # gpu_paper_run.py
            self.paper_run(data, where)
        knn = data.get("knn")
        if knn and knn.get("torch_s"):
            self.scalar("evaluation", "knn_s", knn["torch_s"], where, also={"knn_rows": knn["n"]})

    def scalar(self, section: str, key: str, value: float, where: dict, lowest: bool = True, also=None) -> None:
        """`value` as `section`'s figure `key` unless one measured later (or on the same date, lower; with
        `lowest` False, higher) is there; `also`: figures that go with it."""
        slot, record = getattr(self, section), self.measured.get(f"{section}.{key}")
        if key in slot and record is not None:
            newer, older = (_d(where["date"]), value), (_d(record["date"]), slot[key])
            if newer[0] < older[0] or (newer[0] == older[0] and (value >= slot[key] if lowest else value <= slot[key])):
                return
        slot[key] = value
        slot.update(also or {})
        self.measured[f"{section}.{key}"] = dict(where)

    def step_section(self, rows: dict, args: dict, size: str, where: dict) -> None:
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
                      {"ms": round(paths_ms[fastest], 3), "path": fastest, **where}, "ms")

    def overhead_section(self, rows: dict, args: dict, size: str, where: dict) -> None:
        """gpu_training.py's methods: each one's step over SimCSE's on the same path, under the key of the part
        whose overhead it measures (`overhead_key`), with the method it timed."""
        for path_name, base in overhead_bases(rows, self.methods):
            self.lengths.add(int(args.get("length", 32)))
            for method, row in rows.items():
                ms = (row.get(path_name) or {}).get("median_step_ms") if path_name else row.get("median_step_ms")
                key = overhead_key(method, self.methods)
                if key is not None and ms:
                    _keep(self.overhead, key, {"ratio": round(ms / base, 3), "at": f"bert-{size}/64", "method": method,
                                               **({"path": path_name} if path_name else {}), **where}, "ratio")

    def dev_section(self, dev: dict | None, where: dict) -> None:
        """gpu_training.py's dev evaluation and best-model writes (the device copy of the best model: since issue
        43)."""
        if not dev:
            return
        for key, value in (("dev_ms", dev["ours"]["median_ms"]), ("best_write_ms", dev["best_checkpoint_write_ms"]),
                           ("best_snapshot_ms", dev.get("best_snapshot_on_device_ms"))):
            if value is not None:
                self.scalar("evaluation", key, value, where)
        self.evaluation["dev_sentences"] = dev["n_sentences"]

    def concurrency_rows(self, data: dict, args: dict, size: str, where: dict) -> None:
        """gpu_concurrency.py's rows (k runs at once on one GPU), kept to be paired in `sharing_sections`."""
        for config, rows_k in data.items():
            if "/" in config and isinstance(rows_k, list):
                for r in rows_k:
                    if r.get("k") and r.get("aggregate_steps_per_s") and not r.get("errors"):
                        self.concurrency.append({**r, "config": config, "size": size, "where": where,
                                                 "skip": int(args.get("skip") or 0), "mps": args.get("mps") in
                                                 (True, "True"), "length": int(args.get("length") or 32)})

    def sharing_sections(self) -> dict:
        """The measured gain of k runs sharing one GPU, per shape: k runs' aggregate steps per second over one
        steady run's, the same config (arch/batch:steps) and window in files of one folder (one device session).
        Only a steady baseline counts (STEADY_SKIP): {"<arch>-<size>/b<batch>/L<length>/simcse": {k: row}}."""
        out = {}
        for one in (r for r in self.concurrency if r["k"] == 1 and r["skip"] >= STEADY_SKIP):
            for many in self.concurrency:
                if many["k"] > 1 and (many["config"], many["skip"], many["length"]) == \
                        (one["config"], one["skip"], one["length"]) and \
                        _session(many["where"]["from"]) == _session(one["where"]["from"]):
                    arch, batch = one["config"].split(":")[0].split("/")
                    key = f"{arch}-{one['size']}/b{batch}/L{one['length']}/simcse"
                    gain = round(many["aggregate_steps_per_s"] / one["aggregate_steps_per_s"], 2)
                    row = {"gain": gain, "mps": many["mps"], "steps_per_s": many["aggregate_steps_per_s"],
                           "one_steady_run_steps_per_s": one["aggregate_steps_per_s"], "window_from_step": one["skip"],
                           "from": f"{many['where']['from']} / {one['where']['from']}",
                           "commit": many["where"]["commit"], "date": many["where"]["date"]}
                    slot = out.setdefault(key, {})
                    old = slot.get(many["k"])
                    if old is None or (_d(row["date"]), gain) > (_d(old["date"]), old["gain"]):
                        slot[many["k"]] = row
        return dict(sorted(out.items()))

    def settings_section(self, rows: dict, tiny: bool, where: dict) -> None:
        """gpu_calibrate.py: the paper-scale training settings at their real shape (not its tiny test runs)."""
        for key, row in rows.items():
            if row.get("ms") and not tiny:
                peak = {"peak_memory_gib": row["peak_memory_gib"]} if row.get("peak_memory_gib") else {}
                _keep(self.settings, key, {"ms": round(row["ms"], 3), "path": row["path"], **peak, **where}, "ms")

    def calibrated_glue_section(self, rows: dict, tiny: bool, where: dict) -> None:
        """gpu_calibrate.py: GLUE steps of the backbones at their real shape (batch 32, the widest width), and
        their peak memory (`glue_peaks`: the newest, a step that was not timed included: it reached its peak)."""
        for row in rows.values():
            if row.get("peak_memory_gib") and row.get("shape") and not tiny:
                slot = (shape_key(row["shape"]), f"{'rdrop_' if row['rdrop'] else ''}peak_memory_gib")
                if slot not in self.glue_peaks or _d(where["date"]) > _d(self.glue_peaks[slot][0]):
                    self.glue_peaks[slot] = (where["date"], row["peak_memory_gib"])
            if row.get("ms") and row.get("shape") and not tiny:
                key = shape_key(row["shape"])
                self.glue_shapes[key] = {k: row["shape"][k] for k in ("arch", "layers", "hidden", "intermediate")}
                old = self.glue.get(key)
                if old is not None and _d(old["date"]) > _d(where["date"]):
                    continue
                slot = self.glue[key] = old if old is not None and old["date"] == where["date"] else \
                    {"width": row["width"], **where}
                part = "rdrop_ms" if row["rdrop"] else "ms"
                slot[part] = round(row["ms"], 3)
                slot[f"{'rdrop_' if row['rdrop'] else ''}ms_by_width"] = {int(row["width"]): round(row["ms"], 3)}
                slot.setdefault("path", row.get("path"))

    def paper_run(self, data: dict, where: dict) -> None:
        """gpu_paper_run.py: a paper-length run's start-up and end, its dev evaluations and checkpoints."""
        self.scalar("startup", "training_s", data["startup_and_end_s"], where, lowest=False)
        parts = run_parts(data["log_elapsed"], data.get("eval_steps", 125), data.get("save_steps", 5000))
        self.scalar("evaluation", "dev_ms", parts["dev_ms"], where)     # the trainer's own dev evaluation
        if parts["checkpoints"]:
            self.scalar("evaluation", "checkpoint_ms", parts["checkpoint_ms"], where)

    def table(self, paths, device_name: str | None, source: str | None) -> dict:
        if len(self.lengths) > 1:
            raise ValueError(f"the benchmark files time different sequence lengths ({sorted(self.lengths)}): one "
                             f"table holds one length")
        if not self.steps:
            raise ValueError(f"no `step` section in {', '.join(map(str, paths))}: nothing to fill a table with")
        missing = {"dev_ms", "best_write_ms", "dev_sentences", "knn_s", "knn_rows"} - set(self.evaluation)
        if missing:
            raise ValueError(f"the benchmark files lack {', '.join(sorted(missing))} (sections dev_eval and knn)")
        for (key, part), (_, peak) in self.glue_peaks.items():
            if key in self.glue:
                self.glue[key][part] = peak
        shapes = {key: _benchmark_shape(key) for key in self.steps}
        shapes.update({key: self.glue_shapes.get(key) or _benchmark_shape(key) for key in self.glue})
        optional = {"sharing": self.sharing_sections(), "glue": dict(sorted(self.glue.items())),
                    "embedding": self.embedding, "startup": self.startup,
                    "settings": dict(sorted(self.settings.items()))}
        return {"device": device_name or ", ".join(sorted(self.devices)) or "unknown",
                "source": source or "benchmarks/gpu_training.py: " + ", ".join(Path(p).name for p in paths),
                "sources": dict(sorted(self.sources.items())),
                "length": self.lengths.pop(), "shapes": shapes,
                "steps": {k: dict(sorted(v.items())) for k, v in sorted(self.steps.items())},
                "overhead": dict(sorted(self.overhead.items())), "evaluation": self.evaluation,
                **{key: value for key, value in optional.items() if value},
                "measured": dict(sorted(self.measured.items()))}


def _keep(slot: dict, key, value: dict, by: str) -> None:
    """`value` in `slot[key]` unless what is there was measured later, or on the same date and is lower `by` its
    measure."""
    if key not in slot or _d(value["date"]) > _d(slot[key]["date"]) or \
            (value["date"] == slot[key]["date"] and value[by] < slot[key][by]):
        slot[key] = value


def _d(date: str) -> str:
    """A date to compare by: an unknown one is the oldest."""
    return "" if date == UNKNOWN else date


def source_name(path: Path) -> str:
    """A benchmark file as the table names it: its path under benchmarks/results, else its name."""
    try:
        return Path(path).resolve().relative_to(RESULTS).as_posix()
    except ValueError:
        return Path(path).name


def _session(name: str) -> str:
    """The device session (folder under benchmarks/results) of a file the table names."""
    return name.split("/", 1)[0] if "/" in name else ""


def measured_at(path: Path, data: dict) -> dict:
    """{commit, date} of the code a benchmark file measured (module docstring: the order of the records read)."""
    for folder in Path(path).resolve().parents:
        record = folder / MEASURED
        if record.is_file():
            found = yaml.safe_load(record.read_text(encoding="utf-8")) or {}
            return {"commit": str(found.get("commit", UNKNOWN)), "date": str(found.get("date", UNKNOWN))}
        if folder == RESULTS or folder == folder.parent:
            break
    versions = data.get("versions") or {}
    commit = data.get("settings_commit") or versions.get("commit") or UNKNOWN
    if "+" in str(commit):          # a tree with changes: not the code of any commit
        commit = UNKNOWN
    return {"commit": str(commit)[:12] if commit != UNKNOWN else UNKNOWN,
            "date": str(versions.get("date", UNKNOWN))[:10]}


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


def glue_eval_sections(data: dict, where: dict, backbone: str, glue: dict, embedding: dict, startup: dict,
                       measured: dict) -> None:
    """The sections of a `benchmarks/gpu_glue_eval.py` JSON, into the table's `glue`, `embedding` and `startup`
    (the newest of several files; of one date, the fastest): a GLUE step per bucket width (its median over the
    graph-replayed steps of that width) and at the widest, without and with R-drop, and a task's one-off seconds
    (its wall time beyond its steady steps, each at its width's median: the warm-up steps and captures of every
    bucket); the bf16 embedding rate; the slower of an evaluation job's two start-ups (and the start-up of a
    job whose command an evaluation service runs: `client_s`)."""
    g = data.get("glue") or {}
    row = {}
    for part, prefix in (("rdrop_off", ""), ("rdrop_on", "rdrop_")):
        new = (g.get(part) or {}).get("new") or {}
        by_width = {int(w): ms for w, ms in (new.get("median_ms_by_width") or {}).items() if ms is not None}
        if by_width:
            width = max(by_width)
            counts = {int(w): n for w, n in (new.get("steps_by_width") or {}).items()}
            once = new["one_off_s"]
            if new.get("wall_s") is not None and set(counts) == set(by_width):
                once = round(new["wall_s"] - sum(counts[w] * by_width[w] for w in by_width) / 1000, 2)
            row.update({f"{prefix}ms": by_width[width], "width": width, f"{prefix}per_task_s": once,
                        f"{prefix}ms_by_width": dict(sorted(by_width.items()))})
            row.setdefault("path", (new.get("step_path") or {}).get("path"))
    old = glue.get(backbone, {})
    if "ms" in row and ("ms" not in old or (_d(where["date"]), -row["ms"]) > (_d(old["date"]), -old["ms"])):
        glue[backbone] = {**row, "task": g.get("task"), **where}
    bf16 = (data.get("embedding") or {}).get("bf16") or {}
    if bf16.get("sentences_per_s"):
        ms = round(1000 / bf16["sentences_per_s"], 4)
        if "ms_per_sentence" not in embedding or \
                (_d(where["date"]), -ms) > (_d(embedding["date"]), -embedding["ms_per_sentence"]):
            embedding.clear()
            embedding.update({"ms_per_sentence": ms, "precision": "bf16", "backbone": backbone, **where})
    runs = (data.get("startup") or {}).get(backbone) or {}
    for figure, field in (("evaluation_s", "total_s"), ("client_s", "client_total_s")):
        seconds = [r[field] for r in runs.values() if isinstance(r, dict) and r.get(field)]
        record = measured.get(f"startup.{figure}")
        if seconds and (record is None or (_d(where["date"]), -max(seconds)) > (_d(record["date"]), -startup[figure])):
            startup[figure] = round(max(seconds), 2)
            measured[f"startup.{figure}"] = dict(where)


HEADER = """\
# Training step times of one device, read by `sentaug cost` and by the runtime each training job asks SLURM
# for (sentaug.pricing.step_times documents the format and how unmeasured settings are extrapolated).
# Written by `python -m sentaug.pricing.calibration --device {name} <benchmarks' JSON files>`.
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
