// Top-k of each row of a (B, V) bfloat16 matrix of logits, k = K <= 8 and K <= V:
//   values[b, j], indices[b, j] for j < K: the j-th largest logit of row b and its column, in
//   descending order of value; equal values are ordered by the lower column first.
// Exemplar: the baseline reads the whole row once per output (K passes, 2 bytes per load, a
// two-condition test on every element) and ends every pass with a 9-level shared-memory tree.
// Here a block reads its row twice with 16-byte loads, and almost all the work is one max or one
// compare per element, with no divergent branch:
//   1. every thread takes the max of its elements; the K-th largest of these maxima, T, is a
//      lower bound of the row's K-th largest value (K of the maxima are distinct elements of the
//      row that are >= T), found by K warp-shuffle rounds in each warp, then K over the warps;
//   2. every thread reads its elements again and inserts those >= T (a handful in a row of
//      normal logits) into its own sorted list of the best 8 (value, column) pairs in registers;
//   3. the lists are merged as in 1: K shuffle rounds per warp over the list heads, then K over
//      the warps' winners (one barrier; the baseline has one per tree level for every output).
// The second read of a row may hit the L2 cache; at worst the row is read twice instead of K times.

typedef __hip_bfloat16 bf16;

constexpr int kMaxK = 8;
constexpr int kVec = 8;  // bfloat16 values per 16-byte load

__device__ inline bool before(float a, int ia, float b, int ib) { return a > b || (a == b && ia < ib); }

// Insert (v, i) into the sorted list (tv, ti) of kMaxK pairs, dropping the last.
__device__ inline void insert(float (&tv)[kMaxK], int (&ti)[kMaxK], float v, int i) {
  if (!before(v, i, tv[kMaxK - 1], ti[kMaxK - 1])) return;
#pragma unroll
  for (int j = 0; j < kMaxK; ++j) {
    if (before(v, i, tv[j], ti[j])) {
      const float sv = tv[j];
      const int si = ti[j];
      tv[j] = v;
      ti[j] = i;
      v = sv;
      i = si;
    }
  }
}

// Over the warp: the (value, key) pair that comes first (larger value, then smaller key).
__device__ inline void warp_best(float& v, int& key) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    const float ov = __shfl_xor(v, offset);
    const int ok = __shfl_xor(key, offset);
    if (before(ov, ok, v, key)) {
      v = ov;
      key = ok;
    }
  }
}

