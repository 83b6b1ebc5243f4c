// Softmax over the last dimension of a (M, N) float32 matrix (the operation in reference.py):
//   y[m, n] = exp(x[m, n] - max_n x[m, :]) / sum_n exp(x[m, n] - max_n x[m, :])
#include <cfloat>

constexpr int kBlock = 256;

// One block per row, three passes over it: the maximum, the sum of exponentials, the output.
// Each reduction adds per-thread partials through a shared-memory tree.
__global__ void softmax_kernel(const float* x, float* y, int64_t N) {
  __shared__ float partial[kBlock];
  const float* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int tid = threadIdx.x;

  float m = -FLT_MAX;
  for (int64_t n = tid; n < N; n += kBlock) m = fmaxf(m, x_row[n]);
  partial[tid] = m;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] = fmaxf(partial[tid], partial[tid + stride]);
    __syncthreads();
  }
  const float row_max = partial[0];
  __syncthreads();  // partial is reused below

  float s = 0.0f;
  for (int64_t n = tid; n < N; n += kBlock) s += expf(x_row[n] - row_max);
  partial[tid] = s;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  const float inv_sum = 1.0f / partial[0];

  for (int64_t n = tid; n < N; n += kBlock) y_row[n] = expf(x_row[n] - row_max) * inv_sum;
}

extern "C" int softmax(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(softmax_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, y, N);
  return hipGetLastError();
}
