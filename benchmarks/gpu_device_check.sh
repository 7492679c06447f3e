#!/usr/bin/env bash
# The GPU check of issues 43 and 44 in one call on a lent GPU machine, at most BUDGET seconds (default 540).
# Prepared beforehand on a CPU machine by benchmarks/gpu_device_prepare.sh; carry .whl, .gpu,
# results/data/official/wiki, results/parse and results/augment. Every stage runs in processes of its own under
# its own time limit, so a crash or a timeout keeps the others' figures. Writes to $OUT (default results/device):
#   gpu_training.json  steps graph/eager/plain loop, MFU, syncs, agreement, replays, overheads, dev evaluation,
#                      every method's 10 steps, torch.compile (benchmarks/gpu_training.py)
#   concurrency.json   k = 1, 2, 4, 8 training processes on one GPU (benchmarks/gpu_concurrency.py)
#   sda_table4.tex/.csv, sda_runs.json   SDA Table 4 built by Snakemake at the gpu scale, and its runs' summaries
#   gpu_pytest.xml/.log  the GPU tests, run first (benchmarks/gpu_pytest.sh, at most PYTEST_LIMIT s, default 150)
#   log.txt, nvidia.txt
# PY, DEVICE, SIZE and SNAKEFLAGS (e.g. -n) let it be tried on a CPU machine first (.venv/bin/python, cpu, tiny).
set -u
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-540}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
SIZE=${SIZE:-base}
SNAKEFLAGS=${SNAKEFLAGS:-}
START=$SECONDS
OUT=${OUT:-results/device}
mkdir -p "$OUT"
left() { echo $(( BUDGET - (SECONDS - START) )); }
say() { echo "[check] $* at $((SECONDS - START)) s" | tee -a "$OUT/log.txt"; }
LOG="$OUT/log.txt"
source benchmarks/gpu_env.sh     # the wheels installed, the data, offline
nvidia-smi --query-gpu=name,memory.total,clocks.sm,driver_version --format=csv > "$OUT/nvidia.txt" 2>&1
$PY -c "import torch, transformers, snakemake; print('torch', torch.__version__, 'transformers', \
transformers.__version__, 'snakemake', snakemake.__version__)" >> "$OUT/nvidia.txt" 2>&1
say "installed"
W=/tmp/gpuwork
COMMON=(--device $DEVICE --size $SIZE --workdir $W --data .gpu/data --tokenizers .gpu/models)
# 0. the GPU tests (pytest -m gpu), first, under their own limit: gpu_pytest.xml and gpu_pytest.log
LIMIT=${PYTEST_LIMIT:-150} bash benchmarks/gpu_pytest.sh "$OUT" >> "$OUT/log.txt" 2>&1
say "gpu tests exit $?"

# The stages below end by these marks (seconds since the start), sharing what the tests left of the budget; a
# stage that ends early leaves its time to the next.
U=$(( SECONDS - START )); R=$(( BUDGET - U ))
T1=$(( U + R * 40 / 100 )); T2=$(( U + R * 67 / 100 )); T3=$(( U + R * 82 / 100 ))
by() { local t=$(( $1 - (SECONDS - START) )); echo $(( t > 0 ? t : 1 )); }
# group LIMIT CMD...: CMD in a session of its own, the whole session stopped after LIMIT seconds (its worker
# processes too: nothing of a stage may run on into the next stage's timings)
group() {
  local limit=$1; shift
  setsid "$@" & local pid=$!
  ( sleep "$limit"; kill -TERM -"$pid" 2>/dev/null; sleep 5; kill -KILL -"$pid" 2>/dev/null ) & local watch=$!
  wait "$pid"; local rc=$?
  kill "$watch" 2>/dev/null
  return $rc
}

# 1. the timed sections, one process each (the step ~80 s, the overheads ~90 s, the dev evaluation ~20 s)
group $(( $(by $T1) + 20 )) $PY benchmarks/gpu_training.py "${COMMON[@]}" --isolate \
  --sections matmul,step,dev_eval,overhead --caps step=140,dev_eval=40,overhead=120 --budget $(by $T1) \
  --out "$OUT/gpu_training.json" >> "$OUT/log.txt" 2>&1
say "timed sections done"

# 2. untimed, side by side: every method's 10 steps (6 processes) and SDA Table 4 through Snakemake
T=$(by $T2)
group $(( T + 10 )) $PY benchmarks/gpu_training.py "${COMMON[@]}" --isolate --sections methods --method-workers 6 \
  --caps methods=$T --budget $T --out "$OUT/methods.json" > "$OUT/methods.log" 2>&1 &
METHODS=$!
# spaCy is not on the image: the corpus, its parse and the SDA caches came along; --touch marks them up to date
# (the copy need not keep their modification times in order), then the GPU jobs run
CACHES=(results/augment/wiki1m_head/sda_{pi,aa,dn}/seed42.parquet)
$PY -m snakemake --touch --cores 1 "${CACHES[@]}" --config scale=gpu > "$OUT/snakemake.log" 2>&1
group $T $PY -m snakemake results/tables/sda/table4.tex --cores 16 $SNAKEFLAGS --config scale=gpu \
  >> "$OUT/snakemake.log" 2>&1
say "snakemake exit $?"
wait $METHODS
say "methods exit $?"

# 3. k training processes on one GPU
group $(by $T3) $PY benchmarks/gpu_concurrency.py "${COMMON[@]}" --configs bert/64:200,roberta/512:40 \
  --ks "bert=1,2,4,8;roberta=1,4" --budget $(( $(by $T3) - 25 )) --out "$OUT/concurrency.json" >> "$OUT/log.txt" 2>&1
say "concurrency done"

# 4. torch.compile(mode="reduce-overhead", dynamic=False), with what time is left
group $(by $BUDGET) $PY benchmarks/gpu_training.py "${COMMON[@]}" --isolate --sections compile \
  --caps compile=$(by $(( BUDGET - 8 ))) --budget $(by $(( BUDGET - 8 ))) --out "$OUT/compile.json" >> "$OUT/log.txt" 2>&1
say "compile done"

# gather: the sections into one JSON, the table and its runs' summaries, the logs' ends
$PY benchmarks/gpu_device_summary.py "$OUT"
say "total"
