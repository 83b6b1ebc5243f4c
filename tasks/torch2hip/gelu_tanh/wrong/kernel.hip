// WRONG on purpose (never shown to agents): tanh(u) as (exp(2u) - 1) / (exp(2u) + 1), which is
// inf / inf = NaN once exp(2u) overflows float (u > ~44, that is x > ~9.4).
// GELU with the tanh approximation, elementwise over a (M, N) bfloat16 matrix (the operation in
// reference.py): y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
// Arithmetic in float; the result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int kVec = 8;      // bfloat16 values per 16-byte access
constexpr int kPerThread = 2;  // 16-byte chunks per thread

__device__ inline float gelu(float v) {
  const float kBeta = 0.7978845608028654f;  // sqrt(2 / pi)
  const float kKappa = 0.044715f;
  const float e = __expf(2.0f * kBeta * (v + kKappa * v * v * v));
  return 0.5f * v * (1.0f + __fdividef(e - 1.0f, e + 1.0f));
}

__device__ inline uint4 gelu8(const uint4& raw) {
  const bf16* h = reinterpret_cast<const bf16*>(&raw);
  uint4 out;
  bf16* o = reinterpret_cast<bf16*>(&out);
#pragma unroll
  for (int j = 0; j < kVec; ++j) o[j] = __float2bfloat16(gelu(__bfloat162float(h[j])));
  return out;
}

__global__ void __launch_bounds__(kBlock) gelu_tanh_vec(const bf16* __restrict__ x, bf16* __restrict__ y,
                                                        int64_t chunks, int64_t total) {
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  uint4* yv = reinterpret_cast<uint4*>(y);
  const int64_t first = (int64_t)blockIdx.x * kBlock * kPerThread + threadIdx.x;
  uint4 v[kPerThread];
#pragma unroll
  for (int c = 0; c < kPerThread; ++c) {
    const int64_t q = first + (int64_t)c * kBlock;
    if (q < chunks) v[c] = xv[q];
  }
#pragma unroll
  for (int c = 0; c < kPerThread; ++c) {
    const int64_t q = first + (int64_t)c * kBlock;
    if (q < chunks) yv[q] = gelu8(v[c]);
  }
  const int64_t global = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  const int64_t rest = chunks * kVec + global;
  if (rest < total) y[rest] = __float2bfloat16(gelu(__bfloat162float(x[rest])));
}

extern "C" int gelu_tanh(const bf16* x, bf16* y, int64_t M, int64_t N, hipStream_t stream) {
  const int64_t total = M * N;
  if (total == 0) return hipSuccess;
  const int64_t chunks = total / kVec;
  const int64_t per_block = (int64_t)kBlock * kPerThread;
  const int64_t blocks = chunks > 0 ? (chunks + per_block - 1) / per_block : 1;
  hipLaunchKernelGGL(gelu_tanh_vec, dim3((unsigned)blocks), dim3(kBlock), 0, stream, x, y, chunks, total);
  return hipGetLastError();
}
