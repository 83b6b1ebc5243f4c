// Neox-style rotary position embedding of the queries and keys of T tokens (the operation in
// reference.py). For token t and i < half = D / 2: angle = float(positions[t]) * inv_freq[i]
// (a float32 product), c = cos(angle), s = sin(angle); every head vector x of the token maps to
//   out[i] = x[i] * c - x[i + half] * s,   out[i + half] = x[i + half] * c + x[i] * s.
// q is (T, HQ, D) and k is (T, HKV, D) bfloat16; arithmetic in float, each output rounded once.
// Exemplar: the baseline computes the same sincosf once per head (HQ + HKV times per angle) and
// moves 2 bytes per access. Here one block per token computes the token's half angles once into
// shared memory, then its threads rotate 8 pairs at a time (16-byte loads and stores of x1 and
// x2) across all of the token's q and k heads; 4 or 1 pairs at a time when half is not a
// multiple of 8 or 4.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int kMaxHalf = 256;  // D <= 512

template <int kPairs>
struct Pack;
template <>
struct Pack<8> {
  using type = uint4;
};
template <>
struct Pack<4> {
  using type = uint2;
};
template <>
struct Pack<1> {
  using type = unsigned short;
};

template <int kPairs>
__device__ inline void rotate(const bf16* x, bf16* out, int64_t half, int i0, const float* cos_s, const float* sin_s) {
  using V = typename Pack<kPairs>::type;
  const V raw1 = *reinterpret_cast<const V*>(x + i0);
  const V raw2 = *reinterpret_cast<const V*>(x + half + i0);
  const bf16* a = reinterpret_cast<const bf16*>(&raw1);
  const bf16* b = reinterpret_cast<const bf16*>(&raw2);
  V out1, out2;
  bf16* o1 = reinterpret_cast<bf16*>(&out1);
  bf16* o2 = reinterpret_cast<bf16*>(&out2);
#pragma unroll
  for (int j = 0; j < kPairs; ++j) {
    const float x1 = __bfloat162float(a[j]), x2 = __bfloat162float(b[j]);
    const float c = cos_s[i0 + j], s = sin_s[i0 + j];
    o1[j] = __float2bfloat16(x1 * c - x2 * s);
    o2[j] = __float2bfloat16(x2 * c + x1 * s);
  }
  *reinterpret_cast<V*>(out + i0) = out1;
  *reinterpret_cast<V*>(out + half + i0) = out2;
}

template <int kPairs>
__global__ void __launch_bounds__(kBlock) rotary_token(const bf16* __restrict__ q, const bf16* __restrict__ k,
                                                       const int64_t* __restrict__ positions,
                                                       const float* __restrict__ inv_freq, bf16* __restrict__ q_out,
                                                       bf16* __restrict__ k_out, int64_t HQ, int64_t HKV, int64_t half) {
  __shared__ float cos_s[kMaxHalf];
  __shared__ float sin_s[kMaxHalf];
  const int64_t t = blockIdx.x;
  const float pos = (float)positions[t];
  for (int i = threadIdx.x; i < half; i += kBlock) {
    const float angle = pos * inv_freq[i];
    sincosf(angle, &sin_s[i], &cos_s[i]);
  }
  __syncthreads();

  const int groups = (int)(half / kPairs);
  const int items = (int)(HQ + HKV) * groups;
  const int64_t D = 2 * half;
  for (int w = threadIdx.x; w < items; w += kBlock) {
    const int h = w / groups;
    const int i0 = (w % groups) * kPairs;
    if (h < HQ) {
      const int64_t row = (t * HQ + h) * D;
      rotate<kPairs>(q + row, q_out + row, half, i0, cos_s, sin_s);
    } else {
      const int64_t row = (t * HKV + (h - HQ)) * D;
      rotate<kPairs>(k + row, k_out + row, half, i0, cos_s, sin_s);
    }
  }
}

extern "C" int rotary_embedding(const bf16* q, const bf16* k, const int64_t* positions, const float* inv_freq,
                                bf16* q_out, bf16* k_out, int64_t T, int64_t HQ, int64_t HKV, int64_t D,
                                hipStream_t stream) {
  const int64_t half = D / 2;
  if (T == 0 || half == 0) return hipSuccess;
  const dim3 grid((unsigned)T), block(kBlock);
  if (half % 8 == 0) {
    hipLaunchKernelGGL((rotary_token<8>), grid, block, 0, stream, q, k, positions, inv_freq, q_out, k_out, HQ, HKV, half);
  } else if (half % 4 == 0) {
    hipLaunchKernelGGL((rotary_token<4>), grid, block, 0, stream, q, k, positions, inv_freq, q_out, k_out, HQ, HKV, half);
  } else {
    hipLaunchKernelGGL((rotary_token<1>), grid, block, 0, stream, q, k, positions, inv_freq, q_out, k_out, HQ, HKV, half);
  }
  return hipGetLastError();
}
