// Histogram of int32 values: counts[b] = number of i < N with x[i] == b, for 0 <= b < BINS.
// Values outside [0, BINS) are not counted. The launcher clears `counts` first.
// Exemplar: the baseline already counts into a per-block histogram in shared memory, but reads
// one value per thread per step and keeps a single copy of each counter, so when the values
// crowd into a few bins the lanes of a warp collide on the same shared counters and their
// atomics serialise. Here each thread reads 4 values with one 16-byte load, and the block keeps
// R interleaved copies of the histogram (counter b of copy r at b * R + r, R up to 8 while they
// fit in 48 KB), lane l using copy l % R: lanes that hit the same bin mostly hit different copies
// (and different banks). The copies are summed when the block merges into `counts`.

constexpr int kBlock = 256;
constexpr int kBlocks = 1024;
constexpr int64_t kSharedCounters = 12288;  // 48 KB of shared memory per block

__device__ inline void count(int* local, int v, int64_t bins, int replicas, int copy) {
  if (v >= 0 && v < bins) atomicAdd(&local[(int64_t)v * replicas + copy], 1);
}

__global__ void histogram_replicated(const int* x, int* counts, int64_t N, int64_t BINS, int replicas) {
  extern __shared__ int local[];  // BINS * replicas counters
  for (int64_t b = threadIdx.x; b < BINS * replicas; b += kBlock) local[b] = 0;
  __syncthreads();
  const int copy = (threadIdx.x % warpSize) % replicas;
  const int64_t stride = (int64_t)gridDim.x * kBlock;
  const int64_t start = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  const int64_t quads = N / 4;
  for (int64_t i = start; i < quads; i += stride) {
    int4 v = reinterpret_cast<const int4*>(x)[i];
    count(local, v.x, BINS, replicas, copy);
    count(local, v.y, BINS, replicas, copy);
    count(local, v.z, BINS, replicas, copy);
    count(local, v.w, BINS, replicas, copy);
  }
  for (int64_t i = quads * 4 + start; i < N; i += stride) count(local, x[i], BINS, replicas, copy);  // the tail
  __syncthreads();
  for (int64_t b = threadIdx.x; b < BINS; b += kBlock) {
    int total = 0;
    for (int r = 0; r < replicas; ++r) total += local[b * replicas + r];
    if (total != 0) atomicAdd(&counts[b], total);
  }
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
  if (BINS <= kSharedCounters) {
    int replicas = 1;
    while (replicas < 8 && BINS * replicas * 2 <= kSharedCounters) replicas *= 2;
    hipLaunchKernelGGL(histogram_replicated, dim3(kBlocks), dim3(kBlock), BINS * replicas * sizeof(int), stream,
                       x, counts, N, BINS, replicas);
  } else {
    hipLaunchKernelGGL(histogram_global, dim3(kBlocks), dim3(kBlock), 0, stream, x, counts, N, BINS);
  }
  return hipGetLastError();
}
