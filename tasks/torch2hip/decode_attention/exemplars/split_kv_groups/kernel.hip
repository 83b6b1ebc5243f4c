// One decode step of grouped-query attention (the operation in reference.py). For each sequence b
// and query head h (H query heads share KV heads in groups of G = H / KV: head h reads KV head
// h / G), with head dimension 128, bfloat16 tensors and n = lengths[b] cached positions:
//   score[s] = scale * dot(q[b, h, :], k_cache[b, h / G, s, :])          for s < n
//   out[b, h, :] = sum over s < n of softmax(score)[s] * v_cache[b, h / G, s, :]
// The cache holds S positions per sequence (positions from n on are unused). Arithmetic in
// float; the result is rounded to bfloat16 once.
// Exemplar: split KV, query heads grouped.
// Headroom: the baseline runs one block per (sequence, query head), each walking all n positions
// (algorithmic: no split of the positions), so a decode batch of a few sequences has too few
// blocks to fill the GPU, every warp is a long chain of dependent loads (latency-bound, the
// larger the n the worse), and each KV head is read once per query head of its group (G times),
// 2 bytes per lane per access. Here a block takes one chunk of 512 positions and the G query
// heads of one KV head (4 at most per block): each K and V row is loaded once per block, 16 bytes
// per lane, by 16 lanes, and scored against its queries; 16 rows per block step, and the next
// step's rows are loaded before this step's arithmetic. Chunks write their running
// (maximum, sum, weighted values) to a scratch buffer, and a second kernel merges the chunks of
// each head, rescaling each by exp(its maximum - the overall maximum).
#include <cmath>

typedef __hip_bfloat16 bf16;

constexpr int kD = 128;                           // head dimension
constexpr int kThreads = 256;                     // a multiple of every warp width (32 and 64)
constexpr int kLanes = 16;                        // lanes per cache row: 16 x 8 values
constexpr int kSlots = kThreads / kLanes;         // rows in flight per block step
constexpr int kChunk = 512;                       // positions per block
constexpr int kMaxWarps = kThreads / 32;

__device__ inline void unpack8(const uint4& raw, float* out) {
  const bf16* h = reinterpret_cast<const bf16*>(&raw);
#pragma unroll
  for (int j = 0; j < 8; ++j) out[j] = __bfloat162float(h[j]);
}

// Weight of a running state with maximum m once merged under the overall maximum `top`.
__device__ inline float rescale(float m, float top) { return m == -INFINITY ? 0.0f : expf(m - top); }

// Block (chunk, head group, sequence): positions [chunk * kChunk, ...) of the sequence, for the
// kG query heads h0 .. h0 + kG - 1 (all reading KV head h0 / G).
template <int kG>
__global__ void __launch_bounds__(kThreads)
    chunk_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k_cache, const bf16* __restrict__ v_cache,
                 const int64_t* __restrict__ lengths, float* __restrict__ part_acc, float* __restrict__ part_stats,
                 int64_t H, int64_t KV, int64_t S, int chunks, float scale) {
  __shared__ float warp_max[kMaxWarps][kG];
  __shared__ float warp_sum[kMaxWarps][kG];
  __shared__ float warp_acc[kMaxWarps][kG][kD];
  const int chunk = blockIdx.x;
  const int64_t b = blockIdx.z;
  const int64_t h0 = (int64_t)blockIdx.y * kG;
  const int64_t kv = h0 / (H / KV);
  const int64_t n = lengths[b];
  const int64_t start = (int64_t)chunk * kChunk;
  if (start >= n) return;  // the merge reads only chunks that hold positions
  const int64_t end = start + kChunk < n ? start + kChunk : n;
  const int slot = threadIdx.x / kLanes, sub = threadIdx.x % kLanes;

  float qv[kG][8], acc[kG][8], run_max[kG], run_sum[kG];
#pragma unroll
  for (int g = 0; g < kG; ++g) {
    unpack8(*reinterpret_cast<const uint4*>(q + (b * H + h0 + g) * kD + sub * 8), qv[g]);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      qv[g][j] *= scale;
      acc[g][j] = 0.0f;
    }
    run_max[g] = -INFINITY;
    run_sum[g] = 0.0f;
  }
  const bf16* k_rows = k_cache + (b * KV + kv) * S * kD + sub * 8;
  const bf16* v_rows = v_cache + (b * KV + kv) * S * kD + sub * 8;

  // Every lane runs the same number of steps (the shuffles need all of them); a slot past the
  // end of the chunk computes nothing into its state. The next step's rows are loaded before
  // this step's arithmetic, so two steps of loads are in flight.
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  int64_t s = start + slot;
  bool live = s < end;
  uint4 k_raw = live ? *reinterpret_cast<const uint4*>(k_rows + s * kD) : zero;
  uint4 v_raw = live ? *reinterpret_cast<const uint4*>(v_rows + s * kD) : zero;
  for (int64_t base = start; base < end; base += kSlots) {
    const int64_t s_next = s + kSlots;
    const bool live_next = s_next < end;
    const uint4 k_next = live_next ? *reinterpret_cast<const uint4*>(k_rows + s_next * kD) : zero;
    const uint4 v_next = live_next ? *reinterpret_cast<const uint4*>(v_rows + s_next * kD) : zero;
    float kf[8], vf[8];
    unpack8(k_raw, kf);
    unpack8(v_raw, vf);
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      float dot = 0.0f;
#pragma unroll
      for (int j = 0; j < 8; ++j) dot += qv[g][j] * kf[j];
#pragma unroll
      for (int offset = kLanes / 2; offset > 0; offset /= 2) dot += __shfl_xor(dot, offset);
      if (live) {
        const float new_max = fmaxf(run_max[g], dot);
        const float correction = expf(run_max[g] - new_max);
        const float p = expf(dot - new_max);
        run_sum[g] = run_sum[g] * correction + p;
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[g][j] = acc[g][j] * correction + p * vf[j];
        run_max[g] = new_max;
      }
    }
    s = s_next;
    live = live_next;
    k_raw = k_next;
    v_raw = v_next;
  }

  // Merge the slots of a warp (lanes kLanes, 2 * kLanes, ... apart), then the warps.
  for (int offset = kLanes; offset < warpSize; offset *= 2) {
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      const float other_max = __shfl_xor(run_max[g], offset);
      const float other_sum = __shfl_xor(run_sum[g], offset);
      const float top = fmaxf(run_max[g], other_max);
      const float mine = rescale(run_max[g], top), theirs = rescale(other_max, top);
      run_sum[g] = run_sum[g] * mine + other_sum * theirs;
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[g][j] = acc[g][j] * mine + __shfl_xor(acc[g][j], offset) * theirs;
      run_max[g] = top;
    }
  }
  const int warp = threadIdx.x / warpSize, warps = kThreads / warpSize;
  if (threadIdx.x % warpSize < kLanes) {
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      if (sub == 0) {
        warp_max[warp][g] = run_max[g];
        warp_sum[warp][g] = run_sum[g];
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) warp_acc[warp][g][sub * 8 + j] = acc[g][j];
    }
  }
  __syncthreads();

  for (int i = threadIdx.x; i < kG * kD; i += kThreads) {
    const int g = i / kD, d = i % kD;
    float top = -INFINITY;
    for (int w = 0; w < warps; ++w) top = fmaxf(top, warp_max[w][g]);
    float total = 0.0f, value = 0.0f;
    for (int w = 0; w < warps; ++w) {
      const float weight = rescale(warp_max[w][g], top);
      total += warp_sum[w][g] * weight;
      value += warp_acc[w][g][d] * weight;
    }
    const int64_t part = (b * H + h0 + g) * chunks + chunk;
    part_acc[part * kD + d] = value;
    if (d == 0) {
      part_stats[part * 2] = top;
      part_stats[part * 2 + 1] = total;
    }
  }
}

