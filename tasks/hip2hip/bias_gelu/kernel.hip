// Bias + GELU (tanh approximation) over a (M, N) float16 matrix, the bias broadcast over rows:
//   y[m, n] = gelu(x[m, n] + bias[n]),  gelu(v) = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
// Arithmetic in float; the result is rounded to float16 once.

constexpr int kBlock = 256;
constexpr int kItems = 4;  // elements per thread, kBlock apart

__device__ float gelu_tanh(float v) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

// blockIdx.y is the row; each block covers kBlock * kItems consecutive columns of it.
__global__ void bias_gelu_kernel(const __half* x, const __half* bias, __half* y, int64_t N) {
  const int64_t row = blockIdx.y;
  const int64_t first = (int64_t)blockIdx.x * kBlock * kItems + threadIdx.x;
  for (int j = 0; j < kItems; ++j) {
    int64_t col = first + j * kBlock;
    if (col < N) {
      int64_t i = row * N + col;
      y[i] = __float2half(gelu_tanh(__half2float(x[i]) + __half2float(bias[col])));
    }
  }
}

extern "C" int bias_gelu(const __half* x, const __half* bias, __half* y, int64_t M, int64_t N,
                         hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  dim3 grid((unsigned)((N + kBlock * kItems - 1) / (kBlock * kItems)), (unsigned)M);
  hipLaunchKernelGGL(bias_gelu_kernel, grid, dim3(kBlock), 0, stream, x, bias, y, N);
  return hipGetLastError();
}
