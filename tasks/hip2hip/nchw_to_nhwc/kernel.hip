// Layout transform of a float16 tensor from NCHW to NHWC (channels-last):
//   y[n, h, w, c] = x[n, c, h, w];  x: (N, C, H, W), y: (N, H, W, C), both contiguous.
// Values are moved as raw 16-bit words (copied exactly).

constexpr int kBlock = 256;

// One thread per element of y, in y's order: the thread for y[n, p, c] (p = h * W + w) reads
// x[n, c, p].
__global__ void nchw_to_nhwc_kernel(const unsigned short* x, unsigned short* y, int64_t C, int64_t HW,
                                    int64_t total) {
  const int64_t o = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (o >= total) return;
  const int64_t c = o % C;
  const int64_t pixel = o / C;  // n * HW + p
  const int64_t p = pixel % HW;
  const int64_t n = pixel / HW;
  y[o] = x[(n * C + c) * HW + p];
}

extern "C" int nchw_to_nhwc(const __half* x, __half* y, int64_t N, int64_t C, int64_t H, int64_t W,
                            hipStream_t stream) {
  const int64_t total = N * C * H * W;
  if (total == 0) return hipSuccess;
  const int64_t blocks = (total + kBlock - 1) / kBlock;
  hipLaunchKernelGGL(nchw_to_nhwc_kernel, dim3((unsigned)blocks), dim3(kBlock), 0, stream,
                     reinterpret_cast<const unsigned short*>(x), reinterpret_cast<unsigned short*>(y), C, H * W,
                     total);
  return hipGetLastError();
}
