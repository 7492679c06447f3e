#!/usr/bin/env bash
# One-step setup: a virtual environment in .venv with sentaug and everything the workflow runs.
#   scripts/setup.sh     (torch pinned to one version: see below for which build a machine gets)
# Offline-friendly: needs only the package registries (PyPI, and Debian's apt for WordNet later).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH_VERSION=2.13.0
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# An exact pin: on a CPU machine of this kind pip takes the CPU wheel already on disk (elsewhere add
#   PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu), on a GPU node PyPI's default CUDA build.
# A bare `torch` requirement would pull several GB of CUDA packages onto a CPU machine.
python -c "import torch" 2>/dev/null || python -m pip install -q "torch==${TORCH_VERSION}"
# constraints.txt pins what was tested; torch stays at the build installed above.
python -m pip install -q -c constraints.txt -e ".[dev,offline-models]"
# WordNet 3.0 for nltk (Debian packages -> nltk_data/); only WordNet-based augmentations need it, and they
# fail with a message saying how to get it, so a machine without apt still gets a working venv.
scripts/setup_wordnet.sh || echo "warning: WordNet not set up (see scripts/setup_wordnet.sh)" >&2
echo "setup done: $(python -c 'import torch, transformers, spacy, snakemake; print("torch", torch.__version__, "| transformers", transformers.__version__, "| spacy", spacy.__version__, "| snakemake", snakemake.__version__)')"
