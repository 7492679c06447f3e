#!/usr/bin/env bash
# Prepares, on a CPU machine with the project's .venv and the data mirror, what benchmarks/gpu_device_check.sh
# needs on a GPU machine whose image has torch but not this project's transformers and has no network:
#   .whl/   wheels for Python 3.12: transformers, tokenizers and regex as .venv has them (~16 MB)
#   .gpu/   from the data mirror: STS (STS-B dev), GLUE RTE, the MR transfer task, the wiki1m head; the BERT and
#           RoBERTa tokenizers (~12 MB)
#   benchmarks/paper_settings.json, refreshed: the paper-scale bill's training settings, GLUE jobs and the
#           paper-length run with its projection (benchmarks/paper_settings.py; Snakemake resolves the DAG here)
# Then, on the device: carry [".whl", ".gpu"] and run `bash benchmarks/gpu_device_check.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
MIRROR=${SENTAUG_MIRROR:-../shared/data}
MODELS=${SENTAUG_MODEL_MIRROR:-../shared/models}
rm -rf .gpu && mkdir -p .gpu/data/wiki .gpu/data/glue .gpu/data/transfer .gpu/models
cp -r "$MIRROR/sts" .gpu/data/
cp -r "$MIRROR/glue/RTE" .gpu/data/glue/
cp -r "$MIRROR/transfer/MR" .gpu/data/transfer/
cp "$MIRROR/wiki/wiki1m_head.txt" .gpu/data/wiki/
cp -r "$MODELS/bert-base-uncased-tokenizer" "$MODELS/roberta-base-tokenizer" .gpu/models/
# the commit measured (the GPU machine's copy of the tree may carry an older .git): gpu_env.sh exports it there
echo "$(git rev-parse HEAD)$([ -n "$(git status --porcelain --untracked-files=no)" ] && echo +changes)" > .gpu/COMMIT
rm -rf .whl && mkdir -p .whl
for pkg in transformers tokenizers regex; do
  version=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('$pkg'))")
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_5_x86_64 --platform any -d .whl "$pkg==$version"
done
PYTHONPATH=src SENTAUG_MIRROR=$MIRROR SENTAUG_MODEL_MIRROR=$MODELS .venv/bin/python benchmarks/paper_settings.py
du -sh .whl .gpu
