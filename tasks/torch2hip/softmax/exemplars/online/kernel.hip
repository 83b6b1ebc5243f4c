// Softmax over the last dimension of a (M, N) float32 matrix (the operation in reference.py):
//   y[m, n] = exp(x[m, n] - max_n x[m, :]) / sum_n exp(x[m, n] - max_n x[m, :])
// Exemplar: the baseline gives every row a block of 256 threads and walks it three times (max,
// sum, write), each reduction a shared-memory tree with a barrier per level. Short rows
// (N <= 2048, e.g. attention scores) go to one warp each here: the row sits in the warp's
// registers, both reductions are warp shuffles, and no barrier is needed. Long rows keep a block
// each but read it twice, not three times: the maximum and the sum of exponentials come from one
// pass ("online softmax": the running sum is rescaled when the maximum grows), combined with warp
// shuffles and one shared-memory step, and loads are 16 bytes wide.
#include <cfloat>

constexpr int kRowsPerBlock = 8;   // short rows handled by one block (its warps take turns)
constexpr int kWarpBlock = 256;    // threads per block on the short-row path
constexpr int kMaxShortRow = 2048;

// Short rows: one warp per row, kItems values per lane in registers (kItems * warpSize >= N).
template <int kItems>
__global__ void softmax_warp_rows(const float* x, float* y, int64_t M, int64_t N) {
  const int lane = threadIdx.x % warpSize;
  const int warps = kWarpBlock / warpSize;
  for (int r = threadIdx.x / warpSize; r < kRowsPerBlock; r += warps) {
    const int64_t row = (int64_t)blockIdx.x * kRowsPerBlock + r;
    if (row >= M) break;
    const float* x_row = x + row * N;
    float* y_row = y + row * N;
    float v[kItems];
    float m = -FLT_MAX;
    for (int j = 0; j < kItems; ++j) {
      const int64_t n = lane + (int64_t)j * warpSize;
      v[j] = (n < N) ? x_row[n] : -FLT_MAX;
      m = fmaxf(m, v[j]);
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor(m, offset));
    float s = 0.0f;
    for (int j = 0; j < kItems; ++j) {
      const int64_t n = lane + (int64_t)j * warpSize;
      v[j] = (n < N) ? expf(v[j] - m) : 0.0f;
      s += v[j];
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) s += __shfl_xor(s, offset);
    const float inv_sum = 1.0f / s;
    for (int j = 0; j < kItems; ++j) {
      const int64_t n = lane + (int64_t)j * warpSize;
      if (n < N) y_row[n] = v[j] * inv_sum;
    }
  }
}

constexpr int kBlock = 512;  // a multiple of every warp width (32 and 64)

// Running (max, sum of exp(v - max)) pairs; -FLT_MAX, not -inf, so that empty pairs merge to 0.
struct MaxSum {
  float max;
  float sum;
};

__device__ inline MaxSum merge(MaxSum a, MaxSum b) {
  float m = fmaxf(a.max, b.max);
  return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

__device__ inline void add(MaxSum& s, float v) {
  if (v > s.max) {
    s.sum = s.sum * expf(s.max - v) + 1.0f;
    s.max = v;
  } else {
    s.sum += expf(v - s.max);
  }
}

__global__ void softmax_kernel(const float* x, float* y, int64_t N) {
  __shared__ MaxSum partial[kBlock];  // a slot per warp; kBlock slots cover any warp width
  const float* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int64_t quads = (N % 4 == 0) ? N / 4 : 0;  // rows 16-byte aligned: float4 loads

  MaxSum s = {-FLT_MAX, 0.0f};
  for (int64_t i = threadIdx.x; i < quads; i += kBlock) {
    float4 v = reinterpret_cast<const float4*>(x_row)[i];
    add(s, v.x);
    add(s, v.y);
    add(s, v.z);
    add(s, v.w);
  }
  for (int64_t n = quads * 4 + threadIdx.x; n < N; n += kBlock) add(s, x_row[n]);

  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    MaxSum other = {__shfl_xor(s.max, offset), __shfl_xor(s.sum, offset)};
    s = merge(s, other);
  }
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = s;
  __syncthreads();
  MaxSum row = partial[0];
  for (int w = 1; w < kBlock / warpSize; ++w) row = merge(row, partial[w]);
  const float inv_sum = 1.0f / row.sum;

  for (int64_t i = threadIdx.x; i < quads; i += kBlock) {
    float4 v = reinterpret_cast<const float4*>(x_row)[i];
    v.x = expf(v.x - row.max) * inv_sum;
    v.y = expf(v.y - row.max) * inv_sum;
    v.z = expf(v.z - row.max) * inv_sum;
    v.w = expf(v.w - row.max) * inv_sum;
    reinterpret_cast<float4*>(y_row)[i] = v;
  }
  for (int64_t n = quads * 4 + threadIdx.x; n < N; n += kBlock) y_row[n] = expf(x_row[n] - row.max) * inv_sum;
}

extern "C" int softmax(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  if (N <= kMaxShortRow) {
    // Items per lane sized for 32-wide warps (64-wide wavefronts use half of them).
    dim3 grid((unsigned)((M + kRowsPerBlock - 1) / kRowsPerBlock));
    if (N <= 256) {
      hipLaunchKernelGGL(softmax_warp_rows<8>, grid, dim3(kWarpBlock), 0, stream, x, y, M, N);
    } else if (N <= 512) {
      hipLaunchKernelGGL(softmax_warp_rows<16>, grid, dim3(kWarpBlock), 0, stream, x, y, M, N);
    } else if (N <= 1024) {
      hipLaunchKernelGGL(softmax_warp_rows<32>, grid, dim3(kWarpBlock), 0, stream, x, y, M, N);
    } else {
      hipLaunchKernelGGL(softmax_warp_rows<64>, grid, dim3(kWarpBlock), 0, stream, x, y, M, N);
    }
  } else {
    hipLaunchKernelGGL(softmax_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, y, N);
  }
  return hipGetLastError();
}
