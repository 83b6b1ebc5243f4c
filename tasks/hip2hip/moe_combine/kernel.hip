// Mixture-of-experts combine: expert_out is (R, D) bfloat16, the rows the experts produced in
// expert-sorted order (R = T * K); inv_perm (T, K) int64 gives, for token t and its k-th chosen
// expert, the row of expert_out holding that expert's output for t; weights (T, K) float32 are
// the routing weights.
//   out[t, d] = sum_k weights[t, k] * expert_out[inv_perm[t, k], d]      (k = 0 .. K - 1)
// Arithmetic in float; the result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int64_t kMaxTokenBlocks = 65535;  // grid.y limit

// Grid (column blocks, tokens): one thread per output element out[t, d], the sum over the
// token's K expert slots in a float register.
__global__ void combine_kernel(const bf16* expert_out, const int64_t* inv_perm, const float* weights, bf16* out,
                               int64_t T, int64_t K, int64_t D) {
  const int64_t d = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (d >= D) return;
  for (int64_t t = blockIdx.y; t < T; t += gridDim.y) {
    float acc = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const int64_t row = inv_perm[t * K + k];
      acc += weights[t * K + k] * __bfloat162float(expert_out[row * D + d]);
    }
    out[t * D + d] = __float2bfloat16(acc);
  }
}

extern "C" int moe_combine(const bf16* expert_out, const int64_t* inv_perm, const float* weights, bf16* out,
                           int64_t T, int64_t K, int64_t D, hipStream_t stream) {
  if (T == 0 || D == 0) return hipSuccess;
  const int64_t token_blocks = T < kMaxTokenBlocks ? T : kMaxTokenBlocks;
  const dim3 grid((unsigned)((D + kBlock - 1) / kBlock), (unsigned)token_blocks);
  hipLaunchKernelGGL(combine_kernel, grid, dim3(kBlock), 0, stream, expert_out, inv_perm, weights, out, T, K, D);
  return hipGetLastError();
}
