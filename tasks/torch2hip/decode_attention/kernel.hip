// One decode step of grouped-query attention (the operation in reference.py). For each sequence b
// and query head h (H query heads share KV heads in groups of G = H / KV: head h reads KV head
// h / G), with head dimension 128, bfloat16 tensors and n = lengths[b] cached positions:
//   score[s] = scale * dot(q[b, h, :], k_cache[b, h / G, s, :])          for s < n
//   out[b, h, :] = sum over s < n of softmax(score)[s] * v_cache[b, h / G, s, :]
// The cache holds S positions per sequence (positions from n on are unused). Arithmetic in
// float; the result is rounded to bfloat16 once.

#include <cmath>

typedef __hip_bfloat16 bf16;

constexpr int kD = 128;      // head dimension
constexpr int kBlock = 512;  // a multiple of every warp width (32 and 64)

// One block per (sequence, query head). Each warp takes every (kBlock / warpSize)-th position; its
// lanes split the head dimension, and the warp keeps a running maximum, sum and weighted sum of
// values (online softmax). The warps' results are merged through shared memory at the end.
__global__ void decode_attention_kernel(const bf16* q, const bf16* k_cache, const bf16* v_cache,
                                        const int64_t* lengths, bf16* out, int64_t H, int64_t KV, int64_t S,
                                        float scale) {
  __shared__ float warp_max[kBlock / 32];
  __shared__ float warp_sum[kBlock / 32];
  __shared__ float warp_acc[kBlock / 32][kD];
  const int64_t b = blockIdx.x / H, h = blockIdx.x % H;
  const int64_t kv = h / (H / KV);
  const int warps = kBlock / warpSize, warp = threadIdx.x / warpSize, lane = threadIdx.x % warpSize;
  const int per_lane = kD / warpSize;  // 4 (32-wide warps) or 2 (64-wide)
  const int64_t n = lengths[b];
  const bf16* q_row = q + (b * H + h) * kD;
  const bf16* k_base = k_cache + (b * KV + kv) * S * kD;
  const bf16* v_base = v_cache + (b * KV + kv) * S * kD;

  float qv[4], acc[4];
  for (int i = 0; i < per_lane; ++i) {
    qv[i] = __bfloat162float(q_row[lane + i * warpSize]) * scale;
    acc[i] = 0.0f;
  }
  float run_max = -INFINITY, run_sum = 0.0f;
  for (int64_t s = warp; s < n; s += warps) {
    float dot = 0.0f;
    for (int i = 0; i < per_lane; ++i) dot += qv[i] * __bfloat162float(k_base[s * kD + lane + i * warpSize]);
    for (int offset = warpSize / 2; offset > 0; offset /= 2) dot += __shfl_xor(dot, offset);
    const float new_max = fmaxf(run_max, dot);
    const float correction = expf(run_max - new_max);
    const float p = expf(dot - new_max);
    run_sum = run_sum * correction + p;
    for (int i = 0; i < per_lane; ++i)
      acc[i] = acc[i] * correction + p * __bfloat162float(v_base[s * kD + lane + i * warpSize]);
    run_max = new_max;
  }
  if (lane == 0) {
    warp_max[warp] = run_max;
    warp_sum[warp] = run_sum;
  }
  for (int i = 0; i < per_lane; ++i) warp_acc[warp][lane + i * warpSize] = acc[i];
  __syncthreads();

  if (threadIdx.x < kD) {
    float m = -INFINITY;
    for (int w = 0; w < warps; ++w) m = fmaxf(m, warp_max[w]);
    float total = 0.0f, value = 0.0f;
    for (int w = 0; w < warps; ++w) {
      if (warp_max[w] == -INFINITY) continue;  // a warp that saw no position
      const float weight = expf(warp_max[w] - m);
      total += warp_sum[w] * weight;
      value += warp_acc[w][threadIdx.x] * weight;
    }
    out[(b * H + h) * kD + threadIdx.x] = __float2bfloat16(value / total);
  }
}

extern "C" int decode_attention(const bf16* q, const bf16* k_cache, const bf16* v_cache, const int64_t* lengths,
                                bf16* out, int64_t B, int64_t H, int64_t KV, int64_t S, double scale,
                                hipStream_t stream) {
  if (B == 0 || H == 0) return hipSuccess;
  hipLaunchKernelGGL(decode_attention_kernel, dim3((unsigned)(B * H)), dim3(kBlock), 0, stream, q, k_cache, v_cache,
                     lengths, out, H, KV, S, (float)scale);
  return hipGetLastError();
}
