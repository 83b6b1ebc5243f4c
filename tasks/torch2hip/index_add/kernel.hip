// Index add (the operation in reference.py): for src of shape (N, D), float32, and index (N,),
// int64, each in [0, I), the (I, D) float32 output is
//   out[i, :] = sum over the rows n with index[n] == i of src[n, :]   (0 for an i no row names)
// accumulated in float32, in a fixed order (every call gives the same bits).

constexpr int kBlock = 256;
constexpr int64_t kRows = 512;  // rows of src per chunk

// Scratch for the chunks' partial sums, (chunks, I, D) float32, kept between calls (grown when a
// call needs more).
static float* g_partial = nullptr;
static size_t g_partial_bytes = 0;

// Pass 1: thread (chunk, d) walks the rows of its chunk in order and adds src[n, d] into
// partial[chunk, index[n], d], a column of the chunk's slice that no other thread touches.
__global__ void chunk_sums_kernel(const float* src, const int64_t* index, float* partial, int64_t N, int64_t D,
                                  int64_t I) {
  const int64_t d = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (d >= D) return;
  const int64_t chunk = blockIdx.y;
  const int64_t n_end = (chunk + 1) * kRows < N ? (chunk + 1) * kRows : N;
  float* p = partial + chunk * I * D + d;
  for (int64_t n = chunk * kRows; n < n_end; ++n) p[index[n] * D] += src[n * D + d];
}

// Pass 2: one thread per output element sums the chunks' partials in chunk order.
__global__ void combine_kernel(const float* partial, float* out, int64_t chunks, int64_t elements) {
  const int64_t e = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (e >= elements) return;
  float sum = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) sum += partial[c * elements + e];
  out[e] = sum;
}

extern "C" int index_add(const float* src, const int64_t* index, float* out, int64_t N, int64_t D, int64_t I,
                         hipStream_t stream) {
  if (I == 0 || D == 0) return hipSuccess;
  const int64_t elements = I * D;
  if (N == 0) return hipMemsetAsync(out, 0, (size_t)elements * sizeof(float), stream);
  const int64_t chunks = (N + kRows - 1) / kRows;
  const size_t bytes = (size_t)(chunks * elements) * sizeof(float);
  if (bytes > g_partial_bytes) {
    if (g_partial != nullptr) hipFree(g_partial);
    g_partial = nullptr;
    g_partial_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_partial, bytes);
    if (err != hipSuccess) return err;
    g_partial_bytes = bytes;
  }
  hipError_t err = hipMemsetAsync(g_partial, 0, bytes, stream);
  if (err != hipSuccess) return err;
  hipLaunchKernelGGL(chunk_sums_kernel, dim3((unsigned)((D + kBlock - 1) / kBlock), (unsigned)chunks), dim3(kBlock), 0,
                     stream, src, index, g_partial, N, D, I);
  hipLaunchKernelGGL(combine_kernel, dim3((unsigned)((elements + kBlock - 1) / kBlock)), dim3(kBlock), 0, stream,
                     g_partial, out, chunks, elements);
  return hipGetLastError();
}
