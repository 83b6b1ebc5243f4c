#!/usr/bin/env bash
# The harness child's OS sandbox on the GPU machine, from the repository root:
#   bash bench/sandbox_check.sh          (OUT=dir for the files; default ./bench/out)
#
# Writes $OUT/sandbox_check.log (every step's output) and $OUT/sandbox_suites.json (each suite's
# JSON, with its wall time). Steps, each under its own timeout (worst case 560 s):
#   env          what the machine offers: kernel, user namespaces, bwrap, sandbox_tool()      20 s
#   gpu-tests    the GPU tests and the planted escapes, inside the sandbox                     150 s
#   suites       triton2triton exemplars with the sandbox, then without it (ARENA_SANDBOX=off),
#                and the no-ops with it, each from a fresh score cache                   130+130+130 s
# Where bwrap is not installed, bench/carried_bwrap.sh unpacks the one carried in .debs/.
set -u

OUT="${OUT:-./bench/out}"
PY="${PYTHON:-python3}"
CHECK=sandbox_check
. bench/check_setup.sh

env_report() {
  uname -r
  echo "max_user_namespaces $(cat /proc/sys/user/max_user_namespaces 2>/dev/null)"
  echo "unprivileged_userns_clone $(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo absent)"
  command -v bwrap && bwrap --version
  bwrap --unshare-all --unshare-user --die-with-parent --ro-bind / / true && echo "bwrap trial: ok"
  "$PY" -c 'from arena.environment.probe import sandbox_tool; print("sandbox_tool:", repr(sandbox_tool()))'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
}
{ declare -f env_report; echo env_report; } >"$WORK/env.sh"
step env 20 env PY="$PY" bash "$WORK/env.sh"

step gpu-tests 150 env PYTHONPATH=src/python:tests/python "$PY" -m pytest -rA --tb=short -p no:cacheprovider \
  --import-mode=importlib tests/python/arena/harness/gpu_test.py \
  tests/python/arena/harness/cheats/cheat_side_stream_test.py \
  tests/python/arena/harness/cheats/cheat_escape_sandbox_test.py \
  tests/python/arena/harness/cheats/cheat_tamper_harness_test.py \
  tests/python/arena/harness/autotune_test.py

suite() { # NAME SANDBOX(auto|off) ARGS...: one suite from a fresh cache, its JSON and wall time kept
  local name=$1 sandbox=$2 begin
  shift 2
  begin=$(date +%s.%N)
  ARENA_SANDBOX=$sandbox ARENA_CACHE_DIR="$WORK/cache-$name" step "$name" 130 \
    "$PY" -m arena.cli.main suite --category triton2triton --timeout 60 --json "$WORK/$name.json" "$@"
  printf '%s\t%s\t%s\n' "$name" "$begin" "$(date +%s.%N)" >>"$WORK/walls.tsv"
}
suite exemplars-sandboxed auto --exemplars
suite exemplars-unsandboxed off --exemplars
suite noop-sandboxed auto

"$PY" bench/combine_suites.py "$WORK" "$OUT/sandbox_suites.json"
echo "files: $LOG $OUT/sandbox_suites.json"
