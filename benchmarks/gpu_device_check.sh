#!/usr/bin/env bash
# The GPU check of the paper-scale bill in one call on a lent GPU machine, at most BUDGET seconds (default 575).
# Prepared beforehand on a CPU machine by benchmarks/gpu_device_prepare.sh; carry .whl and .gpu. Every stage runs
# in a process group of its own under its own time limit, so a crash or a timeout keeps the others' figures.
# Writes to $OUT (default results/device), at most 8 files (what a device call brings back):
#   gpu_pytest.xml      the GPU tests (benchmarks/gpu_pytest.sh: agreement, replays, fallback, OOM, every method)
#   paper_run.json      SimCSE on BERT-base at paper length (15,625 steps, 1M lines, 125 dev evaluations), end to
#                       end beside its projection (benchmarks/gpu_paper_run.py)
#   calibration.json    every paper-scale training setting of the bill at its real shape (gpu_calibrate.py)
#   glue_eval.json      a GLUE task's step (new path, plain loop; BERT-base and DeBERTa-1.5B), bf16 vs fp32
#                       evaluation, an evaluation job's start-up (gpu_glue_eval.py)
#   concurrency.json    k = 1 and 4 training processes on one GPU under MPS, BERT b64 and RoBERTa b512
#   compile.json        torch.compile inside the graph: a short run with a cold compile cache, then a warm one
#   log.txt, nvidia.txt
# PY, DEVICE and TINY=1 let it be tried on a CPU machine first (PY=.venv/bin/python DEVICE=cpu TINY=1).
set -u
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-575}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
TINY=${TINY:-}
START=$SECONDS
W=/tmp/sentaug-device
OUT=${OUT:-results/device}
mkdir -p "$OUT"
say() { echo "[check] $* at $((SECONDS - START)) s" | tee -a "$OUT/log.txt"; }
LOG="$OUT/log.txt"
if [ "$DEVICE" = cuda ]; then
  source benchmarks/gpu_env.sh     # the wheels installed, the data, offline
else
  export PYTHONPATH=$PWD/src TOKENIZERS_PARALLELISM=false TQDM_DISABLE=1 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
fi
DATA=(--data .gpu/data --tokenizers .gpu/models)
[ -d .gpu ] || DATA=(--data ../shared/data --tokenizers ../shared/models)
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
SMALL=()
[ -n "$TINY" ] && SMALL=(--tiny)

# 1. the GPU tests, first (a failing graph path makes every figure after it suspect): gpu_pytest.xml, its log
#    appended to log.txt
mkdir -p $W/pytest
if [ "$DEVICE" = cuda ]; then
  LIMIT=${PYTEST_LIMIT:-90} bash benchmarks/gpu_pytest.sh $W/pytest >> "$OUT/log.txt" 2>&1
  say "gpu tests exit $?"
fi
[ -f $W/pytest/gpu_pytest.xml ] && cp $W/pytest/gpu_pytest.xml "$OUT/"
[ -f $W/pytest/gpu_pytest.log ] && cat $W/pytest/gpu_pytest.log >> "$OUT/log.txt"

# 2. the paper-length run (~4 min on an H200: 15,625 steps of ~12.5 ms and 125 dev evaluations)
LINES=1000000; STEPS=()
[ -n "$TINY" ] && LINES=3000 && STEPS=(--steps 30)
stage paper_run 265 $PY benchmarks/gpu_paper_run.py "${DATA[@]}" "${SMALL[@]}" "${STEPS[@]}" --lines $LINES \
  --workdir $W/paper --timeout 255 --out "$OUT/paper_run.json"

# 3. every paper-scale training setting, largest projected hours first, with what the budget leaves beside
#    stages 4-6 (~150 s)
T=$(( $(left) - 155 )); [ $T -lt 30 ] && T=30
stage calibration $(( T + 20 )) $PY benchmarks/gpu_calibrate.py --device $DEVICE "${DATA[@]}" "${SMALL[@]}" \
  --workdir $W/calibrate --budget $T --out "$OUT/calibration.json"

# 4. GLUE's step (new path, plain loop; BERT-base, and DeBERTa-1.5B at its real shape), bf16 vs fp32, start-up
stage glue_eval 50 $PY benchmarks/gpu_glue_eval.py --device $DEVICE "${DATA[@]}" \
  --size "$([ -n "$TINY" ] && echo tiny || echo base)" --out "$OUT/glue_eval.json"

# 5. k training processes on one GPU under MPS (started and stopped as the workflow does)
KS="bert=1,4;roberta=1,4"; CONF=bert/64:200,roberta/512:40
[ -n "$TINY" ] && CONF=bert/8:20 && KS="bert=1,2"
stage concurrency 50 $PY benchmarks/gpu_concurrency.py --device $DEVICE --size "$([ -n "$TINY" ] && echo tiny || echo base)" \
  --data "${DATA[1]}" --tokenizers "${DATA[3]}" --configs $CONF --ks "$KS" --mps --budget 35 \
  --workdir $W/concurrency --out "$OUT/concurrency.json"

# 6. torch.compile inside the graph: a cold compile cache, then the same run finding it warm
export TORCHINDUCTOR_CACHE_DIR=$W/inductor-cache
for cache in cold warm; do
  L=$(( $(left) - 8 )); [ $L -lt 15 ] && { say "compile $cache: no time left"; continue; }
  stage "compile_$cache" $L $PY benchmarks/gpu_paper_run.py "${DATA[@]}" "${SMALL[@]}" --lines 20000 \
    --steps "$([ -n "$TINY" ] && echo 20 || echo 400)" --train-args=--compile --workdir $W/compile \
    --timeout $(( L - 5 )) --out "$W/compile_$cache.json"
done
$PY - "$W" "$OUT/compile.json" <<'PY'
import json, sys
from pathlib import Path
runs = {c: json.loads(p.read_text()) for c in ("cold", "warm") if (p := Path(sys.argv[1]) / f"compile_{c}.json").exists()}
Path(sys.argv[2]).write_text(json.dumps(runs, indent=1))
PY
say "total"
$PY benchmarks/gpu_device_summary.py "$OUT"
