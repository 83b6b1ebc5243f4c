// WRONG on purpose (never shown to agents): the short-row path treats key i itself as masked
// (j < i instead of j <= i) when it sums the exponentials, so every row's normaliser misses the
// diagonal term.
// Causal attention probabilities (the operation in reference.py): for scores x of shape (Z, S, S)
// float32, row i of each matrix: y[z, i, j] = exp(scale x[z, i, j] - m) / sum_{k <= i} exp(scale x[z, i, k] - m)
// for j <= i (m the maximum of scale x[z, i, k] over k <= i), and y[z, i, j] = 0 for j > i.
#include <cfloat>

constexpr int kRowsPerBlock = 8;  // short rows handled by one block (its warps take turns)
constexpr int kWarpBlock = 256;
constexpr int kMaxShortRow = 2048;
constexpr int kBlock = 512;       // long rows: threads per row

template <int kItems>
__global__ void causal_softmax_warp_rows(const float* x, float* y, int64_t rows, int64_t S, float scale) {
  const int lane = threadIdx.x % warpSize;
  const int warps = kWarpBlock / warpSize;
  for (int r = threadIdx.x / warpSize; r < kRowsPerBlock; r += warps) {
    const int64_t row = (int64_t)blockIdx.x * kRowsPerBlock + r;
    if (row >= rows) break;
    const int64_t i = row % S;
    const float* x_row = x + row * S;
    float* y_row = y + row * S;
    float v[kItems];
    float m = -FLT_MAX;
    for (int k = 0; k < kItems; ++k) {
      const int64_t j = lane + (int64_t)k * warpSize;
      v[k] = (j <= i) ? x_row[j] * scale : -FLT_MAX;
      m = fmaxf(m, v[k]);
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor(m, offset));
    float s = 0.0f;
    for (int k = 0; k < kItems; ++k) {
      const int64_t j = lane + (int64_t)k * warpSize;
      v[k] = (j <= i) ? expf(v[k] - m) : 0.0f;
      s += (j < i) ? v[k] : 0.0f;
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) s += __shfl_xor(s, offset);
    const float inv_sum = 1.0f / s;
    for (int k = 0; k < kItems; ++k) {
      const int64_t j = lane + (int64_t)k * warpSize;
      if (j < S) y_row[j] = v[k] * inv_sum;
    }
  }
}

struct MaxSum {
  float max;
  float sum;
};

__device__ inline MaxSum merge(MaxSum a, MaxSum b) {
  float m = fmaxf(a.max, b.max);
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

__global__ void causal_softmax_long_rows(const float* x, float* y, int64_t S, float scale) {
  __shared__ MaxSum partial[kBlock];
  const int64_t row = blockIdx.x;
  const int64_t i = row % S;
  const float* x_row = x + row * S;
  float* y_row = y + row * S;
  MaxSum s = {-FLT_MAX, 0.0f};
  for (int64_t j = threadIdx.x; j <= i; j += kBlock) s = merge(s, {x_row[j] * scale, 1.0f});
  for (int offset = warpSize / 2; offset > 0; offset /= 2) s = merge(s, {__shfl_xor(s.max, offset), __shfl_xor(s.sum, offset)});
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = s;
  __syncthreads();
  MaxSum total = partial[0];
  for (int w = 1; w < kBlock / warpSize; ++w) total = merge(total, partial[w]);
  const float inv_sum = 1.0f / total.sum;
  for (int64_t j = threadIdx.x; j < S; j += kBlock)
    y_row[j] = (j <= i) ? expf(x_row[j] * scale - total.max) * inv_sum : 0.0f;
}

extern "C" int causal_softmax(const float* x, float* y, int64_t Z, int64_t S, double scale, hipStream_t stream) {
  if (Z == 0 || S == 0) return hipSuccess;
  const int64_t rows = Z * S;
  if (S <= kMaxShortRow) {
    // Items per lane sized for 32-wide warps (64-wide wavefronts use half of them).
    dim3 grid((unsigned)((rows + kRowsPerBlock - 1) / kRowsPerBlock));
    if (S <= 256) {
      hipLaunchKernelGGL(causal_softmax_warp_rows<8>, grid, dim3(kWarpBlock), 0, stream, x, y, rows, S, (float)scale);
    } else if (S <= 512) {
      hipLaunchKernelGGL(causal_softmax_warp_rows<16>, grid, dim3(kWarpBlock), 0, stream, x, y, rows, S, (float)scale);
    } else if (S <= 1024) {
      hipLaunchKernelGGL(causal_softmax_warp_rows<32>, grid, dim3(kWarpBlock), 0, stream, x, y, rows, S, (float)scale);
    } else {
      hipLaunchKernelGGL(causal_softmax_warp_rows<64>, grid, dim3(kWarpBlock), 0, stream, x, y, rows, S, (float)scale);
    }
  } else {
    hipLaunchKernelGGL(causal_softmax_long_rows, dim3((unsigned)rows), dim3(kBlock), 0, stream, x, y, S, (float)scale);
  }
  return hipGetLastError();
}
