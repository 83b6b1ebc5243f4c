// Dynamic symmetric int8 quantisation of each row (token) of a (M, N) bfloat16 matrix, in float32:
//   amax = max(max_n |x[m, n]|, 1e-10); scale[m] = amax / 127; inv = 127 / amax;
//   q[m, n] = rint(x[m, n] * inv) (round half to even), clamped to [-127, 127].
// Exemplar: the baseline reads each row twice, 2 bytes per access, writes 1 byte per access and
// reduces through a shared-memory tree with a barrier per level. Here, when N is a multiple of 8
// and at most 16384, each thread loads its 8-value slices of the row once with 16-byte loads, all
// issued before any is used, and keeps them in registers still packed as bfloat16 (4 registers a
// slice); the kernel is instantiated for 1, 2, 4 or 8 slices a thread, so a 4096-wide row holds
// 8 registers of data per thread, not 64, and 8 blocks fit on an SM. The maximum is reduced with
// warp shuffles and one shared-memory step, and each slice is stored as one 8-byte write. Other
// rows take a scalar path.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;      // bfloat16 values per 16-byte load

__device__ float block_max(float v, float* partial) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor(v, offset));
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = v;
  __syncthreads();
  float m = 0.0f;
  for (int w = 0; w < kBlock / warpSize; ++w) m = fmaxf(m, partial[w]);
  return m;
}

__device__ inline int8_t quantize(float v, float inv) {
  return (int8_t)fminf(fmaxf(rintf(v * inv), -127.0f), 127.0f);
}

template <int kSlices>
__global__ void __launch_bounds__(kBlock) quant_vec_kernel(const bf16* __restrict__ x, int8_t* __restrict__ q,
                                                           float* __restrict__ scale, int64_t N) {
  __shared__ float partial[kBlock];
  const int64_t base = (int64_t)blockIdx.x * N;
  const int vectors = (int)(N / kVec);
  const uint4* xv = reinterpret_cast<const uint4*>(x + base);
  uint4 raw[kSlices];
#pragma unroll
  for (int j = 0; j < kSlices; ++j) {
    const int i = threadIdx.x + j * kBlock;
    raw[j] = i < vectors ? xv[i] : make_uint4(0u, 0u, 0u, 0u);  // zeros leave the maximum alone
  }
  float m = 0.0f;
#pragma unroll
  for (int j = 0; j < kSlices; ++j) {
    const bf16* h = reinterpret_cast<const bf16*>(&raw[j]);
#pragma unroll
    for (int k = 0; k < kVec; ++k) m = fmaxf(m, fabsf(__bfloat162float(h[k])));
  }
  const float amax = fmaxf(block_max(m, partial), 1e-10f);
  const float inv = 127.0f / amax;
  if (threadIdx.x == 0) scale[blockIdx.x] = amax / 127.0f;
#pragma unroll
  for (int j = 0; j < kSlices; ++j) {
    const int i = threadIdx.x + j * kBlock;
    if (i < vectors) {
      const bf16* h = reinterpret_cast<const bf16*>(&raw[j]);
      uint2 out;
      int8_t* o = reinterpret_cast<int8_t*>(&out);
#pragma unroll
      for (int k = 0; k < kVec; ++k) o[k] = quantize(__bfloat162float(h[k]), inv);
      reinterpret_cast<uint2*>(q + base)[i] = out;
    }
  }
}

__global__ void quant_scalar_kernel(const bf16* x, int8_t* q, float* scale, int64_t N) {
  __shared__ float partial[kBlock];
  const bf16* x_row = x + (int64_t)blockIdx.x * N;
  int8_t* q_row = q + (int64_t)blockIdx.x * N;
  float m = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) m = fmaxf(m, fabsf(__bfloat162float(x_row[n])));
  const float amax = fmaxf(block_max(m, partial), 1e-10f);
  const float inv = 127.0f / amax;
  if (threadIdx.x == 0) scale[blockIdx.x] = amax / 127.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) q_row[n] = quantize(__bfloat162float(x_row[n]), inv);
}

extern "C" int int8_quant_per_token(const bf16* x, int8_t* q, float* scale, int64_t M, int64_t N,
                                    hipStream_t stream) {
  if (M == 0) return hipSuccess;
  const int64_t slices = (N / kVec + kBlock - 1) / kBlock;  // 16-byte slices per thread
  const dim3 grid((unsigned)M), block(kBlock);
  if (N % kVec != 0 || slices > 8) {
    hipLaunchKernelGGL(quant_scalar_kernel, grid, block, 0, stream, x, q, scale, N);
  } else if (slices <= 1) {
    hipLaunchKernelGGL(quant_vec_kernel<1>, grid, block, 0, stream, x, q, scale, N);
  } else if (slices <= 2) {
    hipLaunchKernelGGL(quant_vec_kernel<2>, grid, block, 0, stream, x, q, scale, N);
  } else if (slices <= 4) {
    hipLaunchKernelGGL(quant_vec_kernel<4>, grid, block, 0, stream, x, q, scale, N);
  } else {
    hipLaunchKernelGGL(quant_vec_kernel<8>, grid, block, 0, stream, x, q, scale, N);
  }
  return hipGetLastError();
}
