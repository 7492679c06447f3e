"""What the GPU calibration must time, from the paper-scale bill: every distinct training setting of the whole
DAG (`sentaug.pricing.cost.step_setting`) with one representative run's resolved spec, the GLUE fine-tunings and
the paper-length SimCSE run with its projection. Written on a CPU machine (Snakemake resolves the DAG), read on
the GPU machine by benchmarks/gpu_calibrate.py and benchmarks/gpu_paper_run.py, which has no Snakemake.

    python benchmarks/paper_settings.py --out benchmarks/paper_settings.json
"""
from __future__ import annotations

import argparse
import json
import subprocess
from collections import defaultdict
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The paper-length run: unsupervised SimCSE on BERT-base, one epoch of wiki1m at batch 64 (15,625 steps), STS-B
# dev every 125 steps (SimCSE's recipe)
PAPER_RUN = {"backbone": "bert-base-uncased", "method": "simcse", "batch_size": 64, "steps": 15_625}


def collect(scale: str = "paper") -> dict:
    from sentaug.pricing import bill as bill_module
    from sentaug.pricing import cost

    bill = bill_module.compute_bill(["all"], scale)
    W, config = bill.workflow, bill.workflow.config
    settings, glue, paper_run = {}, defaultdict(lambda: {"jobs": 0, "hours": 0.0}), None
    for job in bill.jobs.values():
        if job.kind not in ("train", "glue"):
            continue
        w = dict(part.split("=", 1) for part in job.label.split(":", 1)[1].split(","))
        if job.kind == "train":
            spec = W.specs.run_spec(w["paper"], w["backbone"], w["method"], int(w["seed"]))
            key = cost.step_setting(spec)
            row = settings.setdefault(key, {"key": key, "backbone": spec["backbone"],
                                            "shape": cost.backbone_shape(config, spec["backbone"]),
                                            "method": spec["method"], "spec": spec, "runs": 0, "hours": 0.0,
                                            "steps": 0})
            row["runs"] += 1
            row["hours"] += job.projection.seconds / 3600
            row["steps"] += job.projection.steps
            if paper_run is None and (spec["backbone"], spec["method"], spec["batch_size"], job.projection.steps) == \
                    tuple(PAPER_RUN.values()):
                paper_run = {"spec": spec, "label": job.label, "projection_s": round(job.projection.seconds, 1),
                             "projection_parts": {k: round(v, 2) for k, v in job.projection.parts.items()},
                             "projection_basis": job.projection.basis}
        elif job.kind == "glue":
            options = w.get("options", "")
            g = glue[(w["backbone"], "rdrop" in options)]
            g.update(backbone=w["backbone"], shape=cost.backbone_shape(config, w["backbone"]), rdrop="rdrop" in options,
                     switch_case="switch_case" in options, tasks=list(W.evaluations.glue_tasks))
            g["jobs"] += 1
            g["hours"] += job.projection.seconds / 3600
    rows = sorted(settings.values(), key=lambda r: -r["hours"])
    return {"made": str(date.today()), "commit": _commit(), "scale": scale,
            "device_table": bill.times.name, "training": rows, "glue": sorted(glue.values(), key=lambda r: -r["hours"]),
            "paper_run": paper_run}


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "paper_settings.json")
    a = p.parse_args()
    data = collect()
    a.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    total = sum(r["hours"] for r in data["training"])
    print(f"{len(data['training'])} training settings ({total:.2f} h projected), {len(data['glue'])} GLUE "
          f"settings; paper-length run projected at {data['paper_run']['projection_s']} s -> {a.out}")


if __name__ == "__main__":
    main()
