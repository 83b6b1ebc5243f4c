// Softmax over the last dimension of a (M, N) float32 matrix (the operation in reference.py):
//   y[m, n] = exp(x[m, n] - max_n x[m, :]) / sum_n exp(x[m, n] - max_n x[m, :])
// Exemplar: the baseline gives every row a block of 256 threads and walks it three times (max,
// sum, write) with 4-byte accesses; a 128 KB vocabulary row does not stay in L1 between the
// walks, and with 8 such rows in flight per SM not in L2 either, so it is read from memory up to
// three times; each reduction is a shared-memory tree with a barrier per level. Here a row of up
// to 32768 values (a multiple of 4) is read once, 16 bytes per access, into the registers of one
// block (256 threads up to 4096 values, 1024 threads for a 32000-entry vocabulary row: 8 chunks
// of 4 values per thread), both reductions are warp shuffles plus one shared-memory step, every
// exponential is computed once, and the row is written with 16-byte stores. Other rows use an
// online (max, sum) pass and a write pass.
#include <cfloat>

template <int kThreads>
__device__ inline float block_max(float v, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor(v, offset));
  if (threadIdx.x % warpSize == 0) scratch[threadIdx.x / warpSize] = v;
  __syncthreads();
  float m = scratch[0];
  for (int w = 1; w < kThreads / warpSize; ++w) m = fmaxf(m, scratch[w]);
  return m;
}

template <int kThreads>
__device__ inline float block_sum(float v, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  if (threadIdx.x % warpSize == 0) scratch[threadIdx.x / warpSize] = v;
  __syncthreads();
  float s = scratch[0];
  for (int w = 1; w < kThreads / warpSize; ++w) s += scratch[w];
  return s;
}

// One block of kThreads per row; kChunks 16-byte chunks per thread: rows of up to 4 * kThreads * kChunks.
template <int kThreads, int kChunks>
__global__ void __launch_bounds__(kThreads) softmax_rows(const float* __restrict__ x, float* __restrict__ y,
                                                         int64_t N) {
  __shared__ float scratch_max[kThreads / 32];  // a slot per warp (32 or 64 lanes)
  __shared__ float scratch_sum[kThreads / 32];
  const float4* x_row = reinterpret_cast<const float4*>(x + (int64_t)blockIdx.x * N);
  float4* y_row = reinterpret_cast<float4*>(y + (int64_t)blockIdx.x * N);
  const int chunks = (int)(N / 4);
  float4 v[kChunks];
  float m = -FLT_MAX;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int q = threadIdx.x + c * kThreads;
    v[c] = q < chunks ? x_row[q] : make_float4(-FLT_MAX, -FLT_MAX, -FLT_MAX, -FLT_MAX);
    m = fmaxf(m, fmaxf(fmaxf(v[c].x, v[c].y), fmaxf(v[c].z, v[c].w)));
  }
  m = block_max<kThreads>(m, scratch_max);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int q = threadIdx.x + c * kThreads;
    if (q < chunks) {
      v[c] = make_float4(expf(v[c].x - m), expf(v[c].y - m), expf(v[c].z - m), expf(v[c].w - m));
      s += (v[c].x + v[c].y) + (v[c].z + v[c].w);
    }
  }
  const float inv_sum = 1.0f / block_sum<kThreads>(s, scratch_sum);
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int q = threadIdx.x + c * kThreads;
    if (q < chunks) y_row[q] = make_float4(v[c].x * inv_sum, v[c].y * inv_sum, v[c].z * inv_sum, v[c].w * inv_sum);
  }
}

constexpr int kOnlineBlock = 512;  // a multiple of every warp width (32 and 64)

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

__global__ void softmax_online_kernel(const float* x, float* y, int64_t N) {
  __shared__ MaxSum partial[kOnlineBlock];  // a slot per warp; kOnlineBlock slots cover any warp width
  const float* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int64_t quads = (N % 4 == 0) ? N / 4 : 0;  // rows 16-byte aligned: float4 loads

  MaxSum s = {-FLT_MAX, 0.0f};
  for (int64_t i = threadIdx.x; i < quads; i += kOnlineBlock) {
    float4 v = reinterpret_cast<const float4*>(x_row)[i];
    add(s, v.x);
    add(s, v.y);
    add(s, v.z);
    add(s, v.w);
  }
  for (int64_t n = quads * 4 + threadIdx.x; n < N; n += kOnlineBlock) add(s, x_row[n]);

  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    MaxSum other = {__shfl_xor(s.max, offset), __shfl_xor(s.sum, offset)};
    s = merge(s, other);
  }
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = s;
  __syncthreads();
  MaxSum row = partial[0];
  for (int w = 1; w < kOnlineBlock / warpSize; ++w) row = merge(row, partial[w]);
  const float inv_sum = 1.0f / row.sum;

  for (int64_t i = threadIdx.x; i < quads; i += kOnlineBlock) {
    float4 v = reinterpret_cast<const float4*>(x_row)[i];
    v.x = expf(v.x - row.max) * inv_sum;
    v.y = expf(v.y - row.max) * inv_sum;
    v.z = expf(v.z - row.max) * inv_sum;
    v.w = expf(v.w - row.max) * inv_sum;
    reinterpret_cast<float4*>(y_row)[i] = v;
  }
  for (int64_t n = quads * 4 + threadIdx.x; n < N; n += kOnlineBlock) y_row[n] = expf(x_row[n] - row.max) * inv_sum;
}

extern "C" int softmax(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  const dim3 grid((unsigned)M);
  if (N % 4 != 0 || N > 32768) {
    hipLaunchKernelGGL(softmax_online_kernel, grid, dim3(kOnlineBlock), 0, stream, x, y, N);
  } else if (N <= 1024) {
    hipLaunchKernelGGL((softmax_rows<256, 1>), grid, dim3(256), 0, stream, x, y, N);
  } else if (N <= 2048) {
    hipLaunchKernelGGL((softmax_rows<256, 2>), grid, dim3(256), 0, stream, x, y, N);
  } else if (N <= 4096) {
    hipLaunchKernelGGL((softmax_rows<256, 4>), grid, dim3(256), 0, stream, x, y, N);
  } else if (N <= 8192) {
    hipLaunchKernelGGL((softmax_rows<512, 4>), grid, dim3(512), 0, stream, x, y, N);
  } else if (N <= 16384) {
    hipLaunchKernelGGL((softmax_rows<1024, 4>), grid, dim3(1024), 0, stream, x, y, N);
  } else {
    hipLaunchKernelGGL((softmax_rows<1024, 8>), grid, dim3(1024), 0, stream, x, y, N);
  }
  return hipGetLastError();
}
