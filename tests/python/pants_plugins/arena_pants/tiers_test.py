"""The two tiers of task validation: which kernel_task targets get the full validation."""

from __future__ import annotations

import json

import pytest
from pants.core.util_rules import source_files
from pants.core.util_rules.partitions import Partitions
from pants.engine.addresses import Address
from pants.engine.fs import DigestContents, FileContent
from pants.testutil.rule_runner import QueryRule, RuleRunner

from arena_pants.rules import (
    KernelTaskFieldSet,
    KernelTaskTestRequest,
    ValidationTier,
    choose_tiers,
    folder_hash,
    partition_kernel_tasks,
)
from arena_pants.subsystem import KernelTaskSubsystem
from arena_pants.target_types import KernelTaskTarget

# The same folder as tests/python/arena/validation/record_test.py, and the same hash: the plugin
# and arena must agree on it, or every recorded task would be validated in full again.
FOLDER = {
    "BUILD": b'kernel_task(name="t")\n',
    "kernel.py": b"def f():\n    return 1\n",
    "sub/a.txt": b"a",
}
FOLDER_HASH = "0d26cf4d433f4b77db20df4c41473b6434219885eec9de5533d1805743b4bedc"


def test_the_folder_hash_is_arenas() -> None:
    files = DigestContents(FileContent(f"tasks/x/t/{name}", data) for name, data in FOLDER.items())
    assert folder_hash("tasks/x/t", files) == FOLDER_HASH
    others = DigestContents([*files, FileContent("tasks/x/tt/kernel.py", b"elsewhere")])
    assert folder_hash("tasks/x/t", others) == FOLDER_HASH  # a neighbour's files are not the task's


def test_changed_new_and_sampled_tasks_are_validated_in_full() -> None:
    hashes = {"t/a/one": "1", "t/a/two": "2", "t/a/three": "3", "t/b/four": "4", "t/b/five": "5"}
    record = {"t/a/one": "1", "t/a/two": "old", "t/b/four": "4", "t/b/five": "5"}
    full, fast = choose_tiers(hashes, record, sample={"t/b/five"}, every=False, batch=40)
    assert sorted(full) == ["t/a/three", "t/a/two", "t/b/five"]
    assert "new or changed" in full["t/a/two"] and "new or changed" in full["t/a/three"]
    assert "sample" in full["t/b/five"]
    assert fast == [["t/a/one"], ["t/b/four"]]  # one category to a batch


def test_fast_batches_are_bounded_and_every_flag_validates_all_in_full() -> None:
    hashes = {f"t/a/{i:02}": "h" for i in range(7)}
    _, fast = choose_tiers(hashes, dict(hashes), sample=set(), every=False, batch=3)
    assert [len(b) for b in fast] == [3, 3, 1] and sorted(sum(fast, [])) == sorted(hashes)
    full, fast = choose_tiers(hashes, dict(hashes), sample=set(), every=True, batch=3)
    assert sorted(full) == sorted(hashes) and fast == []


@pytest.fixture
def rule_runner() -> RuleRunner:
    return RuleRunner(
        target_types=[KernelTaskTarget],
        rules=[
            partition_kernel_tasks,
            *source_files.rules(),
            *KernelTaskSubsystem.rules(),
            QueryRule(Partitions, [KernelTaskTestRequest.PartitionRequest]),
        ],
        isolated_local_store=True,
    )


def _task(name: str) -> str:
    return (
        f'kernel_task(name="{name}", category="triton2triton", description="d", baseline=["kernel.py"], '
        f'entry="kernel.py:f", signature="f(x)", outputs=[{{"name": "y", "shape": [1]}}], '
        f'cases=[{{"name": "c", "dims": {{}}, "dtype": "float32", "seed": 1}}])\n'
    )


def test_the_partitions_follow_the_record(rule_runner: RuleRunner) -> None:
    rule_runner.write_files(
        {
            "tasks/x/a/BUILD": _task("a"), "tasks/x/a/kernel.py": "A = 1\n",
            "tasks/x/b/BUILD": _task("b"), "tasks/x/b/kernel.py": "B = 1\n",
            "tasks/x/c/BUILD": _task("c"), "tasks/x/c/kernel.py": "C = 1\n",
        }
    )  # fmt: skip
    field_sets = [
        KernelTaskFieldSet.create(rule_runner.get_target(Address(f"tasks/x/{n}", target_name=n))) for n in "abc"
    ]

    def partitions(record: dict[str, str], *options: str) -> dict[str, list[str]]:
        rule_runner.write_files(
            {"tasks/validated.json": json.dumps({"tasks": {k: {"hash": v} for k, v in record.items()}})}
        )
        rule_runner.set_options(list(options))
        found = rule_runner.request(Partitions, [KernelTaskTestRequest.PartitionRequest(tuple(field_sets))])
        tiers: dict[str, list[str]] = {}
        for partition in found:
            assert isinstance(partition.metadata, ValidationTier)
            tiers.setdefault(partition.metadata.tier, []).extend(fs.address.spec_path for fs in partition.elements)
        return tiers

    nothing = partitions({})
    assert sorted(nothing["full"]) == ["tasks/x/a", "tasks/x/b", "tasks/x/c"] and "fast" not in nothing
    current = partitions({"tasks/x/a": "wrong"})  # learn the real hashes from a second request below
    assert "tasks/x/a" in current["full"]
    a_hash = _hash_of(rule_runner, "tasks/x/a")
    b_hash = _hash_of(rule_runner, "tasks/x/b")
    tiers = partitions({"tasks/x/a": a_hash, "tasks/x/b": b_hash})
    assert tiers == {"full": ["tasks/x/c"], "fast": ["tasks/x/a", "tasks/x/b"]}
    sampled = partitions({"tasks/x/a": a_hash, "tasks/x/b": b_hash}, "--arena-tasks-sample=['tasks/x/b']")
    assert sorted(sampled["full"]) == ["tasks/x/b", "tasks/x/c"] and sampled["fast"] == ["tasks/x/a"]
    rule_runner.write_files({"tasks/x/a/kernel.py": "A = 2\n"})  # a changed task is validated in full again
    changed = partitions({"tasks/x/a": a_hash, "tasks/x/b": b_hash})
    assert sorted(changed["full"]) == ["tasks/x/a", "tasks/x/c"] and changed["fast"] == ["tasks/x/b"]


def _hash_of(rule_runner: RuleRunner, folder: str) -> str:
    import hashlib
    import os

    files = []
    for root, _, names in os.walk(os.path.join(rule_runner.build_root, folder)):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files.append(FileContent(os.path.relpath(path, rule_runner.build_root), f.read()))
    digest = folder_hash(folder, DigestContents(files))
    assert len(digest) == len(hashlib.sha256().hexdigest())
    return digest
