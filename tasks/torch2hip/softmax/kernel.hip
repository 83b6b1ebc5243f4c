// Softmax over the last dimension of a (M, N) float32 matrix (the operation in reference.py):
//   y[m, n] = exp(x[m, n] - max_n x[m, :]) / sum_n exp(x[m, n] - max_n x[m, :])

// One thread per row: find the row's maximum, sum the exponentials, then write.
__global__ void softmax_kernel(const float* x, float* y, int64_t M, int64_t N) {
  int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M) return;
  const float* x_row = x + row * N;
  float* y_row = y + row * N;

  float row_max = x_row[0];
  for (int64_t n = 1; n < N; ++n) row_max = fmaxf(row_max, x_row[n]);
  float sum = 0.0f;
  for (int64_t n = 0; n < N; ++n) sum += expf(x_row[n] - row_max);
  for (int64_t n = 0; n < N; ++n) y_row[n] = expf(x_row[n] - row_max) / sum;
}

extern "C" int softmax(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  const int block = 128;
  dim3 grid((unsigned)((M + block - 1) / block));
  hipLaunchKernelGGL(softmax_kernel, grid, dim3(block), 0, stream, x, y, M, N);
  return hipGetLastError();
}
