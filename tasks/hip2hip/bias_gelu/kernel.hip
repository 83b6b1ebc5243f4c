// Bias + GELU (tanh approximation) over a (M, N) float16 matrix, the bias broadcast over rows:
//   y[m, n] = gelu(x[m, n] + bias[n]),  gelu(v) = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
// Arithmetic in float; the result is rounded to float16 once.

__device__ float gelu_tanh(float v) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

// One block per column: the column's bias is read once, and the block's threads walk its rows.
__global__ void bias_gelu_kernel(const __half* x, const __half* bias, __half* y, int64_t M, int64_t N) {
  int64_t col = blockIdx.x;
  float b = __half2float(bias[col]);
  for (int64_t row = threadIdx.x; row < M; row += blockDim.x) {
    int64_t i = row * N + col;
    y[i] = __float2half(gelu_tanh(__half2float(x[i]) + b));
  }
}

extern "C" int bias_gelu(const __half* x, const __half* bias, __half* y, int64_t M, int64_t N,
                         hipStream_t stream) {
  if (N == 0) return hipSuccess;
  hipLaunchKernelGGL(bias_gelu_kernel, dim3((unsigned)N), dim3(256), 0, stream, x, bias, y, M, N);
  return hipGetLastError();
}
