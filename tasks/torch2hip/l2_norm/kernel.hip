// L2 normalisation of the rows of a (M, N) float32 matrix (the operation in reference.py):
//   y[m, n] = x[m, n] / max(sqrt(sum_n x[m, :]^2), eps)

constexpr int kBlock = 256;

// One block per row: each thread adds the squares of its strided elements, a shared-memory tree
// adds the per-thread sums, and a second walk over the row scales and writes it.
__global__ void l2_norm_kernel(const float* x, float* y, int64_t N, float eps) {
  __shared__ float partial[kBlock];
  const float* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int tid = threadIdx.x;

  float sum_sq = 0.0f;
  for (int64_t n = tid; n < N; n += kBlock) sum_sq += x_row[n] * x_row[n];
  partial[tid] = sum_sq;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  const float norm = fmaxf(sqrtf(partial[0]), eps);

  for (int64_t n = tid; n < N; n += kBlock) y_row[n] = x_row[n] / norm;
}

extern "C" int l2_norm(const float* x, float* y, int64_t M, int64_t N, double eps, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(l2_norm_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, y, N, (float)eps);
  return hipGetLastError();
}
