#!/usr/bin/env bash
# The packaged artifact on a GPU machine, as a user would run it there (issue #13, item 2).
#
# Here: ./pants package //:arena-wheel, then copy dist/kernel_arena-*.whl into .artifact/ (a folder
# .git/info/exclude ignores) and carry .artifact and .debs to the GPU machine. There, from the
# repository root (the tasks are read from the checkout):
#   bash bench/artifact_check.sh OUT_DIR [hip2hip torch2hip repository triton2triton ...]
# installs the wheel beside that machine's own python3 (its torch, triton, grpcio, protobuf), and
# runs each named category's no-op and exemplar suites through the installed `arena` command, one
# lane per GPU (ARENA_DEVICES, default: every GPU), writing each suite's JSON and log to OUT_DIR.
# A category written CATEGORY:noop or CATEGORY:exemplars runs only that half, and
# CATEGORY:HALF:NAME,NAME,... only those tasks of it (a device call is 10 minutes: a long suite is
# split across calls).
set -uo pipefail
part=0
out="${1:?usage: artifact_check.sh OUT_DIR [CATEGORY[:noop|:exemplars] ...]}"
shift
mkdir -p "$out"
# A device call returns at most 8 files: everything goes back as one archive, also when the call's
# time limit stops the script.
trap 'tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"' EXIT
trap 'exit 143' TERM
source bench/carried_bwrap.sh

site=/tmp/arena-site
if [ ! -x "$site/bin/arena" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" .artifact/kernel_arena-*.whl || exit 1
fi
export PYTHONPATH="$site"
arena="$site/bin/arena"
{
  echo "python3: $(command -v python3) ($(python3 --version 2>&1))"
  echo "wheel: $(ls .artifact/)"
  "$arena" --version
  for i in 1 2 3 4; do /usr/bin/time -f "arena --help: %e s" "$arena" --help >/dev/null; done
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
} >"$out/setup.txt" 2>&1

for item in "$@"; do
  IFS=: read -r category halves names <<<"$item"
  halves="${halves:-noop exemplars}"
  tasks=()
  for name in ${names//,/ }; do tasks+=("tasks/$category/$name"); done
  label="$category${names:+-part$((++part))}"
  for half in $halves; do
    flags=()
    [ "$half" = exemplars ] && flags+=(--exemplars)
    [ ${#tasks[@]} -gt 0 ] && flags+=(--tasks "${tasks[@]}")
    begin=$SECONDS
    "$arena" suite --category "$category" "${flags[@]}" --json "$out/$label-$half.json" >"$out/$label-$half.log" 2>&1
    code=$?
    echo "$item $half: exit $code, $((SECONDS - begin)) s" >>"$out/suites.txt"
  done
done
