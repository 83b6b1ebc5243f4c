#!/usr/bin/env bash
# The tests that need a GPU, in one command on a GPU machine (no Pants there), from the repository
# root:
#   bash tests/gpu/run.sh                 # arena from this source tree
#   bash tests/gpu/run.sh --wheel FILE    # arena from its wheel, installed into a venv that sees
#                                         # this machine's torch and triton (--system-site-packages)
# A test needs a GPU when its file uses arena_testing.gpu.needs_gpu; every such file runs. Writes
# $OUT/gpu_tests.log (pytest's report), $OUT/gpu_tests.xml (JUnit) and $OUT/gpu_tests.txt (one
# line: date, GPU, passed/failed/skipped). Exit: pytest's (0 when every test passed). Without a
# GPU, every test skips and the script says so and exits 3.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-./bench/out}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"

files=$(grep -rl --include='*_test.py' 'needs_gpu' tests/python | sort)
if [ -z "$files" ]; then
  echo "no test file uses needs_gpu" >&2
  exit 2
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
[ -z "$gpu" ] && gpu=$(rocm-smi --showproductname 2>/dev/null | grep -m1 -o 'MI[0-9A-Z]*' || true)
if [ -z "$gpu" ]; then
  echo "no GPU here (nvidia-smi and rocm-smi find none): the $(echo "$files" | wc -l) GPU test files would all skip" >&2
  exit 3
fi

path="tests/python"
if [ "${1:-}" = "--wheel" ]; then
  venv="$(mktemp -d)/venv"
  "$PY" -m venv --system-site-packages "$venv" && "$venv/bin/pip" install -q --no-deps "$2" || exit 4
  PY="$venv/bin/python"
  source="the wheel $(basename "$2")"
else
  path="src/python:tests/python"
  source="the source tree"
fi
. bench/carried_bwrap.sh  # the harness's sandbox, where bwrap is not installed
# shellcheck disable=SC2086
# A test stuck past TEST_TIMEOUT_S fails alone (pytest-timeout, where installed) instead of eating
# the whole run; the slowest durations go into the log.
timeout_opt=$("$PY" -c 'import pytest_timeout' 2>/dev/null && echo "--timeout=${TEST_TIMEOUT_S:-180}")
PYTHONPATH="$path" "$PY" -m pytest -rA --tb=short -p no:cacheprovider --import-mode=importlib \
  --durations=12 $timeout_opt --junitxml="$OUT/gpu_tests.xml" $files 2>&1 | tee "$OUT/gpu_tests.log"
rc=${PIPESTATUS[0]}
summary=$(tail -1 "$OUT/gpu_tests.log" | tr -d '=' | sed 's/^ *//')
echo "$(date -u +%Y-%m-%dT%H:%MZ) $gpu, $source: $summary (exit $rc)" | tee "$OUT/gpu_tests.txt"
exit "$rc"
