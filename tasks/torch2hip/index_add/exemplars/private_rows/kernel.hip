// Index add (the operation in reference.py): for src of shape (N, D), float32, and index (N,),
// int64, each in [0, I), the (I, D) float32 output is
//   out[i, :] = sum over the rows n with index[n] == i of src[n, :]   (0 for an i no row names)
// accumulated in float32, in any order.
// Exemplar: with few output rows, the baseline's one global atomic per element queues thousands
// of atomics on every output address (N / I of them), and the L2 atomic units, not memory, set
// its pace. Here each block owns a slice of columns and a range of rows, sums its rows into a
// private copy of the output slice in shared memory (shared atomics: cheap, and rarely
// contended), then adds that copy to the output with one global atomic per address it touched:
// an address takes one global atomic per block of rows (about 1024 blocks in all) instead of one
// per row that names it. src is read 16 bytes at a time. Outputs too tall for a useful slice in
// shared memory (I > 2048) keep one global atomic per element.

constexpr int kThreads = 256;
constexpr int kShared = 8192;  // floats of private output slice (32 KiB)
constexpr int kMaxSlice = 1024;

// Block (x, y): columns [x * slice, x * slice + slice), rows [y * rows, y * rows + rows).
template <int kVec>
__global__ void __launch_bounds__(kThreads)
    private_kernel(const float* __restrict__ src, const int64_t* __restrict__ index, float* __restrict__ out,
                   int64_t N, int64_t D, int64_t I, int slice, int64_t rows) {
  __shared__ float acc[kShared];
  const int64_t d0 = (int64_t)blockIdx.x * slice;
  const int64_t n0 = (int64_t)blockIdx.y * rows;
  const int64_t n_end = n0 + rows < N ? n0 + rows : N;
  const int cells = (int)I * slice;
  for (int k = threadIdx.x; k < cells; k += kThreads) acc[k] = 0.0f;
  __syncthreads();

  const int groups = slice / kVec;  // column groups of kVec per row of the slice
  const int work = (int)(n_end - n0) * groups;
  for (int e = threadIdx.x; e < work; e += kThreads) {
    const int r = e / groups, g = e % groups;
    const int64_t n = n0 + r, d = d0 + (int64_t)g * kVec;
    if (d < D) {
      float* row = acc + (int)index[n] * slice + g * kVec;
      if (kVec == 4) {
        const float4 v = *reinterpret_cast<const float4*>(src + n * D + d);
        atomicAdd(row + 0, v.x);
        atomicAdd(row + 1, v.y);
        atomicAdd(row + 2, v.z);
        atomicAdd(row + 3, v.w);
      } else {
        atomicAdd(row, src[n * D + d]);
      }
    }
  }
  __syncthreads();

  for (int k = threadIdx.x; k < cells; k += kThreads) {
    const int i = k / slice, c = k % slice;
    const float v = acc[k];
    if (v != 0.0f && d0 + c < D) atomicAdd(&out[(int64_t)i * D + d0 + c], v);
  }
}

// Tall outputs: one global atomic per element, 4 per thread.
__global__ void direct_kernel(const float* src, const int64_t* index, float* out, int64_t N, int64_t D) {
  const int64_t e = ((int64_t)blockIdx.x * kThreads + threadIdx.x) * 4;
  for (int j = 0; j < 4; ++j) {
    if (e + j < N * D) {
      const int64_t n = (e + j) / D, d = (e + j) % D;
      atomicAdd(&out[index[n] * D + d], src[e + j]);
    }
  }
}

extern "C" int index_add(const float* src, const int64_t* index, float* out, int64_t N, int64_t D, int64_t I,
                         hipStream_t stream) {
  if (I == 0 || D == 0) return hipSuccess;
  hipError_t err = hipMemsetAsync(out, 0, (size_t)(I * D) * sizeof(float), stream);
  if (err != hipSuccess || N == 0) return err;
  const int vec = D % 4 == 0 ? 4 : 1;
  int64_t slice = (kShared / I) / 4 * 4;  // columns per block: a multiple of 4
  if (slice > kMaxSlice) slice = kMaxSlice;
  if (slice > (D + 3) / 4 * 4) slice = (D + 3) / 4 * 4;
  if (slice < 4) {
    const int64_t threads = (N * D + 3) / 4;
    hipLaunchKernelGGL(direct_kernel, dim3((unsigned)((threads + kThreads - 1) / kThreads)), dim3(kThreads), 0,
                       stream, src, index, out, N, D);
    return hipGetLastError();
  }
  const int64_t slices = (D + slice - 1) / slice;
  // About 1024 blocks in all, at least 128 rows each.
  int64_t rows = (N * slices + 1023) / 1024;
  if (rows < 128) rows = 128;
  const dim3 grid((unsigned)slices, (unsigned)((N + rows - 1) / rows));
  if (vec == 4) {
    hipLaunchKernelGGL(private_kernel<4>, grid, dim3(kThreads), 0, stream, src, index, out, N, D, I, (int)slice,
                       rows);
  } else {
    hipLaunchKernelGGL(private_kernel<1>, grid, dim3(kThreads), 0, stream, src, index, out, N, D, I, (int)slice,
                       rows);
  }
  return hipGetLastError();
}
