// Inclusive prefix sum along the last dimension of a (M, N) float32 matrix (the operation in
// reference.py): y[m, n] = x[m, 0] + x[m, 1] + ... + x[m, n], accumulated in float32.
// Exemplar: the baseline scans one value per thread per chunk through shared memory, with a
// barrier at each of its log2(256) steps. Here each thread first scans 4 consecutive values in
// registers, a warp-shuffle scan (no barriers) and a scan of the warp totals give each thread its
// offset, so a chunk of 1024 values costs three barriers; the chunk's total carries into the next.

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int kItems = 4;    // consecutive values per thread
constexpr int kChunk = kBlock * kItems;

// Inclusive scan of `v` over the lanes of a warp.
__device__ float warp_inclusive_scan(float v) {
  const int lane = threadIdx.x % warpSize;
  for (int offset = 1; offset < warpSize; offset *= 2) {
    float other = __shfl_up(v, offset);
    if (lane >= offset) v += other;
  }
  return v;
}

__global__ void cumsum_kernel(const float* x, float* y, int64_t N) {
  __shared__ float warp_totals[kBlock];  // a slot per warp; kBlock slots cover any warp width
  const float* x_row = x + (int64_t)blockIdx.x * N;
  float* y_row = y + (int64_t)blockIdx.x * N;
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = kBlock / warpSize;

  float carry = 0.0f;  // the sum of all earlier chunks
  for (int64_t base = 0; base < N; base += kChunk) {
    const int64_t first = base + (int64_t)threadIdx.x * kItems;
    float v[kItems];
    for (int j = 0; j < kItems; ++j) v[j] = (first + j < N) ? x_row[first + j] : 0.0f;
    for (int j = 1; j < kItems; ++j) v[j] += v[j - 1];

    const float thread_total = v[kItems - 1];
    const float warp_scan = warp_inclusive_scan(thread_total);
    if (lane == warpSize - 1) warp_totals[warp] = warp_scan;
    __syncthreads();
    if (warp == 0) {
      float t = (lane < warps) ? warp_totals[lane] : 0.0f;
      t = warp_inclusive_scan(t);
      if (lane < warps) warp_totals[lane] = t;
    }
    __syncthreads();

    const float offset = carry + (warp > 0 ? warp_totals[warp - 1] : 0.0f) + (warp_scan - thread_total);
    for (int j = 0; j < kItems; ++j)
      if (first + j < N) y_row[first + j] = v[j] + offset;
    carry += warp_totals[warps - 1];
    __syncthreads();  // the next chunk overwrites warp_totals
  }
}

extern "C" int cumsum(const float* x, float* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  hipLaunchKernelGGL(cumsum_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, y, N);
  return hipGetLastError();
}
