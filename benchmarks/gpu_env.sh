# Sourced on a GPU machine by benchmarks/gpu_device_check.sh and benchmarks/gpu_pytest.sh (once: a script it
# starts inherits it): the wheels of .whl (what the image lacks: benchmarks/gpu_device_prepare.sh) installed into
# /tmp/site, and the environment the project runs in there (the data and tokenizers of .gpu/, offline, `python`
# on the PATH for the workflow's rules). Uses PY (the Python to install for) and LOG (where pip's output goes).
if [ -z "${SENTAUG_GPU_ENV:-}" ]; then
  # (a second call on the same warm machine finds them installed)
  [ -d /tmp/site/transformers ] || $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl >> "$LOG" 2>&1 || echo "[env] wheel install failed (see $LOG)"
  export PYTHONPATH=/tmp/site:$PWD/src HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
    TQDM_DISABLE=1 PYTHONUNBUFFERED=1 TRANSFORMERS_VERBOSITY=error \
    SENTAUG_MIRROR=$PWD/.gpu/data SENTAUG_MODEL_MIRROR=$PWD/.gpu/models SENTAUG_GPU_ENV=1 \
    SENTAUG_COMMIT=$(cat .gpu/COMMIT 2>/dev/null)
  command -v python >/dev/null || { mkdir -p /tmp/bin && ln -sf "$(command -v "$PY")" /tmp/bin/python; }
  export PATH=/tmp/bin:$PATH
fi
