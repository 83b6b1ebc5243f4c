// Embedding lookup (the operation in reference.py): out[t, :] = weight[ids[t], :] for a
// (V, D) bfloat16 table and T int64 token ids, each in [0, V).
// Exemplar: the baseline also copies a row per block, but 2 bytes per thread per access, so
// each memory instruction carries little data and too few bytes are in flight to reach
// bandwidth. Here each thread moves 16 bytes per access when rows are 16-byte aligned (a scalar
// loop covers other row lengths).

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 128;
constexpr int kVec = 8;  // bfloat16 values per 16-byte access

__global__ void embedding_kernel(const int64_t* ids, const bf16* weight, bf16* out, int64_t D) {
  const int64_t t = blockIdx.x;
  const bf16* src = weight + ids[t] * D;
  bf16* dst = out + t * D;
  if (D % kVec == 0) {
    for (int64_t i = threadIdx.x; i < D / kVec; i += kBlock)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  } else {
    for (int64_t d = threadIdx.x; d < D; d += kBlock) dst[d] = src[d];
  }
}

extern "C" int embedding(const int64_t* ids, const bf16* weight, bf16* out, int64_t T, int64_t V, int64_t D,
                         hipStream_t stream) {
  if (T == 0) return hipSuccess;
  hipLaunchKernelGGL(embedding_kernel, dim3((unsigned)T), dim3(kBlock), 0, stream, ids, weight, out, D);
  return hipGetLastError();
}
