"""Running the workflow from tests: one Snakemake command line, and the demo-scale build of SDA Tables 3 and 4
that several test modules share (built once per session: tests/workflow/test_workflow.py checks it, tests/workflow/test_slurm.py
compares the cluster's build with it)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# Training cut to a few steps; everything else is the real demo workflow.
DEMO_TRAIN = {"max_steps": 6, "batch_size": 16, "learning_rate": 1e-4, "eval_steps": 3}


def snakemake_env(pythonpath=()) -> dict:
    """The environment of a test's Snakemake run: no mirror, and `pythonpath` (e.g. a plugin installed into a
    temporary folder) in front of PYTHONPATH, which its jobs inherit."""
    env = dict(os.environ)
    env.pop("SENTAUG_MIRROR", None)  # demo scale reads only bundled data
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    return env


def snakemake(*args, cwd=ROOT, timeout=None, pythonpath=()):
    cmd = [sys.executable, "-m", "snakemake", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=snakemake_env(pythonpath),
                          timeout=timeout)


def demo_override(path: Path, results: Path, **extra) -> Path:
    """A config override: results under `results`, the demo scale's training cut to DEMO_TRAIN, seeds 1 and 2
    (and `extra` merged into the demo scale)."""
    demo = {"train": dict(DEMO_TRAIN), "seeds": [1, 2], **extra}   # two seeds: tables show mean ± sd
    path.write_text(yaml.safe_dump({"results": str(results), "scales": {"demo": demo}}))
    return path


def demo_table_targets(results: Path) -> list[str]:
    return [f"{results}/tables/sda/table4.tex", f"{results}/tables/sda/table3.tex"]


def build_demo_tables(tmp: Path):
    """SDA Tables 4 and 3 at demo scale, built locally (2 cores): (results, override, targets)."""
    results = tmp / "results"
    override = demo_override(tmp / "override.yaml", results)
    targets = demo_table_targets(results)
    run = snakemake(*targets, "--cores", "2", "--configfile", "config.yaml", str(override))
    assert run.returncode == 0, run.stderr[-4000:]
    return results, override, targets


def job_counts(dry_run_output: str) -> dict[str, int]:
    """Rule -> job count from the 'Job stats' table of a dry run."""
    counts, table = {}, False
    for line in dry_run_output.splitlines():
        if line.startswith("job ") and "count" in line:
            table = True
            continue
        if table:
            m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
            if m and m.group(1) != "total":
                counts[m.group(1)] = int(m.group(2))
            elif line.strip().startswith("total"):
                break
    return counts


# A run long enough to be interrupted on purpose (kills, requeue): checkpoints every 3 steps, one thread (the
# bit-identical comparisons need the same thread count everywhere: OMP_NUM_THREADS=LONG_THREADS).
LONG_TRAIN = {"max_steps": 24, "batch_size": 16, "learning_rate": 1e-4, "eval_steps": 12, "save_steps": 3}
LONG_THREADS = 1
LONG_RUN = "runs/demo/shared/tiny-bert/simcse/seed1"


def long_override(path: Path, results: Path, **extra) -> Path:
    demo = {"train": dict(LONG_TRAIN), "train_resources": {"threads": LONG_THREADS}, **extra}
    path.write_text(yaml.safe_dump({"results": str(results), "scales": {"demo": demo}}))
    return path


def build_long_reference(tmp: Path):
    """The LONG_TRAIN run (simcse, tiny-bert, seed 1) trained locally without interruption: (results, run dir)."""
    results = tmp / "results"
    override = long_override(tmp / "override.yaml", results)
    run = snakemake(str(results / LONG_RUN), "--cores", "2", "--configfile", "config.yaml", str(override))
    assert run.returncode == 0, run.stderr[-4000:]
    return results, results / LONG_RUN


def isolated_workdir(tmp: Path) -> Path:
    """A working directory of its own (its own .snakemake: locks a killed run leaves behind stay there),
    whose workflow files are links to this checkout's."""
    wd = tmp / "workdir"
    wd.mkdir()
    for name in ("Snakefile", "rules", "config.yaml", "papers", "src", "profiles", "envs"):
        (wd / name).symlink_to(ROOT / name)
    return wd


def checkpoint_steps(partial: Path) -> list[int]:
    """Steps of the complete checkpoints in a run's `.partial` folder."""
    folder = partial / "checkpoints"
    if not folder.is_dir():
        return []
    return sorted(int(p.name[4:]) for p in folder.iterdir() if p.name.startswith("step") and p.name[4:].isdigit())


def differing_tensors(a: Path, b: Path) -> list[str]:
    """Names of the tensors that differ (bit for bit) between two runs' model.safetensors."""
    import torch
    from safetensors.torch import load_file

    x, y = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    assert x.keys() == y.keys()
    return [k for k in x if not torch.equal(x[k], y[k])]
