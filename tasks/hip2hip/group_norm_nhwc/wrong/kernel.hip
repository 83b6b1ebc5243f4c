// WRONG on purpose (never shown to agents): the pixel ranges add plain sums of x and x^2 (no
// shift), so var = E[x^2] - mean^2 cancels catastrophically when |mean| >> std.
// GroupNorm with 32 groups over channels-last activations: x (N, HW, C) bfloat16 (a batch of N
// images of HW pixels, C channels innermost), C a multiple of 32; group g of image n holds the
// channels [g C/32, (g + 1) C/32) of all HW pixels:
//   mean, var = the mean and (biased) variance of group (n, g);
//   y[n, p, c] = (x[n, p, c] - mean) / sqrt(var + eps) * weight[c] + bias[c].
// Split statistics over pixel ranges, a combine kernel, a vectorised normalise kernel.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int kGroups = 32;
constexpr int kVec = 8;                 // bfloat16 values per 16-byte access
constexpr int kTargetBlocks = 512;      // pixel ranges over the whole batch
constexpr int kMaxImages = 64;
constexpr int kMaxRanges = 1024;        // image x range pairs: ranges per image <= kTargetBlocks / N + 1

__device__ float g_partials[kMaxRanges * kGroups * 2];  // (shifted sum, shifted sum of squares)
__device__ float g_stats[kMaxImages * kGroups * 2];     // (mean, 1 / std)

// (1) Block (s, n): pixels [s HW / S, (s + 1) HW / S) of image n, every channel.
__global__ void __launch_bounds__(kBlock) group_stats_kernel(const bf16* __restrict__ x, int64_t HW, int64_t C,
                                                             int64_t S) {
  __shared__ float s_sum[kGroups], s_sq[kGroups], s_shift[kGroups];
  const int64_t s = blockIdx.x, n = blockIdx.y;
  const int64_t cg = C / kGroups;
  const bf16* xn = x + n * HW * C;
  if (threadIdx.x < kGroups) {
    s_sum[threadIdx.x] = 0.0f;
    s_sq[threadIdx.x] = 0.0f;
    s_shift[threadIdx.x] = 0.0f;
  }
  __syncthreads();
  const int64_t v_end = (s + 1) * HW / S * C / kVec;
  for (int64_t v = s * HW / S * C / kVec + threadIdx.x; v < v_end; v += kBlock) {
    const uint4 raw = reinterpret_cast<const uint4*>(xn)[v];
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
    const int64_t c0 = v * kVec % C;
    int g = (int)(c0 / cg);
    float a = 0.0f, q = 0.0f;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const int gj = (int)((c0 + j) / cg);
      if (gj != g) {  // the 8 channels cross into the next group (C/32 not a multiple of 8)
        atomicAdd(&s_sum[g], a);
        atomicAdd(&s_sq[g], q);
        a = q = 0.0f;
        g = gj;
      }
      const float d = __bfloat162float(h[j]) - s_shift[g];
      a += d;
      q += d * d;
    }
    atomicAdd(&s_sum[g], a);
    atomicAdd(&s_sq[g], q);
  }
  __syncthreads();
  if (threadIdx.x < kGroups) {
    float* out = g_partials + ((n * S + s) * kGroups + threadIdx.x) * 2;
    out[0] = s_sum[threadIdx.x];
    out[1] = s_sq[threadIdx.x];
  }
}

// (2) One thread per (image, group): combine the S ranges.
__global__ void group_finalize_kernel(const bf16* __restrict__ x, int64_t N, int64_t HW, int64_t C, int64_t S,
                                      float eps) {
  const int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (i >= N * kGroups) return;
  const int64_t n = i / kGroups, g = i % kGroups;
  const int64_t cg = C / kGroups;
  float a = 0.0f, q = 0.0f;
  for (int64_t s = 0; s < S; ++s) {
    const float* p = g_partials + ((n * S + s) * kGroups + g) * 2;
    a += p[0];
    q += p[1];
  }
  const float count = (float)(HW * cg);
  const float md = a / count;
  const float var = fmaxf(q / count - md * md, 0.0f);
  g_stats[i * 2] = md;
  g_stats[i * 2 + 1] = rsqrtf(var + eps);
}

