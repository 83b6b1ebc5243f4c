from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from arena.errors import ArenaError, TaskDeclarationError, UnknownTask
from arena.task.load import find_repo_root, load_task, load_tasks, parse_address
from arena.task.task import Category, Entry, Tolerance

WriteTask = Callable[..., Path]
# The good declaration's cases (conftest.TRITON_FIELDS): "small" (untimed) and "big" (timed).
SMALL: dict[str, Any] = {"name": "small", "dims": {"M": 7, "N": 129}, "dtype": "float32", "seed": 1}
BIG: dict[str, Any] = {"name": "big", "dims": {"M": 4096, "N": 4096}, "dtype": "float16", "seed": 3, "timed": True}
CASES = [SMALL, BIG]


def test_an_output_written_in_place_takes_its_inputs_shape_and_dtype(triton_task: WriteTask, tmp_path: Path) -> None:
    outputs = [{"name": "y", "shape": ["M"], "dtype": "float32"}, {"name": "x", "inplace": True}]
    triton_task(outputs=outputs)
    (task,) = load_tasks(tmp_path)
    assert [(s.name, s.shape, s.dtype, s.inplace) for s in task.outputs] == [
        ("y", ("M",), "float32", False),
        ("x", ("M", "N"), "$dtype", True),
    ]


