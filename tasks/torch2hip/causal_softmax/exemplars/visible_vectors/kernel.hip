// Causal attention probabilities (the operation in reference.py): for scores x of shape (Z, S, S)
// float32, row i of each matrix: y[z, i, j] = exp(scale x[z, i, j] - m) / sum_{k <= i} exp(scale x[z, i, k] - m)
// for j <= i (m the maximum of scale x[z, i, k] over k <= i), and y[z, i, j] = 0 for j > i.
// Exemplar: the baseline reads every row three times in full, although row i needs only its first
// i + 1 scores (half the matrix on average), computes each visible exponential twice and reduces
// through shared-memory trees with a barrier per level. Here (rows of at most 4096, a multiple of
// 4) one block of 256 threads takes a row: each thread loads its visible 16-byte chunks once into
// registers (chunks past the diagonal are not read), the maximum and the sum are reduced with warp
// shuffles and one shared-memory step each, every exponential is computed once, and the whole row
// (zeros past the diagonal) is written with 16-byte stores. Other shapes take the baseline's path.
#include <cfloat>

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)

__device__ inline float block_max(float v, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor(v, offset));
  if (threadIdx.x % warpSize == 0) scratch[threadIdx.x / warpSize] = v;
  __syncthreads();
  float m = scratch[0];
  for (int w = 1; w < kBlock / warpSize; ++w) m = fmaxf(m, scratch[w]);
  return m;
}

__device__ inline float block_sum(float v, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  if (threadIdx.x % warpSize == 0) scratch[threadIdx.x / warpSize] = v;
  __syncthreads();
  float s = scratch[0];
  for (int w = 1; w < kBlock / warpSize; ++w) s += scratch[w];
  return s;
}

// kChunks 16-byte chunks (4 columns) per thread: rows of up to 1024 * kChunks columns.
template <int kChunks>
__global__ void __launch_bounds__(kBlock) causal_softmax_vec(const float* __restrict__ x, float* __restrict__ y,
                                                             int64_t S, float scale) {
  __shared__ float scratch_max[kBlock];
  __shared__ float scratch_sum[kBlock];
  const int64_t row = blockIdx.x;  // z * S + i
  const int64_t i = row % S;
  const float4* x_row = reinterpret_cast<const float4*>(x + row * S);
  float4* y_row = reinterpret_cast<float4*>(y + row * S);
  const int64_t chunks = S / 4;
  float4 v[kChunks];
  float m = -FLT_MAX;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int64_t q = threadIdx.x + (int64_t)c * kBlock;  // columns 4q .. 4q + 3
    v[c] = make_float4(-FLT_MAX, -FLT_MAX, -FLT_MAX, -FLT_MAX);
    if (q < chunks && 4 * q <= i) {
      const float4 t = x_row[q];
      v[c].x = t.x * scale;  // column 4q <= i
      v[c].y = 4 * q + 1 <= i ? t.y * scale : -FLT_MAX;
      v[c].z = 4 * q + 2 <= i ? t.z * scale : -FLT_MAX;
      v[c].w = 4 * q + 3 <= i ? t.w * scale : -FLT_MAX;
    }
    m = fmaxf(m, fmaxf(fmaxf(v[c].x, v[c].y), fmaxf(v[c].z, v[c].w)));
  }
  m = block_max(m, scratch_max);
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int64_t q = threadIdx.x + (int64_t)c * kBlock;
    if (q < chunks && 4 * q <= i) {
      v[c].x = expf(v[c].x - m);
      v[c].y = 4 * q + 1 <= i ? expf(v[c].y - m) : 0.0f;
      v[c].z = 4 * q + 2 <= i ? expf(v[c].z - m) : 0.0f;
      v[c].w = 4 * q + 3 <= i ? expf(v[c].w - m) : 0.0f;
    } else {
      v[c] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    s += (v[c].x + v[c].y) + (v[c].z + v[c].w);
  }
  const float inv_sum = 1.0f / block_sum(s, scratch_sum);
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int64_t q = threadIdx.x + (int64_t)c * kBlock;
    if (q < chunks) y_row[q] = make_float4(v[c].x * inv_sum, v[c].y * inv_sum, v[c].z * inv_sum, v[c].w * inv_sum);
  }
}

// The baseline's kernel, for rows longer than 4096 or not a multiple of 4.
__global__ void causal_softmax_kernel(const float* x, float* y, int64_t S, float scale) {
  __shared__ float partial[kBlock];
  const int64_t row = blockIdx.x;  // z * S + i
  const int64_t i = row % S;
  const float* x_row = x + row * S;
  float* y_row = y + row * S;
  const int tid = threadIdx.x;

  float m = -FLT_MAX;
  for (int64_t j = tid; j < S; j += kBlock) {
    float v = x_row[j] * scale;
    if (j <= i) m = fmaxf(m, v);
  }
  partial[tid] = m;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] = fmaxf(partial[tid], partial[tid + stride]);
    __syncthreads();
  }
  const float row_max = partial[0];
  __syncthreads();

  float s = 0.0f;
  for (int64_t j = tid; j < S; j += kBlock) {
    float v = x_row[j] * scale;
    if (j <= i) s += expf(v - row_max);
  }
  partial[tid] = s;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  const float inv_sum = 1.0f / partial[0];

  for (int64_t j = tid; j < S; j += kBlock) {
    float v = x_row[j] * scale;
    y_row[j] = (j <= i) ? expf(v - row_max) * inv_sum : 0.0f;
  }
}

extern "C" int causal_softmax(const float* x, float* y, int64_t Z, int64_t S, double scale, hipStream_t stream) {
  if (Z == 0 || S == 0) return hipSuccess;
  const dim3 grid((unsigned)(Z * S)), block(kBlock);
  const float sc = (float)scale;
  if (S % 4 != 0 || S > 4096) {
    hipLaunchKernelGGL(causal_softmax_kernel, grid, block, 0, stream, x, y, S, sc);
  } else if (S <= 1024) {
    hipLaunchKernelGGL(causal_softmax_vec<1>, grid, block, 0, stream, x, y, S, sc);
  } else if (S <= 2048) {
    hipLaunchKernelGGL(causal_softmax_vec<2>, grid, block, 0, stream, x, y, S, sc);
  } else {
    hipLaunchKernelGGL(causal_softmax_vec<4>, grid, block, 0, stream, x, y, S, sc);
  }
  return hipGetLastError();
}
