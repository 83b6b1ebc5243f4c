// Top-k values per row (the operation in reference.py): for a (M, N) float32 matrix (N <= 512,
// e.g. router logits over N experts) and K <= N, out[m, :] holds the K largest values of
// x[m, :], largest first; a value that occurs several times among them is repeated.
#include <cmath>

constexpr int kBlock = 128;
constexpr int kMaxN = 512;

// One block per row: the row is copied to shared memory, then K rounds each find the largest
// remaining value (the smallest index among equal values) with a shared-memory tree, write it,
// and mark it taken.
__global__ void topk_kernel(const float* x, float* out, int64_t N, int64_t K) {
  __shared__ float row[kMaxN];
  __shared__ float best_value[kBlock];
  __shared__ int best_index[kBlock];
  const int64_t m = blockIdx.x;
  const int tid = threadIdx.x;
  for (int n = tid; n < N; n += kBlock) row[n] = x[m * N + n];
  __syncthreads();

  for (int64_t r = 0; r < K; ++r) {
    float v = -INFINITY;
    int i = kMaxN;
    for (int n = tid; n < N; n += kBlock) {
      if (row[n] > v || (row[n] == v && n < i)) {
        v = row[n];
        i = n;
      }
    }
    best_value[tid] = v;
    best_index[tid] = i;
    __syncthreads();
    for (int stride = kBlock / 2; stride > 0; stride /= 2) {
      if (tid < stride) {
        const float ov = best_value[tid + stride];
        const int oi = best_index[tid + stride];
        if (ov > best_value[tid] || (ov == best_value[tid] && oi < best_index[tid])) {
          best_value[tid] = ov;
          best_index[tid] = oi;
        }
      }
      __syncthreads();
    }
    if (tid == 0) {
      out[m * K + r] = best_value[0];
      row[best_index[0]] = -INFINITY;  // taken
    }
    __syncthreads();
  }
}

extern "C" int topk_values(const float* x, float* out, int64_t M, int64_t N, int64_t K, hipStream_t stream) {
  if (M == 0 || K == 0) return hipSuccess;
  hipLaunchKernelGGL(topk_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, out, N, K);
  return hipGetLastError();
}
