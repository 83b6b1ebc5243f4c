"""The hip2hip and torch2hip tasks of the fake checkout (fixtures/checkout/README.md): each read as
data and listed as not imported, with the first reason that applies and its kind, grouped by kind
in the table and the JSON; nothing of theirs is written."""

from __future__ import annotations

from pathlib import Path

from arena.importer import hip_layout
from arena.importer.importer import import_checkout
from arena.importer.outcome import LaunchNotWritten
from arena.importer.report import format_table, report_document

ARENA = 'arena\'s HIP tasks are C launchers (extern "C") loaded with ctypes'
RELU = "hip2hip/gpumode/fake_relu"
GATHER = "hip2hip/others/fake_gather"
LAUNCHER = "hip2hip/others/fake_launcher"
PROGRAM = "hip2hip/others/fake_program"
TANH = "torch2hip/gpumode/1_fake_tanh"
HIP_TASKS = (RELU, GATHER, LAUNCHER, PROGRAM, TANH)


def test_each_hip_task_is_listed_with_the_first_reason_that_applies(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert {name: (o.imported, o.kind) for name, o in outcomes.items() if not name.startswith("triton2triton/")} == {
        RELU: (False, hip_layout.EXTENSION),
        GATHER: (False, hip_layout.BOUND),
        LAUNCHER: (False, hip_layout.UNREAD),
        PROGRAM: (False, hip_layout.PROGRAM),
        TANH: (False, hip_layout.NO_BASELINE),
    }
    assert outcomes[RELU].reason == f"a PyTorch C++ extension (PYBIND11_MODULE in hip/hip_fake_relu.hip): {ARENA}"
    # The binding the loader compiles with the source, not the first by path (src/alt_binding.cpp);
    # the source's comment that names PYBIND11_MODULE( and `int main(` is not code.
    assert outcomes[GATHER].reason == (
        "a launcher bound by a PyTorch C++ extension (PYBIND11_MODULE in src/fake_gather.cpp, which "
        f"kernel_loader.py compiles with src/fake_gather_cuda.hip): {ARENA}"
    )
    assert outcomes[PROGRAM].reason == (
        "a standalone HIP program (`int main` in main.hip, built by its Makefile) that checks its own "
        f"results; {ARENA} and checked against a PyTorch reference"
    )
    assert outcomes[TANH].reason == (
        "no HIP baseline: hip/hip_1_fake_tanh.hip (target_file_path) is empty, the agent writes it from "
        "pytorch_code_module/py_1_fake_tanh.py; arena's HIP tasks start from a baseline launcher that the "
        "candidate is timed against"
    )
    assert outcomes[LAUNCHER].reason == (
        "a HIP layout the importer does not read: src/scale.hip is neither a PyTorch C++ extension nor a "
        "standalone program, and no reading of a HIP task's test is written"
    )
    assert {o.kind for name, o in outcomes.items() if name.startswith("triton2triton/")} == {"", LaunchNotWritten.KIND}
    assert not any((out / "tasks" / category).exists() for category in hip_layout.HIP_CATEGORIES)


def test_a_binding_no_python_file_names_is_the_first_by_path(checkout: Path, tmp_path: Path) -> None:
    (checkout / "tasks" / GATHER / "kernel_loader.py").unlink()
    outcome = next(o for o in import_checkout(checkout, tmp_path / "out") if o.source == GATHER)
    assert outcome.reason.startswith(
        "a launcher bound by a PyTorch C++ extension (PYBIND11_MODULE in src/alt_binding.cpp, beside "
        "src/fake_gather_cuda.hip): "
    )


def test_a_missing_hip_source_or_several_are_that_task_s_reason(checkout: Path, tmp_path: Path) -> None:
    (checkout / "tasks" / RELU / "hip" / "hip_fake_relu.hip").unlink()
    config = checkout / "tasks" / PROGRAM / "config.yaml"
    config.write_text(config.read_text().replace("- main.hip\n", "- main.hip\n- other.hip\n"))
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    assert (outcomes[RELU].reason, outcomes[RELU].kind) == (
        "hip/hip_fake_relu.hip is not a file inside the task folder",
        "",
    )
    assert outcomes[PROGRAM].reason == "source_file_path lists 2 files; the importer reads one"


def test_the_table_and_the_json_group_the_tasks_not_imported_by_kind(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcomes = import_checkout(checkout, out)
    lines = format_table(outcomes).splitlines()
    start = lines.index("not imported, by reason:")
    assert lines[start + 1 :] == [
        f"    1  {hip_layout.UNREAD}",  # largest first, then by name
        f"    1  {hip_layout.EXTENSION}",
        f"    1  {LaunchNotWritten.KIND}",  # fake_add's (reason_kinds_test.py)
        f"    1  {hip_layout.BOUND}",
        f"    1  {hip_layout.PROGRAM}",
        f"    1  {hip_layout.NO_BASELINE}",
        "12 task(s): 6 imported, 6 not imported",
    ]
    document = report_document(outcomes, checkout, out)
    assert document["not_imported_by_kind"] == {
        hip_layout.EXTENSION: [RELU],
        hip_layout.BOUND: [GATHER],
        hip_layout.UNREAD: [LAUNCHER],
        hip_layout.PROGRAM: [PROGRAM],
        hip_layout.NO_BASELINE: [TANH],
        LaunchNotWritten.KIND: ["triton2triton/rocmbench/fake_add"],
    }
    kinds = {o["source"]: o["kind"] for o in document["outcomes"]}
    assert kinds[TANH] == hip_layout.NO_BASELINE and kinds["triton2triton/vllm/fake_scale"] == ""


def test_a_checkout_of_triton2triton_tasks_alone_has_their_group_lines(checkout: Path, tmp_path: Path) -> None:
    for category in hip_layout.HIP_CATEGORIES:
        for path in sorted((checkout / "tasks" / category).rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        (checkout / "tasks" / category).rmdir()
    table = format_table(import_checkout(checkout, tmp_path / "out"))
    lines = table.splitlines()
    start = lines.index("not imported, by reason:")
    assert lines[start + 1 :] == [f"    1  {LaunchNotWritten.KIND}", "7 task(s): 6 imported, 1 not imported"]
