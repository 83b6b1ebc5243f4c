// Index add (the operation in reference.py): for src of shape (N, D), float32, and index (N,),
// int64, each in [0, I), the (I, D) float32 output is
//   out[i, :] = sum over the rows n with index[n] == i of src[n, :]   (0 for an i no row names)
// accumulated in float32, in any order.

constexpr int kBlock = 256;

// One thread per element of src: it adds the element into its output row with a global atomic.
__global__ void index_add_kernel(const float* src, const int64_t* index, float* out, int64_t N, int64_t D) {
  const int64_t e = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  if (e >= N * D) return;
  const int64_t n = e / D, d = e % D;
  atomicAdd(&out[index[n] * D + d], src[e]);
}

extern "C" int index_add(const float* src, const int64_t* index, float* out, int64_t N, int64_t D, int64_t I,
                         hipStream_t stream) {
  if (I == 0 || D == 0) return hipSuccess;
  hipError_t err = hipMemsetAsync(out, 0, (size_t)(I * D) * sizeof(float), stream);
  if (err != hipSuccess || N == 0) return err;
  const int64_t elements = N * D;
  hipLaunchKernelGGL(index_add_kernel, dim3((unsigned)((elements + kBlock - 1) / kBlock)), dim3(kBlock), 0, stream,
                     src, index, out, N, D);
  return hipGetLastError();
}