def test_good_triton_task_loads(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task()
    (task,) = load_tasks(tmp_path)
    assert task.address == "tasks/triton2triton/softmax:softmax"
    assert task.task_dir == "tasks/triton2triton/softmax"
    assert task.category is Category.TRITON2TRITON
    assert task.editable == ("kernel.py",)
    assert task.entry == Entry("kernel.py", "softmax")
    assert task.reference == Entry("reference.py", "softmax")
    assert [c.name for c in task.timed_cases] == ["big"]
    assert task.cases[1].dists["x"].kind == "wide"
    assert task.inputs[0].dist.params == {"std": 2.0}
    # Overrides merge over the defaults, key by key.
    assert task.tolerances["float16"] == Tolerance(atol=2e-3, rtol=1e-3)
    assert task.tolerances["float32"] == Tolerance(atol=1e-5, rtol=1e-5)
    assert task.exemplars == ("exemplars/fast",) and task.wrong == "wrong"
    assert task.budget_seconds == 3600 and task.iterations == 3 and task.archs == ("sm_90", "gfx942")


def test_good_hip_task_loads(hip_task: WriteTask, tmp_path: Path) -> None:
    hip_task()
    task = load_task(tmp_path, "tasks/hip2hip/softmax_hip")
    assert task.abi == ("x", "y", "M", "N")
    assert task.category.is_hip


@pytest.mark.parametrize(
    "address",
    [
        "tasks/triton2triton/softmax",
        "tasks/triton2triton/softmax:softmax",
        "//tasks/triton2triton/softmax:softmax",
        "tasks/triton2triton/softmax/",
    ],
)
def test_load_task_accepts_address_forms(triton_task: WriteTask, tmp_path: Path, address: str) -> None:
    triton_task()
    assert load_task(tmp_path, address).address == "tasks/triton2triton/softmax:softmax"


@pytest.mark.parametrize(
    "address", ["tasks/triton2triton/nope", "tasks/triton2triton/softmax:other", "src/x", "tasks/../x"]
)
def test_load_task_unknown(triton_task: WriteTask, tmp_path: Path, address: str) -> None:
    triton_task()
    with pytest.raises(UnknownTask):
        load_task(tmp_path, address)


def test_parse_address() -> None:
    assert parse_address("//tasks/a/b:c") == ("tasks/a/b", "c")
    assert parse_address("tasks/a/b") == ("tasks/a/b", "b")


def test_find_repo_root(tmp_path: Path) -> None:
    (tmp_path / "pants.toml").write_text("")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert find_repo_root(tmp_path / "a" / "b") == tmp_path.resolve()
    with pytest.raises(ArenaError):
        find_repo_root(Path("/"))


def test_load_tasks_sorted_and_skips_other_targets(triton_task: WriteTask, hip_task: WriteTask, tmp_path: Path) -> None:
    triton_task()
    hip_task()
    (tmp_path / "tasks" / "hip2hip" / "BUILD").write_text('kernel_task_suite(name="all")\n')
    assert [t.address for t in load_tasks(tmp_path)] == [
        "tasks/hip2hip/softmax_hip:softmax_hip",
        "tasks/triton2triton/softmax:softmax",
    ]


def test_build_file_is_never_executed(triton_task: WriteTask, tmp_path: Path) -> None:
    folder = triton_task()
    marker = tmp_path / "ran"
    text = (folder / "BUILD").read_text()
    (folder / "BUILD").write_text(f"open({str(marker)!r}, 'w')\n" + text)
    load_tasks(tmp_path)
    assert not marker.exists()
    (folder / "BUILD").write_text(text.replace("flops=", f"flops=open({str(marker)!r}, 'w') or "))
    with pytest.raises(TaskDeclarationError, match="field 'flops': must be a literal"):
        load_tasks(tmp_path)
    assert not marker.exists()


def _mutate(**changes: str | None) -> Callable[[dict[str, str]], dict[str, str]]:
    """A change to the good files: name=text adds or replaces, name=None removes.

    In names, '__' stands for '/' and '_DOT_' for '.'.
    """

    def change(files: dict[str, str]) -> dict[str, str]:
        out = dict(files)
        for name, text in changes.items():
            name = name.replace("__", "/").replace("_DOT_", ".")
            if text is None:
                out.pop(name)
            else:
                out[name] = text
        return out

    return change


# (id, field overrides, files (None: the good ones), expected message fragment)
BAD = [
    ("category", dict(category="cuda2cuda"), None, "field 'category': 'cuda2cuda' is not one of"),
    ("unknown-field", dict(colour="red"), None, "field 'colour': is not a kernel_task field"),
    (
        "missing-file",
        dict(baseline=["kernel.py", "helper.py"], editable=["kernel.py"]),
        None,
        "file 'helper.py' does not exist",
    ),
    ("dotdot", dict(sources=["../x.py"]), None, "field 'sources': path '../x.py' must not contain '..'"),
    ("absolute", dict(sources=["/etc/passwd"]), None, "must be relative"),
    ("not-normal", dict(sources=["./reference.py"]), None, "is not normalised"),
    (
        "entry-not-baseline",
        dict(entry="reference.py:softmax"),
        None,
        "field 'entry': file 'reference.py' is not in the baseline",
    ),
    (
        "entry-not-editable",
        dict(baseline=["kernel.py", "util.py"], editable=["util.py"]),
        _mutate(
            util_DOT_py="x = 1\n",
            exemplars__fast__kernel_DOT_py=None,
            wrong__kernel_DOT_py=None,
            exemplars__fast__util_DOT_py="",
            wrong__util_DOT_py="",
        ),
        "field 'entry': file 'kernel.py' is not editable",
    ),
    ("entry-form", dict(entry="kernel.py"), None, "field 'entry': 'kernel.py' must be 'file:symbol'"),
    (
        "source-editable",
        dict(editable=["kernel.py", "reference.py"]),
        None,
        "field 'sources': 'reference.py' is editable",
    ),
    (
        "undefined-dim",
        dict(cases=[CASES[0], {**BIG, "dims": {"M": 4}}]),
        None,
        "field 'cases': case 'big' uses dim 'N' not set in its dims",
    ),
    ("case-dtype", dict(cases=[{**BIG, "dtype": "$dtype"}]), None, "case 'big' dtype '$dtype' is not one of"),
    (
        "tensor-dtype",
        dict(outputs=[{"name": "y", "shape": ["M"], "dtype": "float8"}]),
        None,
        "field 'outputs': output 'y' dtype 'float8'",
    ),
    (
        "dist-kind",
        dict(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "cauchy"}}]),
        None,
        "has kind 'cauchy'",
    ),
    (
        "dist-param",
        dict(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "normal", "sigma": 1}}]),
        None,
        "unknown key(s) 'sigma'",
    ),
    (
        "dist-low-high",
        dict(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "uniform", "low": 2, "high": 1}}]),
        None,
        "needs low < high",
    ),
    (
        "randint-required",
        dict(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "randint", "low": 0}}]),
        None,
        "is missing 'high'",
    ),
    (
        "randint-dim",
        dict(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "randint", "low": 0, "high": "V"}}]),
        None,
        "case 'small' uses dim 'V' not set in its dims",
    ),
    (
        "inplace-no-input",
        dict(outputs=[{"name": "cache", "inplace": True}]),
        None,
        "output 'cache' is inplace but no input has its name",
    ),
    (
        "inplace-false",
        dict(outputs=[{"name": "x", "inplace": False}]),
        None,
        "inplace, when given, is True",
    ),
    (
        "inplace-shape",
        dict(outputs=[{"name": "x", "inplace": True, "shape": ["M", "N"]}]),
        None,
        "unknown key(s) 'shape'",
    ),
    (
        "inplace-twice",
        dict(outputs=[{"name": "x", "inplace": True}, {"name": "x", "inplace": True}]),
        None,
        "name 'x' is used twice",
    ),
    (
        "permutation-range",
        dict(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "permutation", "low": 0, "high": 100}}]),
        None,
        "more than the 100 distinct values its permutation can draw",
    ),
    (
        "permutation-float-bound",
        dict(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "permutation", "low": 0, "high": 1.5}}]),
        None,
        "must be an integer",
    ),
    (
        "arange-step",
        dict(inputs=[{"name": "x", "shape": ["M", "N"], "dist": {"kind": "arange", "step": 0}}]),
        None,
        "needs a step other than 0",
    ),
    (
        "case-dist-input",
        dict(cases=[{**BIG, "dists": {"z": {"kind": "normal"}}}]),
        None,
        "dists names 'z', which is not an input",
    ),
    ("duplicate-case", dict(cases=[BIG, BIG]), None, "case name 'big' is used twice"),
    ("seed", dict(cases=[{**BIG, "seed": 1.5}]), None, "case 'big' seed must be an integer"),
    ("seed-bool", dict(cases=[{**BIG, "seed": True}]), None, "case 'big' seed must be an integer"),
    ("weight", dict(cases=[{**BIG, "weight": 0}]), None, "case 'big' weight must be > 0"),
    ("no-timed", dict(cases=[CASES[0]]), None, "at least one case must be timed"),
    ("case-key", dict(cases=[{**BIG, "timd": True}]), None, "unknown key(s) 'timd'"),
    (
        "tolerance-dtype",
        dict(tolerances={"half": {"atol": 1}}),
        None,
        "field 'tolerances': 'half' is not one of",
    ),
    ("tolerance-key", dict(tolerances={"float16": {"eps": 1}}), None, "unknown key(s) 'eps'"),
    ("tolerance-negative", dict(tolerances={"float16": {"atol": -1}}), None, "float16 atol must be >= 0"),
    ("flops-parse", dict(flops="5*M*"), None, "field 'flops': case 'small': formula '5*M*' does not parse"),
    ("flops-name", dict(flops="2*M*K"), None, "field 'flops': case 'small': formula '2*M*K' uses 'K'"),
    ("bytes-call", dict(bytes="__import__('os')"), None, "field 'bytes'"),
    ("abi-dim-on-triton", dict(abi=["x", "M"]), None, "field 'abi': 'M' is not an input or a scalar"),
    (
        "exemplar-missing",
        dict(exemplars=["exemplars/none"]),
        None,
        "field 'exemplars': folder 'exemplars/none' does not exist",
    ),
    (
        "exemplar-outside-allowlist",
        dict(),
        _mutate(exemplars__fast__extra_DOT_py="x = 1\n"),
        "field 'exemplars': exemplars/fast/extra.py is not at an editable path",
    ),
    ("wrong-missing", dict(wrong="wrongs"), None, "field 'wrong': folder 'wrongs' does not exist"),
    ("budget", dict(budget_seconds=0), None, "field 'budget_seconds': value must be >= 1"),
    ("iterations", dict(iterations=-1), None, "field 'iterations'"),
    ("archs", dict(archs=[]), None, "field 'archs': must not be empty"),
    ("archs-spelling", dict(archs=["sm_90", "mi300x"]), None, "field 'archs': 'mi300x' is neither an NVIDIA"),
    (
        "reference-form",
        dict(reference="torch.softmax"),
        None,
        "field 'reference': 'torch.softmax' must be 'file:symbol'",
    ),
    (
        "reference-missing",
        dict(reference="ref.py:softmax"),
        None,
        "field 'reference': file 'ref.py' does not exist",
    ),
    ("duplicate-tensor", dict(outputs=[{"name": "x", "shape": ["M"]}]), None, "name 'x' is used twice"),
    ("forbidden", dict(forbidden=["torch softmax"]), None, "is not a dotted name"),
    ("description", dict(description=""), None, "field 'description': must not be empty"),
    ("name-type", dict(name=3), None, "field 'name': expected a string"),
    ("baseline-type", dict(baseline="kernel.py"), None, "field 'baseline': expected a list of strings, got str"),
    ("cases-type", dict(cases={"big": BIG}), None, "field 'cases': expected a list, got dict"),
    ("budget-bool", dict(budget_seconds=True), None, "field 'budget_seconds': expected an integer, got bool"),
    ("timeout-type", dict(timeout="60"), None, "field 'timeout': expected a number, got str '60'"),
    ("timeout-zero", dict(timeout=0), None, "field 'timeout': seconds must be > 0, got 0"),
    ("skip-type", dict(skip=True), None, "field 'skip': expected a string, got bool"),
    ("skip-blank", dict(skip="  "), None, "field 'skip': give the reason the task is skipped"),
]


