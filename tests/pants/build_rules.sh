#!/usr/bin/env bash
# Build rules that must fail loudly, checked through ./pants on throwaway folders inside the repo
# (Pants reads BUILD files only under its build root), removed afterwards:
# - a kernel_task of the wrong form (a missing or unknown field, a value of the wrong type, an
#   unknown category) fails when Pants parses BUILD files, with a message naming the BUILD file,
#   the target and the field;
# - a module outside the allowed places that imports generated protobuf code is refused, and so
#   are an import against the package flow and an import of the harness's private modules;
# - the formatter (ruff-format): `lint` fails on a file `ruff format` would rewrite, `fmt` rewrites
#   it and leaves a formatted file alone, and `lint` then passes.
# Through pantsd (CI's lint step has started it): the first 8 checks took 14 s so, 150 s with
# --no-pantsd on a 2-core machine, where every check starts a scheduler of its own.
set -uo pipefail
cd "$(dirname "$0")/../.."

probe="tasks/_declaration_probe"
import_probe="src/python/arena/_visibility_probe"
format_probe="tests/python/_format_probe"
trap 'rm -rf "${probe}" "${import_probe}" "${format_probe}"; rm -f src/python/arena/task/_rule_probe.py src/python/arena/executors/_rule_probe.py' EXIT
passed=0
failed=0

expect_error() {  # name, expected message fragment, BUILD body
  local name="$1" want="$2" body="$3" out
  rm -rf "${probe}" && mkdir -p "${probe}" && printf '%s\n' "${body}" >"${probe}/BUILD"
  if out=$(./pants list "${probe}:" 2>&1); then
    echo "FAIL ${name}: the declaration was accepted"; failed=$((failed + 1)); return
  fi
  if grep -qF -- "${want}" <<<"${out}"; then
    echo "ok   ${name}"; passed=$((passed + 1))
  else
    echo "FAIL ${name}: expected '${want}' in:"; echo "${out}" | tail -5; failed=$((failed + 1))
  fi
}

# The plugin checks the form of a declaration (fields, required ones, types, the category);
# what the values mean is arena's, checked by `./pants test` on each task (docs/task-format.md).
good_fields='description="d", baseline=["k.py"], entry="k.py:f", signature="f(x) -> y",
    outputs=[{"name": "y", "shape": ["N"]}]'
timed_case='cases=[{"name": "a", "dims": {"N": 4}, "dtype": "float32", "seed": 1, "timed": True}]'

expect_error "unknown category" "'category' field in target ${probe}:t must be one of" \
  "kernel_task(name=\"t\", category=\"cuda2cuda\", ${good_fields}, ${timed_case})"
expect_error "missing field" "${probe}/BUILD:1: The 'cases' field in target ${probe}:t must be defined" \
  "kernel_task(name=\"t\", category=\"triton2triton\", ${good_fields})"
expect_error "wrong type" "The 'cases' field in target ${probe}:t must be a list" \
  "kernel_task(name=\"t\", category=\"triton2triton\", ${good_fields}, cases={\"a\": 1})"
expect_error "bad timeout" "The 'timeout' field in target ${probe}:t must be greater than zero" \
  "kernel_task(name=\"t\", category=\"triton2triton\", ${good_fields}, ${timed_case}, timeout=0)"
expect_error "unknown field" "Unrecognized field \`colour=red\`" \
  "kernel_task(name=\"t\", category=\"triton2triton\", ${good_fields}, ${timed_case}, colour=\"red\")"

# expect_refused NAME FOLDER SOURCE: a module with SOURCE in FOLDER (made, then removed) must be
# refused by a dependency rule when Pants computes its dependencies.
expect_refused() {
  local name="$1" folder="$2" source="$3" out made=""
  rm -rf "${probe}"
  [ -d "${folder}" ] || { mkdir -p "${folder}" && printf 'python_sources()\n' >"${folder}/BUILD" && made=1; }
  printf '%s\n' "${source}" >"${folder}/_rule_probe.py"
  if out=$(./pants dependencies "${folder}/_rule_probe.py" 2>&1); then
    echo "FAIL ${name}: accepted"; failed=$((failed + 1))
  elif grep -qF "DependencyRuleActionDeniedError" <<<"${out}"; then
    echo "ok   ${name} refused"; passed=$((passed + 1))
  else
    echo "FAIL ${name}: unexpected error"; echo "${out}" | tail -5; failed=$((failed + 1))
  fi
  rm -f "${folder}/_rule_probe.py"
  [ -n "${made}" ] && rm -rf "${folder}"
  return 0
}

# Only arena/api and client/ may import arena.v1 (proto/arena/v1/BUILD).
expect_refused "generated-code import" "${import_probe}" 'from arena.v1 import task_pb2'
# The one-way flow (src/python/arena/BUILD LAYERS): the task layer may not import the CLI.
expect_refused "upward import" src/python/arena/task 'def f():
    from arena.cli.main import main
    return main'
# The harness's inside (harness/BUILD): an executor may not import the child's stages.
expect_refused "harness-private import" src/python/arena/executors 'from arena.harness.run import Run'

# The formatter ([ruff-format] in pants.toml): a file it would rewrite fails lint; fmt rewrites that
# one to ruff's form and leaves a formatted one byte for byte; lint then passes.
check_format() {
  local out bad='x = {  '"'"'a'"'"':1 }' good='y = [1, 2]'
  rm -rf "${format_probe}" && mkdir -p "${format_probe}"
  printf 'python_sources()\n' >"${format_probe}/BUILD"
  printf '%s\n' "${bad}" >"${format_probe}/bad.py"
  printf '%s\n' "${good}" >"${format_probe}/good.py"
  if out=$(./pants lint --only=ruff-format "${format_probe}:" 2>&1); then
    echo "FAIL unformatted file: lint passed"; failed=$((failed + 1))
  elif grep -qF "${format_probe}/bad.py" <<<"${out}" && ! grep -qF "${format_probe}/good.py" <<<"${out}"; then
    echo "ok   unformatted file fails lint"; passed=$((passed + 1))
  else
    echo "FAIL unformatted file: lint did not name bad.py alone:"; echo "${out}" | tail -5; failed=$((failed + 1))
  fi
  if ! out=$(./pants fmt --only=ruff-format "${format_probe}:" 2>&1); then
    echo "FAIL fmt failed:"; echo "${out}" | tail -5; failed=$((failed + 1))
  elif cmp -s "${format_probe}/bad.py" <(printf '%s\n' 'x = {"a": 1}') \
    && cmp -s "${format_probe}/good.py" <(printf '%s\n' "${good}"); then
    echo "ok   fmt rewrites the unformatted file, leaves the formatted one"; passed=$((passed + 1))
  else
    echo "FAIL fmt: bad.py is now '$(cat "${format_probe}/bad.py")', good.py '$(cat "${format_probe}/good.py")'"
    failed=$((failed + 1))
  fi
  if out=$(./pants lint --only=ruff-format "${format_probe}:" 2>&1); then
    echo "ok   formatted files pass lint"; passed=$((passed + 1))
  else
    echo "FAIL lint after fmt:"; echo "${out}" | tail -5; failed=$((failed + 1))
  fi
  rm -rf "${format_probe}"
}
check_format

echo "${passed} passed, ${failed} failed"
[ "${failed}" -eq 0 ]
