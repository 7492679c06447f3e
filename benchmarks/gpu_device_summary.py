"""Gathers what benchmarks/gpu_device_check.sh wrote into the few files a device call brings back, and prints
the short table its reply ends with.

    python benchmarks/gpu_device_summary.py $OUT

Merges methods.json and compile.json into gpu_training.json, copies SDA Table 4 (.tex, .csv) and its runs'
`train_summary.json` files (sda_runs.json), and appends the ends of the stage logs to log.txt.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def gather(out: Path) -> dict:
    training = load(out / "gpu_training.json")
    for name in ("methods", "compile"):
        part = load(out / f"{name}.json")
        if name in part:
            training[name] = part[name]
        for key in ("section_seconds", "section_exit"):
            training.setdefault(key, {}).update(part.get(key, {}))
        (out / f"{name}.json").unlink(missing_ok=True)
    (out / "gpu_training.json").write_text(json.dumps(training, indent=2))
    table = ROOT / "results/tables/sda/table4"
    for suffix in (".tex", ".csv"):
        if table.with_suffix(suffix).exists():
            shutil.copyfile(table.with_suffix(suffix), out / f"sda_table4{suffix}")
    runs = {str(p.parent.relative_to(ROOT / "results/runs")): load(p)
            for p in sorted((ROOT / "results/runs/gpu").rglob("train_summary.json"))}
    for run in runs.values():      # the spec's identity is enough here (its file is in results/specs)
        spec = run.pop("spec", {})
        run["method"], run["backbone"], run["batch_size"] = spec.get("method"), spec.get("backbone"), \
            spec.get("batch_size")
    (out / "sda_runs.json").write_text(json.dumps(runs, indent=2))
    with open(out / "log.txt", "a") as log:
        for name in ("methods.log", "snakemake.log"):
            if (out / name).exists():
                lines = (out / name).read_text(errors="replace").splitlines()
                log.write(f"\n===== {name} (last 60 of {len(lines)} lines)\n" + "\n".join(lines[-60:]) + "\n")
                (out / name).unlink()
    tests = (out / "gpu_pytest.log").read_text(errors="replace").splitlines() if (out / "gpu_pytest.log").exists() \
        else []
    return {"training": training, "concurrency": load(out / "concurrency.json"), "runs": runs,
            "tests": tests[-1] if tests else None,
            "table": (out / "sda_table4.csv").read_text() if (out / "sda_table4.csv").exists() else None}


def short(got: dict) -> list[str]:
    t, lines = got["training"], []
    if got.get("tests"):
        lines.append(got["tests"])
    lines.append(f"matmul {t.get('matmul', {}).get('tflops')} TFLOP/s; sections {t.get('section_seconds')} "
                 f"exit {t.get('section_exit')}")
    for name, row in (t.get("step") or {}).items():
        ms = {k: row.get(k, {}).get("median_step_ms") for k in ("graph", "eager", "reference_fp32",
                                                                 "reference_autocast")}
        g = row.get("graph", {})
        lines.append(f"step {name}: ms {ms}; MFU {row.get('mfu')}; path {g.get('step_path', {}).get('path')} "
                     f"({g.get('step_path', {}).get('why', '')[:120]}); syncs/step {g.get('syncs_per_step')} "
                     f"({g.get('sync_mode')}); peak {g.get('peak_memory_gib')} GiB; error {g.get('error', '')[:200]}")
        a = row.get("agreement", {})
        lines.append(f"  agreement: rel loss {a.get('max_rel_loss_diff')}, dev {a.get('stsb_dev_graph')} vs "
                     f"{a.get('stsb_dev_eager')}, ok {a.get('within_tolerance')}; replays {row.get('replays')}")
    for m, row in (t.get("overhead") or {}).items():
        lines.append(f"overhead {m}: graph {row['graph'].get('median_step_ms')} ({row['graph'].get('overhead')}) "
                     f"{row['graph'].get('step_path', {}).get('path')}, eager {row['eager'].get('median_step_ms')} "
                     f"({row['eager'].get('overhead')}) {row['graph'].get('error', '')[:150]}")
    d = t.get("dev_eval") or {}
    lines.append(f"dev eval {d.get('ours', {}).get('median_ms')} ms; best write {d.get('best_checkpoint_write_ms')} ms,"
                 f" on device {d.get('best_snapshot_on_device_ms')} ms; projection {t.get('projection')}")
    m = t.get("methods") or {}
    lines.append(f"methods: {m.get('n')} run, all finite {m.get('all_finite')}, by path {m.get('by_path')}, "
                 f"failed {m.get('failed')}, skipped {m.get('skipped')}")
    for name, why in (m.get("eager_methods") or {}).items():
        lines.append(f"  eager {name}: {why[:160]}")
    for name in m.get("failed") or []:
        lines.append(f"  failed {name}: {str(m['methods'][name].get('error'))[:300]}")
    c = t.get("compile") or {}
    lines.append(f"compile {c.get('mode')}: {c.get('median_step_ms')} ms/step, wall {c.get('wall_s')} s "
                 f"{str(c.get('error', ''))[:200]}")
    for config, rows in got["concurrency"].items():
        if isinstance(rows, list):
            lines.append(f"concurrency {config}: " + "; ".join(
                f"k={r['k']} {r.get('aggregate_steps_per_s')} steps/s x{r.get('vs_one_run')} "
                f"peak {r.get('peak_memory_gib')} {r.get('skipped', '')}{r.get('errors') or ''}" for r in rows))
    lines.append(f"sda runs: " + "; ".join(f"{k}: {v.get('train_seconds')} s {v.get('step_path', {}).get('path')}"
                                           for k, v in got["runs"].items()))
    lines.append(f"sda table4: {got['table']}")
    return lines


if __name__ == "__main__":
    print("\n".join(short(gather(Path(sys.argv[1])))))
