// Training-mode batch normalisation of a (N, C, H, W) float16 tensor (the operation in
// reference.py). For each channel c, over its N * H * W values:
//   mean[c] = their mean, var = their biased variance, invstd[c] = 1 / sqrt(var + eps)
//   y[n, c, h, w] = (x[n, c, h, w] - mean[c]) * invstd[c] * weight[c] + bias[c]
// weight and bias are float32 (C,); mean and invstd are returned as float32 (C,). Arithmetic in
// float; y is rounded to float16 once.
// Exemplar: the baseline reads x three times (one pass for the channel means, one for the
// squared deviations from them, one to normalise), 2 bytes per access, each of the first two
// followed by a shared-memory tree with a barrier per level in every block and a combining
// launch. Here each channel's values are split between `splits` blocks (about 1024 blocks in
// all). Each block sums its share once, as the sums of x - K and (x - K)^2 with K the channel's
// first value (no cancellation while K is within a few deviations of the mean, as a sample of the
// channel is), with 16-byte loads when H * W is a multiple of 8, reduces them with warp
// shuffles, and stores the pair. A second kernel of as many blocks adds a channel's pairs in a
// fixed order (every block of the channel gets the same numbers) and writes its share of y
// with 16-byte accesses: two reads of x instead of three, two launches instead of five, no
// float atomics.

constexpr int kThreads = 256;  // a multiple of every warp width (32 and 64)
constexpr int kMaxWarps = kThreads / 32;
constexpr int kTargetBlocks = 1024;
constexpr int kMaxSplits = 64;

template <int kVec>
__device__ inline void load_vec(const __half* p, float* out) {
  if constexpr (kVec == 8) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const __half* h = reinterpret_cast<const __half*>(&raw);
#pragma unroll
    for (int e = 0; e < 8; ++e) out[e] = __half2float(h[e]);
  } else {
    out[0] = __half2float(*p);
  }
}

template <int kVec>
__device__ inline void store_vec(__half* p, const float* v) {
  if constexpr (kVec == 8) {
    uint4 raw;
    __half* h = reinterpret_cast<__half*>(&raw);
#pragma unroll
    for (int e = 0; e < 8; ++e) h[e] = __float2half(v[e]);
    *reinterpret_cast<uint4*>(p) = raw;
  } else {
    *p = __float2half(v[0]);
  }
}

// The channel's values as N runs of `run` vectors (run = H * W / kVec): block `split` takes
// vectors [begin, end) of the channel, in this order, each thread every kThreads-th one; `visit`
// gets the address of each of the thread's vectors in x (and the same offset serves y).
template <typename Visit>
__device__ inline void walk_share(int64_t begin, int64_t end, int64_t run, int64_t C, int64_t c, int64_t vec,
                                  Visit visit) {
  int64_t v = begin + threadIdx.x;
  if (v >= end) return;
  int64_t n = v / run, j = v % run;
  while (true) {
    visit((n * C + c) * run * vec + j * vec);
    v += kThreads;
    if (v >= end) break;
    j += kThreads;
    while (j >= run) {
      j -= run;
      ++n;
    }
  }
}

// Sums of a and b over the block; thread 0 gets them. Fixed order: shuffles, then warps in turn.
__device__ inline void block_sum2(float& a, float& b, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    a += __shfl_xor(a, offset);
    b += __shfl_xor(b, offset);
  }
  const int warps = kThreads / warpSize;
  if (threadIdx.x % warpSize == 0) {
    scratch[threadIdx.x / warpSize] = a;
    scratch[kMaxWarps + threadIdx.x / warpSize] = b;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    a = 0.0f;
    b = 0.0f;
    for (int w = 0; w < warps; ++w) {
      a += scratch[w];
      b += scratch[kMaxWarps + w];
    }
  }
}

// Block (split, c): the sums of x - K and (x - K)^2 over its share of channel c.
template <int kVec>
__global__ void __launch_bounds__(kThreads)
    partial_sums(const __half* __restrict__ x, float* __restrict__ parts, int64_t N, int64_t C, int64_t HW,
                 int64_t per_split) {
  __shared__ float scratch[2 * kMaxWarps];
  const int64_t c = blockIdx.y;
  const int splits = gridDim.x;
  const int64_t run = HW / kVec;
  const int64_t begin = blockIdx.x * per_split;
  const int64_t end = begin + per_split < N * run ? begin + per_split : N * run;
  const float K = __half2float(x[c * HW]);
  float a = 0.0f, b = 0.0f;
  walk_share(begin, end, run, C, c, kVec, [&](int64_t offset) {
    float v[kVec];
    load_vec<kVec>(x + offset, v);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const float d = v[e] - K;
      a += d;
      b += d * d;
    }
  });
  block_sum2(a, b, scratch);
  if (threadIdx.x == 0) {
    parts[(c * splits + blockIdx.x) * 2] = a;
    parts[(c * splits + blockIdx.x) * 2 + 1] = b;
  }
}

