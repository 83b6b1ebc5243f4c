// Neox-style rotary position embedding of the queries and keys of T tokens (the operation in
// reference.py). For token t and i < half = D / 2: angle = float(positions[t]) * inv_freq[i]
// (a float32 product), c = cos(angle), s = sin(angle); every head vector x of the token maps to
//   out[i] = x[i] * c - x[i + half] * s,   out[i + half] = x[i + half] * c + x[i] * s.
// q is (T, HQ, D) and k is (T, HKV, D) bfloat16; arithmetic in float, each output rounded once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One thread per (token, head, i) pair, the q heads first, then the k heads.
__global__ void rotary_kernel(const bf16* q, const bf16* k, const int64_t* positions, const float* inv_freq,
                              bf16* q_out, bf16* k_out, int64_t T, int64_t HQ, int64_t HKV, int64_t half) {
  const int64_t pair = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  const int64_t heads = HQ + HKV;
  if (pair >= T * heads * half) return;
  const int64_t i = pair % half;
  const int64_t h = (pair / half) % heads;
  const int64_t t = pair / (half * heads);

  const float angle = (float)positions[t] * inv_freq[i];
  float s, c;
  sincosf(angle, &s, &c);

  const bf16* x;
  bf16* out;
  if (h < HQ) {
    x = q + (t * HQ + h) * 2 * half;
    out = q_out + (t * HQ + h) * 2 * half;
  } else {
    x = k + (t * HKV + (h - HQ)) * 2 * half;
    out = k_out + (t * HKV + (h - HQ)) * 2 * half;
  }
  const float x1 = __bfloat162float(x[i]);
  const float x2 = __bfloat162float(x[i + half]);
  out[i] = __float2bfloat16(x1 * c - x2 * s);
  out[i + half] = __float2bfloat16(x2 * c + x1 * s);
}

extern "C" int rotary_embedding(const bf16* q, const bf16* k, const int64_t* positions, const float* inv_freq,
                                bf16* q_out, bf16* k_out, int64_t T, int64_t HQ, int64_t HKV, int64_t D,
                                hipStream_t stream) {
  const int64_t half = D / 2;
  const int64_t pairs = T * (HQ + HKV) * half;
  if (pairs == 0) return hipSuccess;
  const int64_t blocks = (pairs + kBlock - 1) / kBlock;
  hipLaunchKernelGGL(rotary_kernel, dim3((unsigned)blocks), dim3(kBlock), 0, stream, q, k, positions, inv_freq, q_out,
                     k_out, T, HQ, HKV, half);
  return hipGetLastError();
}
