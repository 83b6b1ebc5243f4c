// WRONG on purpose (never shown to agents): the fused path's projection term sums dy * xhat
// instead of dy * weight * xhat (the weight left out of g), so dx is off by the weight's spread.
// Backward pass of RMSNorm (y = x * rstd[m] * weight[n]) over a (M, N) bfloat16 matrix.
// With xhat = x * rstd[m] and g = dy * weight[n]:
//   dx[m, n]   = rstd[m] * (g[m, n] - xhat[m, n] * mean_n'(g[m, n'] * xhat[m, n']))   (bfloat16)
//   dweight[n] = sum_m dy[m, n] * xhat[m, n]                                          (float32)
// Arithmetic in float.
// Rows with N % 8 == 0 (N <= 8192): one fused kernel, persistent grid, row held in registers.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;         // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;             // bfloat16 values per 16-byte load
constexpr int kMaxVecs = 4;         // 16-byte loads per thread and row: N up to 256 * 8 * 4 = 8192
constexpr int kFusedBlocks = 256;   // persistent grid of the fused kernel
constexpr int kRowsPerBlock = 256;  // rows summed by one block of the generic dweight kernel
constexpr int kTile = 32;           // combine: columns per block
constexpr int kLanes = 8;           // combine: lanes over the partial rows

// Scratch for the blocks' column sums, (parts, N) float32, kept between calls (grown when a call
// needs more).
static float* g_partial = nullptr;
static size_t g_partial_bytes = 0;

__device__ inline float to_f(bf16 v) { return __bfloat162float(v); }
__device__ inline float bf_at(const uint4& raw, int j) { return __bfloat162float(reinterpret_cast<const bf16*>(&raw)[j]); }

// The sum of `v` over the block; every thread gets the same value. `partial` has a slot per warp.
__device__ float block_sum(float v, float* partial) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  __syncthreads();  // readers of the previous sum are done with `partial`
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kBlock / warpSize; ++w) total += partial[w];
  return total;
}

// Fused path: N % 8 == 0, N <= kBlock * kVec * kMaxVecs. Block b handles rows b, b + gridDim.x, ...
__global__ void __launch_bounds__(kBlock) rms_norm_bwd_fused(const bf16* dy, const bf16* x, const bf16* weight,
                                                              const float* rstd, bf16* dx, float* col_sums,
                                                              int64_t M, int64_t N) {
  __shared__ float partial[kBlock];
  const int vectors = (int)(N / kVec);
  float w[kMaxVecs][kVec];
  float acc[kMaxVecs][kVec];
#pragma unroll
  for (int k = 0; k < kMaxVecs; ++k) {
    const int i = threadIdx.x + k * kBlock;
    uint4 raw = make_uint4(0u, 0u, 0u, 0u);
    if (i < vectors) raw = reinterpret_cast<const uint4*>(weight)[i];
    for (int j = 0; j < kVec; ++j) {
      w[k][j] = bf_at(raw, j);
      acc[k][j] = 0.0f;
    }
  }

  for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
    const uint4* dy_row = reinterpret_cast<const uint4*>(dy + row * N);
    const uint4* x_row = reinterpret_cast<const uint4*>(x + row * N);
    uint4* dx_row = reinterpret_cast<uint4*>(dx + row * N);
    const float r = rstd[row];
    uint4 dyv[kMaxVecs], xv[kMaxVecs];
    float dot = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxVecs; ++k) {
      const int i = threadIdx.x + k * kBlock;
      if (i < vectors) {
        dyv[k] = dy_row[i];
        xv[k] = x_row[i];
        for (int j = 0; j < kVec; ++j) dot += bf_at(dyv[k], j) * (bf_at(xv[k], j) * r);
      }
    }
    const float proj = block_sum(dot, partial) / (float)N;
#pragma unroll
    for (int k = 0; k < kMaxVecs; ++k) {
      const int i = threadIdx.x + k * kBlock;
      if (i < vectors) {
        uint4 out;
        bf16* o = reinterpret_cast<bf16*>(&out);
        for (int j = 0; j < kVec; ++j) {
          const float d = bf_at(dyv[k], j);
          const float xhat = bf_at(xv[k], j) * r;
          o[j] = __float2bfloat16(r * (d * w[k][j] - xhat * proj));
          acc[k][j] += d * xhat;
        }
        dx_row[i] = out;
      }
    }
  }

  float* part = col_sums + (int64_t)blockIdx.x * N;
#pragma unroll
  for (int k = 0; k < kMaxVecs; ++k) {
    const int i = threadIdx.x + k * kBlock;
    if (i < vectors)
      for (int j = 0; j < kVec; ++j) part[(int64_t)i * kVec + j] = acc[k][j];
  }
}

