// Dynamic symmetric int8 quantisation of each row (token) of a (M, N) bfloat16 matrix, in float32:
//   amax = max(max_n |x[m, n]|, 1e-10); scale[m] = amax / 127; inv = 127 / amax;
//   q[m, n] = rint(x[m, n] * inv) (round half to even), clamped to [-127, 127].

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One block per row: a strided pass and a shared-memory tree find the row's absolute maximum,
// then a second pass quantises.
__global__ void quant_kernel(const bf16* x, int8_t* q, float* scale, int64_t N) {
  __shared__ float partial[kBlock];
  const bf16* x_row = x + (int64_t)blockIdx.x * N;
  int8_t* q_row = q + (int64_t)blockIdx.x * N;
  float m = 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) m = fmaxf(m, fabsf(__bfloat162float(x_row[n])));
  partial[threadIdx.x] = m;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const float amax = fmaxf(partial[0], 1e-10f);
  const float inv = 127.0f / amax;
  if (threadIdx.x == 0) scale[blockIdx.x] = amax / 127.0f;
  for (int64_t n = threadIdx.x; n < N; n += kBlock) {
    float v = rintf(__bfloat162float(x_row[n]) * inv);
    q_row[n] = (int8_t)fminf(fmaxf(v, -127.0f), 127.0f);
  }
}

extern "C" int int8_quant_per_token(const bf16* x, int8_t* q, float* scale, int64_t M, int64_t N,
                                    hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(quant_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, q, scale, N);
  return hipGetLastError();
}