// One block of kD threads per (sequence, query head): merges the head's chunks.
__global__ void merge_kernel(const float* part_acc, const float* part_stats, const int64_t* lengths, bf16* out,
                             int64_t H, int chunks) {
  const int64_t bh = blockIdx.x;
  const int64_t n = lengths[bh / H];
  const int used = (int)((n + kChunk - 1) / kChunk);
  const float* stats = part_stats + bh * chunks * 2;
  float top = -INFINITY;
  for (int c = 0; c < used; ++c) top = fmaxf(top, stats[c * 2]);
  float total = 0.0f, value = 0.0f;
  for (int c = 0; c < used; ++c) {
    const float weight = expf(stats[c * 2] - top);
    total += stats[c * 2 + 1] * weight;
    value += part_acc[(bh * chunks + c) * kD + threadIdx.x] * weight;
  }
  out[bh * kD + threadIdx.x] = __float2bfloat16(value / total);
}

// Scratch for the chunks' partial results, kept between calls (grown when a call needs more).
static float* g_scratch = nullptr;
static size_t g_scratch_bytes = 0;

extern "C" int decode_attention(const bf16* q, const bf16* k_cache, const bf16* v_cache, const int64_t* lengths,
                                bf16* out, int64_t B, int64_t H, int64_t KV, int64_t S, double scale,
                                hipStream_t stream) {
  if (B == 0 || H == 0) return hipSuccess;
  const int chunks = (int)((S + kChunk - 1) / kChunk);
  const size_t parts = (size_t)(B * H) * chunks;
  const size_t bytes = parts * (kD + 2) * sizeof(float);
  if (bytes > g_scratch_bytes) {
    if (g_scratch != nullptr) hipFree(g_scratch);
    g_scratch = nullptr;
    g_scratch_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_scratch, bytes);
    if (err != hipSuccess) return err;
    g_scratch_bytes = bytes;
  }
  float* part_acc = g_scratch;
  float* part_stats = g_scratch + parts * kD;
  const int64_t G = H / KV;
  const float s = (float)scale;
  if (G % 4 == 0) {  // larger groups take several blocks of 4 heads (more would spill registers)
    hipLaunchKernelGGL(chunk_kernel<4>, dim3(chunks, (unsigned)(H / 4), (unsigned)B), dim3(kThreads), 0, stream, q,
                       k_cache, v_cache, lengths, part_acc, part_stats, H, KV, S, chunks, s);
  } else if (G % 2 == 0) {
    hipLaunchKernelGGL(chunk_kernel<2>, dim3(chunks, (unsigned)(H / 2), (unsigned)B), dim3(kThreads), 0, stream, q,
                       k_cache, v_cache, lengths, part_acc, part_stats, H, KV, S, chunks, s);
  } else {
    hipLaunchKernelGGL(chunk_kernel<1>, dim3(chunks, (unsigned)H, (unsigned)B), dim3(kThreads), 0, stream, q,
                       k_cache, v_cache, lengths, part_acc, part_stats, H, KV, S, chunks, s);
  }
  hipLaunchKernelGGL(merge_kernel, dim3((unsigned)(B * H)), dim3(kD), 0, stream, part_acc, part_stats, lengths, out, H,
                     chunks);
  return hipGetLastError();
}
