// Log-sum-exp of each row of a (M, N) float32 matrix:
//   out[m] = log(sum_n exp(x[m, n])) = max_m + log(sum_n exp(x[m, n] - max_m)),
// with max_m the row's maximum (so no exponential overflows). Arithmetic in float.

constexpr int kBlock = 512;

// Block-wide reductions through a shared-memory tree; every thread gets the result.
__device__ float block_max(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const float r = partial[0];
  __syncthreads();
  return r;
}

__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float r = partial[0];
  __syncthreads();
  return r;
}

// One block per row: a pass for the row's maximum, a pass for the sum of exp(x - max).
__global__ void logsumexp_kernel(const float* x, float* out, int64_t N) {
  __shared__ float partial[kBlock];
  const float* row = x + (int64_t)blockIdx.x * N;
  float m = -__int_as_float(0x7f800000);
  for (int64_t n = threadIdx.x; n < N; n += kBlock) m = fmaxf(m, row[n]);
  m = block_max(m, partial);
  float s = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) s += expf(row[n] - m);
  s = block_sum(s, partial);
  if (threadIdx.x == 0) out[blockIdx.x] = m + logf(s);
}

extern "C" int logsumexp(const float* x, float* out, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(logsumexp_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, out, N);
  return hipGetLastError();
}
