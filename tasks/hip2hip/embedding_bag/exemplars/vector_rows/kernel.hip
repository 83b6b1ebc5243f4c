// EmbeddingBag, sum mode with per-sample weights: out[b, :] = sum_j psw[b, j] * weight[idx[b, j], :]
// for bags of L int64 ids into a (V, D) bfloat16 table; float32 sums rounded to bfloat16 once.
// Exemplar: the baseline reads one 2-byte table element per row step and re-reads the bag's id
// and weight from memory in every step of every thread. Here the bag's ids and weights are staged
// once in shared memory, each thread reads 8 consecutive columns of a row with one 16-byte load,
// short rows (D / 8 < 128 vectors) split the block into groups that take every groups-th row of
// the bag (summed through shared memory at the end), and the row loop is unrolled by 4 so four
// independent row loads are in flight per thread. D not a multiple of 8 takes a scalar kernel.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 128;
constexpr int kVec = 8;           // bfloat16 values per 16-byte access
constexpr int kMaxStaged = 1024;  // bag entries staged in shared memory per pass

__device__ inline void add_row(float* acc, uint4 raw, float s) {
  const bf16* v = reinterpret_cast<const bf16*>(&raw);
  for (int k = 0; k < kVec; ++k) acc[k] += s * __bfloat162float(v[k]);
}

__global__ void bag_vec_kernel(const int64_t* idx, const float* psw, const bf16* weight, bf16* out, int64_t L,
                               int64_t D) {
  __shared__ int64_t ids[kMaxStaged];
  __shared__ float ws[kMaxStaged];
  __shared__ float red[kBlock][kVec];
  const int64_t b = blockIdx.x;
  const int64_t cols = D / kVec;                          // 16-byte vectors per row
  const int width = cols < kBlock ? (int)cols : kBlock;   // vectors per pass
  const int groups = kBlock / width;                      // row groups
  const int g = threadIdx.x / width, cl = threadIdx.x % width;
  for (int64_t c0 = 0; c0 < cols; c0 += width) {  // the same trip count in every thread
    const int64_t c = c0 + cl;
    const bool active = g < groups && c < cols;
    float acc[kVec] = {};
    for (int64_t j0 = 0; j0 < L; j0 += kMaxStaged) {
      const int count = (int)((L - j0 < kMaxStaged) ? L - j0 : kMaxStaged);
      __syncthreads();  // the previous pass is done with ids and ws
      for (int j = threadIdx.x; j < count; j += kBlock) {
        ids[j] = idx[b * L + j0 + j];
        ws[j] = psw[b * L + j0 + j];
      }
      __syncthreads();
      if (!active) continue;
      int j = g;
      for (; j + 3 * groups < count; j += 4 * groups) {
        uint4 r0 = reinterpret_cast<const uint4*>(weight + ids[j] * D)[c];
        uint4 r1 = reinterpret_cast<const uint4*>(weight + ids[j + groups] * D)[c];
        uint4 r2 = reinterpret_cast<const uint4*>(weight + ids[j + 2 * groups] * D)[c];
        uint4 r3 = reinterpret_cast<const uint4*>(weight + ids[j + 3 * groups] * D)[c];
        add_row(acc, r0, ws[j]);
        add_row(acc, r1, ws[j + groups]);
        add_row(acc, r2, ws[j + 2 * groups]);
        add_row(acc, r3, ws[j + 3 * groups]);
      }
      for (; j < count; j += groups) add_row(acc, reinterpret_cast<const uint4*>(weight + ids[j] * D)[c], ws[j]);
    }
    for (int k = 0; k < kVec; ++k) red[threadIdx.x][k] = acc[k];
    __syncthreads();
    if (active && g == 0) {
      for (int other = 1; other < groups; ++other)
        for (int k = 0; k < kVec; ++k) acc[k] += red[other * width + cl][k];
      uint4 res;
      bf16* o = reinterpret_cast<bf16*>(&res);
      for (int k = 0; k < kVec; ++k) o[k] = __float2bfloat16(acc[k]);
      reinterpret_cast<uint4*>(out + b * D)[c] = res;
    }
    __syncthreads();  // red is reused by the next pass
  }
}

__global__ void bag_scalar_kernel(const int64_t* idx, const float* psw, const bf16* weight, bf16* out, int64_t L,
                                  int64_t D) {
  const int64_t b = blockIdx.x;
  for (int64_t d = threadIdx.x; d < D; d += kBlock) {
    float sum = 0.0f;
    for (int64_t j = 0; j < L; ++j) sum += psw[b * L + j] * __bfloat162float(weight[idx[b * L + j] * D + d]);
    out[b * D + d] = __float2bfloat16(sum);
  }
}

extern "C" int embedding_bag(const int64_t* idx, const float* psw, const bf16* weight, bf16* out, int64_t B,
                             int64_t L, int64_t D, hipStream_t stream) {
  if (B == 0) return hipSuccess;
  if (D % kVec == 0) {
    hipLaunchKernelGGL(bag_vec_kernel, dim3((unsigned)B), dim3(kBlock), 0, stream, idx, psw, weight, out, L, D);
  } else {
    hipLaunchKernelGGL(bag_scalar_kernel, dim3((unsigned)B), dim3(kBlock), 0, stream, idx, psw, weight, out, L, D);
  }
  return hipGetLastError();
}
