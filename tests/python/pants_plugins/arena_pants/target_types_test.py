"""kernel_task and kernel_task_suite on tiny BUILD files, through Pants' in-process engine."""

from __future__ import annotations

from typing import Mapping

import pytest
from pants.engine.addresses import Address
from pants.engine.target import InvalidTargetException
from pants.testutil.rule_runner import QueryRule, RuleRunner, engine_error

from arena_pants.rules import KernelTaskSuiteFieldSet, SuiteTasks, find_suite_tasks
from arena_pants.target_types import (
    KernelTaskCasesField,
    KernelTaskCategoryField,
    KernelTaskDescriptionField,
    KernelTaskReferenceField,
    KernelTaskSkipField,
    KernelTaskSuiteTarget,
    KernelTaskTarget,
    KernelTaskTimeoutField,
)

# The required fields, as BUILD source text; the plugin checks their form, arena their meaning.
GOOD = {
    "category": '"triton2triton"',
    "description": '"Row-wise softmax."',
    "baseline": '["kernel.py"]',
    "entry": '"kernel.py:softmax"',
    "signature": '"softmax(x: [M, N] $dtype) -> [M, N] $dtype"',
    "outputs": '[{"name": "y", "shape": ["M", "N"]}]',
    "cases": '[{"name": "big", "dims": {"M": 64, "N": 64}, "dtype": "float32", "seed": 1, "timed": True}]',
}
FOLDER = "tasks/triton2triton/softmax"
ADDRESS = Address(FOLDER, target_name="softmax")


def kernel_task(name: str = "softmax", changes: Mapping[str, str | None] | None = None) -> str:
    """A kernel_task(...) call: GOOD with `changes` (field -> source text; None leaves it out)."""
    fields: dict[str, str | None] = {"name": repr(name), **GOOD, **(changes or {})}
    body = "".join(f"    {field}={text},\n" for field, text in fields.items() if text is not None)
    return f"kernel_task(\n{body})\n"


@pytest.fixture
def rule_runner() -> RuleRunner:
    return RuleRunner(
        target_types=[KernelTaskTarget, KernelTaskSuiteTarget],
        rules=[find_suite_tasks, QueryRule(SuiteTasks, [KernelTaskSuiteFieldSet])],
        isolated_local_store=True,
    )


def test_a_valid_kernel_task_parses(rule_runner: RuleRunner) -> None:
    rule_runner.write_files({f"{FOLDER}/BUILD": kernel_task(changes={"timeout": "900", "skip": '"needs FP8"'})})
    target = rule_runner.get_target(ADDRESS)
    assert target[KernelTaskCategoryField].value == "triton2triton"
    assert target[KernelTaskDescriptionField].value == "Row-wise softmax."
    cases = target[KernelTaskCasesField].value
    assert cases is not None and cases[0]["dims"]["M"] == 64  # frozen, still indexable
    assert target[KernelTaskReferenceField].value == "baseline"  # the default oracle
    assert target[KernelTaskTimeoutField].value == 900.0  # whole seconds are accepted
    assert target[KernelTaskSkipField].value == "needs FP8"


@pytest.mark.parametrize("field", sorted(GOOD))
def test_a_missing_required_field_fails(rule_runner: RuleRunner, field: str) -> None:
    rule_runner.write_files({f"{FOLDER}/BUILD": kernel_task(changes={field: None})})
    # Pants' message names the BUILD file, the target and the field.
    message = f"{FOLDER}/BUILD:1: The '{field}' field in target {ADDRESS} must be defined"
    with engine_error(InvalidTargetException, contains=message):
        rule_runner.get_target(ADDRESS)


