#!/usr/bin/env bash
# Prepares, on a CPU machine with the project's .venv and the data mirror, what benchmarks/gpu_device_check.sh
# needs on a GPU machine whose image lacks snakemake, spaCy and newer transformers, and has no network:
#   .whl/     wheels for Python 3.12 (snakemake and its dependencies, transformers 5.23, tokenizers), ~31 MB
#   .gpu/     the data mirror's STS/SICK sets and wiki1m head, and the two tokenizers, ~15 MB
#   results/  SDA Table 4's CPU stages at the gpu scale (the corpus, its spaCy parse, the three SDA caches)
# Then, on the device: carry [".whl", ".gpu", "results/data/official/wiki", "results/parse", "results/augment"]
# and run `bash benchmarks/gpu_device_check.sh` (the whole check, at most BUDGET seconds, results in $OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
MIRROR=${SENTAUG_MIRROR:-../shared/data}
MODELS=${SENTAUG_MODEL_MIRROR:-../shared/models}
rm -rf .gpu && mkdir -p .gpu/data/wiki .gpu/models
cp -r "$MIRROR/sts" "$MIRROR/sick" .gpu/data/
cp "$MIRROR/wiki/wiki1m_head.txt" .gpu/data/wiki/
cp -r "$MODELS/bert-base-uncased-tokenizer" "$MODELS/roberta-base-tokenizer" .gpu/models/
# The image's packages (torch, numpy, pandas, pyarrow, PyYAML, jinja2, ...) are not brought.
SKIP=" numpy huggingface-hub hf-xet fsspec filelock safetensors tqdm jinja2 markupsafe pyyaml typing-extensions packaging pulp "
mkdir -p .whl
.venv/bin/python - "$SKIP" <<'PY' > /tmp/sentaug_gpu_wheels.txt
import importlib.metadata as md, re, sys
skip, seen = set(sys.argv[1].split()), {}
def walk(name):
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        return
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return
    seen[key] = dist.version
    for req in dist.requires or []:
        if "extra ==" in req or ("python_version" in req and "<" in req.split(";", 1)[-1]):
            continue
        walk(re.match(r"[A-Za-z0-9_.\-]+", req).group())
for top in ("snakemake", "transformers", "tokenizers"):
    walk(top)
print("\n".join(f"{k}=={v}" for k, v in sorted(seen.items()) if k not in skip))
PY
while read -r req; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_5_x86_64 --platform any -d .whl "$req" 2>/dev/null \
  || python3 -m pip wheel -q --no-deps "$req" -w .whl     # a pure-Python sdist (connection_pool)
done < /tmp/sentaug_gpu_wheels.txt
rm -f .whl/pulp-*      # 16 MB; only Snakemake's ILP scheduler imports it, and the workflow profile is greedy
SENTAUG_MIRROR=$MIRROR SENTAUG_MODEL_MIRROR=$MODELS .venv/bin/snakemake --cores all \
  results/augment/wiki1m_head/sda_pi/seed42.parquet results/augment/wiki1m_head/sda_aa/seed42.parquet \
  results/augment/wiki1m_head/sda_dn/seed42.parquet --config scale=gpu
du -sh .whl .gpu results/data/official/wiki results/parse results/augment
