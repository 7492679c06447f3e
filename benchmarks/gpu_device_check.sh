#!/usr/bin/env bash
# The GPU check of the paper-scale bill on a lent GPU machine, at most BUDGET seconds (default 590), in one call;
# benchmarks/gpu_device_more.sh goes on with what it did not reach, in a second call on the still warm machine.
# Prepared beforehand on a CPU machine by benchmarks/gpu_device_prepare.sh; carry .whl and .gpu. Every stage runs
# in a process group of its own under its own time limit, so a crash or a timeout keeps the others' figures.
# Writes to $OUT (default results/device), at most 8 files (what a device call brings back):
#   gpu_pytest.xml      the GPU tests (benchmarks/gpu_pytest.sh: agreement, replays, fallback, OOM, every method)
#   paper_run.json      SimCSE on BERT-base at paper length (15,625 steps, 1M lines, 125 dev evaluations), end to
#                       end beside its projection (benchmarks/gpu_paper_run.py)
#   glue_eval.json      a GLUE task's step (new path beside the plain loop), bf16 vs fp32 evaluation, an
#                       evaluation job's start-up (gpu_glue_eval.py)
#   concurrency.json    k = 1 and 4 training processes on one GPU under MPS, BERT b64 and RoBERTa b512
#   calibration.json    DeBERTa-1.5B's GLUE step and the paper-scale training settings of the bill at their real
#                       shape, largest hours first, for the time left (gpu_calibrate.py)
#   log.txt, nvidia.txt
# PY, DEVICE and TINY=1 let it be tried on a CPU machine first (PY=.venv/bin/python DEVICE=cpu TINY=1).
set -u
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-590}
source benchmarks/gpu_stages.sh

# 1. the GPU tests, first (a failing graph path makes every figure after it suspect): gpu_pytest.xml, its log
#    appended to log.txt
mkdir -p $W/pytest
if [ "$DEVICE" = cuda ]; then
  LIMIT=${PYTEST_LIMIT:-75} bash benchmarks/gpu_pytest.sh $W/pytest >> "$OUT/log.txt" 2>&1
  say "gpu tests exit $?"
fi
[ -f $W/pytest/gpu_pytest.xml ] && cp $W/pytest/gpu_pytest.xml "$OUT/"
[ -f $W/pytest/gpu_pytest.log ] && cat $W/pytest/gpu_pytest.log >> "$OUT/log.txt"

# 2. the paper-length run (~4 min on an H200: 15,625 steps of ~12.5 ms and 125 dev evaluations)
LINES=1000000; STEPS=()
[ -n "$TINY" ] && LINES=3000 && STEPS=(--steps 30)
stage paper_run 278 $PY benchmarks/gpu_paper_run.py "${DATA[@]}" "${SMALL[@]}" "${STEPS[@]}" --lines $LINES \
  --workdir $W/paper --timeout 270 --out "$OUT/paper_run.json"

# 3. GLUE's step (new path, plain loop), bf16 vs fp32 embeddings, an evaluation job's start-up
stage glue_eval 48 $PY benchmarks/gpu_glue_eval.py --device $DEVICE "${DATA[@]}" --size $SIZE \
  --out "$OUT/glue_eval.json"

# 4. k training processes on one GPU under MPS (started and stopped as the workflow does)
KS="bert=1,4;roberta=1,4"; CONF=bert/64:200,roberta/512:40
[ -n "$TINY" ] && CONF=bert/8:40 && KS="bert=1,2"
stage concurrency 80 $PY benchmarks/gpu_concurrency.py --device $DEVICE --size $SIZE "${DATA[@]}" \
  --configs $CONF --ks "$KS" --mps --budget 55 --workdir $W/concurrency --out "$OUT/concurrency.json"

# 5. DeBERTa-1.5B's GLUE step and every paper-scale training setting, largest projected hours first, for the time
#    left (benchmarks/gpu_device_more.sh goes on from calibration.json)
T=$(( $(left) - 12 ))
[ $T -ge 20 ] && stage calibration $(( T + 8 )) $PY benchmarks/gpu_calibrate.py --device $DEVICE "${DATA[@]}" \
  "${SMALL[@]}" --workdir $W/calibrate --budget $(( T - 25 )) --out "$OUT/calibration.json"
cp "$OUT/calibration.json" $W/calibration_1.json 2>/dev/null
say "total"
$PY benchmarks/gpu_device_summary.py "$OUT"