@pytest.mark.parametrize("overrides, files, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_declaration(
    triton_task: WriteTask, triton_files: dict, tmp_path: Path, overrides: dict, files: Any, message: str
) -> None:
    triton_task(files=files(triton_files) if files else None, **overrides)
    with pytest.raises(TaskDeclarationError) as raised:
        load_tasks(tmp_path)
    text = str(raised.value)
    assert message in text
    assert text.startswith("tasks/triton2triton/softmax/BUILD: kernel_task")


BAD_DISTRIBUTIONS = [
    ("half-normal-std", {"kind": "half_normal", "std": 0}, "needs std > 0"),
    (
        "cumsum-base",
        {"kind": "cumsum", "base": "wide", "dim": 0},
        "has base 'wide'; expected one of normal, uniform, half_normal, randint, constant",
    ),
    ("cumsum-dim-missing", {"kind": "cumsum", "base": "normal"}, "is missing 'dim'"),
    ("cumsum-dim-int", {"kind": "cumsum", "base": "normal", "dim": 0.5}, "dist dim must be an integer"),
    ("cumsum-base-param", {"kind": "cumsum", "base": "normal", "dim": 0, "low": 1}, "unknown key(s) 'low'"),
    ("cumsum-base-value", {"kind": "cumsum", "base": "normal", "dim": 0, "std": -1}, "base needs std > 0"),
    ("cumsum-axis", {"kind": "cumsum", "base": "normal", "dim": 2}, "'x' is drawn along dim 2, which its 2-dim"),
    (
        "cumsum-randint-dim",
        {"kind": "cumsum", "base": "randint", "dim": 0, "low": 0, "high": "V"},
        "case 'small' uses dim 'V' not set in its dims",
    ),
    ("tril-axes", {"kind": "tril", "base": "normal", "rows": 1, "cols": 1}, "needs two axes, rows and cols"),
    ("tril-same-axis", {"kind": "tril", "base": "normal", "rows": 0, "cols": -2}, "tril rows and cols are one axis"),
    ("tril-missing", {"kind": "tril", "base": "normal", "rows": 0}, "is missing 'cols'"),
    (
        "tril-diagonal",
        {"kind": "tril", "base": "normal", "rows": 0, "cols": 1, "diagonal": 0.5},
        "dist diagonal must be an integer",
    ),
]


