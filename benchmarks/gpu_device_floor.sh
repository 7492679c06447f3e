#!/usr/bin/env bash
# The step against the GPU's floor (issue 60), on a lent GPU machine, at most BUDGET seconds (default 520), in one
# call. Prepared beforehand on a CPU machine by benchmarks/gpu_device_prepare.sh; carry .whl and .gpu. Each stage
# runs in a process group of its own under its own limit (benchmarks/gpu_stages.sh). Writes to $OUT, 8 files:
#   gpu_pytest.xml          the GPU tests at this commit (benchmarks/gpu_pytest.sh)
#   floor.json              padded against packed rows, one seed against 4 seeds as one vmapped model, per shape:
#                           ms, MFU of the executed and of the real tokens (benchmarks/gpu_floor.py)
#   concurrency_one.json    one steady SimCSE BERT-base b64 run (no MPS; its window past the capture, before the
#                           final evaluation): the baseline packing is judged against
#   concurrency_mps.json    4 such runs at once under MPS, the same window
#   glue_eval.json          an evaluation job's start-up on the GPU (gpu_glue_eval.py --sections startup)
#   calibration.json        DeBERTa-1.5B's GLUE step (its capture on a GPU) and the paper-scale training settings,
#                           largest hours first, for the time left (gpu_calibrate.py)
#   log.txt, nvidia.txt
# PY, DEVICE and TINY=1 let it be tried on a CPU machine first (PY=.venv/bin/python DEVICE=cpu TINY=1).
set -u
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-520}
source benchmarks/gpu_stages.sh

mkdir -p $W/pytest
if [ "$DEVICE" = cuda ]; then
  LIMIT=${PYTEST_LIMIT:-80} bash benchmarks/gpu_pytest.sh $W/pytest >> "$OUT/log.txt" 2>&1
  say "gpu tests exit $?"
fi
[ -f $W/pytest/gpu_pytest.xml ] && cp $W/pytest/gpu_pytest.xml "$OUT/"

CONFIGS=bert/64,bert/128,bert/512,roberta/512; AT=64; STEPS=30; CONF=bert/64:700; SKIP=100
[ -n "$TINY" ] && CONFIGS=bert/8 && AT=8 && STEPS=3 && CONF=bert/8:40 && SKIP=15
stage floor 150 $PY benchmarks/gpu_floor.py --device $DEVICE --size $SIZE "${DATA[@]}" --configs $CONFIGS \
  --seeds-at $AT --steps $STEPS --workdir $W/floor --out "$OUT/floor.json"

# one steady run, then 4 under MPS; both windows start past the capture and end before the final evaluation
stage concurrency_one 50 $PY benchmarks/gpu_concurrency.py --device $DEVICE --size $SIZE "${DATA[@]}" \
  --configs $CONF --ks 1 --skip $SKIP --workdir $W/concurrency --out "$OUT/concurrency_one.json"
stage concurrency_mps 75 $PY benchmarks/gpu_concurrency.py --device $DEVICE --size $SIZE "${DATA[@]}" \
  --configs $CONF --ks 4 --skip $SKIP --mps --workdir $W/concurrency --out "$OUT/concurrency_mps.json"

stage startup 40 $PY benchmarks/gpu_glue_eval.py --device $DEVICE "${DATA[@]}" --size $SIZE --sections startup \
  --out "$OUT/glue_eval.json"

T=$(( $(left) - 10 ))
[ $T -ge 30 ] && stage calibration $(( T + 6 )) $PY benchmarks/gpu_calibrate.py --device $DEVICE "${DATA[@]}" \
  "${SMALL[@]}" --workdir $W/calibrate --budget $(( T - 30 )) --out "$OUT/calibration.json"
say "total"
$PY benchmarks/gpu_device_summary.py "$OUT"
$PY - "$OUT" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
def load(name):
    try:
        return json.loads((out / name).read_text())
    except (OSError, ValueError):
        return {}
floor = load("floor.json")
print("floor:", floor.get("versions", {}).get("gpu"), floor.get("versions", {}).get("commit"),
      "matrix TFLOP/s", round((floor.get("matrix_tflops") or 0) / 1e12, 1), "lengths", floor.get("lengths"),
      "check", floor.get("packing_check"))
for config, r in floor.items():
    if isinstance(r, dict) and "variants" in r:
        for name, v in r["variants"].items():
            print(f"  {config} {name}: {v.get('median_step_ms')} ms mfu {v.get('mfu_executed')} real "
                  f"{v.get('mfu_real')} x{v.get('throughput_vs_padded', '')} peak {v.get('peak_memory_gib')} "
                  f"{v.get('path')} {str(v.get('error', ''))[:200]}")
for name in ("concurrency_one.json", "concurrency_mps.json"):
    for config, rows in load(name).items():
        if isinstance(rows, list):
            for r in rows:
                print(f"  {name} {config} k={r.get('k')}: {r.get('aggregate_steps_per_s')} steps/s over "
                      f"{r.get('window_s')} s, each {r.get('per_process_steps_per_s')} {r.get('errors') or ''}")
PY
