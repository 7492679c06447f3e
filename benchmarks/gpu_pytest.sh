#!/usr/bin/env bash
# The GPU tests (tests/test_gpu.py, marker `gpu`) on a GPU machine, under their own time limit (LIMIT seconds,
# default 180; at the limit pytest is interrupted and reports what ran). Writes to the folder given (default
# $OUT, else results/device):
#   gpu_pytest.xml   JUnit report: every test's outcome, its figures as properties, its output
#   gpu_pytest.log   pytest's output (the figures of the passed tests under "PASSES")
# On the machine of benchmarks/gpu_device_check.sh (which runs it first), prepared by
# benchmarks/gpu_device_prepare.sh: carry .whl and .gpu. pytest is on the GPU image. On a CPU machine,
# `SENTAUG_GPU_REHEARSAL=1 make test PYTEST_ARGS="tests/test_gpu.py"` runs the same tests with a stand-in graph.
set -u
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-results/device}}
LIMIT=${LIMIT:-180}
PY=${PY:-python3}
mkdir -p "$OUT"
LOG="$OUT/gpu_pytest.log"
: > "$LOG"
source benchmarks/gpu_env.sh
if [ "${SENTAUG_GPU_REHEARSAL:-}" != 1 ] && ! $PY -c "import torch, sys; sys.exit(not torch.cuda.is_available())"; then
  echo "[gpu_pytest] no CUDA device: the GPU tests would all be skipped" | tee -a "$LOG"
  exit 3
fi
START=$SECONDS
# SIGINT at the limit: pytest stops as if interrupted by hand and still writes its report. In a session of its
# own, so that nothing the tests started (the methods section's processes) outlives them on the GPU.
setsid timeout --signal=INT --kill-after=60 "$LIMIT" $PY -m pytest tests/test_gpu.py -m gpu -p no:cacheprovider \
  -rA --junitxml="$OUT/gpu_pytest.xml" -o junit_family=xunit1 -o junit_logging=system-out >> "$LOG" 2>&1 &
PID=$!
wait $PID
RC=$?
kill -KILL -- -$PID 2>/dev/null
echo "[gpu_pytest] exit $RC after $((SECONDS - START)) s (limit $LIMIT s): $(tail -n 1 "$LOG")" | tee -a "$LOG"
exit $RC
