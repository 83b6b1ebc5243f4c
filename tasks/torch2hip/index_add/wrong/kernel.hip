// WRONG on purpose (never shown to agents): the rows per block are rounded down (N / chunks), so
// when the blocks do not divide N the last N % chunks rows are never added.
// Index add (the operation in reference.py): for src of shape (N, D), float32, and index (N,),
// int64, each in [0, I), the (I, D) float32 output is
//   out[i, :] = sum over the rows n with index[n] == i of src[n, :]   (0 for an i no row names)
// accumulated in float32, in a fixed order (every call gives the same bits).

constexpr int kShared = 8192;       // floats of a block's private slice (32 KiB)
constexpr int kMaxCols = 256;       // columns (threads) per block
constexpr int kTile = 32;           // columns per slice step and per combine block
constexpr int kUnroll = 16;         // rows loaded ahead by each thread
constexpr int kTargetBlocks = 1024;
constexpr int kMinRows = 64;
constexpr int kLanes = 8;           // combine: lanes over the chunks

static float* g_partial = nullptr;
static size_t g_partial_bytes = 0;

// Block (x, y): columns [x C, x C + C) (C = blockDim.x), rows [y rows, y rows + rows). Thread t
// owns column x C + t and acc[i * C + t] for every i: it alone reads and writes them.
__global__ void __launch_bounds__(kMaxCols)
    shared_chunk_kernel(const float* __restrict__ src, const int64_t* __restrict__ index,
                        float* __restrict__ partial, int64_t N, int64_t D, int64_t I, int64_t rows) {
  extern __shared__ float acc[];
  const int C = blockDim.x, t = threadIdx.x;
  const int64_t d = (int64_t)blockIdx.x * C + t;
  if (d >= D) return;
  const int64_t chunk = blockIdx.y;
  const int64_t n0 = chunk * rows;
  const int64_t n1 = n0 + rows < N ? n0 + rows : N;
  for (int i = 0; i < (int)I; ++i) acc[i * C + t] = 0.0f;
  const float* col = src + d;
  int64_t n = n0;
  for (; n + kUnroll <= n1; n += kUnroll) {
    int idx[kUnroll];
    float v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      idx[k] = (int)index[n + k];
      v[k] = col[(n + k) * D];
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) acc[idx[k] * C + t] += v[k];
  }
  for (; n < n1; ++n) acc[(int)index[n] * C + t] += col[n * D];
  float* p = partial + chunk * I * D + d;
  for (int i = 0; i < (int)I; ++i) p[(int64_t)i * D] = acc[i * C + t];
}

// Tall outputs: thread (chunk, d) adds its chunk's rows, in order, into its own column of the
// chunk's partial slice in global memory (cleared first).
__global__ void __launch_bounds__(kMaxCols)
    global_chunk_kernel(const float* __restrict__ src, const int64_t* __restrict__ index, float* partial,
                        int64_t N, int64_t D, int64_t I, int64_t rows) {
  const int64_t d = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (d >= D) return;
  const int64_t chunk = blockIdx.y;
  const int64_t n1 = (chunk + 1) * rows < N ? (chunk + 1) * rows : N;
  float* p = partial + chunk * I * D + d;
  for (int64_t n = chunk * rows; n < n1; ++n) p[index[n] * D] += src[n * D + d];
}

// Block b: output row b / tiles, columns (b % tiles) * kTile + [0, kTile). Lane l sums chunks l,
// l + kLanes, ... in order; lane 0 then adds the lanes' sums in lane order.
__global__ void __launch_bounds__(kTile * kLanes)
    combine_kernel(const float* __restrict__ partial, float* __restrict__ out, int64_t chunks, int64_t I,
                   int64_t D) {
  __shared__ float sums[kLanes][kTile];
  const int64_t tiles = (D + kTile - 1) / kTile;
  const int64_t i = blockIdx.x / tiles;
  const int c = threadIdx.x % kTile, lane = threadIdx.x / kTile;
  const int64_t d = blockIdx.x % tiles * kTile + c;
  float s = 0.0f;
  if (d < D)
    for (int64_t k = lane; k < chunks; k += kLanes) s += partial[(k * I + i) * D + d];
  sums[lane][c] = s;
  __syncthreads();
  if (lane == 0 && d < D) {
    float total = 0.0f;
    for (int l = 0; l < kLanes; ++l) total += sums[l][c];
    out[i * D + d] = total;
  }
}

extern "C" int index_add(const float* src, const int64_t* index, float* out, int64_t N, int64_t D, int64_t I,
                         hipStream_t stream) {
  if (I == 0 || D == 0) return hipSuccess;
  if (N == 0) return hipMemsetAsync(out, 0, (size_t)(I * D) * sizeof(float), stream);
  // Columns per block: as many as the shared slice holds for I rows, a multiple of kTile.
  int64_t cols = kShared / I / kTile * kTile;
  if (cols > kMaxCols) cols = kMaxCols;
  const int64_t d_tiles = (D + kTile - 1) / kTile * kTile;
  if (cols > d_tiles) cols = d_tiles;
  const bool shared = cols >= kTile;
  if (!shared) cols = kMaxCols;
  const int64_t slices = (D + cols - 1) / cols;
  int64_t chunks = kTargetBlocks / slices;
  if (chunks > (N + kMinRows - 1) / kMinRows) chunks = (N + kMinRows - 1) / kMinRows;
  if (chunks < 1) chunks = 1;
  const int64_t rows = N / chunks;  // rows per block

  const size_t bytes = (size_t)(chunks * I * D) * sizeof(float);
  if (bytes > g_partial_bytes) {
    if (g_partial != nullptr) hipFree(g_partial);
    g_partial = nullptr;
    g_partial_bytes = 0;
    hipError_t err = hipMalloc((void**)&g_partial, bytes);
    if (err != hipSuccess) return err;
    g_partial_bytes = bytes;
  }
  const dim3 grid((unsigned)slices, (unsigned)chunks);
  if (shared) {
    hipLaunchKernelGGL(shared_chunk_kernel, grid, dim3((unsigned)cols), (size_t)(I * cols) * sizeof(float), stream,
                       src, index, g_partial, N, D, I, rows);
  } else {
    hipError_t err = hipMemsetAsync(g_partial, 0, bytes, stream);
    if (err != hipSuccess) return err;
    hipLaunchKernelGGL(global_chunk_kernel, grid, dim3((unsigned)cols), 0, stream, src, index, g_partial, N, D, I,
                       rows);
  }
  hipLaunchKernelGGL(combine_kernel, dim3((unsigned)(I * ((D + kTile - 1) / kTile))), dim3(kTile * kLanes), 0, stream,
                     g_partial, out, chunks, I, D);
  return hipGetLastError();
}
