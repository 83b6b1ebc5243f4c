# Sourced by the GPU-machine checks after they set OUT and CHECK (the log's name): makes $OUT, a
# scratch folder $WORK and an empty $LOG; puts the sources on the import path; defines
# `step NAME TIMEOUT COMMAND...` (runs COMMAND under its timeout, its output appended to $LOG with
# its exit code and seconds); and carries in bwrap where it is missing (bench/carried_bwrap.sh).
mkdir -p "$OUT"
WORK="$(mktemp -d)"
LOG="$OUT/$CHECK.log"
: >"$LOG"
export PYTHONPATH=src/python PYTHONUNBUFFERED=1

step() {
  local name=$1 cap=$2 begin rc
  shift 2
  begin=$(date +%s)
  echo "== $name (timeout $cap s): $*" >>"$LOG"
  timeout --kill-after=5 "$cap" "$@" >>"$LOG" 2>&1
  rc=$?
  echo "== $name: exit $rc after $(($(date +%s) - begin)) s" >>"$LOG"
}

. bench/carried_bwrap.sh
