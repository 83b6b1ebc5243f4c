// Training-mode batch normalisation of a (N, C, H, W) float16 tensor (the operation in
// reference.py). For each channel c, over its N * H * W values:
//   mean[c] = their mean, var = their biased variance, invstd[c] = 1 / sqrt(var + eps)
//   y[n, c, h, w] = (x[n, c, h, w] - mean[c]) * invstd[c] * weight[c] + bias[c]
// weight and bias are float32 (C,); mean and invstd are returned as float32 (C,). Arithmetic in
// float; y is rounded to float16 once.

constexpr int kBlock = 256;
constexpr int64_t kValuesPerBlock = 16384;  // a block's share of a channel: whole samples, about this many values

// The sum of `v` over the block through a shared-memory tree; thread 0 gets it.
__device__ float block_sum(float v, float* tree) {
  const int tid = threadIdx.x;
  tree[tid] = v;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) tree[tid] += tree[tid + stride];
    __syncthreads();
  }
  return tree[0];
}

// Grid (sample groups, C): block (k, c) takes samples [k per, (k + 1) per) of channel c, each an
// H * W run of consecutive elements, and stores in partial[c, k] the sum of x over them
// (`centered` 0) or of (x - mean[c])^2 (`centered` 1).
__global__ void channel_partial_kernel(const __half* x, const float* mean, float* partial, int64_t N, int64_t C,
                                       int64_t HW, int64_t per, int centered) {
  __shared__ float tree[kBlock];
  const int64_t k = blockIdx.x, c = blockIdx.y;
  const int64_t n0 = k * per, n1 = n0 + per < N ? n0 + per : N;
  const float m = centered ? mean[c] : 0.0f;
  float sum = 0.0f;
  for (int64_t n = n0; n < n1; ++n) {
    const __half* run = x + (n * C + c) * HW;
    for (int64_t s = threadIdx.x; s < HW; s += kBlock) {
      const float d = __half2float(run[s]) - m;
      sum += centered ? d * d : d;
    }
  }
  const float total = block_sum(sum, tree);
  if (threadIdx.x == 0) partial[c * gridDim.x + k] = total;
}

// One thread per channel: adds the channel's partial sums in order into its mean (`centered` 0)
// or, from the squared deviations, its invstd (`centered` 1).
__global__ void channel_combine_kernel(const float* partial, float* mean, float* invstd, int64_t C, int64_t groups,
                                       float count, int centered, float eps) {
  const int64_t c = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (c >= C) return;
  float sum = 0.0f;
  for (int64_t k = 0; k < groups; ++k) sum += partial[c * groups + k];
  if (centered)
    invstd[c] = rsqrtf(sum / count + eps);
  else
    mean[c] = sum / count;
}

// The same grid as the partial sums: y over block (k, c)'s samples of channel c.
__global__ void normalize_kernel(const __half* x, const float* weight, const float* bias, const float* mean,
                                 const float* invstd, __half* y, int64_t N, int64_t C, int64_t HW, int64_t per) {
  const int64_t k = blockIdx.x, c = blockIdx.y;
  const int64_t n0 = k * per, n1 = n0 + per < N ? n0 + per : N;
  const float m = mean[c], scale = invstd[c] * weight[c], shift = bias[c];
  for (int64_t n = n0; n < n1; ++n) {
    const __half* run = x + (n * C + c) * HW;
    __half* out = y + (n * C + c) * HW;
    for (int64_t s = threadIdx.x; s < HW; s += kBlock) out[s] = __float2half((__half2float(run[s]) - m) * scale + shift);
  }
}

// Scratch for the blocks' partial sums, (C, sample groups) float32, kept between calls (grown
// when a call needs more).
static float* g_partial = nullptr;
static size_t g_partial_bytes = 0;

extern "C" int batch_norm_train(const __half* x, const float* weight, const float* bias, __half* y, float* mean,
                                float* invstd, int64_t N, int64_t C, int64_t H, int64_t W, double eps,
                                hipStream_t stream) {
  if (C == 0) return hipSuccess;
  const int64_t HW = H * W;
  int64_t per = HW > 0 ? kValuesPerBlock / HW : N;  // samples a block takes
  if (per < 1) per = 1;
  const int64_t groups = N > 0 ? (N + per - 1) / per : 1;
  const size_t bytes = (size_t)(C * groups) * sizeof(float);
  if (bytes > g_partial_bytes) {
    if (g_partial != nullptr) hipFree(g_partial);
    g_partial = nullptr;
    g_partial_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_partial, bytes);
    if (err != hipSuccess) return err;
    g_partial_bytes = bytes;
  }
  const dim3 grid((unsigned)groups, (unsigned)C);
  const unsigned channel_blocks = (unsigned)((C + kBlock - 1) / kBlock);
  for (int centered = 0; centered < 2; ++centered) {
    hipLaunchKernelGGL(channel_partial_kernel, grid, dim3(kBlock), 0, stream, x, mean, g_partial, N, C, HW, per,
                       centered);
    hipLaunchKernelGGL(channel_combine_kernel, dim3(channel_blocks), dim3(kBlock), 0, stream, g_partial, mean, invstd,
                       C, groups, (float)(N * HW), centered, (float)eps);
  }
  hipLaunchKernelGGL(normalize_kernel, grid, dim3(kBlock), 0, stream, x, weight, bias, mean, invstd, y, N, C, HW, per);
  return hipGetLastError();
}
