// Bias + GELU (tanh approximation) over a (M, N) float16 matrix, the bias broadcast over rows:
//   y[m, n] = gelu(x[m, n] + bias[n]),  gelu(v) = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
// Exemplar: the baseline moves one 2-byte value per load and store (four per thread), so each
// memory instruction carries little data and the kernel keeps too few bytes in flight to reach
// bandwidth. Here each thread moves 8 values with one 16-byte load of x, one of the bias and one
// 16-byte store; a scalar kernel covers rows whose length is not a multiple of 8.

constexpr int kBlock = 256;
constexpr int kVec = 8;  // float16 values per 16-byte access

__device__ float gelu_tanh(float v) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

// N % kVec == 0: a vector never straddles two rows, so its 8 columns are consecutive.
__global__ void bias_gelu_vec(const __half* x, const __half* bias, __half* y, int64_t vectors, int64_t N) {
  int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (i >= vectors) return;
  int64_t col = (i * kVec) % N;
  uint4 raw_x = reinterpret_cast<const uint4*>(x)[i];
  uint4 raw_b = *reinterpret_cast<const uint4*>(bias + col);
  const __half* xv = reinterpret_cast<const __half*>(&raw_x);
  const __half* bv = reinterpret_cast<const __half*>(&raw_b);
  uint4 out;
  __half* ov = reinterpret_cast<__half*>(&out);
  for (int j = 0; j < kVec; ++j) ov[j] = __float2half(gelu_tanh(__half2float(xv[j]) + __half2float(bv[j])));
  reinterpret_cast<uint4*>(y)[i] = out;
}

__global__ void bias_gelu_scalar(const __half* x, const __half* bias, __half* y, int64_t total, int64_t N) {
  int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (i < total) y[i] = __float2half(gelu_tanh(__half2float(x[i]) + __half2float(bias[i % N])));
}

extern "C" int bias_gelu(const __half* x, const __half* bias, __half* y, int64_t M, int64_t N,
                         hipStream_t stream) {
  const int64_t total = M * N;
  if (total == 0) return hipSuccess;
  if (N % kVec == 0) {
    const int64_t vectors = total / kVec;
    dim3 grid((unsigned)((vectors + kBlock - 1) / kBlock));
    hipLaunchKernelGGL(bias_gelu_vec, grid, dim3(kBlock), 0, stream, x, bias, y, vectors, N);
  } else {
    dim3 grid((unsigned)((total + kBlock - 1) / kBlock));
    hipLaunchKernelGGL(bias_gelu_scalar, grid, dim3(kBlock), 0, stream, x, bias, y, total, N);
  }
  return hipGetLastError();
}
