// Backward pass of RMSNorm (y = x * rstd[m] * weight[n]) over a (M, N) bfloat16 matrix.
// With xhat = x * rstd[m] and g = dy * weight[n]:
//   dx[m, n]   = rstd[m] * (g[m, n] - xhat[m, n] * mean_n'(g[m, n'] * xhat[m, n']))   (bfloat16)
//   dweight[n] = sum_m dy[m, n] * xhat[m, n]                                          (float32)
// Arithmetic in float.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int kRowsPerBlock = 256;  // rows summed by one block of the dweight kernel

// Scratch for the row blocks' column sums, (row blocks, N) float32, kept between calls (grown
// when a call needs more).
static float* g_partial = nullptr;
static size_t g_partial_bytes = 0;

__device__ inline float to_f(bf16 v) { return __bfloat162float(v); }

// dx: one block per row. The first pass sums g * xhat (a shared-memory tree adds the threads'
// partial sums), the second writes dx.
__global__ void rms_norm_bwd_dx(const bf16* dy, const bf16* x, const bf16* weight, const float* rstd, bf16* dx,
                                int64_t N) {
  __shared__ float partial[kBlock];
  const int64_t row = blockIdx.x;
  const bf16* dy_row = dy + row * N;
  const bf16* x_row = x + row * N;
  bf16* dx_row = dx + row * N;
  const float r = rstd[row];

  float dot = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) dot += to_f(dy_row[n]) * to_f(weight[n]) * (to_f(x_row[n]) * r);
  partial[threadIdx.x] = dot;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float proj = partial[0] / (float)N;

  for (int64_t n = threadIdx.x; n < N; n += kBlock) {
    const float g = to_f(dy_row[n]) * to_f(weight[n]);
    const float xhat = to_f(x_row[n]) * r;
    dx_row[n] = __float2bfloat16(r * (g - xhat * proj));
  }
}

// dweight partials: grid (column blocks, row blocks); each thread sums one column over
// kRowsPerBlock rows and stores the sum in partial[row block, column].
__global__ void rms_norm_bwd_dweight(const bf16* dy, const bf16* x, const float* rstd, float* partial, int64_t M,
                                     int64_t N) {
  const int64_t n = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (n >= N) return;
  const int64_t m0 = (int64_t)blockIdx.y * kRowsPerBlock;
  const int64_t m1 = m0 + kRowsPerBlock < M ? m0 + kRowsPerBlock : M;
  float sum = 0.0f;
  for (int64_t m = m0; m < m1; ++m) sum += to_f(dy[m * N + n]) * (to_f(x[m * N + n]) * rstd[m]);
  partial[(int64_t)blockIdx.y * N + n] = sum;
}

// dweight[n]: one thread per column adds the row blocks' sums in order.
__global__ void dweight_combine(const float* partial, float* dweight, int64_t parts, int64_t N) {
  const int64_t n = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (n >= N) return;
  float sum = 0.0f;
  for (int64_t p = 0; p < parts; ++p) sum += partial[p * N + n];
  dweight[n] = sum;
}

extern "C" int rms_norm_bwd(const bf16* dy, const bf16* x, const bf16* weight, const float* rstd, bf16* dx,
                            float* dweight, int64_t M, int64_t N, hipStream_t stream) {
  if (N == 0) return hipSuccess;
  if (M == 0) return hipMemsetAsync(dweight, 0, N * sizeof(float), stream);
  const int64_t parts = (M + kRowsPerBlock - 1) / kRowsPerBlock;
  const size_t bytes = (size_t)(parts * N) * sizeof(float);
  if (bytes > g_partial_bytes) {
    if (g_partial != nullptr) hipFree(g_partial);
    g_partial = nullptr;
    g_partial_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_partial, bytes);
    if (err != hipSuccess) return err;
    g_partial_bytes = bytes;
  }
  hipLaunchKernelGGL(rms_norm_bwd_dx, dim3((unsigned)M), dim3(kBlock), 0, stream, dy, x, weight, rstd, dx, N);
  const dim3 grid((unsigned)((N + kBlock - 1) / kBlock), (unsigned)parts);
  hipLaunchKernelGGL(rms_norm_bwd_dweight, grid, dim3(kBlock), 0, stream, dy, x, rstd, g_partial, M, N);
  hipLaunchKernelGGL(dweight_combine, dim3((unsigned)((N + kBlock - 1) / kBlock)), dim3(kBlock), 0, stream, g_partial,
                     dweight, parts, N);
  return hipGetLastError();
}
