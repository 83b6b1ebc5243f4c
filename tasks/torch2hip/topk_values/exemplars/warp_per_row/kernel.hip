// Top-k values per row (the operation in reference.py): for a (M, N) float32 matrix (N <= 512,
// e.g. router logits over N experts) and K <= N, out[m, :] holds the K largest values of
// x[m, :], largest first; a value that occurs several times among them is repeated.
// Exemplar: a router row is short (a few hundred values), and the baseline spends a 128-thread
// block on it: each of the K rounds is a shared-memory tree of 7 levels, a barrier per level,
// with most threads idle. Here one warp owns a row, held in registers (N / warpSize values per
// lane, loaded coalesced); a round is a scan of the lane's values and a few warp shuffles, with
// no barrier and no shared memory. Rows are grouped 8 to a block of 256 threads.
#include <cmath>

constexpr int kThreads = 256;
constexpr int kRowsPerBlock = 8;  // one per 32-wide warp; 64-wide warps take two each
constexpr int kMaxN = 512;
constexpr int kMaxPerLane = kMaxN / 32;

// True when (v, i) ranks before (w, j): larger value first, then smaller index.
__device__ inline bool before(float v, int i, float w, int j) { return v > w || (v == w && i < j); }

__global__ void __launch_bounds__(kThreads)
    topk_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t M, int64_t N, int64_t K) {
  const int warp = threadIdx.x / warpSize, lane = threadIdx.x % warpSize;
  const int warps = kThreads / warpSize;
  for (int r = warp; r < kRowsPerBlock; r += warps) {
    const int64_t m = (int64_t)blockIdx.x * kRowsPerBlock + r;
    if (m >= M) break;  // the whole warp leaves together
    float v[kMaxPerLane];
#pragma unroll
    for (int i = 0; i < kMaxPerLane; ++i) {
      const int n = lane + i * warpSize;
      v[i] = n < N ? x[m * N + n] : -INFINITY;
    }
    for (int64_t round = 0; round < K; ++round) {
      float best = -INFINITY;
      int best_n = 1 << 30;
#pragma unroll
      for (int i = 0; i < kMaxPerLane; ++i) {
        const int n = lane + i * warpSize;
        if (n < N && before(v[i], n, best, best_n)) {
          best = v[i];
          best_n = n;
        }
      }
      for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        const float other = __shfl_xor(best, offset);
        const int other_n = __shfl_xor(best_n, offset);
        if (before(other, other_n, best, best_n)) {
          best = other;
          best_n = other_n;
        }
      }
      if (lane == 0) out[m * K + round] = best;
#pragma unroll
      for (int i = 0; i < kMaxPerLane; ++i)
        if (lane + i * warpSize == best_n) v[i] = -INFINITY;  // taken
    }
  }
}

extern "C" int topk_values(const float* x, float* out, int64_t M, int64_t N, int64_t K, hipStream_t stream) {
  if (M == 0 || K == 0) return hipSuccess;
  const int64_t blocks = (M + kRowsPerBlock - 1) / kRowsPerBlock;
  hipLaunchKernelGGL(topk_kernel, dim3((unsigned)blocks), dim3(kThreads), 0, stream, x, out, M, N, K);
  return hipGetLastError();
}
