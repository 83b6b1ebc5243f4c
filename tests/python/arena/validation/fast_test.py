"""The fast tier through its real child process, on small add tasks under the interpreter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena.validation.fast import check_tasks_fast
from arena_testing.add_task import ADD_FILES, ADD_KERNEL, write_add_task

ADD = "tasks/triton2triton/add"


def _repo(root: Path, variants: dict[str, dict[str, str]]) -> Path:
    """tasks/triton2triton/<name> for each variant: the add task with those files replaced."""
    write_add_task(root)
    source = root / ADD
    for name, files in variants.items():
        folder = root / "tasks" / "triton2triton" / name
        shutil.copytree(source, folder)
        (folder / "BUILD").write_text((source / "BUILD").read_text().replace("name='add'", f"name={name!r}"))
        for relative, text in files.items():
            if relative == "BUILD":  # fields added to the declaration
                text = (folder / "BUILD").read_text().replace("kernel_task(\n", "kernel_task(\n" + text)
            (folder / relative).write_text(text)
    return root


def _address(name: str) -> str:
    return f"tasks/triton2triton/{name}"


def test_a_good_task_passes_every_check(tmp_path: Path) -> None:
    found = check_tasks_fast(_repo(tmp_path, {}), [ADD])
    findings = found[ADD]
    assert findings.failures == []
    assert "reference agrees with float64 on case 'small'" in findings.passed
    assert "baseline correct on case 'small'" in findings.passed
    assert any("wrong candidate is caught" in line for line in findings.passed)


def test_each_broken_task_fails_alone_and_the_rest_are_still_checked(tmp_path: Path) -> None:
    # Outputs the kernel leaves unwritten read NaN: never an earlier call's answer.
    half = ADD_KERNEL.format(op="+", block=128).replace("_add[(triton.cdiv(n, 128),)]", "_add[(triton.cdiv(n, 256),)]")
    repo = _repo(
        tmp_path,
        {
            "crash": {"reference.py": "import os\n\ndef add(x, y):\n    os._exit(3)\n"},
            "hang": {"reference.py": "def add(x, y):\n    while True:\n        pass\n"},
            "lazy_wrong": {"wrong/kernel.py": ADD_FILES["kernel.py"]},
            "half_wrong": {"wrong/kernel.py": half},
            "bad_baseline": {"kernel.py": ADD_KERNEL.format(op="*", block=128)},
            "forbidden": {
                # built at run time: the static rules cannot see it, the recorder of torch calls does
                "kernel.py": "import torch\n\ndef add(x, y):\n    return getattr(torch, 'ad' + 'd')(x, y)\n",
                "BUILD": "    forbidden=['torch.add'],\n",
            },
        },
    )
    names = ["crash", "add", "hang", "lazy_wrong", "half_wrong", "bad_baseline", "forbidden"]
    heard: list[str] = []
    found = check_tasks_fast(repo, [_address(n) for n in names], timeout_s=10, progress=lambda a, f, s: heard.append(a))
    assert list(found) == [_address(n) for n in names] and sorted(heard) == sorted(found)
    failures = {name: "\n".join(found[_address(name)].failures) for name in names}
    assert "ended the checking process (exit 3)" in failures["crash"]
    assert failures["add"] == ""  # checked by the process started after the crash
    assert "took over 10 s" in failures["hang"]
    assert "matches the reference on every small case" in failures["lazy_wrong"]
    assert failures["half_wrong"] == ""  # caught: its unwritten half read NaN
    assert "baseline on case 'small'" in failures["bad_baseline"] and "differ" in failures["bad_baseline"]
    assert "calls forbidden torch function(s): torch.add" in failures["forbidden"]


@pytest.mark.parametrize("broken", ["declaration", "wrong folder"])
def test_a_task_that_does_not_load_is_a_failure(tmp_path: Path, broken: str) -> None:
    repo = _repo(tmp_path, {})
    if broken == "declaration":
        (repo / ADD / "BUILD").write_text("kernel_task(name='add', category='nope')\n")
    else:
        shutil.rmtree(repo / ADD / "wrong")
    found = check_tasks_fast(repo, [ADD])
    assert found[ADD].failures


def test_a_child_that_cannot_start_fails_every_task_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, {"other": {}})
    # A child that exits before its first task (a broken environment, say).
    monkeypatch.setattr(
        "arena.validation.fast._child_command",
        lambda root, fd, addresses: (["python3", "-c", "import sys; sys.exit(7)"], {}),
    )
    found = check_tasks_fast(repo, [ADD, _address("other")])
    assert all("could not start (exit 7)" in f.failures[0] for f in found.values())


def test_a_baseline_that_selects_its_gpu_passes_on_the_cpu(tmp_path: Path) -> None:
    # `with torch.cuda.device(x.device.index)` in the wrapper (vLLM's kernel files): no GPU to
    # select on the CPU, so the interpreter's check device makes it a context that does nothing.
    kernel = ADD_KERNEL.format(op="+", block=128).replace(
        "    _add[(triton.cdiv(n, 128),)](x, y, z, n, BLOCK=128)\n",
        "    with torch.cuda.device(x.device.index):\n        _add[(triton.cdiv(n, 128),)](x, y, z, n, BLOCK=128)\n",
    )
    assert "torch.cuda.device" in kernel
    found = check_tasks_fast(_repo(tmp_path, {"selects": {"kernel.py": kernel}}), [_address("selects")])
    assert found[_address("selects")].failures == []
