// Matrix-vector product for a decode step: y[n] = sum_k w[n, k] * x[k], w (N, K) row-major
// bfloat16 (a linear layer's weight), x (K,) bfloat16; float32 sums rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One block per output: its threads multiply strided elements of the row, and a shared-memory
// tree adds their partial sums.
__global__ void gemv_kernel(const bf16* w, const bf16* x, bf16* y, int64_t K) {
  __shared__ float partial[kBlock];
  const bf16* row = w + (int64_t)blockIdx.x * K;
  float sum = 0.0f;
  for (int64_t k = threadIdx.x; k < K; k += kBlock) sum += __bfloat162float(row[k]) * __bfloat162float(x[k]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = __float2bfloat16(partial[0]);
}

extern "C" int gemv(const bf16* w, const bf16* x, bf16* y, int64_t N, int64_t K, hipStream_t stream) {
  if (N == 0) return hipSuccess;
  hipLaunchKernelGGL(gemv_kernel, dim3((unsigned)N), dim3(kBlock), 0, stream, w, x, y, K);
  return hipGetLastError();
}
