#!/usr/bin/env bash
# The agent path through Pants itself: `./pants run //agents:script` (an agent_config target run
# by the in-repo plugin) takes a task through a runner in its own process on this machine's
# lanes, and leaves a submissions folder `arena report` reads, stamped with the config's digest.
# Through pantsd, which CI's lint step started: 8 s where --no-pantsd took 38 s on 2 cores.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="$(mktemp -d)"
trap 'rm -rf "${out}"' EXIT
# Its own runner state and workspaces: the machine's default ones keep every earlier run's attempts,
# and a runner allows 3 attempts per agent and task.
export XDG_STATE_HOME="${out}/state"

if ! ./pants run //agents:script -- --tasks tasks/triton2triton/softmax --out "${out}"; then
  echo "FAIL ./pants run //agents:script exited non-zero"
  exit 1
fi
failed=0
for file in agent.json softmax.agent.json softmax.transcript.jsonl softmax/kernel.py; do
  [ -f "${out}/run-1/${file}" ] || { echo "FAIL no run-1/${file}"; failed=1; }
done
digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"])' "${out}/run-1/agent.json")
grep -q "\"config_digest\": \"${digest}\"" "${out}/run-1/softmax.agent.json" || { echo "FAIL digest not stamped"; failed=1; }
grep -q '"finalized": true' "${out}/run-1/softmax.agent.json" || { echo "FAIL attempt not closed"; failed=1; }
[ "${failed}" -eq 0 ] && echo "ok   ./pants run //agents:script: submissions with config ${digest:0:12}"
exit "${failed}"
