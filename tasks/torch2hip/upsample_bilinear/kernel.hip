// 2x bilinear upsampling of a (N, C, H, W) float16 tensor (the operation in reference.py), with
// align_corners=False: output pixel (oy, ox) of a (2H, 2W) plane samples the input at
//   sy = max((oy + 0.5) / 2 - 0.5, 0), sx = max((ox + 0.5) / 2 - 0.5, 0)
// and mixes the input pixels (y0, x0), (y0, x1), (y1, x0), (y1, x1) around it, where
// y0 = floor(sy), y1 = min(y0 + 1, H - 1) and likewise for x, with weights (1 - ly, ly) and
// (1 - lx, lx) (ly = sy - y0, lx = sx - x0). Arithmetic in float; the result is rounded to
// float16 once. y is (N, C, 2H, 2W), contiguous.

constexpr int kBlockX = 16, kBlockY = 16;  // a block: 16 x 16 quads of output pixels of a plane
constexpr int64_t kMaxPlaneBlocks = 65535;  // grid.z limit
constexpr int64_t kBlocksWanted = 4096;     // a few waves of 256-thread blocks on any current GPU

// Source coordinate of output coordinate o (align_corners=False, scale 2): the first input
// index i0, the second i1 (clamped to the image) and the weight l of i1.
__device__ inline void source(int o, int size, int& i0, int& i1, float& l) {
  const float s = fmaxf((o + 0.5f) * 0.5f - 0.5f, 0.0f);
  i0 = (int)s;
  i1 = i0 < size - 1 ? i0 + 1 : i0;
  l = s - (float)i0;
}

// Grid (quad column blocks, quad row blocks, plane blocks); blocks of grid.z (strided) take the
// N * C planes. A thread owns the quad of output pixels (2q + a, 2p + b), a, b in {0, 1}, in every
// plane of its stride: it computes their source coordinates and weights once, then for each plane
// makes the four loads per pixel and writes each row of the quad as one __half2 (2W is even, so a
// quad never straddles two rows).
__global__ void upsample_kernel(const __half* x, __half* y, int64_t planes, int H, int W) {
  const int OH = 2 * H, OW = 2 * W;
  const int p = blockIdx.x * kBlockX + threadIdx.x;
  const int q = blockIdx.y * kBlockY + threadIdx.y;
  if (p >= W || q >= H) return;
  int y0[2], y1[2], x0[2], x1[2];
  float ly[2], lx[2];
  for (int a = 0; a < 2; ++a) source(2 * q + a, H, y0[a], y1[a], ly[a]);
  for (int b = 0; b < 2; ++b) source(2 * p + b, W, x0[b], x1[b], lx[b]);
  for (int64_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    const __half* src = x + plane * H * W;
    for (int a = 0; a < 2; ++a) {
      float out[2];
      for (int b = 0; b < 2; ++b) {
        const float top = (1.0f - lx[b]) * __half2float(src[y0[a] * W + x0[b]]) +
                          lx[b] * __half2float(src[y0[a] * W + x1[b]]);
        const float bottom = (1.0f - lx[b]) * __half2float(src[y1[a] * W + x0[b]]) +
                             lx[b] * __half2float(src[y1[a] * W + x1[b]]);
        out[b] = (1.0f - ly[a]) * top + ly[a] * bottom;
      }
      *reinterpret_cast<__half2*>(y + plane * OH * OW + (int64_t)(2 * q + a) * OW + 2 * p) =
          __floats2half2_rn(out[0], out[1]);
    }
  }
}

extern "C" int upsample_bilinear2x(const __half* x, __half* y, int64_t N, int64_t C, int64_t H, int64_t W,
                                   hipStream_t stream) {
  const int64_t planes = N * C;
  if (planes == 0 || H == 0 || W == 0) return hipSuccess;
  const int64_t blocks_x = (W + kBlockX - 1) / kBlockX, blocks_y = (H + kBlockY - 1) / kBlockY;
  // Enough blocks to fill the GPU; each then walks several planes with the same coordinates.
  int64_t plane_blocks = (kBlocksWanted + blocks_x * blocks_y - 1) / (blocks_x * blocks_y);
  if (plane_blocks > planes) plane_blocks = planes;
  if (plane_blocks > kMaxPlaneBlocks) plane_blocks = kMaxPlaneBlocks;
  const dim3 grid((unsigned)blocks_x, (unsigned)blocks_y, (unsigned)plane_blocks);
  hipLaunchKernelGGL(upsample_kernel, grid, dim3(kBlockX, kBlockY), 0, stream, x, y, planes, (int)H, (int)W);
  return hipGetLastError();
}
