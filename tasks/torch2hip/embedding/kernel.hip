// Embedding lookup (the operation in reference.py): out[t, :] = weight[ids[t], :] for a
// (V, D) bfloat16 table and T int64 token ids, each in [0, V).

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 128;

// One block per token: its threads copy the row side by side, one element each per step.
__global__ void embedding_kernel(const int64_t* ids, const bf16* weight, bf16* out, int64_t D) {
  const int64_t t = blockIdx.x;
  const bf16* src = weight + ids[t] * D;
  bf16* dst = out + t * D;
  for (int64_t d = threadIdx.x; d < D; d += kBlock) dst[d] = src[d];
}

extern "C" int embedding(const int64_t* ids, const bf16* weight, bf16* out, int64_t T, int64_t V, int64_t D,
                         hipStream_t stream) {
  if (T == 0) return hipSuccess;
  hipLaunchKernelGGL(embedding_kernel, dim3((unsigned)T), dim3(kBlock), 0, stream, ids, weight, out, D);
  return hipGetLastError();
}
