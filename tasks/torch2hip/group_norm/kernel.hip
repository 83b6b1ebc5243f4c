// Group normalisation of a (B, C, S) float16 tensor (the operation in reference.py): the C
// channels form G groups of C / G consecutive channels; for sample b and group g, mean and var are
// the mean and the biased variance of x[b, channels of g, :] (C / G * S values), and
//   y[b, c, s] = (x[b, c, s] - mean) / sqrt(var + eps) * weight[c] + bias[c].
// Arithmetic in float; the result is rounded to float16 once.

constexpr int kBlock = 256;

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

// One block per (sample, group), three walks over its values: the mean, the variance, the output.
__global__ void group_norm_kernel(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t C,
                                  int64_t S, int64_t G, float eps) {
  __shared__ float partial[kBlock];
  const int64_t group = blockIdx.x;  // b * G + g
  const int64_t g = group % G;
  const int64_t channels = C / G;
  const int64_t count = channels * S;
  const __half* x_group = x + group * count;
  __half* y_group = y + group * count;
  const int tid = threadIdx.x;

  float sum = 0.0f;
  for (int64_t n = tid; n < count; n += kBlock) sum += __half2float(x_group[n]);
  const float mean = block_sum(sum, partial) / (float)count;

  float sum_sq_dev = 0.0f;
  for (int64_t n = tid; n < count; n += kBlock) {
    const float d = __half2float(x_group[n]) - mean;
    sum_sq_dev += d * d;
  }
  const float rstd = rsqrtf(block_sum(sum_sq_dev, partial) / (float)count + eps);

  for (int64_t ci = 0; ci < channels; ++ci) {
    const int64_t c = g * channels + ci;
    const float w = __half2float(weight[c]);
    const float b = __half2float(bias[c]);
    for (int64_t s = tid; s < S; s += kBlock) {
      const int64_t n = ci * S + s;
      y_group[n] = __float2half((__half2float(x_group[n]) - mean) * rstd * w + b);
    }
  }
}

extern "C" int group_norm(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t B, int64_t C,
                          int64_t S, int64_t G, double eps, hipStream_t stream) {
  if (B == 0 || C == 0 || S == 0) return hipSuccess;
  hipLaunchKernelGGL(group_norm_kernel, dim3((unsigned)(B * G)), dim3(kBlock), 0, stream, x, weight, bias, y, C, S, G,
                     (float)eps);
  return hipGetLastError();
}
