// Row-wise softmax of a (M, V) float32 matrix:
//   y[m, v] = exp(x[m, v] - max_m) / sum_v' exp(x[m, v'] - max_m)

constexpr int kBlock = 256;

// The maximum (or the sum) of `v` over the block, through a shared-memory tree; every thread gets it.
__device__ float block_max(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const float result = partial[0];
  __syncthreads();  // `partial` is reused by the next reduction
  return result;
}

__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float result = partial[0];
  __syncthreads();
  return result;
}

// One block per row, three passes over it: the maximum, the sum of exponentials, the output.
__global__ void softmax_kernel(const float* x, float* y, int64_t V) {
  __shared__ float partial[kBlock];
  const float* x_row = x + (int64_t)blockIdx.x * V;
  float* y_row = y + (int64_t)blockIdx.x * V;

  float m = -INFINITY;
  for (int64_t v = threadIdx.x; v < V; v += kBlock) m = fmaxf(m, x_row[v]);
  m = block_max(m, partial);

  float s = 0.0f;
  for (int64_t v = threadIdx.x; v < V; v += kBlock) s += expf(x_row[v] - m);
  const float inv = 1.0f / block_sum(s, partial);

  for (int64_t v = threadIdx.x; v < V; v += kBlock) y_row[v] = expf(x_row[v] - m) * inv;
}

extern "C" int softmax(const float* x, float* y, int64_t M, int64_t V, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(softmax_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, y, V);
  return hipGetLastError();
}
