// WRONG on purpose (never shown to agents): the vector path stages cos and sin for the first
// token of the batch only (position 0 of the positions array), not each block's own token.
// Neox-style rotary position embedding of the queries and keys of T tokens (bfloat16):
//   with half = D / 2, c = cos_cache[pos[t]], s = sin_cache[pos[t]] (float32, length half), every head
//   vector x of token t becomes [x1 * c - x2 * s, x2 * c + x1 * s], x1 = x[:half], x2 = x[half:].

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int kVec = 8;        // bfloat16 values per 16-byte access
constexpr int kMaxHalf = 256;  // D <= 512

__global__ void rope_vec_kernel(const bf16* q, const bf16* k, const float* cos_cache, const float* sin_cache,
                                const int64_t* positions, bf16* q_out, bf16* k_out, int HQ, int HKV, int half) {
  __shared__ float c[kMaxHalf];
  __shared__ float s[kMaxHalf];
  const int64_t t = blockIdx.x;
  const int64_t pos = positions[0];
  for (int i = threadIdx.x; i < half; i += kBlock) {
    c[i] = cos_cache[pos * half + i];
    s[i] = sin_cache[pos * half + i];
  }
  __syncthreads();
  const int64_t D = 2 * half;
  const int per_head = half / kVec;
  for (int j = threadIdx.x; j < (HQ + HKV) * per_head; j += kBlock) {
    const int h = j / per_head, i0 = (j % per_head) * kVec;
    const bool is_q = h < HQ;
    const bf16* src = is_q ? q + (t * HQ + h) * D : k + (t * HKV + (h - HQ)) * D;
    bf16* dst = is_q ? q_out + (t * HQ + h) * D : k_out + (t * HKV + (h - HQ)) * D;
    uint4 raw1 = *reinterpret_cast<const uint4*>(src + i0);
    uint4 raw2 = *reinterpret_cast<const uint4*>(src + half + i0);
    const bf16* x1 = reinterpret_cast<const bf16*>(&raw1);
    const bf16* x2 = reinterpret_cast<const bf16*>(&raw2);
    uint4 out1, out2;
    bf16* o1 = reinterpret_cast<bf16*>(&out1);
    bf16* o2 = reinterpret_cast<bf16*>(&out2);
    for (int v = 0; v < kVec; ++v) {
      const float a = __bfloat162float(x1[v]), b = __bfloat162float(x2[v]);
      o1[v] = __float2bfloat16(a * c[i0 + v] - b * s[i0 + v]);
      o2[v] = __float2bfloat16(b * c[i0 + v] + a * s[i0 + v]);
    }
    *reinterpret_cast<uint4*>(dst + i0) = out1;
    *reinterpret_cast<uint4*>(dst + half + i0) = out2;
  }
}

__global__ void rope_scalar_kernel(const bf16* q, const bf16* k, const float* cos_cache, const float* sin_cache,
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
  const int half = (int)(D / 2);
  if (half % kVec == 0 && half <= kMaxHalf) {
    hipLaunchKernelGGL(rope_vec_kernel, dim3((unsigned)T), dim3(kBlock), 0, stream, q, k, cos_cache, sin_cache,
                       positions, q_out, k_out, (int)HQ, (int)HKV, half);
  } else {
    hipLaunchKernelGGL(rope_scalar_kernel, dim3((unsigned)T), dim3(kBlock), 0, stream, q, k, cos_cache, sin_cache,
                       positions, q_out, k_out, (int)HQ, (int)HKV, half);
  }
  return hipGetLastError();
}