template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    top_k_kernel(const bf16* __restrict__ logits, bf16* __restrict__ values, int* __restrict__ indices, int64_t V,
                 int64_t K) {
  constexpr int kMaxWarps = kThreads / 32;
  __shared__ float warp_v[kMaxWarps][kMaxK];
  __shared__ int warp_i[kMaxWarps][kMaxK];
  __shared__ float s_bound;
  const bf16* row = logits + (int64_t)blockIdx.x * V;
  const float neg_inf = -__int_as_float(0x7f800000);
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = kThreads / warpSize;
  // Rows start 16-byte aligned when V is a multiple of 8; otherwise every element takes the scalar loop.
  const int64_t vectors = (V % kVec == 0) ? V / kVec : 0;
  const uint4* rv = reinterpret_cast<const uint4*>(row);

  // 1. The thread's max, then T = the K-th largest of the block's maxima.
  float m = neg_inf;
  for (int64_t p = threadIdx.x; p < vectors; p += kThreads) {
    const uint4 raw = rv[p];
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
#pragma unroll
    for (int j = 0; j < kVec; ++j) m = fmaxf(m, __bfloat162float(h[j]));
  }
  for (int64_t n = vectors * kVec + threadIdx.x; n < V; n += kThreads) m = fmaxf(m, __bfloat162float(row[n]));
  for (int r = 0; r < K; ++r) {  // this warp's K largest maxima, in order (ties: the lower lane first)
    float v = m;
    int key = lane;
    warp_best(v, key);
    if (lane == key) m = neg_inf;  // popped
    if (lane == 0) warp_v[warp][r] = v;
  }
  __syncthreads();
  if (warp == 0) {
    int head = 0;
    float v = 0.0f;
    for (int r = 0; r < K; ++r) {
      v = lane < warps && head < K ? warp_v[lane][head] : neg_inf;
      int key = lane;
      warp_best(v, key);
      if (lane == key) ++head;
    }
    if (lane == 0) s_bound = v;  // the K-th largest maximum
  }
  __syncthreads();
  const float bound = s_bound;

  // 2. The elements >= T, into the thread's sorted list.
  float tv[kMaxK];
  int ti[kMaxK];
#pragma unroll
  for (int j = 0; j < kMaxK; ++j) {
    tv[j] = neg_inf;
    ti[j] = 0x7fffffff;
  }
  // 8 values at column 8 p: one branch for all 8, rarely taken.
  auto scan_vector = [&](const uint4& raw, int64_t p) {
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
    float e[kVec];
    float top = neg_inf;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      e[j] = __bfloat162float(h[j]);
      top = fmaxf(top, e[j]);
    }
    if (top >= bound) {
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        if (e[j] >= bound) insert(tv, ti, e[j], (int)(p * kVec + j));
    }
  };
  int64_t p = threadIdx.x;
  for (; p + 3 * kThreads < vectors; p += 4 * kThreads) {  // four loads in flight
    uint4 raw[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) raw[u] = rv[p + u * kThreads];
#pragma unroll
    for (int u = 0; u < 4; ++u) scan_vector(raw[u], p + u * kThreads);
  }
  for (; p < vectors; p += kThreads) scan_vector(rv[p], p);
  for (int64_t n = vectors * kVec + threadIdx.x; n < V; n += kThreads) {
    const float v = __bfloat162float(row[n]);
    if (v >= bound) insert(tv, ti, v, (int)n);
  }

  // 3. Each warp's K best list heads, in order, then the K best over the warps (warp 0 read
  // warp_v before the barrier above, so it may be rewritten).
  for (int r = 0; r < K; ++r) {
    float v = tv[0];
    int i = ti[0];
    warp_best(v, i);
    if (ti[0] == i) {  // the winner was this thread's head (columns are unique): pop it
#pragma unroll
      for (int j = 0; j + 1 < kMaxK; ++j) {
        tv[j] = tv[j + 1];
        ti[j] = ti[j + 1];
      }
      tv[kMaxK - 1] = neg_inf;
      ti[kMaxK - 1] = 0x7fffffff;
    }
    if (lane == 0) {
      warp_v[warp][r] = v;
      warp_i[warp][r] = i;
    }
  }
  __syncthreads();
  if (warp == 0) {
    int head = 0;
    for (int r = 0; r < K; ++r) {
      const bool live = lane < warps && head < K;
      float v = live ? warp_v[lane][head] : neg_inf;
      int i = live ? warp_i[lane][head] : 0x7fffffff;
      warp_best(v, i);
      if (live && warp_i[lane][head] == i) ++head;
      if (lane == 0) {
        values[(int64_t)blockIdx.x * K + r] = __float2bfloat16(v);  // exact: v is a bfloat16 value
        indices[(int64_t)blockIdx.x * K + r] = i;
      }
    }
  }
}

extern "C" int top_k_per_row(const bf16* logits, bf16* values, int* indices, int64_t B, int64_t V, int64_t K,
                             hipStream_t stream) {
  if (B == 0 || K == 0) return hipSuccess;
  if (V >= 65536)
    hipLaunchKernelGGL(top_k_kernel<512>, dim3((unsigned)B), dim3(512), 0, stream, logits, values, indices, V, K);
  else
    hipLaunchKernelGGL(top_k_kernel<256>, dim3((unsigned)B), dim3(256), 0, stream, logits, values, indices, V, K);
  return hipGetLastError();
}