// (3) 8 channels per thread, grid-stride over the whole tensor.
__global__ void __launch_bounds__(kBlock)
    group_apply_kernel(const bf16* __restrict__ x, const bf16* __restrict__ weight, const bf16* __restrict__ bias,
                       bf16* __restrict__ y, int64_t N, int64_t HW, int64_t C) {
  const int64_t cg = C / kGroups;
  const int64_t total = N * HW * C / kVec;
  for (int64_t v = (int64_t)blockIdx.x * kBlock + threadIdx.x; v < total; v += (int64_t)gridDim.x * kBlock) {
    const int64_t e = v * kVec;
    const int64_t n = e / (HW * C);
    const int64_t c0 = e % C;
    const uint4 rx = reinterpret_cast<const uint4*>(x)[v];
    const uint4 rw = reinterpret_cast<const uint4*>(weight)[c0 / kVec];
    const uint4 rb = reinterpret_cast<const uint4*>(bias)[c0 / kVec];
    const bf16* hx = reinterpret_cast<const bf16*>(&rx);
    const bf16* hw = reinterpret_cast<const bf16*>(&rw);
    const bf16* hb = reinterpret_cast<const bf16*>(&rb);
    uint4 out;
    bf16* ho = reinterpret_cast<bf16*>(&out);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const float* st = g_stats + (n * kGroups + (c0 + j) / cg) * 2;
      const float v_norm = (__bfloat162float(hx[j]) - st[0]) * st[1];
      ho[j] = __float2bfloat16(v_norm * __bfloat162float(hw[j]) + __bfloat162float(hb[j]));
    }
    reinterpret_cast<uint4*>(y)[v] = out;
  }
}

// Batches beyond the buffers: one block per (group, image), three passes over the group.
constexpr int kFallbackBlock = 512;
__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kFallbackBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();
  return total;
}

__global__ void group_norm_fallback(const bf16* x, const bf16* weight, const bf16* bias, bf16* y, int64_t HW,
                                    int64_t C, float eps) {
  __shared__ float partial[kFallbackBlock];
  const int64_t g = blockIdx.x, n = blockIdx.y;
  const int64_t cg = C / kGroups;
  const int64_t count = HW * cg;
  const int64_t base = n * HW * C + g * cg;
  float s = 0.0f;
  for (int64_t e = threadIdx.x; e < count; e += kFallbackBlock) s += __bfloat162float(x[base + (e / cg) * C + e % cg]);
  const float mean = block_sum(s, partial) / (float)count;
  float q = 0.0f;
  for (int64_t e = threadIdx.x; e < count; e += kFallbackBlock) {
    const float d = __bfloat162float(x[base + (e / cg) * C + e % cg]) - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(block_sum(q, partial) / (float)count + eps);
  for (int64_t e = threadIdx.x; e < count; e += kFallbackBlock) {
    const int64_t i = base + (e / cg) * C + e % cg;
    const int64_t c = g * cg + e % cg;
    y[i] = __float2bfloat16((__bfloat162float(x[i]) - mean) * rstd * __bfloat162float(weight[c]) +
                            __bfloat162float(bias[c]));
  }
}

extern "C" int group_norm_nhwc(const bf16* x, const bf16* weight, const bf16* bias, bf16* y, int64_t N, int64_t HW,
                               int64_t C, double eps, hipStream_t stream) {
  if (N == 0 || HW == 0) return hipSuccess;
  if (N > kMaxImages) {
    hipLaunchKernelGGL(group_norm_fallback, dim3(kGroups, (unsigned)N), dim3(kFallbackBlock), 0, stream, x, weight,
                       bias, y, HW, C, (float)eps);
    return hipGetLastError();
  }
  int64_t S = (kTargetBlocks + N - 1) / N;  // pixel ranges per image; N * S <= kMaxRanges
  if (S > HW) S = HW;
  hipLaunchKernelGGL(group_stats_kernel, dim3((unsigned)S, (unsigned)N), dim3(kBlock), 0, stream, x, HW, C, S);
  hipLaunchKernelGGL(group_finalize_kernel, dim3((unsigned)((N * kGroups + kBlock - 1) / kBlock)), dim3(kBlock), 0,
                     stream, x, N, HW, C, S, (float)eps);
  int64_t blocks = (N * HW * C / kVec + kBlock - 1) / kBlock;
  if (blocks > 4096) blocks = 4096;
  hipLaunchKernelGGL(group_apply_kernel, dim3((unsigned)blocks), dim3(kBlock), 0, stream, x, weight, bias, y, N, HW, C);
  return hipGetLastError();
}
