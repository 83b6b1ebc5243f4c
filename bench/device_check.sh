#!/usr/bin/env bash
# The one command to run on the GPU machine, from the repository root:   bash bench/device_check.sh
#
# Writes 6 files under $OUT (default ./bench/out): env.txt, device_check.log (every step's output),
# timing.json (bench/timing_precision.py; also timing-kernels.json, see PART below), suites.json
# (every `arena suite` run's JSON, combined), multi_gpu.json (bench/multi_gpu.py) and summary.md
# (the key numbers, and each step's exit code).
# Every step runs whatever happened before it; 124/137 in the steps table = cut by its timeout.
#
# Time budget, worst case (every timeout reached), on 2 H200s: 565 s < 570 s
#   env                                                          20 s
#   phase 1, two streams in parallel, one GPU each (CUDA_VISIBLE_DEVICES), ends at 300 s:
#     GPU 0: timing_precision 290 (PART=evaluation: its whole-evaluation and profiler parts, 60, then the
#            triton2triton 140, hip2hip 50 and torch2hip 50 exemplars, faster candidates that get
#            the profiled call)
#     GPU 1: the GPU-only tests 120, triton2triton noop 110, repository noop 45 (its bench stage)
#            (PART=evaluation: then the repository exemplars, 45, within what is left of the phase)
#     (a step's timeout is cut to what is left of the phase; a step with < 6 s left is skipped)
#   wait until no process holds a GPU (a killed step's harness child may run on briefly)  15 s
#   multi_gpu.py (both GPUs, every triton2triton task twice; it stops itself at 200 s)  215 s
#   summary                                                      15 s
# With fewer than 2 GPUs the two streams run one after the other on GPU 0 within the same 300 s.
# SUITES=all adds every category's no-op and exemplar suites to phase 1 (they need a longer phase).
# PART=evaluation on 3+ GPUs: GPU 2 runs timing_precision's kernel and profiler parts in phase 1
# (timing-kernels.json). MULTI_GPU=skip leaves out phase 2 (its own call can then use a longer budget).
set -u

OUT="${OUT:-./bench/out}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
export PYTHONPATH=src/python PYTHONUNBUFFERED=1
LOG="$OUT/device_check.log"
STEPS="$WORK/steps.tsv"
: >"$LOG"
: >"$STEPS"

# step LOGFILE NAME CAP_S COMMAND...: run COMMAND under timeout min(CAP_S, time left before
# PHASE_END), output appended to LOGFILE, "name<TAB>rc<TAB>seconds" appended to $STEPS.
step() {
  local log=$1 name=$2 cap=$3
  shift 3
  local left=$((PHASE_END - $(date +%s)))
  ((cap > left)) && cap=$left
  if ((cap < 6)); then
    printf '%s\tskipped (no time left)\t0\n' "$name" >>"$STEPS"
    echo "== $name: skipped, no time left in this phase" >>"$log"
    return 0
  fi
  local begin
  begin=$(date +%s)
  echo "== $name (timeout ${cap} s): $*" >>"$log"
  set +e
  timeout --kill-after=5 "$cap" "$@" >>"$log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - begin))" >>"$STEPS"
  echo "== $name: exit $rc after $(($(date +%s) - begin)) s" >>"$log"
}

# suite LOGFILE CATEGORY CAP_NOOP CAP_EXEMPLARS: the baselines (no-ops) and the exemplars of one category.
# No per-case budget flag exists on `arena suite`; --timeout bounds one evaluation.
suite() {
  local log=$1 category=$2
  step "$log" "suite-noop-$category" "$3" \
    "$PY" -m arena.cli.main suite --category "$category" --timeout 60 --json "$WORK/noop-$category.json"
  step "$log" "suite-exemplars-$category" "$4" \
    "$PY" -m arena.cli.main suite --category "$category" --exemplars --timeout 60 \
    --json "$WORK/exemplars-$category.json"
}

stream_gpu0() {
  export ARENA_CACHE_DIR="$WORK/cache-0" # fresh: nothing served from an earlier run's cache
  if [ "${PART:-all}" = evaluation ]; then
    step "$WORK/gpu0.log" timing-precision-evaluation 60 \
      "$PY" bench/timing_precision.py --part evaluation profiler --out "$OUT/timing.json"
    for category in triton2triton:140 hip2hip:50 torch2hip:50; do
      step "$WORK/gpu0.log" "suite-exemplars-${category%:*}" "${category#*:}" \
        "$PY" -m arena.cli.main suite --category "${category%:*}" --exemplars --timeout 60 \
        --json "$WORK/exemplars-${category%:*}.json"
    done
  else
    step "$WORK/gpu0.log" timing-precision 290 "$PY" bench/timing_precision.py --out "$OUT/timing.json"
  fi
  if [ "${SUITES:-}" = all ]; then
    suite "$WORK/gpu0.log" hip2hip 60 60
    suite "$WORK/gpu0.log" repository 45 45
  fi
}

