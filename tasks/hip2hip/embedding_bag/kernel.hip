// EmbeddingBag, sum mode with per-sample weights: out[b, :] = sum_j psw[b, j] * weight[idx[b, j], :]
// for bags of L int64 ids into a (V, D) bfloat16 table; float32 sums rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 128;

// One block per bag: each thread owns a strided set of columns and walks the bag's rows.
__global__ void embedding_bag_kernel(const int64_t* idx, const float* psw, const bf16* weight, bf16* out, int64_t L,
                                     int64_t D) {
  const int64_t b = blockIdx.x;
  for (int64_t d = threadIdx.x; d < D; d += kBlock) {
    float sum = 0.0f;
    for (int64_t j = 0; j < L; ++j) sum += psw[b * L + j] * __bfloat162float(weight[idx[b * L + j] * D + d]);
    out[b * D + d] = __float2bfloat16(sum);
  }
}

extern "C" int embedding_bag(const int64_t* idx, const float* psw, const bf16* weight, bf16* out, int64_t B,
                             int64_t L, int64_t D, hipStream_t stream) {
  if (B == 0) return hipSuccess;
  hipLaunchKernelGGL(embedding_bag_kernel, dim3((unsigned)B), dim3(kBlock), 0, stream, idx, psw, weight, out, L, D);
  return hipGetLastError();
}
