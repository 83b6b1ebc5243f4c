// WRONG on purpose (never shown to agents): the store reads the shared tile by row instead of
// by column, so each 32 x 32 tile lands in the right place but untransposed.
// Matrix transpose (the operation in reference.py): y[n, m] = x[m, n] for a (M, N) float32 x and
// a (N, M) float32 y, both row-major.

constexpr int kTile = 32;
constexpr int kRows = 8;  // threads per tile column; each moves kTile / kRows values

__global__ void transpose_kernel(const float* x, float* y, int64_t M, int64_t N) {
  __shared__ float tile[kTile][kTile + 1];
  const int64_t m0 = (int64_t)blockIdx.y * kTile, n0 = (int64_t)blockIdx.x * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int r = ty; r < kTile; r += kRows)
    if (m0 + r < M && n0 + tx < N) tile[r][tx] = x[(m0 + r) * N + n0 + tx];
  __syncthreads();
  for (int r = ty; r < kTile; r += kRows)
    if (n0 + r < N && m0 + tx < M) y[(n0 + r) * M + m0 + tx] = tile[r][tx];
}

extern "C" int transpose(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  dim3 grid((unsigned)((N + kTile - 1) / kTile), (unsigned)((M + kTile - 1) / kTile));
  hipLaunchKernelGGL(transpose_kernel, grid, dim3(kTile, kRows), 0, stream, x, y, M, N);
  return hipGetLastError();
}
