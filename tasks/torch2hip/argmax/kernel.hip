// Greedy sampling (the operation in reference.py): idx[m] = the smallest n with
// x[m, n] == max(x[m, :]), for (M, V) float32 logits; int64 output.
#include <cfloat>

constexpr int kBlock = 256;

// One block per row: each thread keeps the first maximum of its strided elements, and a
// shared-memory tree merges the (value, index) pairs, ties going to the smaller index.
__global__ void argmax_kernel(const float* x, int64_t* idx, int64_t V) {
  __shared__ float best[kBlock];
  __shared__ int64_t best_i[kBlock];
  const float* row = x + (int64_t)blockIdx.x * V;
  const int tid = threadIdx.x;
  float b = -FLT_MAX;
  int64_t bi = V;
  for (int64_t v = tid; v < V; v += kBlock) {
    float value = row[v];
    if (value > b || bi == V) {
      b = value;
      bi = v;
    }
  }
  best[tid] = b;
  best_i[tid] = bi;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) {
      float ob = best[tid + stride];
      int64_t oi = best_i[tid + stride];
      if (ob > best[tid] || (ob == best[tid] && oi < best_i[tid])) {
        best[tid] = ob;
        best_i[tid] = oi;
      }
    }
    __syncthreads();
  }
  if (tid == 0) idx[blockIdx.x] = best_i[0];
}

extern "C" int argmax(const float* x, int64_t* idx, int64_t M, int64_t V, hipStream_t stream) {
  if (M == 0) return hipSuccess;
  hipLaunchKernelGGL(argmax_kernel, dim3((unsigned)M), dim3(kBlock), 0, stream, x, idx, V);
  return hipGetLastError();
}
