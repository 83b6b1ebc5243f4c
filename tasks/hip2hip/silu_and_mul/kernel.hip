// Gated activation of an LLM MLP on the fused gate/up projection (vLLM's layout): gate_up is
// (M, 2N) bfloat16, each row [gate | up]; out[m, n] = silu(gate[m, n]) * up[m, n] with
// silu(g) = g / (1 + exp(-g)). Arithmetic in float; the result is rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;
constexpr int kItems = 4;  // outputs per thread, kBlock apart

// blockIdx.y is the row; each block covers kBlock * kItems consecutive outputs of it.
__global__ void silu_and_mul_kernel(const bf16* gate_up, bf16* out, int64_t N) {
  const int64_t row = blockIdx.y;
  const bf16* g_row = gate_up + row * 2 * N;
  const int64_t first = (int64_t)blockIdx.x * kBlock * kItems + threadIdx.x;
  for (int j = 0; j < kItems; ++j) {
    const int64_t n = first + j * kBlock;
    if (n < N) {
      const float g = __bfloat162float(g_row[n]), u = __bfloat162float(g_row[N + n]);
      out[row * N + n] = __float2bfloat16(g / (1.0f + expf(-g)) * u);
    }
  }
}

extern "C" int silu_and_mul(const bf16* gate_up, bf16* out, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  dim3 grid((unsigned)((N + kBlock * kItems - 1) / (kBlock * kItems)), (unsigned)M);
  hipLaunchKernelGGL(silu_and_mul_kernel, grid, dim3(kBlock), 0, stream, gate_up, out, N);
  return hipGetLastError();
}
