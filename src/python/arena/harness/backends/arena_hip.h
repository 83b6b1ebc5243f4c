// arena_hip.h: the HIP runtime subset that arena task kernels use, so one HIP source builds
// with hipcc on ROCm and with nvcc on CUDA. The harness pre-includes it (`-include arena_hip.h`);
// task sources include nothing themselves. On ROCm it is the real HIP headers; on CUDA each
// name below maps to its CUDA equivalent, and nothing else is defined. Add a name only when a
// task needs it.
#pragma once

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
// ROCm (hipcc / clang -x hip): the real thing.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>

#elif defined(__CUDACC__)
// CUDA (nvcc): map the subset onto the CUDA runtime.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Errors and streams.
typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
#define hipSuccess cudaSuccess
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetErrorString cudaGetErrorString

// Memory and synchronisation.
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipStreamSynchronize cudaStreamSynchronize

// Launch: hipLaunchKernelGGL(kernel, grid, block, shared bytes, stream, args...).
#define hipLaunchKernelGGL(kernel, grid, block, shared, stream, ...) \
  kernel<<<(grid), (block), (shared), (stream)>>>(__VA_ARGS__)

// Reduced-precision types: HIP's names for CUDA's (same conversion functions on both).
typedef __nv_bfloat16 __hip_bfloat16;

// Warp shuffles: HIP's are over the whole warp, CUDA's take a lane mask (all lanes here).
// warpSize is built into CUDA; HIP's non-_sync forms have no mask argument.
#define ARENA_FULL_MASK 0xffffffffu
template <typename T>
__device__ inline T __shfl(T v, int lane, int width = warpSize) {
  return __shfl_sync(ARENA_FULL_MASK, v, lane, width);
}
template <typename T>
__device__ inline T __shfl_up(T v, unsigned int delta, int width = warpSize) {
  return __shfl_up_sync(ARENA_FULL_MASK, v, delta, width);
}
template <typename T>
__device__ inline T __shfl_down(T v, unsigned int delta, int width = warpSize) {
  return __shfl_down_sync(ARENA_FULL_MASK, v, delta, width);
}
template <typename T>
__device__ inline T __shfl_xor(T v, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(ARENA_FULL_MASK, v, lane_mask, width);
}
// __syncthreads, atomicAdd/atomicMax/atomicCAS, dim3, blockIdx/threadIdx/blockDim/gridDim,
// __shared__, __restrict__ and rsqrtf/expf/tanhf are spelled the same in HIP and CUDA.

#else
#error "arena_hip.h: compile with hipcc (ROCm) or nvcc (CUDA)"
#endif
