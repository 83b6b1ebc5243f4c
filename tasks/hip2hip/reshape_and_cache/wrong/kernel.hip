// Paged KV-cache write (flash layout): for every token t with slot s = slot_mapping[t] >= 0,
//   key_cache[s / BS, s % BS] = key[t] and value_cache[s / BS, s % BS] = value[t],
// key and value (T, H, D), the caches (NB, BS, H, D), all float16 or bfloat16, moved as raw
// 16-bit words (copied exactly). Tokens with a negative slot (padding) are not stored.
// WRONG on purpose (never shown to agents): the grid is T / 2 blocks, rounded down, so the
// last token of an odd T is never stored.
// A block of 256 threads copies the rows of two tokens as 16-byte vectors (H * D a multiple of 8).

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr int kTokens = 2;  // tokens per block

// n: elements of type V in a token's row (H * D values). Block b copies tokens kTokens * b and up.
template <typename V>
__global__ void reshape_and_cache_kernel(const V* __restrict__ key, const V* __restrict__ value,
                                         V* __restrict__ key_cache, V* __restrict__ value_cache,
                                         const int64_t* __restrict__ slot_mapping, int64_t T, int n) {
  const int64_t t0 = (int64_t)blockIdx.x * kTokens;
  const int total = kTokens * n;
  for (int base = 0; base < total; base += kThreads * kUnroll) {
    V k[kUnroll], v[kUnroll];
    int64_t dst[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int idx = base + u * kThreads + (int)threadIdx.x;
      const int64_t t = t0 + idx / n;
      dst[u] = -1;
      if (idx < total && t < T) {
        const int64_t slot = slot_mapping[t];
        if (slot >= 0) {
          const int j = idx % n;
          k[u] = key[t * n + j];
          v[u] = value[t * n + j];
          dst[u] = slot * n + j;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (dst[u] >= 0) {
        key_cache[dst[u]] = k[u];
        value_cache[dst[u]] = v[u];
      }
    }
  }
}

template <typename V>
static void launch(const unsigned short* key, const unsigned short* value, unsigned short* key_cache,
                   unsigned short* value_cache, const int64_t* slot_mapping, int64_t T, int n, hipStream_t stream) {
  const unsigned blocks = (unsigned)(T / kTokens);
  hipLaunchKernelGGL(reshape_and_cache_kernel<V>, dim3(blocks), dim3(kThreads), 0, stream,
                     reinterpret_cast<const V*>(key), reinterpret_cast<const V*>(value),
                     reinterpret_cast<V*>(key_cache), reinterpret_cast<V*>(value_cache), slot_mapping, T, n);
}

extern "C" int reshape_and_cache(const unsigned short* key, const unsigned short* value,
                                 unsigned short* key_cache, unsigned short* value_cache,
                                 const int64_t* slot_mapping, int64_t T, int64_t H, int64_t D, int64_t BS,
                                 hipStream_t stream) {
  (void)BS;  // slot * H * D is the slot's offset: blocks of BS slots lie back to back
  const int64_t row = H * D;
  if (T == 0 || row == 0) return hipSuccess;
  if (row % 8 == 0) {
    launch<uint4>(key, value, key_cache, value_cache, slot_mapping, T, (int)(row / 8), stream);
  } else {
    launch<unsigned short>(key, value, key_cache, value_cache, slot_mapping, T, (int)row, stream);
  }
  return hipGetLastError();
}