// Block (split, c): the channel's statistics from all its pairs, then y over the same share.
template <int kVec>
__global__ void __launch_bounds__(kThreads)
    normalize(const __half* __restrict__ x, const float* __restrict__ parts, const float* __restrict__ weight,
              const float* __restrict__ bias, __half* __restrict__ y, float* __restrict__ mean_out,
              float* __restrict__ invstd_out, int64_t N, int64_t C, int64_t HW, int64_t per_split, float eps) {
  const int64_t c = blockIdx.y;
  const int splits = gridDim.x;
  float a = 0.0f, b = 0.0f;
  for (int s = 0; s < splits; ++s) {
    a += parts[(c * splits + s) * 2];
    b += parts[(c * splits + s) * 2 + 1];
  }
  const float count = (float)(N * HW);
  const float K = __half2float(x[c * HW]);
  const float shifted_mean = a / count;
  const float mean = K + shifted_mean;
  const float var = fmaxf(b / count - shifted_mean * shifted_mean, 0.0f);
  const float invstd = rsqrtf(var + eps);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    mean_out[c] = mean;
    invstd_out[c] = invstd;
  }
  const float scale = invstd * weight[c];
  const float shift = bias[c];

  const int64_t run = HW / kVec;
  const int64_t begin = blockIdx.x * per_split;
  const int64_t end = begin + per_split < N * run ? begin + per_split : N * run;
  walk_share(begin, end, run, C, c, kVec, [&](int64_t offset) {
    float v[kVec];
    load_vec<kVec>(x + offset, v);
#pragma unroll
    for (int e = 0; e < kVec; ++e) v[e] = (v[e] - mean) * scale + shift;
    store_vec<kVec>(y + offset, v);
  });
}

// Scratch for the blocks' pairs, kept between calls (grown when a call needs more).
static float* g_parts = nullptr;
static size_t g_parts_bytes = 0;

template <int kVec>
hipError_t launch(const __half* x, const float* weight, const float* bias, __half* y, float* mean, float* invstd,
                  int64_t N, int64_t C, int64_t HW, float eps, hipStream_t stream) {
  const int64_t vectors = N * (HW / kVec);  // per channel
  int64_t splits = (kTargetBlocks + C - 1) / C;
  const int64_t most = (vectors + 4 * kThreads - 1) / (4 * kThreads);  // at least 4 vectors a thread
  if (splits > most) splits = most;
  if (splits > kMaxSplits) splits = kMaxSplits;
  if (splits < 1) splits = 1;
  const int64_t per_split = (vectors + splits - 1) / splits;
  const size_t bytes = (size_t)(C * splits * 2) * sizeof(float);
  if (bytes > g_parts_bytes) {
    if (g_parts != nullptr) hipFree(g_parts);
    g_parts = nullptr;
    g_parts_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_parts, bytes);
    if (err != hipSuccess) return err;
    g_parts_bytes = bytes;
  }
  const dim3 grid((unsigned)splits, (unsigned)C);
  hipLaunchKernelGGL(partial_sums<kVec>, grid, dim3(kThreads), 0, stream, x, g_parts, N, C, HW, per_split);
  hipLaunchKernelGGL(normalize<kVec>, grid, dim3(kThreads), 0, stream, x, g_parts, weight, bias, y, mean, invstd, N,
                     C, HW, per_split, eps);
  return hipGetLastError();
}

extern "C" int batch_norm_train(const __half* x, const float* weight, const float* bias, __half* y, float* mean,
                                float* invstd, int64_t N, int64_t C, int64_t H, int64_t W, double eps,
                                hipStream_t stream) {
  if (C == 0) return hipSuccess;
  const int64_t HW = H * W;
  if (HW % 8 == 0) return launch<8>(x, weight, bias, y, mean, invstd, N, C, HW, (float)eps, stream);
  return launch<1>(x, weight, bias, y, mean, invstd, N, C, HW, (float)eps, stream);
}
