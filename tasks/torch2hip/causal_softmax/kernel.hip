// Causal attention probabilities (the operation in reference.py): for scores x of shape (Z, S, S)
// float32, row i of each matrix: y[z, i, j] = exp(scale x[z, i, j] - m) / sum_{k <= i} exp(scale x[z, i, k] - m)
// for j <= i (m the maximum of scale x[z, i, k] over k <= i), and y[z, i, j] = 0 for j > i.
#include <cfloat>

constexpr int kBlock = 256;

// One block per row, three passes over all S columns (maximum, sum, output), the mask applied
// in each; each reduction goes through a shared-memory tree.
__global__ void causal_softmax_kernel(const float* x, float* y, int64_t S, float scale) {
  __shared__ float partial[kBlock];
  const int64_t row = blockIdx.x;  // z * S + i
  const int64_t i = row % S;
  const float* x_row = x + row * S;
  float* y_row = y + row * S;
  const int tid = threadIdx.x;

  float m = -FLT_MAX;
  for (int64_t j = tid; j < S; j += kBlock) {
    float v = x_row[j] * scale;
    if (j <= i) m = fmaxf(m, v);
  }
  partial[tid] = m;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] = fmaxf(partial[tid], partial[tid + stride]);
    __syncthreads();
  }
  const float row_max = partial[0];
  __syncthreads();

  float s = 0.0f;
  for (int64_t j = tid; j < S; j += kBlock) {
    float v = x_row[j] * scale;
    if (j <= i) s += expf(v - row_max);
  }
  partial[tid] = s;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  const float inv_sum = 1.0f / partial[0];

  for (int64_t j = tid; j < S; j += kBlock) {
    float v = x_row[j] * scale;
    y_row[j] = (j <= i) ? expf(v - row_max) * inv_sum : 0.0f;
  }
}

extern "C" int causal_softmax(const float* x, float* y, int64_t Z, int64_t S, double scale, hipStream_t stream) {
  if (Z == 0 || S == 0) return hipSuccess;
  hipLaunchKernelGGL(causal_softmax_kernel, dim3((unsigned)(Z * S)), dim3(kBlock), 0, stream, x, y, S, (float)scale);
  return hipGetLastError();
}
