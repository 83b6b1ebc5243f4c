// Mixture-of-experts combine: expert_out is (R, D) bfloat16, the rows the experts produced in
// expert-sorted order (R = T * K); inv_perm (T, K) int64 gives, for token t and its k-th chosen
// expert, the row of expert_out holding that expert's output for t; weights (T, K) float32 are
// the routing weights.
//   out[t, d] = sum_k weights[t, k] * expert_out[inv_perm[t, k], d]      (k = 0 .. K - 1)
// Arithmetic in float; the result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int64_t kMaxTokenBlocks = 65535;  // grid.y limit

// Adds the k-th term of every output into a float accumulator (T, D) (the first term sets it).
__global__ void accumulate_kernel(const bf16* expert_out, const int64_t* inv_perm, const float* weights, float* acc,
                                  int64_t T, int64_t K, int64_t D, int64_t k) {
  for (int64_t t = blockIdx.y; t < T; t += gridDim.y) {
    const int64_t row = inv_perm[t * K + k];
    const float w = weights[t * K + k];
    for (int64_t d = (int64_t)blockIdx.x * kBlock + threadIdx.x; d < D; d += (int64_t)gridDim.x * kBlock) {
      const float term = w * __bfloat162float(expert_out[row * D + d]);
      acc[t * D + d] = k == 0 ? term : acc[t * D + d] + term;
    }
  }
}

__global__ void round_kernel(const float* acc, bf16* out, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x; i < n; i += (int64_t)gridDim.x * kBlock)
    out[i] = __float2bfloat16(acc[i]);
}

// The float accumulator, kept between calls (grown when a call needs more).
static float* g_acc = nullptr;
static size_t g_acc_bytes = 0;

extern "C" int moe_combine(const bf16* expert_out, const int64_t* inv_perm, const float* weights, bf16* out,
                           int64_t T, int64_t K, int64_t D, hipStream_t stream) {
  if (T == 0 || D == 0) return hipSuccess;
  const size_t bytes = (size_t)(T * D) * sizeof(float);
  if (bytes > g_acc_bytes) {
    if (g_acc != nullptr) hipFree(g_acc);
    g_acc = nullptr;
    g_acc_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_acc, bytes);
    if (err != hipSuccess) return err;
    g_acc_bytes = bytes;
  }
  if (K == 0) return hipMemsetAsync(out, 0, (size_t)(T * D) * sizeof(bf16), stream);
  const int64_t token_blocks = T < kMaxTokenBlocks ? T : kMaxTokenBlocks;
  const dim3 grid((unsigned)((D + kBlock - 1) / kBlock), (unsigned)token_blocks);
  for (int64_t k = 0; k < K; ++k)
    hipLaunchKernelGGL(accumulate_kernel, grid, dim3(kBlock), 0, stream, expert_out, inv_perm, weights, g_acc, T, K,
                       D, k);
  int64_t blocks = (T * D + kBlock - 1) / kBlock;
  if (blocks > 65536) blocks = 65536;
  hipLaunchKernelGGL(round_kernel, dim3((unsigned)blocks), dim3(kBlock), 0, stream, g_acc, out, T * D);
  return hipGetLastError();
}
