// Histogram of int32 values: counts[b] = number of i < N with x[i] == b, for 0 <= b < BINS.
// Values outside [0, BINS) are not counted. The launcher clears `counts` first.

constexpr int kBlock = 256;
constexpr int kBlocks = 1024;             // a fixed grid; each block merges its counts once
constexpr int64_t kMaxSharedBins = 8192;  // 32 KB of shared memory per block

// Each block counts a grid-strided share of the values into its own histogram in shared memory,
// then adds its non-zero bins to `counts`.
__global__ void histogram_shared(const int* x, int* counts, int64_t N, int64_t BINS) {
  extern __shared__ int local[];  // BINS counters
  for (int64_t b = threadIdx.x; b < BINS; b += kBlock) local[b] = 0;
  __syncthreads();
  for (int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x; i < N; i += (int64_t)gridDim.x * kBlock) {
    int v = x[i];
    if (v >= 0 && v < BINS) atomicAdd(&local[v], 1);
  }
  __syncthreads();
  for (int64_t b = threadIdx.x; b < BINS; b += kBlock)
    if (local[b] != 0) atomicAdd(&counts[b], local[b]);
}

// Too many bins for shared memory: count straight into global memory.
__global__ void histogram_global(const int* x, int* counts, int64_t N, int64_t BINS) {
  for (int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x; i < N; i += (int64_t)gridDim.x * kBlock) {
    int v = x[i];
    if (v >= 0 && v < BINS) atomicAdd(&counts[v], 1);
  }
}

extern "C" int histogram(const int* x, int* counts, int64_t N, int64_t BINS, hipStream_t stream) {
  hipError_t err = hipMemsetAsync(counts, 0, BINS * sizeof(int), stream);
  if (err != hipSuccess || N == 0) return err;
  if (BINS <= kMaxSharedBins) {
    hipLaunchKernelGGL(histogram_shared, dim3(kBlocks), dim3(kBlock), BINS * sizeof(int), stream, x, counts, N,
                       BINS);
  } else {
    hipLaunchKernelGGL(histogram_global, dim3(kBlocks), dim3(kBlock), 0, stream, x, counts, N, BINS);
  }
  return hipGetLastError();
}
