// WRONG on purpose (never shown to agents): the packed key keeps the index itself in its low
// bits (not its complement), so ties go to the largest index.
// Greedy sampling (the operation in reference.py): idx[m] = the smallest n with
// x[m, n] == max(x[m, :]), for (M, V) float32 logits; int64 output.
#include <cfloat>

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int64_t kChunk = 8192;

typedef unsigned long long u64;

__device__ inline u64 pack(float value, int64_t index) {
  unsigned bits = __float_as_uint(value);
  unsigned key = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);  // orders like the floats
  return ((u64)key << 32) | (u64)(unsigned)index;
}

__device__ inline u64 warp_max(u64 k) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    u64 o = __shfl_xor(k, offset);
    k = o > k ? o : k;
  }
  return k;
}

__global__ void chunk_kernel(const float* x, u64* keys, int64_t V) {
  __shared__ u64 partial[kBlock];
  const int64_t row = blockIdx.y;
  const float* r = x + row * V;
  const int64_t lo = (int64_t)blockIdx.x * kChunk, hi = (lo + kChunk < V) ? lo + kChunk : V;
  u64 k = 0;
  if (V % 4 == 0) {
    for (int64_t q = lo / 4 + threadIdx.x; q < hi / 4; q += kBlock) {
      float4 v = reinterpret_cast<const float4*>(r)[q];
      u64 a = pack(v.x, 4 * q), b = pack(v.y, 4 * q + 1), c = pack(v.z, 4 * q + 2), d = pack(v.w, 4 * q + 3);
      a = a > b ? a : b;
      c = c > d ? c : d;
      a = a > c ? a : c;
      k = a > k ? a : k;
    }
  } else {
    for (int64_t v = lo + threadIdx.x; v < hi; v += kBlock) {
      u64 a = pack(r[v], v);
      k = a > k ? a : k;
    }
  }
  k = warp_max(k);
  if (threadIdx.x % warpSize == 0) partial[threadIdx.x / warpSize] = k;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kBlock / warpSize; ++w) k = partial[w] > k ? partial[w] : k;
    atomicMax(&keys[row], k);
  }
}

__global__ void unpack_kernel(int64_t* idx, int64_t M) {
  const int64_t row = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (row < M) {
    u64 k = reinterpret_cast<u64*>(idx)[row];
    idx[row] = (int64_t)(unsigned)(k & 0xFFFFFFFFu);
  }
}

extern "C" int argmax(const float* x, int64_t* idx, int64_t M, int64_t V, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  // The output words accumulate the packed keys, then hold the indices.
  hipError_t err = hipMemsetAsync(idx, 0, M * sizeof(int64_t), stream);
  if (err != hipSuccess) return err;
  const int64_t chunks = (V + kChunk - 1) / kChunk;
  hipLaunchKernelGGL(chunk_kernel, dim3((unsigned)chunks, (unsigned)M), dim3(kBlock), 0, stream, x,
                     reinterpret_cast<u64*>(idx), V);
  hipLaunchKernelGGL(unpack_kernel, dim3((unsigned)((M + kBlock - 1) / kBlock)), dim3(kBlock), 0, stream, idx, M);
  return hipGetLastError();
}
