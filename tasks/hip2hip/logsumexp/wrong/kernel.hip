// WRONG on purpose (never shown to agents): the merge of a row's chunks takes the largest
// maximum but adds the chunks' sums without rescaling them to it.
// Log-sum-exp of each row of a (M, N) float32 matrix:
//   out[m] = log(sum_n exp(x[m, n])) = max_m + log(sum_n exp(x[m, n] - max_m)),
// with max_m the row's maximum (so no exponential overflows). Arithmetic in float.
// Rows split into chunks: an online (max, sum) pair per chunk, then a kernel that merges a row's pairs.

constexpr int kThreads = 256;  // a multiple of every warp width (32 and 64)
constexpr int kMaxWarps = kThreads / 32;
constexpr int kTargetBlocks = 2048;
constexpr int kMinVectorsPerThread = 8;
constexpr int64_t kMaxRowBlocks = 65535;  // grid.y limit

__device__ inline float neg_inf() { return -__int_as_float(0x7f800000); }

// Merge (m2, s2) into (m, s): each sum scaled to its own maximum (a sum of 0 with maximum -inf
// is empty).
__device__ inline void merge(float& m, float& s, float m2, float s2) {
  const float mx = fmaxf(m, m2);
  s = (m == mx ? s : s * expf(m - mx)) + (m2 == mx ? s2 : s2 * expf(m2 - mx));
  m = mx;
}

__device__ inline void add(float& m, float& s, float x) {
  if (x > m) {
    s = s * expf(m - x) + 1.0f;  // s is 0 while m is -inf
    m = x;
  } else {
    s += expf(x - m);
  }
}

// Block (chunk, y): for rows y, y + gridDim.y, ..., the (max, sum) pair of x[row, begin:end),
// begin = chunk * chunk_len.
__global__ void __launch_bounds__(kThreads)
    chunk_kernel(const float* __restrict__ x, float* __restrict__ parts, int64_t M, int64_t N, int64_t chunk_len) {
  __shared__ float warp_m[kMaxWarps], warp_s[kMaxWarps];
  const int chunks = gridDim.x;
  for (int64_t row = blockIdx.y; row < M; row += gridDim.y) {
    const int64_t begin = blockIdx.x * chunk_len;
    const int64_t end = begin + chunk_len < N ? begin + chunk_len : N;
    const float* p = x + row * N;
    float m = neg_inf(), s = 0.0f;
    if (N % 4 == 0) {  // rows start 16-byte aligned; chunk_len is a multiple of 4
      for (int64_t i = begin / 4 + threadIdx.x; i < end / 4; i += kThreads) {
        const float4 v = reinterpret_cast<const float4*>(p)[i];
        const float vm = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
        if (vm > m) {
          s *= expf(m - vm);  // 0 while m is still -inf
          m = vm;
        }
        s += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
      }
    } else {
      for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) add(m, s, p[i]);
    }

    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
      const float m2 = __shfl_xor(m, offset);
      const float s2 = __shfl_xor(s, offset);
      merge(m, s, m2, s2);
    }
    if (threadIdx.x % warpSize == 0) {
      warp_m[threadIdx.x / warpSize] = m;
      warp_s[threadIdx.x / warpSize] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < kThreads / warpSize; ++w) merge(m, s, warp_m[w], warp_s[w]);
      parts[(row * chunks + blockIdx.x) * 2] = m;
      parts[(row * chunks + blockIdx.x) * 2 + 1] = s;
    }
    __syncthreads();  // warp_m and warp_s are reused by the next row
  }
}

// One thread per row: merges the row's chunk pairs in order.
__global__ void merge_kernel(const float* __restrict__ parts, float* __restrict__ out, int64_t M, int chunks) {
  const int64_t row = (int64_t)blockIdx.x * kThreads + threadIdx.x;
  if (row >= M) return;
  const float* pr = parts + row * chunks * 2;
  float m = pr[0], s = pr[1];
  for (int c = 1; c < chunks; ++c) {
    m = fmaxf(m, pr[c * 2]);
    s += pr[c * 2 + 1];
  }
  out[row] = m + logf(s);
}

// Scratch for the chunks' pairs, kept between calls (grown when a call needs more).
static float* g_parts = nullptr;
static size_t g_parts_bytes = 0;

extern "C" int logsumexp(const float* x, float* out, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  int64_t chunks = (kTargetBlocks + M - 1) / M;
  const int64_t most = (N + 4 * kThreads * kMinVectorsPerThread - 1) / (4 * kThreads * kMinVectorsPerThread);
  if (chunks > most) chunks = most;
  if (chunks < 1) chunks = 1;
  int64_t chunk_len = (N + chunks - 1) / chunks;
  chunk_len = (chunk_len + 3) / 4 * 4;
  if (chunk_len < 4) chunk_len = 4;
  chunks = (N + chunk_len - 1) / chunk_len;  // every chunk holds values
  if (chunks < 1) chunks = 1;
  const size_t bytes = (size_t)(M * chunks * 2) * sizeof(float);
  if (bytes > g_parts_bytes) {
    if (g_parts != nullptr) hipFree(g_parts);
    g_parts = nullptr;
    g_parts_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_parts, bytes);
    if (err != hipSuccess) return err;
    g_parts_bytes = bytes;
  }
  const int64_t row_blocks = M < kMaxRowBlocks ? M : kMaxRowBlocks;
  hipLaunchKernelGGL(chunk_kernel, dim3((unsigned)chunks, (unsigned)row_blocks), dim3(kThreads), 0, stream, x, g_parts,
                     M, N, chunk_len);
  hipLaunchKernelGGL(merge_kernel, dim3((unsigned)((M + kThreads - 1) / kThreads)), dim3(kThreads), 0, stream,
                     g_parts, out, M, (int)chunks);
  return hipGetLastError();
}
