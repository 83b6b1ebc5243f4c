// Per-row cross-entropy of a (M, V) bfloat16 matrix of logits against labels (M,) int64:
//   loss[m] = log(sum_v exp(logits[m, v])) - logits[m, labels[m]], in float32;
//   a label outside [0, V) is ignored: loss[m] = 0.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

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
__global__ void cross_entropy_kernel(const bf16* logits, const int64_t* labels, float* loss, int64_t V) {
  __shared__ float partial[kBlock];
  const bf16* row = logits + (int64_t)blockIdx.x * V;
  float m = -__int_as_float(0x7f800000);
  for (int64_t v = threadIdx.x; v < V; v += kBlock) m = fmaxf(m, __bfloat162float(row[v]));
  m = block_max(m, partial);
  float s = 0.0f;
  for (int64_t v = threadIdx.x; v < V; v += kBlock) s += expf(__bfloat162float(row[v]) - m);
  s = block_sum(s, partial);
  if (threadIdx.x == 0) {
    const int64_t label = labels[blockIdx.x];
    loss[blockIdx.x] = (label >= 0 && label < V) ? m + logf(s) - __bfloat162float(row[label]) : 0.0f;
  }
}

extern "C" int cross_entropy(const bf16* logits, const int64_t* labels, float* loss, int64_t M, int64_t V,
                             hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(cross_entropy_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, logits, labels, loss, V);
  return hipGetLastError();
}
