// WRONG on purpose (never shown to agents): merging two (max, sum) pairs rescales only the
// first sum to the new maximum.
// Per-token cross-entropy (the operation in reference.py): loss[m] = logsumexp(x[m, :]) - x[m, labels[m]]
// for (M, V) bfloat16 logits and int64 labels in [0, V); float32 arithmetic and output.
#include <cfloat>

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;      // bfloat16 values per 16-byte load

struct MaxSum {
  float max;
  float sum;
};

__device__ inline MaxSum merge(MaxSum a, MaxSum b) {
  float m = fmaxf(a.max, b.max);
  return {m, a.sum * expf(a.max - m) + b.sum};
}

__device__ inline void add(MaxSum& s, float v) {
  if (v > s.max) {
    s.sum = s.sum * expf(s.max - v) + 1.0f;
    s.max = v;
  } else {
    s.sum += expf(v - s.max);
  }
}

__global__ void cross_entropy_kernel(const bf16* logits, const int64_t* labels, float* loss, int64_t V) {
  __shared__ MaxSum partial[kBlock];
  const bf16* row = logits + (int64_t)blockIdx.x * V;
  const int64_t vectors = (V % kVec == 0) ? V / kVec : 0;
  MaxSum s = {-FLT_MAX, 0.0f};
  for (int64_t i = threadIdx.x; i < vectors; i += kBlock) {
    uint4 raw = reinterpret_cast<const uint4*>(row)[i];
    const bf16* v = reinterpret_cast<const bf16*>(&raw);
    float m = __bfloat162float(v[0]);
    for (int k = 1; k < kVec; ++k) m = fmaxf(m, __bfloat162float(v[k]));
    float e = 0.0f;
    for (int k = 0; k < kVec; ++k) e += expf(__bfloat162float(v[k]) - m);
    s = merge(s, {m, e});
  }
  for (int64_t v = vectors * kVec + threadIdx.x; v < V; v += kBlock) add(s, __bfloat162float(row[v]));
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    MaxSum other = {__shfl_xor(s.max, offset), __shfl_xor(s.sum, offset)};
    s = merge(s, other);
  }
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    MaxSum total = partial[0];
    for (int w = 1; w < kBlock / warpSize; ++w) total = merge(total, partial[w]);
    loss[blockIdx.x] = total.max + logf(total.sum) - __bfloat162float(row[labels[blockIdx.x]]);
  }
}

extern "C" int cross_entropy(const bf16* logits, const int64_t* labels, float* loss, int64_t M, int64_t V,
                             hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(cross_entropy_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, logits, labels, loss, V);
  return hipGetLastError();
}
