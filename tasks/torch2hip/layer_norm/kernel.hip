// Layer normalisation over the last dimension of a (M, N) float16 matrix (the operation in
// reference.py): y = (x - mean) / sqrt(var + eps) * weight + bias, with the mean and the biased
// variance of each row. Arithmetic in float; the result is rounded to float16 once.

// One block per row: each thread adds its strided elements, then thread 0 adds the partial sums.
__global__ void layer_norm_kernel(const __half* x, const __half* weight, const __half* bias, __half* y,
                                  int64_t N, float eps) {
  __shared__ float partial[256];
  __shared__ float mean;
  __shared__ float rstd;
  const __half* x_row = x + (int64_t)blockIdx.x * N;
  __half* y_row = y + (int64_t)blockIdx.x * N;

  float sum = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) sum += __half2float(x_row[n]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int t = 0; t < (int)blockDim.x; ++t) total += partial[t];
    mean = total / (float)N;
  }
  __syncthreads();

  float sum_sq_dev = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) {
    float d = __half2float(x_row[n]) - mean;
    sum_sq_dev += d * d;
  }
  partial[threadIdx.x] = sum_sq_dev;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int t = 0; t < (int)blockDim.x; ++t) total += partial[t];
    rstd = rsqrtf(total / (float)N + eps);
  }
  __syncthreads();

  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) {
    float v = (__half2float(x_row[n]) - mean) * rstd;
    y_row[n] = __float2half(v * __half2float(weight[n]) + __half2float(bias[n]));
  }
}

extern "C" int layer_norm(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t M,
                          int64_t N, double eps, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(layer_norm_kernel, dim3((unsigned)M), dim3(256), 0, stream, x, weight, bias, y, N,
                     (float)eps);
  return hipGetLastError();
}
