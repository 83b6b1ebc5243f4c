// Batched matrix product of float16 matrices with float32 accumulation:
//   c[b] = a[b] @ bm[b] for b < BATCH;  a: (BATCH, M, K), bm: (BATCH, K, N), c: (BATCH, M, N)
// Exemplar: the baseline stages 16x16 tiles in shared memory and gives each thread one output,
// so every multiply-add needs two shared-memory reads and every value read from global memory is
// used only 16 times. Here each block computes a 64x64 tile of c from 64x16 and 16x64 tiles of a
// and bm staged in shared memory (as float), and each thread a 4x4 sub-tile held in registers:
// every value read from shared memory is used 4 times, every value read from global memory 64 times.

constexpr int kTile = 64;             // rows and columns of c per block
constexpr int kDepth = 16;            // k per shared-memory stage
constexpr int kMicro = 4;             // rows and columns of c per thread
constexpr int kThreads = (kTile / kMicro) * (kTile / kMicro);  // 256
constexpr int kLoads = kTile * kDepth / kThreads;              // elements of each tile per thread

__global__ void batched_gemm_kernel(const __half* a, const __half* bm, __half* c, int64_t M, int64_t N,
                                    int64_t K) {
  __shared__ float a_tile[kDepth][kTile + 1];  // transposed: a_tile[k][m]; +1 spreads the stores over banks
  __shared__ float b_tile[kDepth][kTile];  // b_tile[k][n]
  const int64_t batch = blockIdx.z;
  const int64_t m0 = (int64_t)blockIdx.y * kTile, n0 = (int64_t)blockIdx.x * kTile;
  const __half* a_mat = a + batch * M * K;
  const __half* b_mat = bm + batch * K * N;
  const int tid = threadIdx.x;
  const int tm = tid / (kTile / kMicro), tn = tid % (kTile / kMicro);

  float acc[kMicro][kMicro] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
    for (int l = 0; l < kLoads; ++l) {
      int e = tid + l * kThreads;
      int r = e / kDepth, k = e % kDepth;  // a: consecutive threads read consecutive k
      int64_t gm = m0 + r, gk = k0 + k;
      a_tile[k][r] = (gm < M && gk < K) ? __half2float(a_mat[gm * K + gk]) : 0.0f;
      int kb = e / kTile, n = e % kTile;  // bm: consecutive threads read consecutive n
      int64_t gkb = k0 + kb, gn = n0 + n;
      b_tile[kb][n] = (gkb < K && gn < N) ? __half2float(b_mat[gkb * N + gn]) : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k) {
      float av[kMicro], bv[kMicro];
      for (int i = 0; i < kMicro; ++i) av[i] = a_tile[k][tm * kMicro + i];
      for (int j = 0; j < kMicro; ++j) bv[j] = b_tile[k][tn * kMicro + j];
      for (int i = 0; i < kMicro; ++i)
        for (int j = 0; j < kMicro; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();  // the next stage overwrites the tiles
  }

  __half* c_mat = c + batch * M * N;
  for (int i = 0; i < kMicro; ++i) {
    int64_t gm = m0 + tm * kMicro + i;
    for (int j = 0; j < kMicro; ++j) {
      int64_t gn = n0 + tn * kMicro + j;
      if (gm < M && gn < N) c_mat[gm * N + gn] = __float2half(acc[i][j]);
    }
  }
}

extern "C" int batched_gemm(const __half* a, const __half* bm, __half* c, int64_t BATCH, int64_t M,
                            int64_t N, int64_t K, hipStream_t stream) {
  if (BATCH == 0 || M == 0 || N == 0) return hipSuccess;
  dim3 grid((unsigned)((N + kTile - 1) / kTile), (unsigned)((M + kTile - 1) / kTile), (unsigned)BATCH);
  hipLaunchKernelGGL(batched_gemm_kernel, grid, dim3(kThreads), 0, stream, a, bm, c, M, N, K);
  return hipGetLastError();
}
