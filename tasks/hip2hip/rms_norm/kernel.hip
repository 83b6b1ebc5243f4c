// RMSNorm over the last dimension of a (M, N) bfloat16 matrix:
//   y[m, n] = x[m, n] / sqrt(mean_n(x[m, :]^2) + eps) * weight[n]
// Arithmetic in float; the result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

// One thread per row.
__global__ void rms_norm_kernel(const bf16* x, const bf16* weight, bf16* y, int64_t M, int64_t N,
                                float eps) {
  int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M) return;
  const bf16* x_row = x + row * N;
  bf16* y_row = y + row * N;

  float sum_sq = 0.0f;
  for (int64_t n = 0; n < N; ++n) {
    float v = __bfloat162float(x_row[n]);
    sum_sq += v * v;
  }
  float inv_rms = rsqrtf(sum_sq / (float)N + eps);
  for (int64_t n = 0; n < N; ++n) {
    float v = __bfloat162float(x_row[n]);
    y_row[n] = __float2bfloat16(v * inv_rms * __bfloat162float(weight[n]));
  }
}

extern "C" int rms_norm(const bf16* x, const bf16* weight, bf16* y, int64_t M, int64_t N, double eps,
                        hipStream_t stream) {
  const int block = 256;
  dim3 grid((unsigned)((M + block - 1) / block));
  hipLaunchKernelGGL(rms_norm_kernel, grid, dim3(block), 0, stream, x, weight, y, M, N, (float)eps);
  return hipGetLastError();
}
