// RMSNorm over the last dimension of a (M, N) bfloat16 matrix:
//   y[m, n] = x[m, n] / sqrt(mean_n(x[m, :]^2) + eps) * weight[n]
// Arithmetic in float; the result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One block per row: each thread sums the squares of a strided set of the row's elements, a
// shared-memory tree adds the partial sums, and every thread then scales its elements.
__global__ void rms_norm_kernel(const bf16* x, const bf16* weight, bf16* y, int64_t N, float eps) {
  __shared__ float partial[kBlock];
  const bf16* x_row = x + (int64_t)blockIdx.x * N;
  bf16* y_row = y + (int64_t)blockIdx.x * N;

  float sum_sq = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) {
    float v = __bfloat162float(x_row[n]);
    sum_sq += v * v;
  }
  partial[threadIdx.x] = sum_sq;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float inv_rms = rsqrtf(partial[0] / (float)N + eps);

  for (int64_t n = threadIdx.x; n < N; n += kBlock) {
    float v = __bfloat162float(x_row[n]);
    y_row[n] = __float2bfloat16(v * inv_rms * __bfloat162float(weight[n]));
  }
}

extern "C" int rms_norm(const bf16* x, const bf16* weight, bf16* y, int64_t M, int64_t N, double eps,
                        hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(rms_norm_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, weight, y, N, (float)eps);
  return hipGetLastError();
}
