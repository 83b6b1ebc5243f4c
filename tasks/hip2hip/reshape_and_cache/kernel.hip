// Paged KV-cache write (flash layout): for every token t with slot s = slot_mapping[t] >= 0,
//   key_cache[s / BS, s % BS] = key[t] and value_cache[s / BS, s % BS] = value[t],
// key and value (T, H, D), the caches (NB, BS, H, D), all float16 or bfloat16, moved as raw
// 16-bit words (copied exactly). Tokens with a negative slot (padding) are not stored.

constexpr int kBlock = 128;

// One block per (token, head): the threads walk the head's D values.
__global__ void reshape_and_cache_kernel(const unsigned short* key, const unsigned short* value,
                                         unsigned short* key_cache, unsigned short* value_cache,
                                         const int64_t* slot_mapping, int64_t H, int64_t D, int64_t BS) {
  const int64_t t = blockIdx.x;
  const int64_t h = blockIdx.y;
  const int64_t slot = slot_mapping[t];
  if (slot < 0) return;
  const int64_t block = slot / BS;
  const int64_t offset = slot % BS;
  const int64_t src = (t * H + h) * D;
  const int64_t dst = ((block * BS + offset) * H + h) * D;
  for (int64_t d = threadIdx.x; d < D; d += kBlock) {
    key_cache[dst + d] = key[src + d];
    value_cache[dst + d] = value[src + d];
  }
}

extern "C" int reshape_and_cache(const unsigned short* key, const unsigned short* value,
                                 unsigned short* key_cache, unsigned short* value_cache,
                                 const int64_t* slot_mapping, int64_t T, int64_t H, int64_t D, int64_t BS,
                                 hipStream_t stream) {
  if (T == 0 || H == 0 || D == 0) return hipSuccess;
  dim3 grid((unsigned)T, (unsigned)H);
  hipLaunchKernelGGL(reshape_and_cache_kernel, grid, dim3(kBlock), 0, stream, key, value, key_cache, value_cache,
                     slot_mapping, H, D, BS);
  return hipGetLastError();
}
