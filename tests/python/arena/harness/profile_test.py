"""Reading the profiler's events (fake events on CPU; the real profiler runs in gpu_test.py)."""

import os
import subprocess
import sys

from arena.harness.profile import GpuOperation, describe, first_faster_case, gpu_operations, off_stream
from arena.harness.result import CaseOutcome


class _Event:
    def __init__(self, name: str, device: str, stream: int, start: int, kind: str = "kernel") -> None:
        self._values = (name, device, stream, start, kind)

    def name(self) -> str:
        return self._values[0]

    def device_type(self) -> str:
        return self._values[1]

    def device_resource_id(self) -> int:
        return self._values[2]

    def start_ns(self) -> int:
        return self._values[3]

    def activity_type(self) -> str:
        return self._values[4]


def test_device_events_are_kept_in_start_order_and_host_events_dropped():
    events = [
        _Event("_add_kernel", "DeviceType.CUDA", 7, 300),
        _Event("aten::fill_", "DeviceType.CPU", 1234, 100),
        _Event("fill marker", "DeviceType.CUDA", 7, 200),
    ]
    operations = gpu_operations(events)
    assert [o.name for o in operations] == ["fill marker", "_add_kernel"]
    assert operations[1] == GpuOperation("_add_kernel", "kernel", 7, 300)


class _OlderEvent(_Event):
    """torch before 2.13: no activity_type()."""

    def __getattribute__(self, name: str):  # type: ignore[no-untyped-def]
        if name == "activity_type":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_without_activity_types_the_device_type_names_the_kind():
    (operation,) = gpu_operations([_OlderEvent("_k", "DeviceType.CUDA", 7, 1)])
    assert operation == GpuOperation("_k", "cuda", 7, 1)


def test_work_on_another_stream_than_the_markers_is_off_stream():
    marker = GpuOperation("fill", "kernel", 7, 1)
    own = GpuOperation("_add_kernel", "kernel", 7, 2)
    side = GpuOperation("_k", "kernel", 13, 3)
    copy = GpuOperation("Memcpy DtoD", "gpu_memcpy", 21, 4)
    assert off_stream([marker, own]) == []
    assert off_stream([marker, own, side, copy]) == [side, copy]
    assert off_stream([]) == []


def test_the_log_counts_each_distinct_operation_of_the_candidate():
    operations = [GpuOperation("fill", "kernel", 7, 0)] + [GpuOperation("_k", "kernel", 7, i) for i in (1, 2)]
    text = describe(operations)
    assert text.splitlines() == ["2 GPU operation(s); harness stream 7", "2 x kernel on stream 7: _k"]
    assert describe([]).startswith("0 GPU operation(s); no GPU activity recorded")


def _case(name: str, baseline_us: tuple[float, ...], candidate_us: tuple[float, ...]) -> CaseOutcome:
    return CaseOutcome(
        name=name, correct=True, timed=bool(candidate_us), baseline_us=baseline_us, candidate_us=candidate_us
    )


def test_only_a_candidate_measured_faster_is_profiled():
    untimed = _case("small", (), ())
    same = _case("a", (100.0, 101.0, 99.0), (100.5, 99.5, 100.0))
    barely = _case("b", (100.0,) * 3, (99.2,) * 3)  # inside the 1% margin
    faster = _case("c", (100.0,) * 3, (98.0, 98.5, 97.0))
    assert first_faster_case([untimed, same, barely]) is None
    assert first_faster_case([untimed, same, faster, _case("d", (10.0,), (1.0,))]) == "c"


_PROFILE_ON_CPU = """
import sys, torch
from arena.harness.profile import profile_call
calls = []
marks = []
operations = profile_call(lambda: calls.append(torch.ones(4).sum()), torch.device("cpu"), marks.append)
print(len(calls), len(operations), marks, "torch._inductor" in sys.modules)
"""


def test_starting_the_profiler_does_not_import_inductor():
    """torch.profiler.profile's start imports inductor, dynamo and triton (seconds, in every
    faster candidate's evaluation); ours must not. Run in a fresh process: imports are global."""
    done = subprocess.run(
        [sys.executable, "-c", _PROFILE_ON_CPU],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last == "1 0 ['profiler started', 'profiled call returned', 'profiler stopped'] False", done.stdout


def test_vendor_library_kernels_are_named():
    from arena.harness.profile import library_of

    assert library_of("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT") == "cuBLAS/cuBLASLt"
    assert library_of("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64") == "cuBLAS/cuBLASLt"
    assert library_of("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm>(Params)") == "CUTLASS"
    assert library_of("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1") == "rocBLAS/hipBLASLt (Tensile)"
    assert library_of("cudnn::bn_fw_tr_1C11_kernel_NCHW") == "cuDNN"
    assert library_of("_add_kernel") is None and library_of("triton_poi_fused_add_0") is None


def test_a_library_the_baseline_does_not_use_is_borrowed():
    from arena.harness.profile import GpuOperation, library_kernels

    marker = GpuOperation("fill", "kernel", 7, 0)
    own = GpuOperation("_matmul_kernel", "kernel", 7, 1)
    blas = GpuOperation("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "kernel", 7, 2)
    assert library_kernels([marker, own, blas], [marker, own]) == [("cuBLAS/cuBLASLt", blas.name)]
    assert library_kernels([marker, blas], [marker, blas]) == []  # the baseline uses it too
    assert library_kernels([marker, own], [marker]) == []
