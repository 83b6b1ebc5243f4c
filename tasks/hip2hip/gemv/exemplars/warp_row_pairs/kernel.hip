// Matrix-vector product for a decode step: y[n] = sum_k w[n, k] * x[k], w (N, K) row-major
// bfloat16 (a linear layer's weight), x (K,) bfloat16; float32 sums rounded to bfloat16 once.
// Exemplar: the baseline gives each output a block of 256 threads that reads 2 bytes of the row
// per thread per step and ends with an 8-level shared-memory tree (a barrier per level), so each
// 8 KB row costs more in synchronisation than in transfer. Here each warp takes two whole rows
// at once: its lanes read both rows and x 16 bytes at a time (x is re-read from L1/L2, never
// staged, so no block-wide barrier), with the loop unrolled so several 16-byte loads per row are
// in flight, and each dot product is reduced with warp shuffles only. Rows whose length is not a
// multiple of 8 take a scalar loop per lane.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int kRows = 2;     // rows per warp, read side by side
constexpr int kPairs = 8;    // row pairs per block: 16 rows
constexpr int kVec = 8;      // bfloat16 values per 16-byte access

__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  return v;
}

__device__ inline float dot8(uint4 a, uint4 b) {
  const bf16* u = reinterpret_cast<const bf16*>(&a);
  const bf16* v = reinterpret_cast<const bf16*>(&b);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kVec; ++j) s += __bfloat162float(u[j]) * __bfloat162float(v[j]);
  return s;
}

__global__ void __launch_bounds__(kBlock) gemv_vec_kernel(const bf16* __restrict__ w, const bf16* __restrict__ x,
                                                          bf16* __restrict__ y, int64_t N, int64_t K) {
  const int lane = threadIdx.x % warpSize;
  const int64_t vectors = K / kVec;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  // Pairs of rows [n0, n0 + 1]: kPairs per block, dealt to the block's warps (8 of 32 lanes, 4 of 64).
  for (int p = threadIdx.x / warpSize; p < kPairs; p += kBlock / warpSize) {
    const int64_t n0 = ((int64_t)blockIdx.x * kPairs + p) * kRows;
    if (n0 >= N) break;
    const int64_t n1 = n0 + 1 < N ? n0 + 1 : n0;  // a last odd row is read twice, written once
    const uint4* r0 = reinterpret_cast<const uint4*>(w + n0 * K);
    const uint4* r1 = reinterpret_cast<const uint4*>(w + n1 * K);
    float s0 = 0.0f, s1 = 0.0f;
#pragma unroll 4
    for (int64_t i = lane; i < vectors; i += warpSize) {
      const uint4 xr = xv[i];
      const uint4 a = r0[i];
      const uint4 b = r1[i];
      s0 += dot8(a, xr);
      s1 += dot8(b, xr);
    }
    s0 = warp_sum(s0);
    s1 = warp_sum(s1);
    if (lane == 0) {
      y[n0] = __float2bfloat16(s0);
      if (n1 != n0) y[n1] = __float2bfloat16(s1);
    }
  }
}

__global__ void gemv_scalar_kernel(const bf16* w, const bf16* x, bf16* y, int64_t N, int64_t K) {
  const int lane = threadIdx.x % warpSize;
  for (int r = threadIdx.x / warpSize; r < kPairs * kRows; r += kBlock / warpSize) {
    const int64_t n = (int64_t)blockIdx.x * kPairs * kRows + r;
    if (n >= N) break;
    const bf16* row = w + n * K;
    float sum = 0.0f;
    for (int64_t k = lane; k < K; k += warpSize) sum += __bfloat162float(row[k]) * __bfloat162float(x[k]);
    sum = warp_sum(sum);
    if (lane == 0) y[n] = __float2bfloat16(sum);
  }
}

extern "C" int gemv(const bf16* w, const bf16* x, bf16* y, int64_t N, int64_t K, hipStream_t stream) {
  if (N == 0) return hipSuccess;
  const int64_t rows_per_block = kPairs * kRows;
  dim3 grid((unsigned)((N + rows_per_block - 1) / rows_per_block));
  if (K % kVec == 0) {
    hipLaunchKernelGGL(gemv_vec_kernel, grid, dim3(kBlock), 0, stream, w, x, y, N, K);
  } else {
    hipLaunchKernelGGL(gemv_scalar_kernel, grid, dim3(kBlock), 0, stream, w, x, y, N, K);
  }
  return hipGetLastError();
}
