// Mixture-of-experts combine: expert_out is (R, D) bfloat16, the rows the experts produced in
// expert-sorted order (R = T * K); inv_perm (T, K) int64 gives, for token t and its k-th chosen
// expert, the row of expert_out holding that expert's output for t; weights (T, K) float32 are
// the routing weights.
//   out[t, d] = sum_k weights[t, k] * expert_out[inv_perm[t, k], d]      (k = 0 .. K - 1)
// Arithmetic in float; the result is rounded to bfloat16 once.
// Exemplar: the baseline gives each thread one output element, so every expert-row access is a
// 2-byte load, and walks the token's K slots one after another: with top-2 routing a thread has
// one 2-byte load in flight at a time, too few bytes in flight per SM to cover the memory latency.
// Here a thread owns 8 consecutive columns of a token (16-byte loads and one 16-byte store when D
// is a multiple of 8) and walks the token's K slots four at a time (then two, then one) so up to
// four rows' loads are in flight; the sum stays in registers and is rounded once. Same traffic
// (the expert rows plus the output), 8 to 32 times the bytes in flight per thread.

typedef __hip_bfloat16 bf16;

constexpr int kThreads = 256;
constexpr int kVec = 8;  // bfloat16 values per 16-byte access
constexpr int64_t kMaxTokenBlocks = 65535;  // grid.y limit

__device__ inline void add_row(float* acc, const bf16* p, float w) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const bf16* h = reinterpret_cast<const bf16*>(&raw);
#pragma unroll
  for (int e = 0; e < kVec; ++e) acc[e] += w * __bfloat162float(h[e]);
}

// Block (x, y): token blockIdx.y (strided), columns [8 * i, 8 * i + 8) for thread i of the x-th
// group of kThreads.
__global__ void __launch_bounds__(kThreads)
    combine_vec(const bf16* __restrict__ expert_out, const int64_t* __restrict__ inv_perm,
                const float* __restrict__ weights, bf16* __restrict__ out, int64_t T, int64_t K, int64_t D) {
  const int64_t col = ((int64_t)blockIdx.x * kThreads + threadIdx.x) * kVec;
  if (col >= D) return;
  for (int64_t t = blockIdx.y; t < T; t += gridDim.y) {
    const int64_t* rows = inv_perm + t * K;
    const float* w = weights + t * K;
    float acc[kVec];
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc[e] = 0.0f;
    int64_t k = 0;
    for (; k + 3 < K; k += 4) {  // four rows' loads in flight
      uint4 raw[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) raw[u] = *reinterpret_cast<const uint4*>(expert_out + rows[k + u] * D + col);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const float wu = w[k + u];
        const bf16* h = reinterpret_cast<const bf16*>(&raw[u]);
#pragma unroll
        for (int e = 0; e < kVec; ++e) acc[e] += wu * __bfloat162float(h[e]);
      }
    }
    for (; k + 1 < K; k += 2) {
      const uint4 raw0 = *reinterpret_cast<const uint4*>(expert_out + rows[k] * D + col);
      const uint4 raw1 = *reinterpret_cast<const uint4*>(expert_out + rows[k + 1] * D + col);
      const float w0 = w[k], w1 = w[k + 1];
      const bf16* h0 = reinterpret_cast<const bf16*>(&raw0);
      const bf16* h1 = reinterpret_cast<const bf16*>(&raw1);
#pragma unroll
      for (int e = 0; e < kVec; ++e) acc[e] += w0 * __bfloat162float(h0[e]);
#pragma unroll
      for (int e = 0; e < kVec; ++e) acc[e] += w1 * __bfloat162float(h1[e]);
    }
    if (k < K) add_row(acc, expert_out + rows[k] * D + col, w[k]);  // an odd K's last slot
    uint4 packed;
    bf16* o = reinterpret_cast<bf16*>(&packed);
#pragma unroll
    for (int e = 0; e < kVec; ++e) o[e] = __float2bfloat16(acc[e]);
    *reinterpret_cast<uint4*>(out + t * D + col) = packed;
  }
}

// Any D: one column per thread, the sum in a register (as the baseline).
__global__ void combine_scalar(const bf16* expert_out, const int64_t* inv_perm, const float* weights, bf16* out,
                               int64_t T, int64_t K, int64_t D) {
  const int64_t d = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  if (d >= D) return;
  for (int64_t t = blockIdx.y; t < T; t += gridDim.y) {
    float acc = 0.0f;
    for (int64_t k = 0; k < K; ++k) acc += weights[t * K + k] * __bfloat162float(expert_out[inv_perm[t * K + k] * D + d]);
    out[t * D + d] = __float2bfloat16(acc);
  }
}

extern "C" int moe_combine(const bf16* expert_out, const int64_t* inv_perm, const float* weights, bf16* out,
                           int64_t T, int64_t K, int64_t D, hipStream_t stream) {
  if (T == 0 || D == 0) return hipSuccess;
  const int64_t token_blocks = T < kMaxTokenBlocks ? T : kMaxTokenBlocks;
  if (D % kVec == 0) {
    const dim3 grid((unsigned)((D / kVec + kThreads - 1) / kThreads), (unsigned)token_blocks);
    hipLaunchKernelGGL(combine_vec, grid, dim3(kThreads), 0, stream, expert_out, inv_perm, weights, out, T, K, D);
  } else {
    const dim3 grid((unsigned)((D + kThreads - 1) / kThreads), (unsigned)token_blocks);
    hipLaunchKernelGGL(combine_scalar, grid, dim3(kThreads), 0, stream, expert_out, inv_perm, weights, out, T, K, D);
  }
  return hipGetLastError();
}
