// Group normalisation of a (B, C, S) float16 tensor (the operation in reference.py): the C
// channels form G groups of C / G consecutive channels; for sample b and group g, mean and var are
// the mean and the biased variance of x[b, channels of g, :] (C / G * S values), and
//   y[b, c, s] = (x[b, c, s] - mean) / sqrt(var + eps) * weight[c] + bias[c].
// Arithmetic in float; the result is rounded to float16 once.
// Exemplar: the baseline walks each group three times (mean, variance, output) with 2-byte
// accesses and reduces through shared-memory trees with a barrier per level. Here one walk with
// 16-byte loads gathers both sums of the values shifted by the group's first value K (sum of
// x - K and of (x - K)^2: no cancellation while K is within a few deviations of the mean, as a
// sample of the group is), one warp-shuffle reduction of the pair, and a second walk writes
// x * a + c per channel with 16-byte accesses: two reads instead of three. S % 8 != 0 takes the
// same two walks with scalar accesses.

constexpr int kThreads = 512;  // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;        // float16 values per 16-byte access

// Sums of a and b over the block, in every thread. `scratch` has two slots per warp.
__device__ inline void block_sum2(float& a, float& b, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    a += __shfl_xor(a, offset);
    b += __shfl_xor(b, offset);
  }
  const int warps = kThreads / warpSize;
  if (threadIdx.x % warpSize == 0) {
    scratch[threadIdx.x / warpSize] = a;
    scratch[warps + threadIdx.x / warpSize] = b;
  }
  __syncthreads();
  a = 0.0f;
  b = 0.0f;
  for (int w = 0; w < warps; ++w) {
    a += scratch[w];
    b += scratch[warps + w];
  }
}

__global__ void __launch_bounds__(kThreads) group_norm_kernel(const __half* __restrict__ x,
                                                              const __half* __restrict__ weight,
                                                              const __half* __restrict__ bias, __half* __restrict__ y,
                                                              int64_t C, int64_t S, int64_t G, float eps) {
  __shared__ float scratch[2 * (kThreads / 32)];
  const int64_t group = blockIdx.x;  // b * G + g
  const int64_t g = group % G;
  const int64_t channels = C / G;
  const int64_t count = channels * S;
  const __half* x_group = x + group * count;
  __half* y_group = y + group * count;
  const bool vectors = S % kVec == 0;  // then every 16-byte chunk lies in one channel

  const float K = __half2float(x_group[0]);
  float s1 = 0.0f, s2 = 0.0f;
  if (vectors) {
    const int64_t chunks = count / kVec;
    for (int64_t q = threadIdx.x; q < chunks; q += kThreads) {
      const uint4 raw = reinterpret_cast<const uint4*>(x_group)[q];
      const __half* h = reinterpret_cast<const __half*>(&raw);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float d = __half2float(h[j]) - K;
        s1 += d;
        s2 += d * d;
      }
    }
  } else {
    for (int64_t n = threadIdx.x; n < count; n += kThreads) {
      const float d = __half2float(x_group[n]) - K;
      s1 += d;
      s2 += d * d;
    }
  }
  block_sum2(s1, s2, scratch);
  const float mean_shift = s1 / (float)count;
  const float var = fmaxf(s2 / (float)count - mean_shift * mean_shift, 0.0f);
  const float mean = K + mean_shift;
  const float rstd = rsqrtf(var + eps);

  if (vectors) {
    const unsigned chunks_per_channel = (unsigned)(S / kVec);
    const int64_t chunks = count / kVec;
    for (int64_t q = threadIdx.x; q < chunks; q += kThreads) {
      const int64_t c = g * channels + (unsigned)q / chunks_per_channel;
      const float a = rstd * __half2float(weight[c]);
      const float shift = __half2float(bias[c]) - mean * a;
      const uint4 raw = reinterpret_cast<const uint4*>(x_group)[q];
      const __half* h = reinterpret_cast<const __half*>(&raw);
      uint4 out;
      __half* o = reinterpret_cast<__half*>(&out);
#pragma unroll
      for (int j = 0; j < kVec; ++j) o[j] = __float2half(fmaf(__half2float(h[j]), a, shift));
      reinterpret_cast<uint4*>(y_group)[q] = out;
    }
  } else {
    for (int64_t ci = 0; ci < channels; ++ci) {
      const int64_t c = g * channels + ci;
      const float a = rstd * __half2float(weight[c]);
      const float shift = __half2float(bias[c]) - mean * a;
      for (int64_t s = threadIdx.x; s < S; s += kThreads) {
        const int64_t n = ci * S + s;
        y_group[n] = __float2half(fmaf(__half2float(x_group[n]), a, shift));
      }
    }
  }
}

extern "C" int group_norm(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t B, int64_t C,
                          int64_t S, int64_t G, double eps, hipStream_t stream) {
  if (B == 0 || C == 0 || S == 0) return hipSuccess;
  hipLaunchKernelGGL(group_norm_kernel, dim3((unsigned)(B * G)), dim3(kThreads), 0, stream, x, weight, bias, y, C, S,
                     G, (float)eps);
  return hipGetLastError();
}
