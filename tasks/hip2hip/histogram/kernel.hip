// Histogram of int32 values: counts[b] = number of i < N with x[i] == b, for 0 <= b < BINS.
// Values outside [0, BINS) are not counted. The launcher clears `counts` first.

// One thread per input value.
__global__ void histogram_kernel(const int* x, int* counts, int64_t N, int64_t BINS) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  int v = x[i];
  if (v >= 0 && v < BINS) atomicAdd(&counts[v], 1);
}

extern "C" int histogram(const int* x, int* counts, int64_t N, int64_t BINS, hipStream_t stream) {
  hipError_t err = hipMemsetAsync(counts, 0, BINS * sizeof(int), stream);
  if (err != hipSuccess || N == 0) return err;
  const int block = 256;
  dim3 grid((unsigned)((N + block - 1) / block));
  hipLaunchKernelGGL(histogram_kernel, grid, dim3(block), 0, stream, x, counts, N, BINS);
  return hipGetLastError();
}
