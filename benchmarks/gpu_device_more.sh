#!/usr/bin/env bash
# The second call of the GPU check, on the machine benchmarks/gpu_device_check.sh left warm (its /tmp is still
# there), at most BUDGET seconds (default 150): the paper-scale settings it did not reach (gpu_calibrate.py
# --skip-done), then torch.compile inside the graph with a cold compile cache and again with it warm, for what
# time is left. Writes to $OUT: calibration.json (this call's settings), compile.json, log.txt, nvidia.txt.
set -u
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-150}
source benchmarks/gpu_stages.sh

# 1. the settings the first call did not reach
T=$(( $(left) - 75 )); [ $T -lt 20 ] && T=20
stage calibration $(( T + 8 )) $PY benchmarks/gpu_calibrate.py --device $DEVICE "${DATA[@]}" "${SMALL[@]}" \
  --workdir $W/calibrate --skip-done $W/calibration_1.json --budget $(( T - 25 )) --out "$OUT/calibration.json"

# 2. torch.compile inside the graph: a cold compile cache, then the same run finding it warm (each run's log has
#    the elapsed time every 10 steps: the first entries hold the compilation)
export TORCHINDUCTOR_CACHE_DIR=$W/inductor-cache
rm -rf "$TORCHINDUCTOR_CACHE_DIR"
for cache in cold warm; do
  L=$(( $(left) - 6 )); [ $L -lt 25 ] && { say "compile $cache: no time left"; continue; }
  stage "compile_$cache" $L $PY benchmarks/gpu_paper_run.py "${DATA[@]}" "${SMALL[@]}" --lines 20000 \
    --steps "$([ -n "$TINY" ] && echo 20 || echo 300)" --train-args=--compile --workdir $W/compile \
    --timeout $(( L - 4 )) --out "$W/compile_$cache.json"
done
$PY - "$W" "$OUT/compile.json" <<'PY'
import json, sys
from pathlib import Path
runs = {c: json.loads(p.read_text()) for c in ("cold", "warm") if (p := Path(sys.argv[1]) / f"compile_{c}.json").exists()}
Path(sys.argv[2]).write_text(json.dumps(runs, indent=1))
PY
say "total"
$PY benchmarks/gpu_device_summary.py "$OUT"
