// Neox-style rotary position embedding of the queries and keys of T tokens (bfloat16):
//   with half = D / 2, c = cos_cache[pos[t]], s = sin_cache[pos[t]] (float32, length half), every head
//   vector x of token t becomes [x1 * c - x2 * s, x2 * c + x1 * s], x1 = x[:half], x2 = x[half:].
// Arithmetic in float; each output is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One block per token; its threads walk the (head, pair) items of q, then of k.
__global__ void rope_kernel(const bf16* q, const bf16* k, const float* cos_cache, const float* sin_cache,
                            const int64_t* positions, bf16* q_out, bf16* k_out, int HQ, int HKV, int half) {
  const int64_t t = blockIdx.x;
  const float* c = cos_cache + positions[t] * half;
  const float* s = sin_cache + positions[t] * half;
  const int64_t D = 2 * half;
  for (int j = threadIdx.x; j < (HQ + HKV) * half; j += kBlock) {
    const int h = j / half, i = j % half;
    const bool is_q = h < HQ;
    const bf16* src = is_q ? q + (t * HQ + h) * D : k + (t * HKV + (h - HQ)) * D;
    bf16* dst = is_q ? q_out + (t * HQ + h) * D : k_out + (t * HKV + (h - HQ)) * D;
    const float x1 = __bfloat162float(src[i]), x2 = __bfloat162float(src[i + half]);
    dst[i] = __float2bfloat16(x1 * c[i] - x2 * s[i]);
    dst[i + half] = __float2bfloat16(x2 * c[i] + x1 * s[i]);
  }
}

extern "C" int rotary_embedding(const bf16* q, const bf16* k, const float* cos_cache, const float* sin_cache,
                                const int64_t* positions, bf16* q_out, bf16* k_out, int64_t T, int64_t HQ,
                                int64_t HKV, int64_t D, hipStream_t stream) {
  if (T == 0) return hipSuccess;
  hipLaunchKernelGGL(rope_kernel, dim3((unsigned)T), dim3(kBlock), 0, stream, q, k, cos_cache, sin_cache, positions,
                     q_out, k_out, (int)HQ, (int)HKV, (int)(D / 2));
  return hipGetLastError();
}
