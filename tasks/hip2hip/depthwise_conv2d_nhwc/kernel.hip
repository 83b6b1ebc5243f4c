// 3x3 depthwise convolution of a (N, H, W, C) float16 tensor (NHWC), stride 1, zero padding 1:
//   y[n, h, w, c] = bias[c] + sum_{i, j in 0..2} x[n, h + i - 1, w + j - 1, c] * weight[i, j, c]
// (positions outside the image count as zero). weight is (3, 3, C), bias (C,). Arithmetic in
// float; the result is rounded to float16 once.

constexpr int kBlock = 256;
constexpr int64_t kMaxRowBlocks = 65535;  // grid.y limit

// Block row blockIdx.y (strided) takes image rows (n, h); its threads walk the W * C outputs of
// that row, one output each.
__global__ void depthwise_kernel(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t N,
                                 int64_t H, int64_t W, int64_t C) {
  const int64_t row_len = W * C;
  for (int64_t row = blockIdx.y; row < N * H; row += gridDim.y) {
    const int64_t n = row / H, h = row % H;
    for (int64_t idx = (int64_t)blockIdx.x * kBlock + threadIdx.x; idx < row_len; idx += (int64_t)gridDim.x * kBlock) {
      const int64_t w = idx / C, c = idx % C;
      float acc = __half2float(bias[c]);
      for (int i = 0; i < 3; ++i) {
        const int64_t hi = h + i - 1;
        if (hi < 0 || hi >= H) continue;
        for (int j = 0; j < 3; ++j) {
          const int64_t wj = w + j - 1;
          if (wj < 0 || wj >= W) continue;
          acc += __half2float(x[((n * H + hi) * W + wj) * C + c]) * __half2float(weight[(i * 3 + j) * C + c]);
        }
      }
      y[row * row_len + idx] = __float2half(acc);
    }
  }
}

extern "C" int depthwise_conv2d(const __half* x, const __half* weight, const __half* bias, __half* y, int64_t N,
                                int64_t H, int64_t W, int64_t C, hipStream_t stream) {
  if (N == 0 || H == 0 || W == 0 || C == 0) return hipSuccess;
  const int64_t row_blocks = N * H < kMaxRowBlocks ? N * H : kMaxRowBlocks;
  const int64_t col_blocks = (W * C + kBlock - 1) / kBlock;
  hipLaunchKernelGGL(depthwise_kernel, dim3((unsigned)col_blocks, (unsigned)row_blocks), dim3(kBlock), 0, stream, x,
                     weight, bias, y, N, H, W, C);
  return hipGetLastError();
}
