// GroupNorm with 32 groups over channels-last activations: x (N, HW, C) bfloat16 (a batch of N
// images of HW pixels, C channels innermost), C a multiple of 32; group g of image n holds the
// channels [g C/32, (g + 1) C/32) of all HW pixels:
//   mean, var = the mean and (biased) variance of group (n, g);
//   y[n, p, c] = (x[n, p, c] - mean) / sqrt(var + eps) * weight[c] + bias[c].
// Arithmetic in float; the result is rounded to bfloat16 once.
//
// Five kernels: per-channel sums over ranges of pixels, combined into each group's mean; the
// same for the squared deviations from the mean, combined into 1 / std; then the normalisation.

typedef __hip_bfloat16 bf16;

constexpr int kGroups = 32;
constexpr int kPixelsPerBlock = 256;  // pixels summed by one block of the partial-sum kernel
constexpr int kMaxThreads = 1024;
constexpr int kBlock = 256;
constexpr int kApplyChannels = 32, kApplyPixels = 8;  // the normalisation's block: channels x pixels

// Scratch kept between calls (grown when a call needs more): per-channel partial sums, (N,
// pixel ranges, C) float32, then each group's (mean, 1 / std), (N, 32, 2) float32.
static float* g_scratch = nullptr;
static size_t g_scratch_bytes = 0;

// Grid (pixel ranges, N); one thread per channel. Thread c of block (s, n) sums channel c of
// pixels [s kPixelsPerBlock, (s + 1) kPixelsPerBlock) of image n: x itself when `centered` is 0,
// (x - mean of the channel's group)^2 when it is 1.
__global__ void channel_partial_kernel(const bf16* x, const float* stats, float* partial, int64_t HW, int64_t C,
                                       int64_t S, int centered) {
  const int64_t s = blockIdx.x, n = blockIdx.y;
  const int64_t cg = C / kGroups;
  const int64_t p0 = s * kPixelsPerBlock;
  const int64_t p1 = p0 + kPixelsPerBlock < HW ? p0 + kPixelsPerBlock : HW;
  const bf16* xn = x + n * HW * C;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
    const float mean = centered ? stats[(n * kGroups + c / cg) * 2] : 0.0f;
    float sum = 0.0f;
    for (int64_t p = p0; p < p1; ++p) {
      const float d = __bfloat162float(xn[p * C + c]) - mean;
      sum += centered ? d * d : d;
    }
    partial[(n * S + s) * C + c] = sum;
  }
}

// One block per (group, image): adds the group's partial sums (a shared-memory tree) and stores
// its mean (`centered` 0) or 1 / sqrt(var + eps) (`centered` 1) in stats[n, g].
__global__ void group_combine_kernel(const float* partial, float* stats, int64_t HW, int64_t C, int64_t S,
                                     int centered, float eps) {
  __shared__ float tree[kBlock];
  const int64_t g = blockIdx.x, n = blockIdx.y;
  const int64_t cg = C / kGroups;
  float sum = 0.0f;
  for (int64_t e = threadIdx.x; e < S * cg; e += kBlock) sum += partial[(n * S + e / cg) * C + g * cg + e % cg];
  tree[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) tree[threadIdx.x] += tree[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const float mean = tree[0] / (float)(HW * cg);
    stats[(n * kGroups + g) * 2 + centered] = centered ? rsqrtf(mean + eps) : mean;
  }
}

// One thread per element: grid (C / 32, pixel blocks, N), blocks of 32 channels x 8 pixels.
__global__ void group_apply_kernel(const bf16* x, const bf16* weight, const bf16* bias, const float* stats, bf16* y,
                                   int64_t HW, int64_t C) {
  const int64_t n = blockIdx.z;
  const int64_t c = (int64_t)blockIdx.x * kApplyChannels + threadIdx.x;
  const int cg = (int)(C / kGroups);
  const float* st = stats + (n * kGroups + (int)c / cg) * 2;
  const float mean = st[0], rstd = st[1];
  const float w = __bfloat162float(weight[c]), b = __bfloat162float(bias[c]);
  for (int64_t p = (int64_t)blockIdx.y * kApplyPixels + threadIdx.y; p < HW; p += (int64_t)gridDim.y * kApplyPixels) {
    const int64_t i = (n * HW + p) * C + c;
    y[i] = __float2bfloat16((__bfloat162float(x[i]) - mean) * rstd * w + b);
  }
}

extern "C" int group_norm_nhwc(const bf16* x, const bf16* weight, const bf16* bias, bf16* y, int64_t N, int64_t HW,
                               int64_t C, double eps, hipStream_t stream) {
  if (N == 0 || HW == 0) return hipSuccess;
  const int64_t S = (HW + kPixelsPerBlock - 1) / kPixelsPerBlock;
  const size_t partial_floats = (size_t)(N * S * C);
  const size_t bytes = (partial_floats + (size_t)N * kGroups * 2) * sizeof(float);
  if (bytes > g_scratch_bytes) {
    if (g_scratch != nullptr) hipFree(g_scratch);
    g_scratch = nullptr;
    g_scratch_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_scratch, bytes);
    if (err != hipSuccess) return err;
    g_scratch_bytes = bytes;
  }
  float* partial = g_scratch;
  float* stats = g_scratch + partial_floats;
  const int threads = C < kMaxThreads ? (int)C : kMaxThreads;
  const dim3 ranges((unsigned)S, (unsigned)N), groups(kGroups, (unsigned)N);
  for (int centered = 0; centered < 2; ++centered) {
    hipLaunchKernelGGL(channel_partial_kernel, ranges, dim3(threads), 0, stream, x, stats, partial, HW, C, S,
                       centered);
    hipLaunchKernelGGL(group_combine_kernel, groups, dim3(kBlock), 0, stream, partial, stats, HW, C, S, centered,
                       (float)eps);
  }
  int64_t pixel_blocks = (HW + kApplyPixels - 1) / kApplyPixels;
  if (pixel_blocks > 65535) pixel_blocks = 65535;
  hipLaunchKernelGGL(group_apply_kernel, dim3((unsigned)(C / kApplyChannels), (unsigned)pixel_blocks, (unsigned)N),
                     dim3(kApplyChannels, kApplyPixels), 0, stream, x, weight, bias, stats, y, HW, C);
  return hipGetLastError();
}