@pytest.mark.parametrize("dist, message", [b[1:] for b in BAD_DISTRIBUTIONS], ids=[b[0] for b in BAD_DISTRIBUTIONS])
def test_bad_distribution(triton_task: WriteTask, tmp_path: Path, dist: dict, message: str) -> None:
    triton_task(inputs=[{"name": "x", "shape": ["M", "N"], "dist": dist}])
    with pytest.raises(TaskDeclarationError, match="field 'inputs'|field 'cases'") as raised:
        load_tasks(tmp_path)
    assert message in str(raised.value)


def test_half_normal_cumsum_and_tril_load_with_their_parameters(triton_task: WriteTask, tmp_path: Path) -> None:
    inputs = [
        {"name": "x", "shape": ["M", "N"], "dist": {"kind": "half_normal", "std": 0.1, "low": 0.01}},
        {"name": "g", "shape": ["M", "N"], "dist": {"kind": "cumsum", "base": "uniform", "dim": -1, "low": -0.1}},
        {
            "name": "a",
            "shape": ["M", "N"],
            "dist": {"kind": "tril", "base": "normal", "rows": 0, "cols": 1, "std": 0.1},
        },
    ]
    triton_task(inputs=inputs)
    (task,) = load_tasks(tmp_path)
    assert [(s.dist.kind, s.dist.params) for s in task.inputs] == [
        ("half_normal", {"std": 0.1, "low": 0.01}),
        ("cumsum", {"base": "uniform", "dim": -1, "low": -0.1}),
        ("tril", {"base": "normal", "rows": 0, "cols": 1, "std": 0.1}),
    ]


