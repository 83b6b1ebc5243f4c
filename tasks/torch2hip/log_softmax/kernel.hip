// Log-softmax over the last dimension of a (M, N) bfloat16 matrix of logits, written as float32
// log-probabilities (the operation in reference.py):
//   y[m, n] = x[m, n] - max_n x[m, :] - log(sum_n exp(x[m, n] - max_n x[m, :]))
#include <cfloat>

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One block per row, three walks over it: the maximum, the sum of exponentials, the output.
// Each reduction adds per-thread partials through a shared-memory tree.
__global__ void log_softmax_kernel(const bf16* x, float* y, int64_t N) {
  __shared__ float partial[kBlock];
  const bf16* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int tid = threadIdx.x;

  float m = -FLT_MAX;
  for (int64_t n = tid; n < N; n += kBlock) m = fmaxf(m, __bfloat162float(x_row[n]));
  partial[tid] = m;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] = fmaxf(partial[tid], partial[tid + stride]);
    __syncthreads();
  }
  const float row_max = partial[0];
  __syncthreads();  // partial is reused below

  float s = 0.0f;
  for (int64_t n = tid; n < N; n += kBlock) s += expf(__bfloat162float(x_row[n]) - row_max);
  partial[tid] = s;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  const float log_sum = logf(partial[0]);

  for (int64_t n = tid; n < N; n += kBlock) y_row[n] = __bfloat162float(x_row[n]) - row_max - log_sum;
}

extern "C" int log_softmax(const bf16* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(log_softmax_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, y, N);
  return hipGetLastError();
}
