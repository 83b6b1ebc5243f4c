// Inclusive prefix sum along the last dimension of a (M, N) float32 matrix (the operation in
// reference.py): y[m, n] = x[m, 0] + x[m, 1] + ... + x[m, n], accumulated in float32.

// One thread per row, summing left to right.
__global__ void cumsum_kernel(const float* x, float* y, int64_t M, int64_t N) {
  int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M) return;
  const float* x_row = x + row * N;
  float* y_row = y + row * N;
  float running = 0.0f;
  for (int64_t n = 0; n < N; ++n) {
    running += x_row[n];
    y_row[n] = running;
  }
}

extern "C" int cumsum(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  const int block = 128;
  dim3 grid((unsigned)((M + block - 1) / block));
  hipLaunchKernelGGL(cumsum_kernel, grid, dim3(block), 0, stream, x, y, M, N);
  return hipGetLastError();
}
