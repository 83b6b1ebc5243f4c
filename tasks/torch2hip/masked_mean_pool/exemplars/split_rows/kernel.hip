// Masked mean pooling (the operation in reference.py): for a padded batch x of shape (B, S, H),
// bfloat16, and lengths (B,), int64, each in [1, S],
//   out[b, h] = (sum over s < lengths[b] of x[b, s, h]) / lengths[b]
// summed in float, the result rounded to bfloat16 once.
// Exemplar: the baseline gives each output element one thread that walks up to S positions
// alone, 2 bytes per load: a warp's loads are serial steps of a long chain (up to S of them), so
// a whole-sequence walk is latency-bound, and blocks of long sequences finish long after the
// rest. Here a block of 32 x 8 threads covers 256 columns: each thread loads 8 columns (16 bytes)
// at a time and the 8 thread-rows split the sequence positions between them (a chain 8 times
// shorter, 8 times more bytes per load); the 8 partial sums meet in shared memory. A hidden
// size H that is not a multiple of 8 takes a scalar path of the same shape.

typedef __hip_bfloat16 bf16;

constexpr int kCols = 32;  // threads across the columns
constexpr int kRows = 8;   // threads across the sequence positions

template <int kVec>
__global__ void __launch_bounds__(kCols* kRows)
    pool_kernel(const bf16* __restrict__ x, const int64_t* __restrict__ lengths, bf16* __restrict__ out, int64_t S,
                int64_t H) {
  __shared__ float partial[kRows][kCols * kVec];
  const int64_t b = blockIdx.y;
  const int c = threadIdx.x, r = threadIdx.y;
  const int64_t h0 = (int64_t)blockIdx.x * kCols * kVec;  // the block's first column
  const int64_t h = h0 + (int64_t)c * kVec;               // this thread's first column (H % kVec == 0)
  const int64_t len = lengths[b];

  float acc[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) acc[j] = 0.0f;
  if (h < H) {
    const bf16* p = x + (b * S + r) * H + h;
#pragma unroll 4
    for (int64_t s = r; s < len; s += kRows, p += kRows * H) {
      if (kVec == 8) {
        const uint4 raw = *reinterpret_cast<const uint4*>(p);
        const bf16* v = reinterpret_cast<const bf16*>(&raw);
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[j] += __bfloat162float(v[j]);
      } else {
        acc[0] += __bfloat162float(*p);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kVec; ++j) partial[r][c * kVec + j] = acc[j];
  __syncthreads();

  for (int i = r * kCols + c; i < kCols * kVec; i += kCols * kRows) {
    if (h0 + i < H) {
      float sum = 0.0f;
#pragma unroll
      for (int rr = 0; rr < kRows; ++rr) sum += partial[rr][i];
      out[b * H + h0 + i] = __float2bfloat16(sum / (float)len);
    }
  }
}

extern "C" int masked_mean_pool(const bf16* x, const int64_t* lengths, bf16* out, int64_t B, int64_t S, int64_t H,
                                hipStream_t stream) {
  if (B == 0 || H == 0) return hipSuccess;
  const dim3 block(kCols, kRows);
  if (H % 8 == 0) {
    const dim3 grid((unsigned)((H + kCols * 8 - 1) / (kCols * 8)), (unsigned)B);
    hipLaunchKernelGGL(pool_kernel<8>, grid, block, 0, stream, x, lengths, out, S, H);
  } else {
    const dim3 grid((unsigned)((H + kCols - 1) / kCols), (unsigned)B);
    hipLaunchKernelGGL(pool_kernel<1>, grid, block, 0, stream, x, lengths, out, S, H);
  }
  return hipGetLastError();
}
