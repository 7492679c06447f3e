# Sourced by benchmarks/gpu_device_check.sh and benchmarks/gpu_device_more.sh: the environment (on a GPU, the
# wheels of .whl and the data of .gpu, benchmarks/gpu_env.sh), the output folder, and `stage NAME LIMIT CMD...`.
# Uses BUDGET (seconds for the whole call); PY, DEVICE and TINY=1 (a CPU try: .venv/bin/python, cpu, tiny models).
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
TINY=${TINY:-}
START=$SECONDS
W=/tmp/sentaug-device
OUT=${OUT:-results/device}
mkdir -p "$OUT" $W
LOG="$OUT/log.txt"
say() { echo "[check] $* at $((SECONDS - START)) s" | tee -a "$OUT/log.txt"; }
if [ "$DEVICE" = cuda ]; then
  source benchmarks/gpu_env.sh     # the wheels installed, the data, offline
else
  export PYTHONPATH=$PWD/src TOKENIZERS_PARALLELISM=false TQDM_DISABLE=1 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
fi
DATA=(--data .gpu/data --tokenizers .gpu/models)
[ -d .gpu ] || DATA=(--data ../shared/data --tokenizers ../shared/models)
SMALL=(); SIZE=base
[ -n "$TINY" ] && SMALL=(--tiny) && SIZE=tiny
nvidia-smi --query-gpu=name,memory.total,clocks.sm,driver_version --format=csv > "$OUT/nvidia.txt" 2>&1
$PY -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" \
  >> "$OUT/nvidia.txt" 2>&1
say "installed"
left() { echo $(( BUDGET - (SECONDS - START) )); }
# stage NAME LIMIT CMD...: CMD in a session of its own, the whole session stopped after LIMIT seconds (its worker
# processes too: nothing of a stage may run on into the next stage's timings)
stage() {
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  setsid "$@" >> "$OUT/log.txt" 2>&1 & local pid=$!
  ( sleep "$limit"; kill -TERM -"$pid" 2>/dev/null; sleep 5; kill -KILL -"$pid" 2>/dev/null ) & local watch=$!
  wait "$pid"; local rc=$?
  kill "$watch" 2>/dev/null
  say "$name: exit $rc after $((SECONDS - t0)) s (limit $limit)"
}
