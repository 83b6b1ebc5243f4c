// Batched matrix product of float16 matrices with float32 accumulation:
//   c[b] = a[b] @ bm[b] for b < BATCH;  a: (BATCH, M, K), bm: (BATCH, K, N), c: (BATCH, M, N)
// The float32 sums are rounded to float16 once.

constexpr int kTile = 16;

// Each block computes a kTile x kTile tile of c, one element per thread, stepping through K with
// kTile x kTile tiles of a and bm staged in shared memory; blockIdx.z is the batch.
__global__ void batched_gemm_kernel(const __half* a, const __half* bm, __half* c, int64_t M, int64_t N,
                                    int64_t K) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  const int64_t batch = blockIdx.z;
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int64_t row = (int64_t)blockIdx.y * kTile + ty;
  const int64_t col = (int64_t)blockIdx.x * kTile + tx;
  const __half* a_mat = a + batch * M * K;
  const __half* b_mat = bm + batch * K * N;
  float sum = 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += kTile) {
    a_tile[ty][tx] = (row < M && k0 + tx < K) ? __half2float(a_mat[row * K + k0 + tx]) : 0.0f;
    b_tile[ty][tx] = (k0 + ty < K && col < N) ? __half2float(b_mat[(k0 + ty) * N + col]) : 0.0f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum += a_tile[ty][k] * b_tile[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) c[(batch * M + row) * N + col] = __float2half(sum);
}

extern "C" int batched_gemm(const __half* a, const __half* bm, __half* c, int64_t BATCH, int64_t M,
                            int64_t N, int64_t K, hipStream_t stream) {
  if (BATCH == 0 || M == 0 || N == 0) return hipSuccess;
  dim3 grid((unsigned)((N + kTile - 1) / kTile), (unsigned)((M + kTile - 1) / kTile), (unsigned)BATCH);
  hipLaunchKernelGGL(batched_gemm_kernel, grid, dim3(kTile, kTile), 0, stream, a, bm, c, M, N, K);
  return hipGetLastError();
}
