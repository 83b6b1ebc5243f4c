// Prefix-cache block copies of a paged KV cache, one layer:
//   key_cache[dst] = key_cache[src] and value_cache[dst] = value_cache[src] for every (src, dst)
//   pair of block_mapping (P, 2) int64; the caches are (NB, BLOCK) float16, written in place.
// Exemplar: the baseline moves one 16-bit value per thread, and since the two caches might
// alias as far as the compiler knows, each thread's key copy must finish before its value load
// issues: a warp has 64 bytes in flight. Here, when BLOCK is a multiple of 8 (every block row
// then starts 16-byte aligned), each thread moves 16-byte vectors, four of the key cache and
// four of the value cache loaded before any is stored (restrict-qualified pointers), so a warp
// keeps 4 KiB in flight and the copy runs near the DRAM bandwidth. Other block sizes take the
// same kernel on 16-bit values.
// Headroom: the baseline is latency bound (2-byte accesses, one outstanding load per thread);
// the vectorised copy typically runs 2-5x faster.

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr int64_t kChunk = (int64_t)kThreads * kUnroll;  // elements (of type V) per block of threads

// blockIdx.x picks a chunk of kChunk elements of a block row, blockIdx.y a pair (striding over
// the pairs when there are more than the grid's y extent). n: elements of type V per block row.
template <typename V>
__global__ void copy_blocks_kernel(V* __restrict__ key_cache, V* __restrict__ value_cache,
                                   const int64_t* __restrict__ block_mapping, int64_t P, int64_t n) {
  const int64_t base = (int64_t)blockIdx.x * kChunk + threadIdx.x;
  for (int64_t pair = blockIdx.y; pair < P; pair += gridDim.y) {
    const int64_t src = block_mapping[2 * pair] * n;
    const int64_t dst = block_mapping[2 * pair + 1] * n;
    V k[kUnroll], v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + (int64_t)u * kThreads;
      if (i < n) {
        k[u] = key_cache[src + i];
        v[u] = value_cache[src + i];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + (int64_t)u * kThreads;
      if (i < n) {
        key_cache[dst + i] = k[u];
        value_cache[dst + i] = v[u];
      }
    }
  }
}

template <typename V>
static void launch(__half* key_cache, __half* value_cache, const int64_t* block_mapping, int64_t P, int64_t n,
                   hipStream_t stream) {
  const unsigned pairs = (unsigned)(P < 65535 ? P : 65535);
  dim3 grid((unsigned)((n + kChunk - 1) / kChunk), pairs);
  hipLaunchKernelGGL(copy_blocks_kernel<V>, grid, dim3(kThreads), 0, stream, reinterpret_cast<V*>(key_cache),
                     reinterpret_cast<V*>(value_cache), block_mapping, P, n);
}

extern "C" int copy_blocks(__half* key_cache, __half* value_cache, const int64_t* block_mapping, int64_t P,
                           int64_t BLOCK, hipStream_t stream) {
  if (P == 0 || BLOCK == 0) return hipSuccess;
  if (BLOCK % 8 == 0) {
    launch<uint4>(key_cache, value_cache, block_mapping, P, BLOCK / 8, stream);
  } else {
    launch<unsigned short>(key_cache, value_cache, block_mapping, P, BLOCK, stream);
  }
  return hipGetLastError();
}
