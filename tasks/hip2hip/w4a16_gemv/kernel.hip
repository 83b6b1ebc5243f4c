// Decode-batch matrix product with 4-bit weights (W4A16): x (B, K) bfloat16 activations, B <= 8;
// w (N, K / 2) bytes, two weights a byte: weight (n, 2j) is the low nibble of w[n, j] and
// (n, 2j + 1) the high nibble, each holding q in [0, 16) for the value q - 8; scales (N, K / 128)
// bfloat16, one per 128-column group. K is a multiple of 128.
//   y[b, n] = sum_k x[b, k] * (q[n, k] - 8) * scales[n, k / 128], in float32, rounded to bfloat16.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int kMaxB = 8;
constexpr int kGroup = 128;

// One block per output column n: each thread takes a strided share of the row's bytes and keeps
// one float32 sum per batch row; a shared-memory tree per batch row adds the threads' sums.
__global__ void w4a16_gemv_kernel(const bf16* x, const unsigned char* w, const bf16* scales, bf16* y, int64_t B,
                                  int64_t N, int64_t K) {
  __shared__ float partial[kBlock];
  const int64_t n = blockIdx.x;
  const int64_t KH = K / 2;
  const int64_t KG = K / kGroup;
  const unsigned char* row = w + n * KH;
  float acc[kMaxB];
#pragma unroll
  for (int b = 0; b < kMaxB; ++b) acc[b] = 0.0f;
  for (int64_t j = threadIdx.x; j < KH; j += kBlock) {
    const unsigned int byte = row[j];
    const float s = __bfloat162float(scales[n * KG + (2 * j) / kGroup]);
    const float w_lo = (float)((int)(byte & 15u) - 8) * s;
    const float w_hi = (float)((int)(byte >> 4) - 8) * s;
#pragma unroll
    for (int b = 0; b < kMaxB; ++b)
      if (b < B) acc[b] += __bfloat162float(x[b * K + 2 * j]) * w_lo + __bfloat162float(x[b * K + 2 * j + 1]) * w_hi;
  }
  for (int b = 0; b < B; ++b) {
    partial[threadIdx.x] = acc[b];
    __syncthreads();
    for (int stride = kBlock / 2; stride > 0; stride /= 2) {
      if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
      __syncthreads();
    }
    if (threadIdx.x == 0) y[b * N + n] = __float2bfloat16(partial[0]);
    __syncthreads();
  }
}

extern "C" int w4a16_gemv(const bf16* x, const unsigned char* w, const bf16* scales, bf16* y, int64_t B, int64_t N,
                          int64_t K, hipStream_t stream) {
  if (B == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(w4a16_gemv_kernel, dim3((unsigned)N), dim3(kBlock), 0, stream, x, w, scales, y, B, N, K);
  return hipGetLastError();
}
