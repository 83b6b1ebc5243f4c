// RMS normalisation over the last dimension of a (M, N) float16 matrix (the operation in
// reference.py): y[m, n] = x[m, n] / sqrt(mean_n(x[m, :]^2) + eps) * weight[n].
// Arithmetic in float; the result is rounded to float16 once.

constexpr int kBlock = 256;

// One block per row: each thread adds the squares of its strided elements, a shared-memory tree
// adds the per-thread sums, and a second walk over the row scales and writes it.
__global__ void rms_norm_kernel(const __half* x, const __half* weight, __half* y, int64_t N, float eps) {
  __shared__ float partial[kBlock];
  const __half* x_row = x + (int64_t)blockIdx.x * N;
  __half* y_row = y + (int64_t)blockIdx.x * N;
  const int tid = threadIdx.x;

  float sum_sq = 0.0f;
  for (int64_t n = tid; n < N; n += kBlock) {
    const float v = __half2float(x_row[n]);
    sum_sq += v * v;
  }
  partial[tid] = sum_sq;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  const float inv_rms = rsqrtf(partial[0] / (float)N + eps);

  for (int64_t n = tid; n < N; n += kBlock) {
    const float v = __half2float(x_row[n]) * inv_rms;
    y_row[n] = __float2half(v * __half2float(weight[n]));
  }
}

extern "C" int rms_norm(const __half* x, const __half* weight, __half* y, int64_t M, int64_t N, double eps,
                        hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(rms_norm_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, weight, y, N, (float)eps);
  return hipGetLastError();
}
