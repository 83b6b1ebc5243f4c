// Inclusive prefix sum along the rows of a (M, N) int32 matrix: y[m, n] = x[m, 0] + ... + x[m, n].
// Each row is cut into chunks of kChunk values, and three kernels run in turn:
//   1. chunk_totals: the sum of each chunk, stored in y at the chunk's first position;
//   2. chunk_offsets: per row, those sums replaced by their exclusive prefix sums (the offsets);
//   3. chunk_scan: each chunk reads its offset, then scans its values and writes y.
// y holds the chunk sums between the kernels, so no other memory is needed.

constexpr int kBlock = 256;
constexpr int64_t kChunk = 4096;  // values per chunk (one block in kernels 1 and 3)

// Inclusive scan of `v` over the block (Hillis-Steele in shared memory); `buf` has kBlock slots.
// `total` receives the sum over the whole block.
__device__ int block_inclusive_scan(int v, int* buf, int& total) {
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int d = 1; d < kBlock; d *= 2) {
    const int add = threadIdx.x >= d ? buf[threadIdx.x - d] : 0;
    __syncthreads();
    buf[threadIdx.x] += add;
    __syncthreads();
  }
  const int result = buf[threadIdx.x];
  total = buf[kBlock - 1];
  __syncthreads();  // `buf` is reused by the next call
  return result;
}

// grid (chunks, M): the sum of chunk blockIdx.x of row blockIdx.y, written to its first position.
__global__ void chunk_totals(const int* x, int* y, int64_t N) {
  __shared__ int buf[kBlock];
  const int64_t start = (int64_t)blockIdx.x * kChunk;
  const int64_t end = start + kChunk < N ? start + kChunk : N;
  const int* x_row = x + (int64_t)blockIdx.y * N;
  int sum = 0;
  for (int64_t i = start + threadIdx.x; i < end; i += kBlock) sum += x_row[i];
  buf[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[(int64_t)blockIdx.y * N + start] = buf[0];
}

// grid (M): the chunk sums of row blockIdx.x replaced by their exclusive prefix sums.
__global__ void chunk_offsets(int* y, int64_t N, int64_t chunks) {
  __shared__ int buf[kBlock];
  int* y_row = y + (int64_t)blockIdx.x * N;
  int carry = 0;
  for (int64_t c0 = 0; c0 < chunks; c0 += kBlock) {
    const int64_t c = c0 + threadIdx.x;
    const int sum = c < chunks ? y_row[c * kChunk] : 0;
    int tile_total;
    const int inclusive = block_inclusive_scan(sum, buf, tile_total);
    if (c < chunks) y_row[c * kChunk] = carry + inclusive - sum;
    carry += tile_total;
  }
}

// grid (chunks, M): chunk blockIdx.x of row blockIdx.y, scanned a kBlock-value tile at a time.
__global__ void chunk_scan(const int* x, int* y, int64_t N) {
  __shared__ int buf[kBlock];
  const int64_t start = (int64_t)blockIdx.x * kChunk;
  const int64_t end = start + kChunk < N ? start + kChunk : N;
  const int* x_row = x + (int64_t)blockIdx.y * N;
  int* y_row = y + (int64_t)blockIdx.y * N;
  int carry = y_row[start];  // the chunk's offset (read by every thread before the first barrier)
  for (int64_t t0 = start; t0 < end; t0 += kBlock) {
    const int64_t i = t0 + threadIdx.x;
    const int v = i < end ? x_row[i] : 0;
    int tile_total;
    const int inclusive = block_inclusive_scan(v, buf, tile_total);
    if (i < end) y_row[i] = carry + inclusive;
    carry += tile_total;
  }
}

extern "C" int inclusive_scan(const int* x, int* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  const int64_t chunks = (N + kChunk - 1) / kChunk;
  const dim3 grid((unsigned)chunks, (unsigned)M);
  hipLaunchKernelGGL(chunk_totals, grid, dim3(kBlock), 0, stream, x, y, N);
  hipLaunchKernelGGL(chunk_offsets, dim3((unsigned)M), dim3(kBlock), 0, stream, y, N, chunks);
  hipLaunchKernelGGL(chunk_scan, grid, dim3(kBlock), 0, stream, x, y, N);
  return hipGetLastError();
}
