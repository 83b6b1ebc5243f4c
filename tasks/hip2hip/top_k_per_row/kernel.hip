// Top-k of each row of a (B, V) bfloat16 matrix of logits, k = K <= 8 and K <= V:
//   values[b, j], indices[b, j] for j < K: the j-th largest logit of row b and its column, in
//   descending order of value; equal values are ordered by the lower column first.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 512;

// The order of the result: (value a, column ia) comes before (value b, column ib).
__device__ inline bool before(float a, int ia, float b, int ib) { return a > b || (a == b && ia < ib); }

// One block per row, one round per output: every round scans the row for the best element that
// comes after the previous round's pick (a strided pass, then a shared-memory tree), so the
// rounds yield the row's elements in order.
__global__ void top_k_kernel(const bf16* logits, bf16* values, int* indices, int64_t V, int64_t K) {
  __shared__ float best_v[kBlock];
  __shared__ int best_i[kBlock];
  const bf16* row = logits + (int64_t)blockIdx.x * V;
  const float neg_inf = -__int_as_float(0x7f800000);
  float prev_v = __int_as_float(0x7f800000);  // +inf: every element comes after it
  int prev_i = -1;
  for (int64_t r = 0; r < K; ++r) {
    float bv = neg_inf;
    int bi = 0x7fffffff;
    for (int64_t n = threadIdx.x; n < V; n += kBlock) {
      const float v = __bfloat162float(row[n]);
      if (before(prev_v, prev_i, v, (int)n) && before(v, (int)n, bv, bi)) {
        bv = v;
        bi = (int)n;
      }
    }
    best_v[threadIdx.x] = bv;
    best_i[threadIdx.x] = bi;
    __syncthreads();
    for (int stride = kBlock / 2; stride > 0; stride /= 2) {
      if (threadIdx.x < stride && before(best_v[threadIdx.x + stride], best_i[threadIdx.x + stride],
                                         best_v[threadIdx.x], best_i[threadIdx.x])) {
        best_v[threadIdx.x] = best_v[threadIdx.x + stride];
        best_i[threadIdx.x] = best_i[threadIdx.x + stride];
      }
      __syncthreads();
    }
    prev_v = best_v[0];
    prev_i = best_i[0];
    if (threadIdx.x == 0) {
      values[(int64_t)blockIdx.x * K + r] = row[prev_i];
      indices[(int64_t)blockIdx.x * K + r] = prev_i;
    }
    __syncthreads();  // every thread has read the winner before the next round overwrites it
  }
}

extern "C" int top_k_per_row(const bf16* logits, bf16* values, int* indices, int64_t B, int64_t V, int64_t K,
                             hipStream_t stream) {
  if (B == 0 || K == 0) return hipSuccess;
  hipLaunchKernelGGL(top_k_kernel, dim3((unsigned)B), dim3(kBlock), 0, stream, logits, values, indices, V, K);
  return hipGetLastError();
}
