from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from arena.harness.settings import HarnessSettings
from arena.runner import devices
from arena.runner.devices import discover_lanes, lane_settings, parse_lanes


def test_lanes_given_in_the_environment_win() -> None:
    assert discover_lanes({"ARENA_DEVICES": "0,1, 3"}) == ("0", "1", "3")
    assert discover_lanes({"ARENA_DEVICES": "cpu"}) == ("cpu",)
    assert discover_lanes({"CUDA_VISIBLE_DEVICES": "4,5"}) == ("0", "1")


@pytest.mark.parametrize("text", ["", "gpu0", "0,0", "-1"])
def test_bad_lanes_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_lanes(text)


def test_no_gpu_means_one_cpu_lane(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "count_nvidia_gpus", lambda: 0)
    monkeypatch.setattr(devices, "count_rocm_gpus", lambda: 0)
    assert discover_lanes({}) == ("cpu",)
    monkeypatch.setattr(devices, "count_rocm_gpus", lambda: 2)
    assert discover_lanes({}) == ("0", "1")


def test_the_cpu_lane_names_the_cpu_backend_so_the_harness_caps_memory() -> None:
    settings = lane_settings(HarnessSettings(), "cpu")  # the runner's default backend is "auto"
    assert (settings.backend, settings.device) == ("cpu", 0)
    assert lane_settings(HarnessSettings(backend="cpu"), "cpu").backend == "cpu"


def test_a_gpu_lane_pins_its_gpu_and_keeps_the_backend() -> None:
    settings = lane_settings(HarnessSettings(backend="rocm"), "3")
    assert (settings.backend, settings.device) == ("rocm", 3)
    assert lane_settings(HarnessSettings(), "1").backend == "auto"


def test_a_gpu_backend_on_the_cpu_lane_is_refused() -> None:
    with pytest.raises(ValueError, match="'cuda' needs a GPU lane"):
        lane_settings(HarnessSettings(backend="cuda"), "cpu")
    with pytest.raises(ValueError, match="neither a GPU index nor 'cpu'"):
        lane_settings(HarnessSettings(), "gpu0")


def address_space_limit_in_a_child(backend: str) -> int:
    """RLIMIT_AS after the harness child's set_limits(backend), in a fresh process."""
    code = (
        "import resource, sys\n"
        "from arena.harness.child import set_limits\n"
        "set_limits(sys.argv[1])\n"
        "print(resource.getrlimit(resource.RLIMIT_AS)[0])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", code, backend], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    return int(done.stdout.split()[-1])


def test_a_cpu_lane_job_runs_under_the_address_space_limit() -> None:
    # What the harness child does with the backend it is handed: "auto" (what the CPU lane
    # passed before lane_settings) leaves the address space as it was.
    assert address_space_limit_in_a_child("auto") == resource.getrlimit(resource.RLIMIT_AS)[0]
    limited = address_space_limit_in_a_child(lane_settings(HarnessSettings(), "cpu").backend)
    assert 0 < limited <= 64 << 30


def test_two_gpu_lanes_or_more_get_cpus_of_their_own_unless_the_operator_says(monkeypatch):
    import os

    from arena.limits.cpus import split
    from arena.runner.devices import CPUS_VARIABLE, lane_cpus

    mine = os.sched_getaffinity(0)
    monkeypatch.setattr(devices, "near_cpus", lambda gpus, environ: {})  # a machine whose GPUs' places are unknown
    assert lane_cpus(("0",), {}) == {} and lane_cpus(("cpu",), {}) == {}  # one lane: it has every CPU
    assert lane_cpus(("0", "1"), {}) == dict(zip((0, 1), split(mine, 2)))
    assert lane_cpus(("0", "1"), {CPUS_VARIABLE: "off"}) == {}
    assert lane_cpus(("0", "1"), {CPUS_VARIABLE: "0:0-47;1:48-95"}) == {0: set(range(48)), 1: set(range(48, 96))}
    for wrong in ("0:0-47", "0:0-47;2:48-95", "0:;1:3", "zero:1;1:2", "0:1-x;1:2"):
        with pytest.raises(ValueError, match=CPUS_VARIABLE):
            lane_cpus(("0", "1"), {CPUS_VARIABLE: wrong})


