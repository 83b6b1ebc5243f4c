// WRONG on purpose (never shown to agents): the scale group is taken from the byte offset
// (16 bytes a slice) instead of the weight offset (32 weights a slice), so from the second group
// on rows use an earlier group's scale.
// Decode-batch matrix product with 4-bit weights (W4A16): x (B, K) bfloat16 activations, B <= 8;
// w (N, K / 2) bytes, two weights a byte: weight (n, 2j) is the low nibble of w[n, j] and
// (n, 2j + 1) the high nibble, each holding q in [0, 16) for the value q - 8; scales (N, K / 128)
// bfloat16, one per 128-column group. K is a multiple of 128.
//   y[b, n] = sum_k x[b, k] * (q[n, k] - 8) * scales[n, k / 128], in float32, rounded to bfloat16.
// A warp per two rows, 16-byte weight loads, nibbles unpacked with the exponent trick.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int kRows = 2;     // output columns per warp
constexpr int kPairs = 8;    // column pairs per block
constexpr int kMaxB = 8;
constexpr int kGroup = 128;
constexpr int kSlice = 32;   // weights per 16-byte load

__device__ inline float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  return v;
}

// The 8 weights (q - 8) of a 32-bit word, low nibble first.
__device__ inline void unpack8(unsigned int word, float (&f)[8]) {
#pragma unroll
  for (int j = 0; j < 8; ++j) f[j] = __uint_as_float(0x4B000000u | ((word >> (4 * j)) & 15u)) - 8388616.0f;
}

// Columns n0 and n0 + 1 (n0 alone if it is the last), for every batch row; one warp, lane `lane`.
__device__ inline void w4a16_rows(const bf16* __restrict__ x, const unsigned char* __restrict__ w,
                                  const bf16* __restrict__ scales, bf16* __restrict__ y, int64_t B, int64_t N,
                                  int64_t K, int64_t n0, int lane) {
  const int64_t n1 = n0 + 1 < N ? n0 + 1 : n0;  // a last odd column is computed twice, written once
  const int64_t KH = K / 2;
  const int64_t KG = K / kGroup;
  const int64_t slices = K / kSlice;
  const uint4* w0 = reinterpret_cast<const uint4*>(w + n0 * KH);
  const uint4* w1 = reinterpret_cast<const uint4*>(w + n1 * KH);

  float acc0[kMaxB], acc1[kMaxB];
#pragma unroll
  for (int b = 0; b < kMaxB; ++b) acc0[b] = acc1[b] = 0.0f;

  for (int64_t p = lane; p < slices; p += warpSize) {
    const uint4 ra = w0[p];
    const uint4 rc = w1[p];
    const float s0 = __bfloat162float(scales[n0 * KG + p * 16 / kGroup]);
    const float s1 = __bfloat162float(scales[n1 * KG + p * 16 / kGroup]);
    const unsigned int wa[4] = {ra.x, ra.y, ra.z, ra.w};
    const unsigned int wc[4] = {rc.x, rc.y, rc.z, rc.w};
    float part0[kMaxB], part1[kMaxB];
#pragma unroll
    for (int b = 0; b < kMaxB; ++b) part0[b] = part1[b] = 0.0f;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      float fa[8], fc[8];
      unpack8(wa[q], fa);
      unpack8(wc[q], fc);
#pragma unroll
      for (int b = 0; b < kMaxB; ++b) {
        if (b < B) {
          const uint4 xr = *reinterpret_cast<const uint4*>(x + b * K + p * kSlice + q * 8);
          const bf16* h = reinterpret_cast<const bf16*>(&xr);
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            const float xv = __bfloat162float(h[j]);
            part0[b] += xv * fa[j];
            part1[b] += xv * fc[j];
          }
        }
      }
    }
#pragma unroll
    for (int b = 0; b < kMaxB; ++b) {
      acc0[b] += part0[b] * s0;
      acc1[b] += part1[b] * s1;
    }
  }

#pragma unroll
  for (int b = 0; b < kMaxB; ++b) {
    if (b < B) {
      const float t0 = warp_sum(acc0[b]);
      const float t1 = warp_sum(acc1[b]);
      if (lane == 0) {
        y[b * N + n0] = __float2bfloat16(t0);
        if (n1 != n0) y[b * N + n1] = __float2bfloat16(t1);
      }
    }
  }
}

__global__ void __launch_bounds__(kBlock)
    w4a16_gemv_kernel(const bf16* __restrict__ x, const unsigned char* __restrict__ w, const bf16* __restrict__ scales,
                      bf16* __restrict__ y, int64_t B, int64_t N, int64_t K) {
  const int lane = threadIdx.x % warpSize;
  // kPairs row pairs per block, dealt to the block's warps (8 of 32 lanes, 4 of 64).
  for (int pair = threadIdx.x / warpSize; pair < kPairs; pair += kBlock / warpSize) {
    const int64_t n0 = ((int64_t)blockIdx.x * kPairs + pair) * kRows;
    if (n0 >= N) break;  // the whole warp leaves together; no block-wide barrier follows
    w4a16_rows(x, w, scales, y, B, N, K, n0, lane);
  }
}

extern "C" int w4a16_gemv(const bf16* x, const unsigned char* w, const bf16* scales, bf16* y, int64_t B, int64_t N,
                          int64_t K, hipStream_t stream) {
  if (B == 0 || N == 0) return hipSuccess;
  const int64_t rows_per_block = (int64_t)kRows * kPairs;
  const unsigned blocks = (unsigned)((N + rows_per_block - 1) / rows_per_block);
  hipLaunchKernelGGL(w4a16_gemv_kernel, dim3(blocks), dim3(kBlock), 0, stream, x, w, scales, y, B, N, K);
  return hipGetLastError();
}
