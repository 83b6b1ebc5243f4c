// WRONG on purpose (never shown to agents): divides the sum of squared deviations by N - 1
// (the unbiased variance); layer_norm uses the biased one. Invisible on long rows, wrong on short.
// Layer normalisation over the last dimension of a (M, N) float16 matrix (the operation in
// reference.py): y = (x - mean) / sqrt(var + eps) * weight + bias, with the mean and the biased
// variance of each row. Arithmetic in float; the result is rounded to float16 once.

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;      // float16 values per 16-byte load

// The sum of `v` over the block; every thread gets it. `partial` has a slot per warp
// (kBlock slots cover any warp width) and may be reused after the call returns.
__device__ float block_sum(float v, float* partial) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kBlock / warpSize; ++w) total += partial[w];
  __syncthreads();
  return total;
}

__global__ void layer_norm_kernel(const __half* x, const __half* weight, const __half* bias, __half* y,
                                  int64_t N, float eps) {
  __shared__ float partial[kBlock];
  const __half* x_row = x + (int64_t)blockIdx.x * N;
  __half* y_row = y + (int64_t)blockIdx.x * N;
  const int64_t vectors = (N % kVec == 0) ? N / kVec : 0;  // rows 16-byte aligned: vector loads
  const int64_t tail = vectors * kVec;

  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < vectors; i += kBlock) {
    uint4 raw = reinterpret_cast<const uint4*>(x_row)[i];
    const __half* v = reinterpret_cast<const __half*>(&raw);
    for (int j = 0; j < kVec; ++j) sum += __half2float(v[j]);
  }
  for (int64_t n = tail + threadIdx.x; n < N; n += kBlock) sum += __half2float(x_row[n]);
  const float mean = block_sum(sum, partial) / (float)N;

  // Second pass over the row (now in cache) for the variance: exact for rows with a large mean.
  float sum_sq_dev = 0.0f;
  for (int64_t i = threadIdx.x; i < vectors; i += kBlock) {
    uint4 raw = reinterpret_cast<const uint4*>(x_row)[i];
    const __half* v = reinterpret_cast<const __half*>(&raw);
    for (int j = 0; j < kVec; ++j) {
      float d = __half2float(v[j]) - mean;
      sum_sq_dev += d * d;
    }
  }
  for (int64_t n = tail + threadIdx.x; n < N; n += kBlock) {
    float d = __half2float(x_row[n]) - mean;
    sum_sq_dev += d * d;
  }
  const float rstd = rsqrtf(block_sum(sum_sq_dev, partial) / (float)(N - 1) + eps);

  for (int64_t i = threadIdx.x; i < vectors; i += kBlock) {
    uint4 raw = reinterpret_cast<const uint4*>(x_row)[i];
    uint4 raw_w = reinterpret_cast<const uint4*>(weight)[i];
    uint4 raw_b = reinterpret_cast<const uint4*>(bias)[i];
    const __half* v = reinterpret_cast<const __half*>(&raw);
    const __half* w = reinterpret_cast<const __half*>(&raw_w);
    const __half* b = reinterpret_cast<const __half*>(&raw_b);
    uint4 out;
    __half* o = reinterpret_cast<__half*>(&out);
    for (int j = 0; j < kVec; ++j)
      o[j] = __float2half((__half2float(v[j]) - mean) * rstd * __half2float(w[j]) + __half2float(b[j]));
    reinterpret_cast<uint4*>(y_row)[i] = out;
  }
  for (int64_t n = tail + threadIdx.x; n < N; n += kBlock) {
    float v = (__half2float(x_row[n]) - mean) * rstd;
    y_row[n] = __float2half(v * __half2float(weight[n]) + __half2float(bias[n]));
  }
}

extern "C" int layer_norm(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t M,
                          int64_t N, double eps, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(layer_norm_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, weight, bias, y, N,
                     (float)eps);
  return hipGetLastError();
}