def test_lanes_near_the_same_cpus_share_them_and_an_unknown_gpu_means_the_plain_split():
    from arena.runner.devices import near_shares

    mine = frozenset(range(16))
    near = {0: frozenset(range(8)), 1: frozenset(range(8)), 2: frozenset(range(8, 16)), 3: frozenset(range(8, 16))}
    assert near_shares([0, 1, 2, 3], near, mine) == {
        0: frozenset(range(4)), 1: frozenset(range(4, 8)), 2: frozenset(range(8, 12)), 3: frozenset(range(12, 16))
    }  # fmt: skip
    assert near_shares([0, 2], near, frozenset({1, 2, 9})) == {0: {1, 2}, 2: {9}}  # only the CPUs we may use
    assert near_shares([0, 1, 2], {0: near[0], 1: near[1]}, mine) == {}  # GPU 2's unknown
    assert near_shares([0, 2], near, frozenset(range(8))) == {}  # none of GPU 2's near CPUs is ours
    assert near_shares([0, 2], {0: frozenset(range(8)), 2: frozenset(range(4, 12))}, mine) == {}  # overlapping


def test_each_gpus_pci_address_in_the_runtimes_order(tmp_path, monkeypatch):
    import subprocess

    from arena.runner.devices import nvidia_pci_addresses, rocm_pci_addresses

    for node, simds, location in ((0, 0, 0), (1, 304, 0x1800), (2, 304, 0x3B08), (10, 304, 0x9A00)):
        (tmp_path / str(node)).mkdir()
        (tmp_path / str(node) / "properties").write_text(f"simd_count {simds}\nlocation_id {location}\ndomain 0\n")
    monkeypatch.setattr(devices, "KFD_NODES", tmp_path)
    assert rocm_pci_addresses() == ["0000:18:00.0", "0000:3b:01.0", "0000:9a:00.0"]  # node 10 after node 2

    listing = "NVIDIA H200, 00000000:9A:00.0\nNVIDIA H200, 00000000:18:00.0\n"
    answer = subprocess.CompletedProcess([], 0, stdout=listing)
    monkeypatch.setattr(devices.subprocess, "run", lambda *args, **kwargs: answer)
    assert nvidia_pci_addresses({}) == ["0000:18:00.0", "0000:9a:00.0"]
    answer.stdout = "NVIDIA H200, 00000000:18:00.0\nNVIDIA L4, 00000000:9A:00.0\n"
    assert nvidia_pci_addresses({}) == []  # two models: CUDA numbers the fastest first
    assert nvidia_pci_addresses({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}) == ["0000:18:00.0", "0000:9a:00.0"]


def test_lane_cpus_are_the_cpus_near_each_gpu_where_known(tmp_path, monkeypatch):
    from arena.limits.cpus import split
    from arena.runner.devices import lane_cpus

    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2:
        pytest.skip("needs two CPUs: one near each GPU")
    for address, cpus in (("0000:18:00.0", mine[-1]), ("0000:9a:00.0", mine[0])):
        (tmp_path / address).mkdir()
        (tmp_path / address / "local_cpulist").write_text(f"{cpus}\n")
    monkeypatch.setattr(devices, "PCI_DEVICES", tmp_path)
    monkeypatch.setattr(devices, "nvidia_pci_addresses", lambda environ: ["0000:18:00.0", "0000:9a:00.0"])
    assert lane_cpus(("0", "1"), {}) == {0: {mine[-1]}, 1: {mine[0]}}  # not the split's order
    # Renumbered by a visible-devices variable: which is which is not known, so the plain split.
    renumbered = lane_cpus(("0", "1"), {"CUDA_VISIBLE_DEVICES": "1,0"})
    assert renumbered == dict(zip((0, 1), split(frozenset(mine), 2)))
