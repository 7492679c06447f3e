"""Provenance of a table or figure: the runs behind it (device, library versions, training time), the versions
that evaluated them, and content hashes of the data folders they read.

Everything is read from the result files themselves: an evaluation JSON names its model folder (`model`), what
that model was made from (`model_source`: a hub id and its pinned commit, ...), its data root (`data`) and its
versions; a run folder holds train_summary.json (spec, device, versions, seconds, `backbone_source`).
A data root's digest is the sha256 over the sorted (relative path, file sha256) pairs of each of its top-level
folders (sts/, sick/, wiki/, ...), so two builds that read the same bytes show the same digests.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from collections import Counter
from pathlib import Path

from ..io import folder_digest, sha256_file


def data_digests(root: str | Path, folders: set[str] | None = None) -> dict:
    """The digest of each top-level folder of a data root (laid out like ../shared/data) that `folders` names
    (all of them when None)."""
    root = Path(root)
    if root.is_file():
        return {root.name: {"sha256": sha256_file(root), "files": 1, "bytes": root.stat().st_size}}
    if not root.is_dir():
        return {}
    return {d.name: folder_digest(d) for d in sorted(root.iterdir()) if d.is_dir() and not d.name.startswith(".")
            and (folders is None or d.name in folders)}


def record_folders(result: dict) -> set[str] | None:
    """The top-level data folders a result record read: its suite's or its data statistic's (by record, where
    `Workflow.folders_read` answers by result path, before the records exist). None where the record
    does not say (then every folder of its root is digested). Without it a page's provenance would change with
    whatever else happened to be downloaded into the root by the time it was rendered."""
    from ..data.stats import STATS_DATA
    from ..evaluate.suites import folders as suite_folders

    folders = suite_folders(result.get("suite")) or STATS_DATA.get(result.get("stats"))
    if not folders or result.get("suite") == "nli":     # nli also reads the triplet sets its command names
        return None
    return {f.split("/")[0] for f in folders}


def environment() -> dict:
    """Versions (of the installed distributions, read without importing them) and machine of the process
    rendering the report."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {"python": platform.python_version()}
    for name in ("torch", "transformers", "numpy", "scipy", "pandas", "matplotlib", "scikit-learn", "snakemake",
                 "sentaug"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:      # not installed in this environment: say so rather than fail
            versions[name] = "not installed"
    return {"versions": versions, "platform": platform.platform(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "executable": sys.executable}


# The columns of a table's CSV that say when, where and from which commit it was built (docs/results.md reads
# them); they differ between two builds of the same numbers.
STAMP_COLUMNS = ("built", "machine", "commit")


def build_stamp() -> dict:
    """When (UTC), on what machine and from which commit of this checkout an output is being built."""
    return {"built": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(), "commit": commit()}


def machine() -> str:
    """The machine in words: system, architecture, CPU model and count (no host name)."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs" + (f" ({model})" if model else "")


def commit(src: Path = Path(__file__).resolve().parents[3]) -> str:
    """The git commit of the checkout this package runs from (`-dirty` with uncommitted changes to tracked
    files); outside a git checkout (an unpacked release) the release's version as its tag names it, `v0.1.0`."""
    def git(*args):
        return subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True, timeout=30)

    if not (src / ".git").exists():     # not a checkout (an unpacked release inside another repository too)
        return release_tag()
    try:
        head = git("rev-parse", "--short=12", "HEAD")
        if head.returncode != 0:
            return release_tag()
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return release_tag()
    return head.stdout.strip() + ("-dirty" if dirty else "")


def release_tag() -> str:
    """This package's version as its release's git tag (`v0.1.0`): what a copy without git history was built from."""
    from .. import __version__

    return f"v{__version__}"


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def collect(results: list[str]) -> dict:
    """Provenance of the result files (or run folders) behind one output."""
    from ..models.hub import describe

    runs, evaluations, roots, models = {}, Counter(), {}, Counter()
    for item in results:
        path = Path(item)
        run = None
        if path.is_dir():
            run = path
        elif path.suffix == ".json":
            result = _read(path)
            if path.name == "train_summary.json":
                run = path.parent
            elif isinstance(result, dict):
                if result.get("model") and (Path(result["model"]) / "train_summary.json").exists():
                    run = Path(result["model"])
                for key in ("data", "corpus"):      # an evaluation's data root, an analysis's corpus file
                    if isinstance(result.get(key), str):     # the folders read of each root (None: all)
                        read = record_folders(result) if key == "data" else None
                        before = roots.get(result[key], set())
                        roots[result[key]] = None if read is None or before is None else before | read
                if result.get("versions"):
                    evaluations[json.dumps(result["versions"], sort_keys=True)] += 1
                if "model_source" in result:
                    models[describe(result["model_source"])] += 1
        if run is not None and str(run) not in runs:
            summary = _read(run / "train_summary.json") or {}
            spec = summary.get("spec", {})
            runs[str(run)] = {"method": spec.get("method"), "backbone": spec.get("backbone"), "seed": spec.get("seed"),
                              "corpus": spec.get("corpus"), "steps": summary.get("steps"),
                              "batch_size": spec.get("batch_size"), "device": summary.get("device"),
                              "train_seconds": summary.get("train_seconds"),
                              "versions": summary.get("versions", {}),
                              "backbone_source": describe(summary["backbone_source"])
                              if "backbone_source" in summary else None}
    return {"runs": runs,
            "devices": dict(Counter(r["device"] for r in runs.values())),
            "training_versions": dict(Counter(json.dumps(r["versions"], sort_keys=True) for r in runs.values())),
            "evaluation_versions": dict(evaluations),
            # what the models behind the output were made from: the runs' backbones, the evaluated models
            "models": dict(Counter(r["backbone_source"] for r in runs.values() if r["backbone_source"]) + models),
            "data": {root: data_digests(root, roots[root]) for root in sorted(roots)},
            "environment": environment()}
