// WRONG on purpose (never shown to agents): combining two (max, sum) pairs lacks the guard for
// two empty ones, so when a row has fewer elements than the block has threads, idle lanes meet
// as exp(-inf - -inf) = NaN and the whole row becomes NaN.
// Row-wise softmax of a (M, V) float32 matrix:
//   y[m, v] = exp(x[m, v] - max_m) / sum_v' exp(x[m, v'] - max_m)
// One 1024-thread block per row: an online (max, sum) pass with 16-byte loads, then the output.

constexpr int kBlock = 1024;  // a multiple of every warp width (32 and 64)

struct MaxSum {
  float m;  // running maximum (-inf: no element yet)
  float s;  // sum of exp(x - m)
};

__device__ inline MaxSum combine(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__device__ inline void push(MaxSum& acc, float v) {
  if (v > acc.m) {
    acc.s = acc.s * expf(acc.m - v) + 1.0f;
    acc.m = v;
  } else {
    acc.s += expf(v - acc.m);
  }
}

// The (max, sum) of the whole block; every thread gets the same value. `partial` has a slot per warp.
__device__ MaxSum block_combine(MaxSum acc, MaxSum* partial) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    MaxSum other = {__shfl_xor(acc.m, offset), __shfl_xor(acc.s, offset)};
    acc = combine(acc, other);
  }
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = acc;
  __syncthreads();
  MaxSum total = partial[0];
  for (int w = 1; w < kBlock / warpSize; ++w) total = combine(total, partial[w]);
  return total;
}

__global__ void __launch_bounds__(kBlock) softmax_kernel(const float* x, float* y, int64_t V) {
  __shared__ MaxSum partial[kBlock];
  const float* x_row = x + (int64_t)blockIdx.x * V;
  float* y_row = y + (int64_t)blockIdx.x * V;
  // 16-byte loads when every row starts 16-byte aligned (V a multiple of 4).
  const int64_t quads = (V % 4 == 0) ? V / 4 : 0;
  const float4* x4 = reinterpret_cast<const float4*>(x_row);

  MaxSum acc = {-INFINITY, 0.0f};
  for (int64_t i = threadIdx.x; i < quads; i += kBlock) {
    const float4 v = x4[i];
    const float m4 = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    if (m4 > acc.m) {  // rescale once per load, not once per element
      acc.s *= expf(acc.m - m4);
      acc.m = m4;
    }
    acc.s += expf(v.x - acc.m) + expf(v.y - acc.m) + expf(v.z - acc.m) + expf(v.w - acc.m);
  }
  for (int64_t i = quads * 4 + threadIdx.x; i < V; i += kBlock) push(acc, x_row[i]);
  const MaxSum row = block_combine(acc, partial);
  const float m = row.m, inv = 1.0f / row.s;

  float4* y4 = reinterpret_cast<float4*>(y_row);
  for (int64_t i = threadIdx.x; i < quads; i += kBlock) {
    const float4 v = x4[i];
    y4[i] = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv, expf(v.w - m) * inv);
  }
  for (int64_t i = quads * 4 + threadIdx.x; i < V; i += kBlock) y_row[i] = expf(x_row[i] - m) * inv;
}

extern "C" int softmax(const float* x, float* y, int64_t M, int64_t V, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(softmax_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, y, V);
  return hipGetLastError();
}
