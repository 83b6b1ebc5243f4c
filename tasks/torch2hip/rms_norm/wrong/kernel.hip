// WRONG on purpose (never shown to agents): each group of 8 squares is added in float16 (packed
// half arithmetic), which overflows to inf for values above 256 and loses bits on the way.
// RMS normalisation over the last dimension of a (M, N) float16 matrix (the operation in
// reference.py): y[m, n] = x[m, n] / sqrt(mean_n(x[m, :]^2) + eps) * weight[n].
// Arithmetic in float; the result is rounded to float16 once.

constexpr int kThreads = 256;  // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;        // float16 values per 16-byte access

// The sum of `v` over the block, in every thread. `scratch` has a slot per warp.
__device__ inline float block_sum(float v, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  if (threadIdx.x % warpSize == 0) scratch[threadIdx.x / warpSize] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kThreads / warpSize; ++w) total += scratch[w];
  return total;
}

__device__ inline float sum_sq8(const uint4& raw) {
  const __half* h = reinterpret_cast<const __half*>(&raw);
  __half s = __float2half(0.0f);
#pragma unroll
  for (int j = 0; j < kVec; ++j) s = __hfma(h[j], h[j], s);
  return __half2float(s);
}

__device__ inline uint4 scale8(const uint4& raw, const uint4& raw_w, float inv_rms) {
  const __half* h = reinterpret_cast<const __half*>(&raw);
  const __half* w = reinterpret_cast<const __half*>(&raw_w);
  uint4 out;
  __half* o = reinterpret_cast<__half*>(&out);
#pragma unroll
  for (int j = 0; j < kVec; ++j) o[j] = __float2half(__half2float(h[j]) * inv_rms * __half2float(w[j]));
  return out;
}

// Rows of N % 8 == 0 and N <= kChunks * kThreads * 8, kept in registers.
template <int kChunks>
__global__ void __launch_bounds__(kThreads) rms_norm_rows(const __half* __restrict__ x, const __half* __restrict__ weight,
                                                          __half* __restrict__ y, int64_t N, float eps) {
  __shared__ float scratch[kThreads / 32];
  const uint4* x_row = reinterpret_cast<const uint4*>(x + (int64_t)blockIdx.x * N);
  uint4* y_row = reinterpret_cast<uint4*>(y + (int64_t)blockIdx.x * N);
  const uint4* w_vec = reinterpret_cast<const uint4*>(weight);
  const int chunks = (int)(N / kVec);
  uint4 v[kChunks];
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int q = threadIdx.x + c * kThreads;
    v[c] = q < chunks ? x_row[q] : make_uint4(0u, 0u, 0u, 0u);
    s += sum_sq8(v[c]);
  }
  const float inv_rms = rsqrtf(block_sum(s, scratch) / (float)N + eps);
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int q = threadIdx.x + c * kThreads;
    if (q < chunks) y_row[q] = scale8(v[c], w_vec[q], inv_rms);
  }
}

// Any row: two walks, 16-byte accesses where the row allows them.
__global__ void __launch_bounds__(kThreads) rms_norm_any(const __half* __restrict__ x, const __half* __restrict__ weight,
                                                         __half* __restrict__ y, int64_t N, float eps) {
  __shared__ float scratch[kThreads / 32];
  const __half* x_row = x + (int64_t)blockIdx.x * N;
  __half* y_row = y + (int64_t)blockIdx.x * N;
  const int64_t chunks = (N % kVec == 0) ? N / kVec : 0;
  float s = 0.0f;
  for (int64_t q = threadIdx.x; q < chunks; q += kThreads) s += sum_sq8(reinterpret_cast<const uint4*>(x_row)[q]);
  for (int64_t n = chunks * kVec + threadIdx.x; n < N; n += kThreads) {
    const float v = __half2float(x_row[n]);
    s += v * v;
  }
  const float inv_rms = rsqrtf(block_sum(s, scratch) / (float)N + eps);
  for (int64_t q = threadIdx.x; q < chunks; q += kThreads)
    reinterpret_cast<uint4*>(y_row)[q] =
        scale8(reinterpret_cast<const uint4*>(x_row)[q], reinterpret_cast<const uint4*>(weight)[q], inv_rms);
  for (int64_t n = chunks * kVec + threadIdx.x; n < N; n += kThreads)
    y_row[n] = __float2half(__half2float(x_row[n]) * inv_rms * __half2float(weight[n]));
}

extern "C" int rms_norm(const __half* x, const __half* weight, __half* y, int64_t M, int64_t N, double eps,
                        hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  const dim3 grid((unsigned)M), block(kThreads);
  const int64_t per_chunk = (int64_t)kThreads * kVec;
  const float e = (float)eps;
  if (N % kVec != 0 || N > 4 * per_chunk) {
    hipLaunchKernelGGL(rms_norm_any, grid, block, 0, stream, x, weight, y, N, e);
  } else if (N <= per_chunk) {
    hipLaunchKernelGGL((rms_norm_rows<1>), grid, block, 0, stream, x, weight, y, N, e);
  } else if (N <= 2 * per_chunk) {
    hipLaunchKernelGGL((rms_norm_rows<2>), grid, block, 0, stream, x, weight, y, N, e);
  } else if (N <= 3 * per_chunk) {
    hipLaunchKernelGGL((rms_norm_rows<3>), grid, block, 0, stream, x, weight, y, N, e);
  } else {
    hipLaunchKernelGGL((rms_norm_rows<4>), grid, block, 0, stream, x, weight, y, N, e);
  }
  return hipGetLastError();
}
