// LayerNorm over the last dimension of a (M, N) float16 matrix:
//   y[m, n] = (x[m, n] - mean_m) / sqrt(var_m + eps) * weight[n] + bias[n]
// mean_m and var_m (biased) of row m; arithmetic in float, the result rounded to float16 once.

constexpr int kBlock = 256;

// The sum of `v` over the block, through a shared-memory tree; every thread gets it.
__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();  // `partial` is reused by the next call
  return total;
}

// One block per row, three passes over the row: the mean, the variance around it, the output.
__global__ void layer_norm_kernel(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t N,
                                  float eps) {
  __shared__ float partial[kBlock];
  const __half* x_row = x + (int64_t)blockIdx.x * N;
  __half* y_row = y + (int64_t)blockIdx.x * N;

  float sum = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) sum += __half2float(x_row[n]);
  const float mean = block_sum(sum, partial) / (float)N;

  float sum_sq = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) {
    const float d = __half2float(x_row[n]) - mean;
    sum_sq += d * d;
  }
  const float rstd = rsqrtf(block_sum(sum_sq, partial) / (float)N + eps);

  for (int64_t n = threadIdx.x; n < N; n += kBlock) {
    const float d = __half2float(x_row[n]) - mean;
    y_row[n] = __float2half(d * rstd * __half2float(weight[n]) + __half2float(bias[n]));
  }
}

extern "C" int layer_norm(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t M,
                          int64_t N, double eps, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(layer_norm_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, weight, bias, y, N,
                     (float)eps);
  return hipGetLastError();
}
