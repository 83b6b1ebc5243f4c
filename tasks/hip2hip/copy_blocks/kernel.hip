// Prefix-cache block copies of a paged KV cache, one layer:
//   key_cache[dst] = key_cache[src] and value_cache[dst] = value_cache[src] for every (src, dst)
//   pair of block_mapping (P, 2) int64; the caches are (NB, BLOCK) float16, written in place.
// Every block id in block_mapping is distinct, so the copies are independent. Values are moved
// as raw 16-bit words (copied exactly).

constexpr int kBlock = 256;

// One thread per value of a block: blockIdx.x picks 256 values of the block, blockIdx.y a pair
// (striding over the pairs when there are more than the grid's y extent).
__global__ void copy_blocks_kernel(unsigned short* key_cache, unsigned short* value_cache,
                                   const int64_t* block_mapping, int64_t P, int64_t BLOCK) {
  const int64_t e = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (e >= BLOCK) return;
  for (int64_t pair = blockIdx.y; pair < P; pair += gridDim.y) {
    const int64_t src = block_mapping[2 * pair] * BLOCK + e;
    const int64_t dst = block_mapping[2 * pair + 1] * BLOCK + e;
    key_cache[dst] = key_cache[src];
    value_cache[dst] = value_cache[src];
  }
}

extern "C" int copy_blocks(__half* key_cache, __half* value_cache, const int64_t* block_mapping, int64_t P,
                           int64_t BLOCK, hipStream_t stream) {
  if (P == 0 || BLOCK == 0) return hipSuccess;
  const unsigned pairs = (unsigned)(P < 65535 ? P : 65535);
  dim3 grid((unsigned)((BLOCK + kBlock - 1) / kBlock), pairs);
  hipLaunchKernelGGL(copy_blocks_kernel, grid, dim3(kBlock), 0, stream,
                     reinterpret_cast<unsigned short*>(key_cache), reinterpret_cast<unsigned short*>(value_cache),
                     block_mapping, P, BLOCK);
  return hipGetLastError();
}