def test_message_names_file_target_and_field(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(
        cases=[{**BIG, "dims": {"M": 4, "N": 4}, "dtype": "float32"}],
        inputs=[{"name": "x", "shape": ["M", "K"]}],
        flops="",
    )
    with pytest.raises(TaskDeclarationError) as raised:
        load_tasks(tmp_path)
    assert str(raised.value) == (
        "tasks/triton2triton/softmax/BUILD: kernel_task 'softmax': field 'cases': "
        "case 'big' uses dim 'K' not set in its dims (by 'x')"
    )


def test_pants_only_fields_accepted(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(tags=["slow"], task_files=["**/*", "!BUILD"])
    assert load_tasks(tmp_path)[0].name == "softmax"


def test_required_field(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(drop=("entry",))
    with pytest.raises(TaskDeclarationError, match="field 'entry': is required"):
        load_tasks(tmp_path)
    triton_task(entry=None)  # as in Pants, None is the field left out
    with pytest.raises(TaskDeclarationError, match="field 'entry': is required"):
        load_tasks(tmp_path)


def test_optional_fields_take_their_defaults(triton_task: WriteTask, tmp_path: Path) -> None:
    dropped = ("name", "reference", "sources", "inputs", "tolerances", "forbidden", "exemplars", "wrong")
    triton_task(cases=CASES, drop=dropped)
    (task,) = load_tasks(tmp_path)
    assert task.name == "softmax"  # the folder's name, as Pants names an unnamed target
    assert task.address == "tasks/triton2triton/softmax:softmax"
    assert task.reference is None and task.inputs == () and task.sources == ()
    assert task.skip == "" and task.timeout is None


def test_skip_and_timeout(triton_task: WriteTask, tmp_path: Path) -> None:
    triton_task(skip=" needs FP8 hardware ", timeout=90)
    (task,) = load_tasks(tmp_path)
    assert task.skip == "needs FP8 hardware"
    assert task.timeout == 90.0 and isinstance(task.timeout, float)


def test_positional_and_star_arguments_rejected(triton_task: WriteTask, tmp_path: Path) -> None:
    folder = triton_task()
    text = (folder / "BUILD").read_text()
    (folder / "BUILD").write_text(text.replace("kernel_task(\n", "kernel_task('x',\n", 1))
    with pytest.raises(TaskDeclarationError, match="keyword arguments only"):
        load_tasks(tmp_path)
    (folder / "BUILD").write_text(text.replace("kernel_task(\n", "kernel_task(**{'a': 1},\n", 1))
    with pytest.raises(TaskDeclarationError, match=r"\*\*kwargs"):
        load_tasks(tmp_path)


def test_symlink_escaping_task_folder(triton_task: WriteTask, tmp_path: Path) -> None:
    folder = triton_task()
    (tmp_path / "secret.py").write_text("x = 1\n")
    os.symlink(tmp_path / "secret.py", folder / "leak.py")
    (folder / "BUILD").write_text(
        (folder / "BUILD").read_text().replace("sources=['reference.py']", "sources=['reference.py', 'leak.py']")
    )
    with pytest.raises(TaskDeclarationError, match="field 'sources': path 'leak.py' leads outside the task folder"):
        load_tasks(tmp_path)


def test_symlink_in_exemplar(triton_task: WriteTask, triton_files: dict, tmp_path: Path) -> None:
    folder = triton_task(files=_mutate(exemplars__fast__kernel_DOT_py=None)(triton_files))
    (folder / "exemplars/fast").mkdir(parents=True)
    os.symlink(folder / "kernel.py", folder / "exemplars/fast/kernel.py")
    with pytest.raises(TaskDeclarationError, match="is a symlink"):
        load_tasks(tmp_path)


def test_hip_rules(hip_task: WriteTask, hip_files: dict, tmp_path: Path) -> None:
    hip_task(abi=["x", "y", "M", "Q"])
    with pytest.raises(
        TaskDeclarationError,
        match="field 'abi': 'Q' is not an input, output or scalar, nor a dim of case 'small'",
    ):
        load_tasks(tmp_path)
    hip_task(abi=[])
    with pytest.raises(TaskDeclarationError, match="must list its launcher arguments"):
        load_tasks(tmp_path)
    hip_task(entry="kernel.py:launch", baseline=["kernel.py"], files={"kernel.py": "", **hip_files})
    with pytest.raises(TaskDeclarationError, match="must end in .hip or .cu"):
        load_tasks(tmp_path)


def test_scalars(hip_task: WriteTask, tmp_path: Path) -> None:
    hip_task(scalars={"scale": 0.5, "rows": "M"}, abi=["x", "y", "rows", "scale"])
    assert load_tasks(tmp_path)[0].scalars == {"scale": 0.5, "rows": "M"}
    hip_task(scalars={"cols": "K"})
    with pytest.raises(TaskDeclarationError, match="uses dim 'K' not set in its dims \\(by scalar 'cols'\\)"):
        load_tasks(tmp_path)


def test_repository_entry_need_not_be_editable(triton_task: WriteTask, triton_files: dict, tmp_path: Path) -> None:
    files = triton_files | {
        "lib/core.py": "x = 1\n",
        "exemplars/fast/lib/core.py": "x = 2\n",
        "wrong/lib/core.py": "x = 3\n",
    }
    for name in ("exemplars/fast/kernel.py", "wrong/kernel.py"):
        files.pop(name)
    triton_task(
        category="repository",
        files=files,
        baseline=["kernel.py", "lib/core.py"],
        editable=["lib"],
        build="make",
        bench="make bench",
    )
    (task,) = load_tasks(tmp_path)
    assert task.editable == ("lib",) and task.build == "make"


def test_two_targets_with_one_name(triton_task: WriteTask, tmp_path: Path) -> None:
    folder = triton_task()
    text = (folder / "BUILD").read_text()
    (folder / "BUILD").write_text(text + text)
    with pytest.raises(TaskDeclarationError, match="used twice in this file"):
        load_tasks(tmp_path)
