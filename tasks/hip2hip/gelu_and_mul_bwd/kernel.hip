// Backward of the gated activation out[m, j] = gelu_tanh(gate[m, j]) * up[m, j], where the input
// x (M, 2D) bfloat16 holds gate = x[:, :D] and up = x[:, D:], and dy (M, D) is the gradient of out:
//   dx[m, j]     = dy[m, j] * up[m, j] * gelu_tanh'(gate[m, j])     (j < D)
//   dx[m, D + j] = dy[m, j] * gelu_tanh(gate[m, j])
// gelu_tanh(a) = 0.5 a (1 + t), t = tanh(sqrt(2/pi) (a + 0.044715 a^3));
// gelu_tanh'(a) = 0.5 (1 + t) + 0.5 a (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 a^2).
// Arithmetic in float; each result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCoeff = 0.044715f;

__device__ inline float tanh_arg(float a) { return kSqrt2OverPi * (a + kCoeff * a * a * a); }

// The gate half of dx: one thread per element.
__global__ void gelu_mul_bwd_gate(const bf16* x, const bf16* dy, bf16* dx, int64_t M, int64_t D) {
  const int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (i >= M * D) return;
  const int64_t m = i / D, j = i % D;
  const float a = __bfloat162float(x[m * 2 * D + j]);
  const float u = __bfloat162float(x[m * 2 * D + D + j]);
  const float g = __bfloat162float(dy[i]);
  const float t = tanhf(tanh_arg(a));
  const float dgelu = 0.5f * (1.0f + t) + 0.5f * a * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kCoeff * a * a);
  dx[m * 2 * D + j] = __float2bfloat16(g * u * dgelu);
}

// The up half of dx: one thread per element.
__global__ void gelu_mul_bwd_up(const bf16* x, const bf16* dy, bf16* dx, int64_t M, int64_t D) {
  const int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (i >= M * D) return;
  const int64_t m = i / D, j = i % D;
  const float a = __bfloat162float(x[m * 2 * D + j]);
  const float g = __bfloat162float(dy[i]);
  const float t = tanhf(tanh_arg(a));
  dx[m * 2 * D + D + j] = __float2bfloat16(g * 0.5f * a * (1.0f + t));
}

extern "C" int gelu_and_mul_bwd(const bf16* x, const bf16* dy, bf16* dx, int64_t M, int64_t D, hipStream_t stream) {
  if (M == 0 || D == 0) return hipSuccess;
  const unsigned blocks = (unsigned)((M * D + kBlock - 1) / kBlock);
  hipLaunchKernelGGL(gelu_mul_bwd_gate, dim3(blocks), dim3(kBlock), 0, stream, x, dy, dx, M, D);
  hipLaunchKernelGGL(gelu_mul_bwd_up, dim3(blocks), dim3(kBlock), 0, stream, x, dy, dx, M, D);
  return hipGetLastError();
}
