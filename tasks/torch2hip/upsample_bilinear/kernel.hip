// 2x bilinear upsampling of a (N, C, H, W) float16 tensor (the operation in reference.py), with
// align_corners=False: output pixel (oy, ox) of a (2H, 2W) plane samples the input at
//   sy = max((oy + 0.5) / 2 - 0.5, 0), sx = max((ox + 0.5) / 2 - 0.5, 0)
// and mixes the input pixels (y0, x0), (y0, x1), (y1, x0), (y1, x1) around it, where
// y0 = floor(sy), y1 = min(y0 + 1, H - 1) and likewise for x, with weights (1 - ly, ly) and
// (1 - lx, lx) (ly = sy - y0, lx = sx - x0). Arithmetic in float; the result is rounded to
// float16 once. y is (N, C, 2H, 2W), contiguous.

constexpr int kBlock = 256;
constexpr int64_t kMaxPlaneBlocks = 65535;  // grid.z limit

// Blocks of grid.z (strided) take the N * C planes; in a plane, one thread per output pixel.
__global__ void upsample_kernel(const __half* x, __half* y, int64_t planes, int64_t H, int64_t W) {
  const int64_t OH = 2 * H, OW = 2 * W;
  for (int64_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    const __half* src = x + plane * H * W;
    __half* dst = y + plane * OH * OW;
    for (int64_t idx = (int64_t)blockIdx.x * kBlock + threadIdx.x; idx < OH * OW;
         idx += (int64_t)gridDim.x * kBlock) {
      const int64_t oy = idx / OW, ox = idx % OW;
      const float sy = fmaxf((oy + 0.5f) * 0.5f - 0.5f, 0.0f);
      const float sx = fmaxf((ox + 0.5f) * 0.5f - 0.5f, 0.0f);
      const int64_t y0 = (int64_t)sy, x0 = (int64_t)sx;
      const int64_t y1 = y0 < H - 1 ? y0 + 1 : y0;
      const int64_t x1 = x0 < W - 1 ? x0 + 1 : x0;
      const float ly = sy - (float)y0, lx = sx - (float)x0;
      const float top = (1.0f - lx) * __half2float(src[y0 * W + x0]) + lx * __half2float(src[y0 * W + x1]);
      const float bottom = (1.0f - lx) * __half2float(src[y1 * W + x0]) + lx * __half2float(src[y1 * W + x1]);
      dst[idx] = __float2half((1.0f - ly) * top + ly * bottom);
    }
  }
}

extern "C" int upsample_bilinear2x(const __half* x, __half* y, int64_t N, int64_t C, int64_t H, int64_t W,
                                   hipStream_t stream) {
  const int64_t planes = N * C;
  if (planes == 0 || H == 0 || W == 0) return hipSuccess;
  const int64_t blocks = (4 * H * W + kBlock - 1) / kBlock;
  const int64_t plane_blocks = planes < kMaxPlaneBlocks ? planes : kMaxPlaneBlocks;
  hipLaunchKernelGGL(upsample_kernel, dim3((unsigned)blocks, 1, (unsigned)plane_blocks), dim3(kBlock), 0, stream, x,
                     y, planes, H, W);
  return hipGetLastError();
}
