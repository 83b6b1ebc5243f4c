// L2 normalisation of the rows of a (M, N) float32 matrix (the operation in reference.py):
//   y[m, n] = x[m, n] / max(sqrt(sum_n x[m, :]^2), eps)
// Exemplar: the baseline spends a 256-thread block on every row, moves 4 bytes per thread and
// access, walks each row twice (the second walk from cache), reduces through an 8-level shared-
// memory tree with a barrier per level and divides every element. A short row (a query or key head
// of 128 values in cosine attention) gives half of the block's threads one value and the rest
// none: a block holds 512 bytes in flight and spends most of its time in the tree, so the GPU is
// bound by latency, far from its bandwidth. Here a row of up to 1024 values (a multiple of 4)
// belongs to one warp (8 rows to a 256-thread block): each lane loads its up to 8 chunks of 4
// values with 16-byte loads, all in flight at once, the sum of squares is a warp-shuffle reduction
// (no barrier, no shared memory), and the row is multiplied by one reciprocal and written with
// 16-byte stores. Rows of up to 4096 values are read once into the registers of a 256-thread block
// (warp shuffles plus one shared-memory step); other rows take a two-walk path.

constexpr int kThreads = 256;  // a multiple of every warp width (32 and 64)

// The sum of `v` over the block, in every thread. `scratch` has a slot per warp.
__device__ inline float block_sum(float v, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  if (threadIdx.x % warpSize == 0) scratch[threadIdx.x / warpSize] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kThreads / warpSize; ++w) total += scratch[w];
  return total;
}

__device__ inline float sum_sq4(const float4& v) { return (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w); }

constexpr int kRowsPerBlock = 8;  // warp-per-row kernel: one per 32-wide warp; 64-wide warps take two each

// Rows of N % 4 == 0 and N <= kChunks * 32 * 4, one warp a row, kept in registers.
template <int kChunks>
__global__ void __launch_bounds__(kThreads) l2_norm_warp_rows(const float* __restrict__ x, float* __restrict__ y,
                                                              int64_t M, int64_t N, float eps) {
  const int warp = threadIdx.x / warpSize, lane = threadIdx.x % warpSize;
  const int warps = kThreads / warpSize;
  const int chunks = (int)(N / 4);
  for (int r = warp; r < kRowsPerBlock; r += warps) {
    const int64_t m = (int64_t)blockIdx.x * kRowsPerBlock + r;
    if (m >= M) break;  // the whole warp leaves together
    const float4* x_row = reinterpret_cast<const float4*>(x + m * N);
    float4* y_row = reinterpret_cast<float4*>(y + m * N);
    float4 v[kChunks];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int q = lane + c * warpSize;
      v[c] = q < chunks ? x_row[q] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) s += sum_sq4(v[c]);
    for (int offset = warpSize / 2; offset > 0; offset /= 2) s += __shfl_xor(s, offset);
    const float inv = 1.0f / fmaxf(sqrtf(s), eps);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int q = lane + c * warpSize;
      if (q < chunks) y_row[q] = make_float4(v[c].x * inv, v[c].y * inv, v[c].z * inv, v[c].w * inv);
    }
  }
}

// Rows of N % 4 == 0 and N <= kChunks * kThreads * 4, kept in registers.
template <int kChunks>
__global__ void __launch_bounds__(kThreads) l2_norm_rows(const float* __restrict__ x, float* __restrict__ y, int64_t N,
                                                         float eps) {
  __shared__ float scratch[kThreads / 32];
  const float4* x_row = reinterpret_cast<const float4*>(x + (int64_t)blockIdx.x * N);
  float4* y_row = reinterpret_cast<float4*>(y + (int64_t)blockIdx.x * N);
  const int chunks = (int)(N / 4);
  float4 v[kChunks];
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int q = threadIdx.x + c * kThreads;
    v[c] = q < chunks ? x_row[q] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    s += sum_sq4(v[c]);
  }
  const float inv = 1.0f / fmaxf(sqrtf(block_sum(s, scratch)), eps);
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int q = threadIdx.x + c * kThreads;
    if (q < chunks) y_row[q] = make_float4(v[c].x * inv, v[c].y * inv, v[c].z * inv, v[c].w * inv);
  }
}

