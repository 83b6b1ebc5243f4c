// Per-token cross-entropy (the operation in reference.py): loss[m] = logsumexp(x[m, :]) - x[m, labels[m]]
// for (M, V) bfloat16 logits and int64 labels in [0, V); float32 arithmetic and output.
#include <cfloat>

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One block per row, two passes over it (the maximum, then the sum of exponentials), each reduced
// through a shared-memory tree.
__global__ void cross_entropy_kernel(const bf16* logits, const int64_t* labels, float* loss, int64_t V) {
  __shared__ float partial[kBlock];
  const bf16* row = logits + (int64_t)blockIdx.x * V;
  const int tid = threadIdx.x;
  float m = -FLT_MAX;
  for (int64_t v = tid; v < V; v += kBlock) m = fmaxf(m, __bfloat162float(row[v]));
  partial[tid] = m;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] = fmaxf(partial[tid], partial[tid + stride]);
    __syncthreads();
  }
  const float row_max = partial[0];
  __syncthreads();
  float s = 0.0f;
  for (int64_t v = tid; v < V; v += kBlock) s += expf(__bfloat162float(row[v]) - row_max);
  partial[tid] = s;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0) loss[blockIdx.x] = row_max + logf(partial[0]) - __bfloat162float(row[labels[blockIdx.x]]);
}

extern "C" int cross_entropy(const bf16* logits, const int64_t* labels, float* loss, int64_t M, int64_t V,
                             hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(cross_entropy_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, logits, labels, loss, V);
  return hipGetLastError();
}