// Generic path (any N). dx: one block per row. The first pass sums g * xhat (a shared-memory tree adds the threads'
// partial sums), the second writes dx.
__global__ void rms_norm_bwd_dx(const bf16* dy, const bf16* x, const bf16* weight, const float* rstd, bf16* dx,
                                int64_t N) {
  __shared__ float partial[kBlock];
  const int64_t row = blockIdx.x;
  const bf16* dy_row = dy + row * N;
  const bf16* x_row = x + row * N;
  bf16* dx_row = dx + row * N;
  const float r = rstd[row];

  float dot = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) dot += to_f(dy_row[n]) * to_f(weight[n]) * (to_f(x_row[n]) * r);
  partial[threadIdx.x] = dot;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float proj = partial[0] / (float)N;

  for (int64_t n = threadIdx.x; n < N; n += kBlock) {
    const float g = to_f(dy_row[n]) * to_f(weight[n]);
    const float xhat = to_f(x_row[n]) * r;
    dx_row[n] = __float2bfloat16(r * (g - xhat * proj));
  }
}

// dweight partials: grid (column blocks, row blocks); each thread sums one column over
// kRowsPerBlock rows and stores the sum in partial[row block, column].
__global__ void rms_norm_bwd_dweight(const bf16* dy, const bf16* x, const float* rstd, float* partial, int64_t M,
                                     int64_t N) {
  const int64_t n = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (n >= N) return;
  const int64_t m0 = (int64_t)blockIdx.y * kRowsPerBlock;
  const int64_t m1 = m0 + kRowsPerBlock < M ? m0 + kRowsPerBlock : M;
  float sum = 0.0f;
  for (int64_t m = m0; m < m1; ++m) sum += to_f(dy[m * N + n]) * (to_f(x[m * N + n]) * rstd[m]);
  partial[(int64_t)blockIdx.y * N + n] = sum;
}

// dweight[n] = the sum of partial[0..parts), n] as a fixed tree: lane l of kLanes sums the rows
// l, l + kLanes, ... in order, then lane 0 adds the lanes' sums in lane order.
__global__ void __launch_bounds__(kTile * kLanes)
    dweight_combine(const float* __restrict__ partial, float* __restrict__ dweight, int64_t parts, int64_t N) {
  __shared__ float sums[kLanes][kTile];
  const int c = threadIdx.x % kTile, lane = threadIdx.x / kTile;
  const int64_t n = (int64_t)blockIdx.x * kTile + c;
  float s = 0.0f;
  if (n < N)
    for (int64_t p = lane; p < parts; p += kLanes) s += partial[p * N + n];
  sums[lane][c] = s;
  __syncthreads();
  if (lane == 0 && n < N) {
    float total = 0.0f;
    for (int l = 0; l < kLanes; ++l) total += sums[l][c];
    dweight[n] = total;
  }
}

extern "C" int rms_norm_bwd(const bf16* dy, const bf16* x, const bf16* weight, const float* rstd, bf16* dx,
                            float* dweight, int64_t M, int64_t N, hipStream_t stream) {
  if (N == 0) return hipSuccess;
  if (M == 0) return hipMemsetAsync(dweight, 0, N * sizeof(float), stream);
  const bool fused = N % kVec == 0 && N <= (int64_t)kBlock * kVec * kMaxVecs;
  const int64_t parts = fused ? (M < kFusedBlocks ? M : kFusedBlocks) : (M + kRowsPerBlock - 1) / kRowsPerBlock;
  const size_t bytes = (size_t)(parts * N) * sizeof(float);
  if (bytes > g_partial_bytes) {
    if (g_partial != nullptr) hipFree(g_partial);
    g_partial = nullptr;
    g_partial_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_partial, bytes);
    if (err != hipSuccess) return err;
    g_partial_bytes = bytes;
  }
  if (fused) {
    hipLaunchKernelGGL(rms_norm_bwd_fused, dim3((unsigned)parts), dim3(kBlock), 0, stream, dy, x, weight, rstd, dx,
                       g_partial, M, N);
  } else {
    hipLaunchKernelGGL(rms_norm_bwd_dx, dim3((unsigned)M), dim3(kBlock), 0, stream, dy, x, weight, rstd, dx, N);
    const dim3 grid((unsigned)((N + kBlock - 1) / kBlock), (unsigned)parts);
    hipLaunchKernelGGL(rms_norm_bwd_dweight, grid, dim3(kBlock), 0, stream, dy, x, rstd, g_partial, M, N);
  }
  hipLaunchKernelGGL(dweight_combine, dim3((unsigned)((N + kTile - 1) / kTile)), dim3(kTile * kLanes), 0, stream,
                     g_partial, dweight, parts, N);
  return hipGetLastError();
}
