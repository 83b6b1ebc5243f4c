// GroupNorm with 32 groups over channels-last activations: x (N, HW, C) bfloat16 (a batch of N
// images of HW pixels, C channels innermost), C a multiple of 32; group g of image n holds the
// channels [g C/32, (g + 1) C/32) of all HW pixels:
//   mean, var = the mean and (biased) variance of group (n, g);
//   y[n, p, c] = (x[n, p, c] - mean) / sqrt(var + eps) * weight[c] + bias[c].
// Arithmetic in float; the result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 512;
constexpr int kGroups = 32;

// The sum of `v` over the block, by a shared-memory tree; every thread gets it.
__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();
  return total;
}

// One block per (group, image): a pass for the mean, a pass for the variance, a pass to write y.
// Element e of the group is channel e % (C/32) of the group at pixel e / (C/32).
__global__ void group_norm_kernel(const bf16* x, const bf16* weight, const bf16* bias, bf16* y, int64_t HW,
                                  int64_t C, float eps) {
  __shared__ float partial[kBlock];
  const int64_t g = blockIdx.x, n = blockIdx.y;
  const int64_t cg = C / kGroups;
  const int64_t count = HW * cg;
  const int64_t base = n * HW * C + g * cg;

  float s = 0.0f;
  for (int64_t e = threadIdx.x; e < count; e += kBlock) s += __bfloat162float(x[base + (e / cg) * C + e % cg]);
  const float mean = block_sum(s, partial) / (float)count;

  float q = 0.0f;
  for (int64_t e = threadIdx.x; e < count; e += kBlock) {
    const float d = __bfloat162float(x[base + (e / cg) * C + e % cg]) - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(block_sum(q, partial) / (float)count + eps);

  for (int64_t e = threadIdx.x; e < count; e += kBlock) {
    const int64_t i = base + (e / cg) * C + e % cg;
    const int64_t c = g * cg + e % cg;
    const float v = (__bfloat162float(x[i]) - mean) * rstd;
    y[i] = __float2bfloat16(v * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
  }
}

extern "C" int group_norm_nhwc(const bf16* x, const bf16* weight, const bf16* bias, bf16* y, int64_t N, int64_t HW,
                               int64_t C, double eps, hipStream_t stream) {
  if (N == 0 || HW == 0) return hipSuccess;
  hipLaunchKernelGGL(group_norm_kernel, dim3(kGroups, (unsigned)N), dim3(kBlock), 0, stream, x, weight, bias, y, HW, C,
                     (float)eps);
  return hipGetLastError();
}