# With PART=evaluation on 3 or more GPUs, the kernel part of timing_precision runs beside the rest.
stream_gpu2() {
  step "$WORK/gpu2.log" timing-precision-kernels 290 \
    "$PY" bench/timing_precision.py --part kernels profiler --out "$OUT/timing-kernels.json"
}

stream_gpu1() {
  export ARENA_CACHE_DIR="$WORK/cache-1"
  step "$WORK/gpu1.log" gpu-tests 120 env PYTHONPATH=src/python:tests/python "$PY" -m pytest -rA --tb=short -p no:cacheprovider \
    --import-mode=importlib tests/python/arena/harness/gpu_test.py \
    tests/python/arena/harness/cheats/cheat_side_stream_test.py \
    tests/python/arena/harness/cheats/cheat_warmup_detection_test.py
  step "$WORK/gpu1.log" suite-noop-triton2triton 110 \
    "$PY" -m arena.cli.main suite --category triton2triton --timeout 60 --json "$WORK/noop-triton2triton.json"
  step "$WORK/gpu1.log" suite-noop-repository 45 \
    "$PY" -m arena.cli.main suite --category repository --timeout 60 --json "$WORK/noop-repository.json"
  if [ "${PART:-all}" = evaluation ]; then
    step "$WORK/gpu1.log" suite-exemplars-repository 45 \
      "$PY" -m arena.cli.main suite --category repository --exemplars --timeout 60 \
      --json "$WORK/exemplars-repository.json"
  fi
  if [ "${SUITES:-}" = all ]; then
    suite "$WORK/gpu1.log" triton2triton 110 110
    suite "$WORK/gpu1.log" torch2hip 60 60
  fi
}

# --- env ------------------------------------------------------------------------------------------
START=$(date +%s)
PHASE_END=$((START + 20))
env_report() {
  nvidia-smi -L
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv
  "$PY" -c 'import sys, platform; print("python", platform.python_version())'
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())'
  "$PY" -c 'import triton; print("triton", triton.__version__)'
  nvcc --version | tail -n 2
  nproc
}
{ declare -f env_report; echo env_report; } >"$WORK/env.sh"
step "$WORK/env.log" env 20 env PY="$PY" bash "$WORK/env.sh"
sed '1d;$d' "$WORK/env.log" >"$OUT/env.txt" # the step's own output, without the log's framing
cat "$WORK/env.log" >>"$LOG"

# --- phase 1: timing precision and the suites, one stream per GPU ---------------------------------
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
PHASE_END=$(($(date +%s) + 300))
if ((GPUS >= 2)); then
  (CUDA_VISIBLE_DEVICES=0 stream_gpu0) &
  A=$!
  (CUDA_VISIBLE_DEVICES=1 stream_gpu1) &
  B=$!
  C=
  if ((GPUS >= 3)) && [ "${PART:-all}" = evaluation ]; then
    (CUDA_VISIBLE_DEVICES=2 stream_gpu2) &
    C=$!
  fi
  wait "$A" "$B" $C
else
  echo "== $GPUS GPU(s) seen by nvidia-smi: the two streams run one after the other" >>"$LOG"
  stream_gpu0
  stream_gpu1
fi
for log in "$WORK/gpu0.log" "$WORK/gpu1.log" "$WORK/gpu2.log"; do
  [ -f "$log" ] && { echo "######## $(basename "$log")"; cat "$log"; } >>"$LOG"
done

# --- phase 2: every GPU at once --------------------------------------------------------------------
PHASE_END=$(($(date +%s) + 15))
wait_idle() {
  command -v nvidia-smi >/dev/null || return 0
  for _ in $(seq 14); do
    [ -z "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader)" ] && return 0
    sleep 1
  done
  echo "GPUs still busy:"
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
}
{ declare -f wait_idle; echo wait_idle; } >"$WORK/wait_idle.sh"
step "$LOG" wait-gpus-idle 15 bash "$WORK/wait_idle.sh"
PHASE_END=$(($(date +%s) + 215))
if [ "${MULTI_GPU:-run}" = skip ]; then # run it alone, at a longer budget, in a call of its own
  printf 'multi-gpu\tskipped (MULTI_GPU=skip)\t0\n' >>"$STEPS"
else
  step "$LOG" multi-gpu 215 "$PY" bench/multi_gpu.py --category triton2triton --copies 2 --budget 0.5 \
    --deadline-s 200 --out "$OUT/multi_gpu.json"
fi

# --- summary ---------------------------------------------------------------------------------------
PHASE_END=$(($(date +%s) + 15))
echo "total before summary: $(($(date +%s) - START)) s" >>"$LOG"
step "$LOG" summary 15 "$PY" bench/multi_gpu.py --summarize "$OUT" --work "$WORK"
echo "total: $(($(date +%s) - START)) s; files: $(ls "$OUT" | tr '\n' ' ')" >>"$LOG"
tail -n 3 "$LOG"
rm -rf "$WORK"
exit 0
