// Training-mode batch normalisation of a (N, C, H, W) float16 tensor (the operation in
// reference.py). For each channel c, over its N * H * W values:
//   mean[c] = their mean, var = their biased variance, invstd[c] = 1 / sqrt(var + eps)
//   y[n, c, h, w] = (x[n, c, h, w] - mean[c]) * invstd[c] * weight[c] + bias[c]
// weight and bias are float32 (C,); mean and invstd are returned as float32 (C,). Arithmetic in
// float; y is rounded to float16 once.

constexpr int kBlock = 512;

// The sum of `v` over the block through a shared-memory tree; every thread gets it.
__device__ float block_sum(float v, float* partial) {
  const int tid = threadIdx.x;
  partial[tid] = v;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();  // partial is reused by the next call
  return total;
}

// One block per channel, three walks over the channel's values: the mean, the variance, the
// output. The channel's values are N runs of H * W consecutive elements.
__global__ void batch_norm_kernel(const __half* x, const float* weight, const float* bias, __half* y, float* mean_out,
                                  float* invstd_out, int64_t N, int64_t C, int64_t HW, float eps) {
  __shared__ float partial[kBlock];
  const int64_t c = blockIdx.x;
  const int tid = threadIdx.x;
  const float count = (float)(N * HW);

  float sum = 0.0f;
  for (int64_t n = 0; n < N; ++n) {
    const __half* run = x + (n * C + c) * HW;
    for (int64_t s = tid; s < HW; s += kBlock) sum += __half2float(run[s]);
  }
  const float mean = block_sum(sum, partial) / count;

  float sum_sq_dev = 0.0f;
  for (int64_t n = 0; n < N; ++n) {
    const __half* run = x + (n * C + c) * HW;
    for (int64_t s = tid; s < HW; s += kBlock) {
      const float d = __half2float(run[s]) - mean;
      sum_sq_dev += d * d;
    }
  }
  const float invstd = rsqrtf(block_sum(sum_sq_dev, partial) / count + eps);
  if (tid == 0) {
    mean_out[c] = mean;
    invstd_out[c] = invstd;
  }

  const float scale = invstd * weight[c];
  const float shift = bias[c];
  for (int64_t n = 0; n < N; ++n) {
    const __half* run = x + (n * C + c) * HW;
    __half* out = y + (n * C + c) * HW;
    for (int64_t s = tid; s < HW; s += kBlock) out[s] = __float2half((__half2float(run[s]) - mean) * scale + shift);
  }
}

extern "C" int batch_norm_train(const __half* x, const float* weight, const float* bias, __half* y, float* mean,
                                float* invstd, int64_t N, int64_t C, int64_t H, int64_t W, double eps,
                                hipStream_t stream) {
  if (C == 0) return hipSuccess;
  hipLaunchKernelGGL(batch_norm_kernel, dim3((unsigned)C), dim3(kBlock), 0, stream, x, weight, bias, y, mean, invstd,
                     N, C, H * W, (float)eps);
  return hipGetLastError();
}
