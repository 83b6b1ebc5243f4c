// WRONG on purpose (never shown to agents): the merge compares values only, so among equal
// values it may pick a higher column before a lower one.
// Top-k of each row of a (B, V) bfloat16 matrix of logits, k = K <= 8 and K <= V:
//   values[b, j], indices[b, j] for j < K: the j-th largest logit of row b and its column, in
//   descending order of value; equal values are ordered by the lower column first.
// One pass: per-thread sorted lists of the best 8 in registers, merged by warp shuffles.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 1024;    // a multiple of every warp width (32 and 64)
constexpr int kMaxK = 8;
constexpr int kVec = 8;         // bfloat16 values per 16-byte load
constexpr int kMaxWarps = kBlock / 32;

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

__global__ void __launch_bounds__(kBlock)
    top_k_kernel(const bf16* __restrict__ logits, bf16* __restrict__ values, int* __restrict__ indices, int64_t V,
                 int64_t K) {
  __shared__ float warp_v[kMaxWarps];
  __shared__ int warp_i[kMaxWarps];
  const bf16* row = logits + (int64_t)blockIdx.x * V;
  const float neg_inf = -__int_as_float(0x7f800000);
  float tv[kMaxK];
  int ti[kMaxK];
#pragma unroll
  for (int j = 0; j < kMaxK; ++j) {
    tv[j] = neg_inf;
    ti[j] = 0x7fffffff;
  }

  // Rows start 16-byte aligned when V is a multiple of 8; otherwise every element takes the scalar loop.
  const int64_t vectors = (V % kVec == 0) ? V / kVec : 0;
  for (int64_t p = threadIdx.x; p < vectors; p += kBlock) {
    const uint4 raw = reinterpret_cast<const uint4*>(row)[p];
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
#pragma unroll
    for (int j = 0; j < kVec; ++j) insert(tv, ti, __bfloat162float(h[j]), (int)(p * kVec + j));
  }
  for (int64_t n = vectors * kVec + threadIdx.x; n < V; n += kBlock) insert(tv, ti, __bfloat162float(row[n]), (int)n);

  const int lane = threadIdx.x % warpSize;
  const int warp = threadIdx.x / warpSize;
  const int warps = kBlock / warpSize;
  for (int64_t r = 0; r < K; ++r) {
    float v = tv[0];
    int i = ti[0];
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
      const float ov = __shfl_xor(v, offset);
      const int oi = __shfl_xor(i, offset);
      if (ov > v) {
        v = ov;
        i = oi;
      }
    }
    if (lane == 0) {
      warp_v[warp] = v;
      warp_i[warp] = i;
    }
    __syncthreads();
    v = warp_v[0];
    i = warp_i[0];
    for (int w = 1; w < warps; ++w)
      if (warp_v[w] > v) {
        v = warp_v[w];
        i = warp_i[w];
      }
    if (threadIdx.x == 0) {
      values[(int64_t)blockIdx.x * K + r] = row[i];
      indices[(int64_t)blockIdx.x * K + r] = i;
    }
    if (ti[0] == i) {  // the winner was this thread's head: pop it
#pragma unroll
      for (int j = 0; j + 1 < kMaxK; ++j) {
        tv[j] = tv[j + 1];
        ti[j] = ti[j + 1];
      }
      tv[kMaxK - 1] = neg_inf;
      ti[kMaxK - 1] = 0x7fffffff;
    }
    __syncthreads();  // every thread has read the warp winners before the next round overwrites them
  }
}

extern "C" int top_k_per_row(const bf16* logits, bf16* values, int* indices, int64_t B, int64_t V, int64_t K,
                             hipStream_t stream) {
  if (B == 0 || K == 0) return hipSuccess;
  hipLaunchKernelGGL(top_k_kernel, dim3((unsigned)B), dim3(kBlock), 0, stream, logits, values, indices, V, K);
  return hipGetLastError();
}
