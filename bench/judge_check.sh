#!/usr/bin/env bash
# Harness v2 (the judge and its candidate worker) on the GPU machine, from the repository root:
#   bash bench/judge_check.sh            (OUT=dir for the files, default ./bench/out;
#                                         SUITES="triton2triton hip2hip" the categories to run;
#                                         SUITE_S=seconds per suite, default 150)
#
# Writes $OUT/judge_check.log (every step's output) and $OUT/judge_suites.json (each suite's JSON
# and wall time). Steps, each under its own timeout:
#   gpu-tests   the GPU tests, the judge's planted attacks (forged samples, GPU work left running
#               while frozen, and their control), the side-stream cheat, autotune        240 s
#   suites      per category: the no-ops, then the exemplars, each from a fresh score cache,
#               through the product's CLI (`arena suite`)                          SUITE_S each
# Where bwrap is not installed, bench/carried_bwrap.sh unpacks the one carried in .debs/.
set -u

OUT="${OUT:-./bench/out}"
PY="${PYTHON:-python3}"
SUITES="${SUITES:-triton2triton}"
SUITE_S="${SUITE_S:-150}"
CHECK=judge_check
. bench/check_setup.sh

if [ "${TESTS:-1}" = 1 ]; then
  step gpu-tests 240 env PYTHONPATH=src/python:tests/python "$PY" -m pytest -rA --tb=short -p no:cacheprovider \
    --import-mode=importlib tests/python/arena/harness/cheats/cheat_judge_gpu_test.py \
    tests/python/arena/harness/gpu_test.py \
    tests/python/arena/harness/cheats/cheat_side_stream_test.py \
    tests/python/arena/harness/cheats/cheat_read_reference_test.py
fi

if [ "${PHASES:-1}" = 1 ]; then # where one evaluation's time goes: every stage, the time stage's log
  for task in triton2triton/argmax triton2triton/gemv; do
    name="${task#*/}"
    ARENA_CACHE_DIR="$WORK/cache-phases" step "phases-$name" 90 "$PY" -m arena.cli.main evaluate --no-cache \
      --task "tasks/$task" --candidate "tasks/$task/exemplars/$(ls "tasks/$task/exemplars" | head -1)" --json "$WORK/$name.json"
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); h=d.get("harness", d)
for s in h.get("stages", []): print(s["name"], s["seconds"]); print(s["log"][-1500:]) if s["name"] in ("setup", "time") else None
print(d.get("status"), d.get("score"), d.get("errors"))' "$WORK/$name.json" >>"$LOG" 2>&1
  done
fi

suite() { # NAME ARGS...: one suite from a fresh cache, its JSON and wall time kept
  local name=$1 begin
  shift
  begin=$(date +%s.%N)
  ARENA_CACHE_DIR="$WORK/cache-$name" step "$name" "$SUITE_S" \
    "$PY" -m arena.cli.main suite --timeout 90 --json "$WORK/$name.json" "$@"
  printf '%s\t%s\t%s\n' "$name" "$begin" "$(date +%s.%N)" >>"$WORK/walls.tsv"
}
: >"$WORK/walls.tsv"
for category in $SUITES; do
  [ "${NOOPS:-1}" = 1 ] && suite "$category-noop" --category "$category"
  suite "$category-exemplars" --category "$category" --exemplars
done

"$PY" bench/combine_suites.py "$WORK" "$OUT/judge_suites.json"
echo "files: $LOG $OUT/judge_suites.json"
