// Masked mean pooling (the operation in reference.py): for a padded batch x of shape (B, S, H),
// bfloat16, and lengths (B,), int64, each in [1, S],
//   out[b, h] = (sum over s < lengths[b] of x[b, s, h]) / lengths[b]
// summed in float, the result rounded to bfloat16 once.

typedef __hip_bfloat16 bf16;

constexpr int kBlock = 256;

// One thread per output element (b, h): it walks the valid positions of its sequence.
__global__ void masked_mean_pool_kernel(const bf16* x, const int64_t* lengths, bf16* out, int64_t S, int64_t H) {
  const int64_t b = blockIdx.y;
  const int64_t h = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (h >= H) return;
  const int64_t len = lengths[b];
  const bf16* column = x + b * S * H + h;
  float sum = 0.0f;
  for (int64_t s = 0; s < len; ++s) sum += __bfloat162float(column[s * H]);
  out[b * H + h] = __float2bfloat16(sum / (float)len);
}

extern "C" int masked_mean_pool(const bf16* x, const int64_t* lengths, bf16* out, int64_t B, int64_t S, int64_t H,
                                hipStream_t stream) {
  if (B == 0 || H == 0) return hipSuccess;
  const dim3 grid((unsigned)((H + kBlock - 1) / kBlock), (unsigned)B);
  hipLaunchKernelGGL(masked_mean_pool_kernel, grid, dim3(kBlock), 0, stream, x, lengths, out, S, H);
  return hipGetLastError();
}