// Any row: two walks, 16-byte accesses where the row allows them.
__global__ void __launch_bounds__(kThreads) l2_norm_any(const float* __restrict__ x, float* __restrict__ y, int64_t N,
                                                        float eps) {
  __shared__ float scratch[kThreads / 32];
  const float* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int64_t chunks = (N % 4 == 0) ? N / 4 : 0;
  float s = 0.0f;
  for (int64_t q = threadIdx.x; q < chunks; q += kThreads) s += sum_sq4(reinterpret_cast<const float4*>(x_row)[q]);
  for (int64_t n = chunks * 4 + threadIdx.x; n < N; n += kThreads) s += x_row[n] * x_row[n];
  const float inv = 1.0f / fmaxf(sqrtf(block_sum(s, scratch)), eps);
  for (int64_t q = threadIdx.x; q < chunks; q += kThreads) {
    const float4 v = reinterpret_cast<const float4*>(x_row)[q];
    reinterpret_cast<float4*>(y_row)[q] = make_float4(v.x * inv, v.y * inv, v.z * inv, v.w * inv);
  }
  for (int64_t n = chunks * 4 + threadIdx.x; n < N; n += kThreads) y_row[n] = x_row[n] * inv;
}

extern "C" int l2_norm(const float* x, float* y, int64_t M, int64_t N, double eps, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  const dim3 grid((unsigned)M), block(kThreads);
  const int64_t per_chunk = (int64_t)kThreads * 4;
  const float e = (float)eps;
  if (N % 4 == 0 && N <= 1024) {
    const dim3 rows((unsigned)((M + kRowsPerBlock - 1) / kRowsPerBlock));
    switch ((N + 127) / 128) {  // float4 chunks per lane of a 32-wide warp
      case 1: hipLaunchKernelGGL((l2_norm_warp_rows<1>), rows, block, 0, stream, x, y, M, N, e); break;
      case 2: hipLaunchKernelGGL((l2_norm_warp_rows<2>), rows, block, 0, stream, x, y, M, N, e); break;
      case 3: hipLaunchKernelGGL((l2_norm_warp_rows<3>), rows, block, 0, stream, x, y, M, N, e); break;
      case 4: hipLaunchKernelGGL((l2_norm_warp_rows<4>), rows, block, 0, stream, x, y, M, N, e); break;
      case 5: hipLaunchKernelGGL((l2_norm_warp_rows<5>), rows, block, 0, stream, x, y, M, N, e); break;
      case 6: hipLaunchKernelGGL((l2_norm_warp_rows<6>), rows, block, 0, stream, x, y, M, N, e); break;
      case 7: hipLaunchKernelGGL((l2_norm_warp_rows<7>), rows, block, 0, stream, x, y, M, N, e); break;
      default: hipLaunchKernelGGL((l2_norm_warp_rows<8>), rows, block, 0, stream, x, y, M, N, e); break;
    }
  } else if (N % 4 != 0 || N > 4 * per_chunk) {
    hipLaunchKernelGGL(l2_norm_any, grid, block, 0, stream, x, y, N, e);
  } else if (N <= per_chunk) {
    hipLaunchKernelGGL((l2_norm_rows<1>), grid, block, 0, stream, x, y, N, e);
  } else if (N <= 2 * per_chunk) {
    hipLaunchKernelGGL((l2_norm_rows<2>), grid, block, 0, stream, x, y, N, e);
  } else if (N <= 3 * per_chunk) {
    hipLaunchKernelGGL((l2_norm_rows<3>), grid, block, 0, stream, x, y, N, e);
  } else {
    hipLaunchKernelGGL((l2_norm_rows<4>), grid, block, 0, stream, x, y, N, e);
  }
  return hipGetLastError();
}
