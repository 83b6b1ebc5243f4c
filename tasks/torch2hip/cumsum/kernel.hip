// Inclusive prefix sum along the last dimension of a (M, N) float32 matrix (the operation in
// reference.py): y[m, n] = x[m, 0] + x[m, 1] + ... + x[m, n], accumulated in float32.

constexpr int kBlock = 256;

// One block per row, walking it in chunks of kBlock values: each chunk is scanned in shared
// memory (Hillis-Steele, double-buffered) and offset by the total of the earlier chunks.
__global__ void cumsum_kernel(const float* x, float* y, int64_t N) {
  __shared__ float buf[2][kBlock];
  const float* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int tid = threadIdx.x;
  float carry = 0.0f;  // the sum of all earlier chunks
  for (int64_t base = 0; base < N; base += kBlock) {
    const int64_t n = base + tid;
    int cur = 0;
    buf[cur][tid] = (n < N) ? x_row[n] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < kBlock; offset *= 2) {
      float v = buf[cur][tid];
      if (tid >= offset) v += buf[cur][tid - offset];
      buf[1 - cur][tid] = v;
      cur = 1 - cur;
      __syncthreads();
    }
    if (n < N) y_row[n] = buf[cur][tid] + carry;
    carry += buf[cur][kBlock - 1];
    __syncthreads();  // the next chunk overwrites buf
  }
}

extern "C" int cumsum(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(cumsum_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, y, N);
  return hipGetLastError();
}
