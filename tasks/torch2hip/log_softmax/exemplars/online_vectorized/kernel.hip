// Log-softmax over the last dimension of a (M, N) bfloat16 matrix of logits, written as float32
// log-probabilities (the operation in reference.py):
//   y[m, n] = x[m, n] - max_n x[m, :] - log(sum_n exp(x[m, n] - max_n x[m, :]))
// Exemplar: the baseline walks each row three times (max, sum, write) with 2-byte loads, and a
// vocabulary row (64-300 KB) is read from memory for every walk; its reductions are shared-memory
// trees with a barrier per level. Here one walk with 16-byte loads keeps a running (max, sum of
// 2^((x - max) log2 e)) pair per thread (each 8-value chunk rescales the sum once), the pairs
// merge by warp shuffles and one shared-memory step, and a second walk writes (x - max) - log(sum) with
// 16-byte stores: two reads of the row instead of three, and a quarter of the load instructions.
// Rows with N % 8 != 0 take the same two walks with scalar accesses.
#include <cfloat>

typedef __hip_bfloat16 bf16;

constexpr int kThreads = 1024;  // a multiple of every warp width (32 and 64)
constexpr int kVec = 8;         // bfloat16 values per 16-byte load
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// A running maximum and the sum of 2^((v - max) log2 e) over the values seen; -FLT_MAX, not
// -inf, so that two empty pairs merge to an empty pair.
struct MaxSum {
  float max;
  float sum;
};

__device__ inline MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  return {m, a.sum * exp2f((a.max - m) * kLog2e) + b.sum * exp2f((b.max - m) * kLog2e)};
}

__global__ void __launch_bounds__(kThreads) log_softmax_rows(const bf16* __restrict__ x, float* __restrict__ y,
                                                             int64_t N) {
  __shared__ MaxSum partial[kThreads / 32];  // a slot per warp (32 or 64 lanes)
  const bf16* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int64_t chunks = (N % kVec == 0) ? N / kVec : 0;

  MaxSum st = {-FLT_MAX, 0.0f};
  for (int64_t q = threadIdx.x; q < chunks; q += kThreads) {
    const uint4 raw = reinterpret_cast<const uint4*>(x_row)[q];
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
    float v[kVec];
    float cm = -FLT_MAX;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      v[j] = __bfloat162float(h[j]);
      cm = fmaxf(cm, v[j]);
    }
    const float m = fmaxf(st.max, cm);
    float s = st.sum * exp2f((st.max - m) * kLog2e);
#pragma unroll
    for (int j = 0; j < kVec; ++j) s += exp2f((v[j] - m) * kLog2e);
    st = {m, s};
  }
  for (int64_t n = chunks * kVec + threadIdx.x; n < N; n += kThreads) {
    const float v = __bfloat162float(x_row[n]);
    st = merge(st, {v, 1.0f});
  }

  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    st = merge(st, {__shfl_xor(st.max, offset), __shfl_xor(st.sum, offset)});
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = st;
  __syncthreads();
  MaxSum row = partial[0];
  for (int w = 1; w < kThreads / warpSize; ++w) row = merge(row, partial[w]);
  const float row_max = row.max;
  const float log_sum = log2f(row.sum) * kLn2;  // x - max is exact; x - (max + log_sum) would not be

  for (int64_t q = threadIdx.x; q < chunks; q += kThreads) {
    const uint4 raw = reinterpret_cast<const uint4*>(x_row)[q];
    const bf16* h = reinterpret_cast<const bf16*>(&raw);
    float4 lo, hi;
    lo.x = (__bfloat162float(h[0]) - row_max) - log_sum;
    lo.y = (__bfloat162float(h[1]) - row_max) - log_sum;
    lo.z = (__bfloat162float(h[2]) - row_max) - log_sum;
    lo.w = (__bfloat162float(h[3]) - row_max) - log_sum;
    hi.x = (__bfloat162float(h[4]) - row_max) - log_sum;
    hi.y = (__bfloat162float(h[5]) - row_max) - log_sum;
    hi.z = (__bfloat162float(h[6]) - row_max) - log_sum;
    hi.w = (__bfloat162float(h[7]) - row_max) - log_sum;
    reinterpret_cast<float4*>(y_row)[2 * q] = lo;
    reinterpret_cast<float4*>(y_row)[2 * q + 1] = hi;
  }
  for (int64_t n = chunks * kVec + threadIdx.x; n < N; n += kThreads) y_row[n] = (__bfloat162float(x_row[n]) - row_max) - log_sum;
}

extern "C" int log_softmax(const bf16* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(log_softmax_rows, dim3((unsigned)M), dim3(kThreads), 0, stream, x, y, N);
  return hipGetLastError();
}
