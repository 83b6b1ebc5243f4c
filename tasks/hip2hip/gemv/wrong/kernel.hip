// WRONG on purpose (never shown to agents): x is staged in shared memory one element per
// thread, so only its first 256 elements are staged when K > 256.
// Matrix-vector product for a decode step: y[n] = sum_k w[n, k] * x[k], w (N, K) row-major
// bfloat16 (a linear layer's weight), x (K,) bfloat16; float32 sums rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int kRowsPerBlock = 8;
constexpr int kVec = 8;                // bfloat16 values per 16-byte access
constexpr int64_t kMaxSharedK = 16384;  // x staged in shared memory (32 KB) up to this length

__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  return v;
}

__global__ void gemv_vec_kernel(const bf16* w, const bf16* x, bf16* y, int64_t N, int64_t K) {
  __shared__ alignas(16) bf16 xs[kMaxSharedK];  // read back 16 bytes at a time
  if (threadIdx.x < K) xs[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  const int lane = threadIdx.x % warpSize;
  const int warps = kBlock / warpSize;
  const int64_t vectors = K / kVec;
  for (int r = threadIdx.x / warpSize; r < kRowsPerBlock; r += warps) {
    const int64_t n = (int64_t)blockIdx.x * kRowsPerBlock + r;
    if (n >= N) break;
    const uint4* row = reinterpret_cast<const uint4*>(w + n * K);
    float sum = 0.0f;
    for (int64_t i = lane; i < vectors; i += warpSize) {
      uint4 raw = row[i];
      uint4 raw_x = reinterpret_cast<const uint4*>(xs)[i];
      const bf16* v = reinterpret_cast<const bf16*>(&raw);
      const bf16* xv = reinterpret_cast<const bf16*>(&raw_x);
      for (int j = 0; j < kVec; ++j) sum += __bfloat162float(v[j]) * __bfloat162float(xv[j]);
    }
    sum = warp_sum(sum);
    if (lane == 0) y[n] = __float2bfloat16(sum);
  }
}

__global__ void gemv_scalar_kernel(const bf16* w, const bf16* x, bf16* y, int64_t N, int64_t K) {
  const int lane = threadIdx.x % warpSize;
  const int warps = kBlock / warpSize;
  for (int r = threadIdx.x / warpSize; r < kRowsPerBlock; r += warps) {
    const int64_t n = (int64_t)blockIdx.x * kRowsPerBlock + r;
    if (n >= N) break;
    const bf16* row = w + n * K;
    float sum = 0.0f;
    for (int64_t k = lane; k < K; k += warpSize) sum += __bfloat162float(row[k]) * __bfloat162float(x[k]);
    sum = warp_sum(sum);
    if (lane == 0) y[n] = __float2bfloat16(sum);
  }
}

extern "C" int gemv(const bf16* w, const bf16* x, bf16* y, int64_t N, int64_t K, hipStream_t stream) {
  if (N == 0) return hipSuccess;
  dim3 grid((unsigned)((N + kRowsPerBlock - 1) / kRowsPerBlock));
  if (K % kVec == 0 && K <= kMaxSharedK) {
    hipLaunchKernelGGL(gemv_vec_kernel, grid, dim3(kBlock), 0, stream, w, x, y, N, K);
  } else {
    hipLaunchKernelGGL(gemv_scalar_kernel, grid, dim3(kBlock), 0, stream, w, x, y, N, K);
  }
  return hipGetLastError();
}
