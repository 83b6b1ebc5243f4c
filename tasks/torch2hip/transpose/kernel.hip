// Matrix transpose (the operation in reference.py): y[n, m] = x[m, n] for a (M, N) float32 x and
// a (N, M) float32 y, both row-major.

constexpr int kTile = 32;

// One block per 32 x 32 tile: the tile is read row by row (coalesced) into shared memory and
// written back row by row of y (coalesced), reading shared memory down its columns.
__global__ void transpose_kernel(const float* x, float* y, int64_t M, int64_t N) {
  __shared__ float tile[kTile][kTile];
  const int64_t m0 = (int64_t)blockIdx.y * kTile, n0 = (int64_t)blockIdx.x * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  if (m0 + ty < M && n0 + tx < N) tile[ty][tx] = x[(m0 + ty) * N + n0 + tx];
  __syncthreads();
  if (n0 + ty < N && m0 + tx < M) y[(n0 + ty) * M + m0 + tx] = tile[tx][ty];
}

extern "C" int transpose(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  dim3 grid((unsigned)((N + kTile - 1) / kTile), (unsigned)((M + kTile - 1) / kTile));
  hipLaunchKernelGGL(transpose_kernel, grid, dim3(kTile, kTile), 0, stream, x, y, M, N);
  return hipGetLastError();
}
