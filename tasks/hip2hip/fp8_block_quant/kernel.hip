// Per-block float8 quantisation of a (M, K) bfloat16 matrix, as before an fp8 GEMM with 1 x 128
// activation scales. Row m is cut into KB = ceil(K / 128) groups of 128 columns (the last may be
// shorter). In float32, per group g:
//   amax = max(max |x[m, k]| over the group, 1e-10); scale[m, g] = amax / 448; inv = 448 / amax;
//   q[m, k] = e4m3(clamp(x[m, k] * inv, -448, 448)), float8_e4m3fn bits, round to nearest even.

typedef __hip_bfloat16 bf16;

constexpr int kGroup = 128;  // columns per scale; also the block size: one thread per column

// float32 (finite, |v| <= 448) to float8_e4m3fn bits, round to nearest even. e4m3fn: 1 sign bit,
// 4 exponent bits (bias 7), 3 mantissa bits; below 2^-6 the values are subnormal, steps of 2^-9.
__device__ inline unsigned char float_to_e4m3(float v) {
  const unsigned int bits = __float_as_uint(v);
  const unsigned int sign = (bits >> 24) & 0x80u;
  const float a = fabsf(v);
  if (a < 0.015625f) return (unsigned char)(sign | (unsigned int)rintf(a * 512.0f));  // 8 rounds up to 2^-6
  unsigned int mag = bits & 0x7fffffffu;
  mag += 0x7ffffu + ((mag >> 20) & 1u);  // round the 23-bit mantissa to 3 bits, ties to even
  return (unsigned char)(sign | ((mag >> 20) - (120u << 3)));  // exponent bias 127 -> 7
}

// One block per (row, group): each thread loads one column, a shared-memory tree finds the
// group's absolute maximum, and each thread quantises its column.
__global__ void fp8_block_quant_kernel(const bf16* x, unsigned char* q, float* scale, int64_t K, int64_t KB) {
  __shared__ float partial[kGroup];
  const int64_t m = blockIdx.x / KB;
  const int64_t g = blockIdx.x % KB;
  const int64_t k = g * kGroup + threadIdx.x;
  const float v = k < K ? __bfloat162float(x[m * K + k]) : 0.0f;
  partial[threadIdx.x] = fabsf(v);
  __syncthreads();
  for (int stride = kGroup / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const float amax = fmaxf(partial[0], 1e-10f);
  const float inv = 448.0f / amax;
  if (threadIdx.x == 0) scale[m * KB + g] = amax / 448.0f;
  if (k < K) q[m * K + k] = float_to_e4m3(fminf(fmaxf(v * inv, -448.0f), 448.0f));
}

extern "C" int fp8_block_quant(const bf16* x, unsigned char* q, float* scale, int64_t M, int64_t K, int64_t KB,
                               hipStream_t stream) {
  if (M == 0 || K == 0) return hipSuccess;
  hipLaunchKernelGGL(fp8_block_quant_kernel, dim3((unsigned)(M * KB)), dim3(kGroup), 0, stream, x, q, scale, K, KB);
  return hipGetLastError();
}
