// Per-row cross-entropy of a (M, V) bfloat16 matrix of logits against labels (M,) int64:
//   loss[m] = log(sum_v exp(logits[m, v])) - logits[m, labels[m]], in float32;
//   a label outside [0, V) is ignored: loss[m] = 0.
// Exemplar: the baseline reads each row twice (a pass for the maximum, a pass for the sum of
// exponentials), 2 bytes per load, with a shared-memory tree after each pass. Here the row is read
// once with 16-byte loads and an online log-sum-exp: each thread keeps a running maximum and a
// sum scaled to it (rescaled when the maximum grows, once per 8 values), and the (max, sum) pairs
// are merged with warp shuffles and one shared-memory step. Rows whose length is not a multiple
// of 8 take a scalar loop.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 512;  // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;      // bfloat16 values per 16-byte load
constexpr int kMaxWarps = kBlock / 32;

// Merge (m2, s2) into (m, s): both sums scaled to their own maximum.
__device__ inline void merge(float& m, float& s, float m2, float s2) {
  const float mx = fmaxf(m, m2);
  s = (m == mx ? s : s * expf(m - mx)) + (m2 == mx ? s2 : s2 * expf(m2 - mx));
  m = mx;
}

__global__ void __launch_bounds__(kBlock)
    cross_entropy_kernel(const bf16* __restrict__ logits, const int64_t* __restrict__ labels, float* __restrict__ loss,
                         int64_t V) {
  __shared__ float warp_m[kMaxWarps], warp_s[kMaxWarps];
  const bf16* row = logits + (int64_t)blockIdx.x * V;
  float m = -__int_as_float(0x7f800000);
  float s = 0.0f;
  const int64_t vectors = (V % kVec == 0) ? V / kVec : 0;
#pragma unroll 2
  for (int64_t p = threadIdx.x; p < vectors; p += kBlock) {
    const uint4 raw = reinterpret_cast<const uint4*>(row)[p];
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
    float x[kVec];
    float vm = m;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      x[j] = __bfloat162float(h[j]);
      vm = fmaxf(vm, x[j]);
    }
    if (vm > m) {
      s *= expf(m - vm);  // 0 while m is still -inf
      m = vm;
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j) s += expf(x[j] - m);
  }
  for (int64_t v = vectors * kVec + threadIdx.x; v < V; v += kBlock) {
    const float x = __bfloat162float(row[v]);
    if (x > m) {
      s *= expf(m - x);
      m = x;
    }
    s += expf(x - m);
  }

  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    const float m2 = __shfl_xor(m, offset);
    const float s2 = __shfl_xor(s, offset);
    merge(m, s, m2, s2);
  }
  const int warps = kBlock / warpSize;
  if (threadIdx.x % warpSize == 0) {
    warp_m[threadIdx.x / warpSize] = m;
    warp_s[threadIdx.x / warpSize] = s;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    m = warp_m[0];
    s = warp_s[0];
    for (int w = 1; w < warps; ++w) merge(m, s, warp_m[w], warp_s[w]);
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
