// Batched matrix product of float16 matrices with float32 accumulation:
//   c[b] = a[b] @ bm[b] for b < BATCH;  a: (BATCH, M, K), bm: (BATCH, K, N), c: (BATCH, M, N)
// The float32 sums are rounded to float16 once.

// One thread per output element; blockIdx.z is the batch.
__global__ void batched_gemm_kernel(const __half* a, const __half* bm, __half* c, int64_t M, int64_t N,
                                    int64_t K) {
  int64_t batch = blockIdx.z;
  int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
  int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  const __half* a_row = a + (batch * M + row) * K;
  const __half* b_mat = bm + batch * K * N;
  float sum = 0.0f;
  for (int64_t k = 0; k < K; ++k) sum += __half2float(a_row[k]) * __half2float(b_mat[k * N + col]);
  c[(batch * M + row) * N + col] = __float2half(sum);
}

extern "C" int batched_gemm(const __half* a, const __half* bm, __half* c, int64_t BATCH, int64_t M,
                            int64_t N, int64_t K, hipStream_t stream) {
  if (BATCH == 0 || M == 0 || N == 0) return hipSuccess;
  dim3 block(16, 16);
  dim3 grid((unsigned)((N + 15) / 16), (unsigned)((M + 15) / 16), (unsigned)BATCH);
  hipLaunchKernelGGL(batched_gemm_kernel, grid, block, 0, stream, a, bm, c, M, N, K);
  return hipGetLastError();
}
