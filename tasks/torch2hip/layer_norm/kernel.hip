// Layer normalisation over the last dimension of a (M, N) float16 matrix (the operation in
// reference.py): y = (x - mean) / sqrt(var + eps) * weight + bias, with the mean and the biased
// variance of each row. Arithmetic in float; the result is rounded to float16 once.

// One block per row; the block's threads add their elements into shared sums.
__global__ void layer_norm_kernel(const __half* x, const __half* weight, const __half* bias, __half* y,
                                  int64_t N, float eps) {
  __shared__ float sum;
  __shared__ float sum_sq_dev;
  const __half* x_row = x + (int64_t)blockIdx.x * N;
  __half* y_row = y + (int64_t)blockIdx.x * N;
  if (threadIdx.x == 0) {
    sum = 0.0f;
    sum_sq_dev = 0.0f;
  }
  __syncthreads();

  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) atomicAdd(&sum, __half2float(x_row[n]));
  __syncthreads();
  const float mean = sum / (float)N;

  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) {
    float d = __half2float(x_row[n]) - mean;
    atomicAdd(&sum_sq_dev, d * d);
  }
  __syncthreads();
  const float rstd = rsqrtf(sum_sq_dev / (float)N + eps);

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