@pytest.mark.parametrize(
    "field, text, expected",
    [
        ("entry", "3", "a string"),
        ("baseline", '"kernel.py"', "an iterable of strings"),
        ("outputs", '{"y": 1}', "a list"),
        ("scalars", "[1]", "a dict"),
        ("budget_seconds", "True", "an integer"),
        ("timeout", '"60"', "a float"),
    ],
)
def test_a_wrong_type_fails(rule_runner: RuleRunner, field: str, text: str, expected: str) -> None:
    rule_runner.write_files({f"{FOLDER}/BUILD": kernel_task(changes={field: text})})
    message = f"The '{field}' field in target {ADDRESS} must be {expected}"
    with engine_error(InvalidTargetException, contains=message):
        rule_runner.get_target(ADDRESS)


def test_a_bad_category_fails(rule_runner: RuleRunner) -> None:
    rule_runner.write_files({f"{FOLDER}/BUILD": kernel_task(changes={"category": '"cuda2cuda"'})})
    with engine_error(InvalidTargetException, contains="must be one of ['hip2hip', 'repository'"):
        rule_runner.get_target(ADDRESS)


@pytest.mark.parametrize("field", ["timeout", "iterations"])
def test_a_non_positive_number_fails(rule_runner: RuleRunner, field: str) -> None:
    rule_runner.write_files({f"{FOLDER}/BUILD": kernel_task(changes={field: "0"})})
    message = f"The '{field}' field in target {ADDRESS} must be greater than zero"
    with engine_error(InvalidTargetException, contains=message):
        rule_runner.get_target(ADDRESS)


def test_an_unknown_field_fails(rule_runner: RuleRunner) -> None:
    rule_runner.write_files({f"{FOLDER}/BUILD": kernel_task(changes={"colour": '"red"'})})
    with engine_error(contains="Unrecognized field `colour=red`"):
        rule_runner.get_target(ADDRESS)


def test_a_suite_finds_the_tasks_below_its_folder(rule_runner: RuleRunner) -> None:
    rule_runner.write_files(
        {
            "tasks/triton2triton/BUILD": 'kernel_task_suite(name="all")\n',
            "tasks/triton2triton/b/BUILD": kernel_task("b"),
            "tasks/triton2triton/a/deeper/BUILD": kernel_task("a"),
            "tasks/hip2hip/c/BUILD": kernel_task("c"),  # another category's folder
        }
    )
    suite = rule_runner.get_target(Address("tasks/triton2triton", target_name="all"))
    found = rule_runner.request(SuiteTasks, [KernelTaskSuiteFieldSet.create(suite)])
    assert found.addresses == ("tasks/triton2triton/a/deeper:a", "tasks/triton2triton/b:b")


def test_a_suite_that_names_its_tasks_takes_them_from_any_category(rule_runner: RuleRunner) -> None:
    rule_runner.write_files(
        {
            "tasks/BUILD": 'kernel_task_suite(name="quick", tasks=["tasks/hip2hip/c", "tasks/triton2triton/b:b"])\n',
            "tasks/triton2triton/b/BUILD": kernel_task("b"),
            "tasks/triton2triton/a/BUILD": kernel_task("a"),  # below the folder, not named: left out
            "tasks/hip2hip/c/BUILD": kernel_task("c", {"category": '"hip2hip"'}),
        }
    )
    suite = rule_runner.get_target(Address("tasks", target_name="quick"))
    found = rule_runner.request(SuiteTasks, [KernelTaskSuiteFieldSet.create(suite)])
    assert found.addresses == ("tasks/hip2hip/c:c", "tasks/triton2triton/b:b")


def test_a_suite_naming_something_else_is_an_error(rule_runner: RuleRunner) -> None:
    rule_runner.write_files(
        {
            "tasks/BUILD": 'kernel_task_suite(name="quick", tasks=["tasks:other"])\nkernel_task_suite(name="other")\n',
        }
    )
    suite = rule_runner.get_target(Address("tasks", target_name="quick"))
    with engine_error(contains="names targets that are no kernel_task: tasks:other"):
        rule_runner.request(SuiteTasks, [KernelTaskSuiteFieldSet.create(suite)])
