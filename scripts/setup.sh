#!/usr/bin/env bash
# One-step setup: a virtual environment in .venv with sentaug and everything the workflow runs.
#   scripts/setup.sh               install (make demo / make test call it when .venv is missing)
#   scripts/setup.sh --torch-plan  say which torch build this machine gets, and how, without installing anything
# Needs only the package registries (PyPI; PyTorch's CPU index where it can be reached; Debian's apt for WordNet).
#
# The torch build, with nothing to set: the CUDA build (PyPI's default) where an NVIDIA GPU answers nvidia-smi;
# elsewhere the CPU build from PyTorch's CPU index, or, where that index cannot be reached, whatever the
# configured package index offers (on a CPU machine of the kind CI uses, a CPU wheel already on disk; on an
# ordinary one, PyPI's CUDA build, with a warning). A bare `pip install torch` would put several GB of CUDA
# packages on a machine without a GPU. TORCH_BUILD=cpu|cuda overrides the detection; TORCH_CPU_INDEX the index.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TORCH_VERSION=2.13.0
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}

gpu_name() {   # the first NVIDIA GPU's name, or nothing
    command -v nvidia-smi >/dev/null 2>&1 || return 0
    nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true
}

index_reachable() {   # PyTorch's CPU index answers within 10 s
    "$PY" - "$1" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].rstrip("/") + "/torch/", timeout=10).close()
EOF
}

# torch_plan: sets BUILD (cpu|cuda), WHY and PIP_ARGS, the arguments of `pip install` that get it.
torch_plan() {
    local gpu
    gpu=$(gpu_name)
    BUILD=${TORCH_BUILD:-$([ -n "$gpu" ] && echo cuda || echo cpu)}
    if [ "$BUILD" = cuda ]; then
        WHY="$([ -n "$gpu" ] && echo "NVIDIA GPU found ($gpu)" || echo "TORCH_BUILD=cuda"): the CUDA build, from the package index"
        PIP_ARGS=("torch==${TORCH_VERSION}")
    elif index_reachable "$TORCH_CPU_INDEX"; then
        WHY="no NVIDIA GPU: the CPU build, from $TORCH_CPU_INDEX"
        PIP_ARGS=(--index-url "$TORCH_CPU_INDEX" "torch==${TORCH_VERSION}")
    else
        WHY="no NVIDIA GPU, and $TORCH_CPU_INDEX cannot be reached: the build the configured package index offers"
        PIP_ARGS=("torch==${TORCH_VERSION}")
    fi
}

if [ "${1:-}" = "--torch-plan" ]; then
    torch_plan
    echo "torch ${TORCH_VERSION}: ${WHY}"
    echo "pip install ${PIP_ARGS[*]}"
    exit 0
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
if python -c "import torch" 2>/dev/null; then
    echo "torch already installed in .venv: kept"
else
    torch_plan
    echo "torch ${TORCH_VERSION}: ${WHY}"
    python -m pip install -q "${PIP_ARGS[@]}"
fi
# constraints.txt pins what was tested; torch stays at the build installed above.
python -m pip install -q -c constraints.txt -e ".[all,dev,offline-models]"
# Which build it is, from torch itself (a CUDA build on a machine without a GPU runs on the CPU, at a cost in disk).
python - <<'EOF'
import torch
cuda = torch.version.cuda
print(f"installed torch {torch.__version__}: " + (f"the CUDA {cuda} build" if cuda else "the CPU build"))
if cuda and not torch.cuda.is_available():
    print("warning: a CUDA build on a machine where no GPU answers: it runs on the CPU but takes several GB; "
          "TORCH_BUILD=cpu with PyTorch's CPU index reachable installs the CPU build (rm -rf .venv first)")
EOF
# WordNet 3.0 for nltk (Debian packages -> nltk_data/); only WordNet-based augmentations need it, and they
# fail with a message saying how to get it, so a machine without apt still gets a working venv.
scripts/setup_wordnet.sh || echo "warning: WordNet not set up (see scripts/setup_wordnet.sh)" >&2
echo "setup done ($(du -sh .venv | cut -f1) in .venv): $(python -c 'import torch, transformers, spacy, snakemake; print("torch", torch.__version__, "| transformers", transformers.__version__, "| spacy", spacy.__version__, "| snakemake", snakemake.__version__)')"
