// WRONG on purpose (never shown to agents): the warp scan tests the block-wide thread index
// instead of the lane, so in every warp but the first the low lanes add their own total again.
// Inclusive prefix sum along the rows of a (M, N) int32 matrix: y[m, n] = x[m, 0] + ... + x[m, n].
// Each row is cut into chunks of kChunk values, and three kernels run in turn:
//   1. chunk_totals: the sum of each chunk, stored in y at the chunk's first position;
//   2. chunk_offsets: per row, those sums replaced by their exclusive prefix sums (the offsets);
//   3. chunk_scan: each chunk reads its offset, then scans its values and writes y.
// A thread owns 16 consecutive values of its chunk; warp-shuffle scans combine the threads.

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int kPerThread = 16;
constexpr int64_t kChunk = kBlock * kPerThread;  // 4096 values per chunk

// Loads the 16 values of this thread (zeros past `end`); `aligned`: the row start is 16-byte aligned.
__device__ inline void load16(const int* x_row, int64_t first, int64_t end, bool aligned, int* v) {
  if (aligned && first + kPerThread <= end) {
    const int4* p = reinterpret_cast<const int4*>(x_row + first);
#pragma unroll
    for (int k = 0; k < kPerThread / 4; ++k) {
      const int4 q = p[k];
      v[4 * k] = q.x;
      v[4 * k + 1] = q.y;
      v[4 * k + 2] = q.z;
      v[4 * k + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) v[k] = first + k < end ? x_row[first + k] : 0;
  }
}

// Exclusive scan of `v` over the block (warp shuffles, then one shared step over warp totals);
// `warp_totals` has a slot per warp. `total` receives the block's sum.
__device__ int block_exclusive_scan(int v, int* warp_totals, int& total) {
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  int inclusive = v;
  for (int d = 1; d < warpSize; d *= 2) {
    const int up = __shfl_up(inclusive, d);
    if (threadIdx.x >= d) inclusive += up;
  }
  if (lane == warpSize - 1) warp_totals[warp] = inclusive;
  __syncthreads();
  int before = 0;
  total = 0;
  for (int w = 0; w < kBlock / warpSize; ++w) {
    if (w < warp) before += warp_totals[w];
    total += warp_totals[w];
  }
  return before + inclusive - v;
}

// grid (chunks, M): the sum of chunk blockIdx.x of row blockIdx.y, written to its first position.
__global__ void chunk_totals(const int* x, int* y, int64_t N) {
  __shared__ int warp_totals[kBlock];
  const int64_t start = (int64_t)blockIdx.x * kChunk;
  const int64_t end = start + kChunk < N ? start + kChunk : N;
  const int* x_row = x + (int64_t)blockIdx.y * N;
  int sum = 0;
  if (N % 4 == 0) {  // whole int4s: the chunk and the row start are 16-byte aligned
    const int4* p = reinterpret_cast<const int4*>(x_row + start);
    for (int64_t q = threadIdx.x; q < (end - start) / 4; q += kBlock) {
      const int4 v = p[q];
      sum += v.x + v.y + v.z + v.w;
    }
  } else {
    for (int64_t i = start + threadIdx.x; i < end; i += kBlock) sum += x_row[i];
  }
  for (int offset = warpSize / 2; offset > 0; offset /= 2) sum += __shfl_xor(sum, offset);
  if (threadIdx.x % warpSize == 0) warp_totals[threadIdx.x / warpSize] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
    for (int w = 0; w < kBlock / warpSize; ++w) total += warp_totals[w];
    y[(int64_t)blockIdx.y * N + start] = total;
  }
}

// grid (M): the chunk sums of row blockIdx.x replaced by their exclusive prefix sums.
__global__ void chunk_offsets(int* y, int64_t N, int64_t chunks) {
  __shared__ int warp_totals[kBlock];
  int* y_row = y + (int64_t)blockIdx.x * N;
  int carry = 0;
  for (int64_t c0 = 0; c0 < chunks; c0 += kBlock) {
    const int64_t c = c0 + threadIdx.x;
    const int sum = c < chunks ? y_row[c * kChunk] : 0;
    int tile_total;
    const int exclusive = block_exclusive_scan(sum, warp_totals, tile_total);
    if (c < chunks) y_row[c * kChunk] = carry + exclusive;
    carry += tile_total;
    __syncthreads();  // every thread has read warp_totals before the next tile rewrites it
  }
}

// grid (chunks, M): chunk blockIdx.x of row blockIdx.y; thread t owns values [16 t, 16 t + 16).
__global__ void chunk_scan(const int* x, int* y, int64_t N) {
  __shared__ int warp_totals[kBlock];
  const int64_t start = (int64_t)blockIdx.x * kChunk;
  const int64_t end = start + kChunk < N ? start + kChunk : N;
  const int* x_row = x + (int64_t)blockIdx.y * N;
  int* y_row = y + (int64_t)blockIdx.y * N;
  const int offset = y_row[start];  // read by every thread before the scan's barrier
  const int64_t first = start + (int64_t)threadIdx.x * kPerThread;
  const bool aligned = N % 4 == 0;

  int v[kPerThread];
  load16(x_row, first, end, aligned, v);
#pragma unroll
  for (int k = 1; k < kPerThread; ++k) v[k] += v[k - 1];
  int chunk_total;
  const int base = offset + block_exclusive_scan(v[kPerThread - 1], warp_totals, chunk_total);

  if (aligned && first + kPerThread <= end) {
    int4* p = reinterpret_cast<int4*>(y_row + first);
#pragma unroll
    for (int k = 0; k < kPerThread / 4; ++k)
      p[k] = make_int4(base + v[4 * k], base + v[4 * k + 1], base + v[4 * k + 2], base + v[4 * k + 3]);
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k)
      if (first + k < end) y_row[first + k] = base + v[k];
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
