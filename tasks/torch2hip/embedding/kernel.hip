// Embedding lookup (the operation in reference.py): out[t, :] = weight[ids[t], :] for a
// (V, D) bfloat16 table and T int64 token ids, each in [0, V).

typedef __hip_bfloat16 bf16;

// One thread per token copies its row.
__global__ void embedding_kernel(const int64_t* ids, const bf16* weight, bf16* out, int64_t T, int64_t D) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= T) return;
  const bf16* src = weight + ids[t] * D;
  bf16* dst = out + t * D;
  for (int64_t d = 0; d < D; ++d) dst[d] = src[d];
}

extern "C" int embedding(const int64_t* ids, const bf16* weight, bf16* out, int64_t T, int64_t V, int64_t D,
                         hipStream_t stream) {
  if (T == 0) return hipSuccess;
  const int block = 256;
  dim3 grid((unsigned)((T + block - 1) / block));
  hipLaunchKernelGGL(embedding_kernel, grid, dim3(block), 0, stream, ids, weight, out, T, D);
  return hipGetLastError();
}
