// WRONG on purpose (never shown to agents): the log-sum-exp is taken without subtracting the row
// maximum first; exp overflows to inf for logits above ~88 and every output becomes -inf.
// Log-softmax over the last dimension of a (M, N) bfloat16 matrix of logits, written as float32
// log-probabilities (the operation in reference.py):
//   y[m, n] = x[m, n] - max_n x[m, :] - log(sum_n exp(x[m, n] - max_n x[m, :]))

typedef __hip_bfloat16 bf16;

constexpr int kThreads = 1024;  // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;         // bfloat16 values per 16-byte load

// The sum of `v` over the block, in every thread. `scratch` has a slot per warp.
__device__ inline float block_sum(float v, float* scratch) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor(v, offset);
  if (threadIdx.x % warpSize == 0) scratch[threadIdx.x / warpSize] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kThreads / warpSize; ++w) total += scratch[w];
  return total;
}

// Logits are O(10), so one walk sums their exponentials directly; a second writes x - lse.
__global__ void __launch_bounds__(kThreads) log_softmax_rows(const bf16* __restrict__ x, float* __restrict__ y,
                                                             int64_t N) {
  __shared__ float scratch[kThreads / 32];
  const bf16* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int64_t chunks = (N % kVec == 0) ? N / kVec : 0;

  float s = 0.0f;
  for (int64_t q = threadIdx.x; q < chunks; q += kThreads) {
    const uint4 raw = reinterpret_cast<const uint4*>(x_row)[q];
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
#pragma unroll
    for (int j = 0; j < kVec; ++j) s += expf(__bfloat162float(h[j]));
  }
  for (int64_t n = chunks * kVec + threadIdx.x; n < N; n += kThreads) s += expf(__bfloat162float(x_row[n]));
  const float lse = logf(block_sum(s, scratch));

  for (int64_t q = threadIdx.x; q < chunks; q += kThreads) {
    const uint4 raw = reinterpret_cast<const uint4*>(x_row)[q];
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
    float4 lo, hi;
    lo.x = __bfloat162float(h[0]) - lse;
    lo.y = __bfloat162float(h[1]) - lse;
    lo.z = __bfloat162float(h[2]) - lse;
    lo.w = __bfloat162float(h[3]) - lse;
    hi.x = __bfloat162float(h[4]) - lse;
    hi.y = __bfloat162float(h[5]) - lse;
    hi.z = __bfloat162float(h[6]) - lse;
    hi.w = __bfloat162float(h[7]) - lse;
    reinterpret_cast<float4*>(y_row)[2 * q] = lo;
    reinterpret_cast<float4*>(y_row)[2 * q + 1] = hi;
  }
  for (int64_t n = chunks * kVec + threadIdx.x; n < N; n += kThreads) y_row[n] = __bfloat162float(x_row[n]) - lse;
}

extern "C" int log_softmax(const bf16* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(log_softmax_rows, dim3((unsigned)M), dim3(kThreads), 0, stream, x, y, N);
  return hipGetLastError();
}
