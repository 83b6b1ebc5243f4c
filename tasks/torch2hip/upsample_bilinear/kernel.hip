// 2x bilinear upsampling of a (N, C, H, W) float16 tensor (the operation in reference.py), with
// align_corners=False: output pixel (oy, ox) of a (2H, 2W) plane samples the input at
//   sy = max((oy + 0.5) / 2 - 0.5, 0), sx = max((ox + 0.5) / 2 - 0.5, 0)
// and mixes the input pixels (y0, x0), (y0, x1), (y1, x0), (y1, x1) around it, where
// y0 = floor(sy), y1 = min(y0 + 1, H - 1) and likewise for x, with weights (1 - ly, ly) and
// (1 - lx, lx) (ly = sy - y0, lx = sx - x0). Arithmetic in float; the result is rounded to
// float16 once. y is (N, C, 2H, 2W), contiguous.

constexpr int kBlockX = 32, kBlockY = 8;  // a block: 32 output columns x 8 output rows of a plane
constexpr int64_t kMaxPlaneBlocks = 65535;  // grid.z limit

// Grid (output column blocks, output row blocks, planes); blocks of grid.z (strided) take the
// N * C planes. One thread per output pixel (oy, ox).
__global__ void upsample_kernel(const __half* x, __half* y, int64_t planes, int H, int W) {
  const int OH = 2 * H, OW = 2 * W;
  const int ox = blockIdx.x * kBlockX + threadIdx.x;
  const int oy = blockIdx.y * kBlockY + threadIdx.y;
  if (ox >= OW || oy >= OH) return;
  const float sy = fmaxf((oy + 0.5f) * 0.5f - 0.5f, 0.0f);
  const float sx = fmaxf((ox + 0.5f) * 0.5f - 0.5f, 0.0f);
  const int y0 = (int)sy, x0 = (int)sx;
  const int y1 = y0 < H - 1 ? y0 + 1 : y0;
  const int x1 = x0 < W - 1 ? x0 + 1 : x0;
  const float ly = sy - (float)y0, lx = sx - (float)x0;
  for (int64_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    const __half* src = x + plane * H * W;
    const float top = (1.0f - lx) * __half2float(src[y0 * W + x0]) + lx * __half2float(src[y0 * W + x1]);
    const float bottom = (1.0f - lx) * __half2float(src[y1 * W + x0]) + lx * __half2float(src[y1 * W + x1]);
    y[plane * OH * OW + (int64_t)oy * OW + ox] = __float2half((1.0f - ly) * top + ly * bottom);
  }
}

extern "C" int upsample_bilinear2x(const __half* x, __half* y, int64_t N, int64_t C, int64_t H, int64_t W,
                                   hipStream_t stream) {
  const int64_t planes = N * C;
  if (planes == 0 || H == 0 || W == 0) return hipSuccess;
  const int64_t plane_blocks = planes < kMaxPlaneBlocks ? planes : kMaxPlaneBlocks;
  const dim3 grid((unsigned)((2 * W + kBlockX - 1) / kBlockX), (unsigned)((2 * H + kBlockY - 1) / kBlockY),
                  (unsigned)plane_blocks);
  hipLaunchKernelGGL(upsample_kernel, grid, dim3(kBlockX, kBlockY), 0, stream, x, y, planes, (int)H, (int)W);
  return hipGetLastError();
}
