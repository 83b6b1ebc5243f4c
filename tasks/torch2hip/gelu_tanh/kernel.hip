// GELU with the tanh approximation, elementwise over a (M, N) bfloat16 matrix (the operation in
// reference.py): y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
// Arithmetic in float; the result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One thread per element.
__global__ void gelu_tanh_kernel(const bf16* x, bf16* y, int64_t total) {
  const int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (i >= total) return;
  const float kBeta = 0.7978845608028654f;  // sqrt(2 / pi)
  const float kKappa = 0.044715f;
  const float v = __bfloat162float(x[i]);
  const float inner = kBeta * (v + kKappa * v * v * v);
  y[i] = __float2bfloat16(0.5f * v * (1.0f + tanhf(inner)));
}

extern "C" int gelu_tanh(const bf16* x, bf16* y, int64_t M, int64_t N, hipStream_t stream) {
  const int64_t total = M * N;
  if (total == 0) return hipSuccess;
  const int64_t blocks = (total + kBlock - 1) / kBlock;
  hipLaunchKernelGGL(gelu_tanh_kernel, dim3((unsigned)blocks), dim3(kBlock), 0, stream, x, y, total);
  return hipGetLastError();
}
