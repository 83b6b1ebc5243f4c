// Inclusive prefix sum along the rows of a (M, N) int32 matrix: y[m, n] = x[m, 0] + ... + x[m, n].
// Exemplar: the baseline reads x twice (a pass for the chunk sums, a pass to scan) and writes y:
// three passes over the data. Here one kernel reads x once and writes y once (a single-pass scan
// with decoupled look-back): each block takes the next 4096-value chunk in a global ticket order,
// scans it in registers (16 consecutive values a thread, 16-byte loads when N is a multiple of 4,
// warp shuffles and one shared-memory step across the threads), publishes the chunk's sum, then
// its first warp looks back over the row's preceding chunks, warpSize at a time, adding their
// published sums until it meets one that has published its inclusive prefix; the block then
// publishes its own inclusive prefix and writes y. Integer sums, so the order in which chunks
// combine cannot change a bit. Each chunk's status (a call tag, a state and a value) is one
// 64-bit word in a buffer kept between calls; the tag (a per-call counter) makes old words stale
// without clearing the buffer, and the ticket counter only grows.

constexpr int kBlock = 256;  // a multiple of every warp width (32 and 64)
constexpr int kPerThread = 16;
constexpr int64_t kChunk = kBlock * kPerThread;  // 4096 values per chunk

// A chunk's status word: bits 63..34 the call's tag, 33..32 the state, 31..0 the value.
constexpr unsigned long long kAggregate = 1;  // value: the chunk's own sum
constexpr unsigned long long kInclusive = 2;  // value: the sum of the row up to the chunk's end

__device__ inline unsigned long long pack_status(unsigned tag, unsigned long long state, int value) {
  return ((unsigned long long)tag << 34) | (state << 32) | (unsigned long long)(unsigned)value;
}

// Loads the 16 values of this thread (zeros past `end`); `aligned`: the row start is 16-byte aligned.
__device__ inline void load16(const int* x_row, int64_t first, int64_t end, bool aligned, int* v) {
  if (aligned && first + kPerThread <= end) {
    const int4* p = reinterpret_cast<const int4*>(x_row + first);
#pragma unroll
    for (int k = 0; k < kPerThread / 4; ++k) {
      const int4 q = p[k];
      v[4 * k] = q.x;
      v[4 * k + 1] = q.y;
      v[4 * k + 2] = q.z;
      v[4 * k + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) v[k] = first + k < end ? x_row[first + k] : 0;
  }
}

// Exclusive scan of `v` over the block (warp shuffles, then one shared step over warp totals);
// `warp_totals` has a slot per warp. `total` receives the block's sum.
__device__ int block_exclusive_scan(int v, int* warp_totals, int& total) {
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  int inclusive = v;
  for (int d = 1; d < warpSize; d *= 2) {
    const int up = __shfl_up(inclusive, d);
    if (lane >= d) inclusive += up;
  }
  if (lane == warpSize - 1) warp_totals[warp] = inclusive;
  __syncthreads();
  int before = 0;
  total = 0;
  for (int w = 0; w < kBlock / warpSize; ++w) {
    if (w < warp) before += warp_totals[w];
    total += warp_totals[w];
  }
  return before + inclusive - v;
}

// One block per chunk, M * chunks blocks in all; chunk i of the ticket order is chunk
// i % chunks of row i / chunks. A block waits only for chunks with smaller tickets, which belong
// to blocks already running, so every wait ends.
__global__ void __launch_bounds__(kBlock)
    scan_single_pass(const int* __restrict__ x, int* __restrict__ y, int64_t N, int64_t chunks,
                     unsigned long long* status, unsigned long long* ticket, unsigned long long ticket_base,
                     unsigned tag) {
  __shared__ int warp_totals[kBlock];
  __shared__ long long s_tile;
  __shared__ int s_prefix;
  if (threadIdx.x == 0) s_tile = (long long)(atomicAdd(ticket, 1ULL) - ticket_base);
  __syncthreads();
  const int64_t tile = s_tile;
  const int64_t row = tile / chunks, chunk = tile % chunks;
  const int64_t start = chunk * kChunk;
  const int64_t end = start + kChunk < N ? start + kChunk : N;
  const int* x_row = x + row * N;
  int* y_row = y + row * N;
  unsigned long long* row_status = status + row * chunks;
  const int64_t first = start + (int64_t)threadIdx.x * kPerThread;
  const bool aligned = N % 4 == 0;

  int v[kPerThread];
  load16(x_row, first, end, aligned, v);
#pragma unroll
  for (int k = 1; k < kPerThread; ++k) v[k] += v[k - 1];
  int chunk_total;
  const int base = block_exclusive_scan(v[kPerThread - 1], warp_totals, chunk_total);

  if (threadIdx.x < warpSize) {
    const int lane = threadIdx.x;
    if (chunk == 0) {
      if (lane == 0) {
        atomicExch(&row_status[0], pack_status(tag, kInclusive, chunk_total));
        s_prefix = 0;
      }
    } else {
      if (lane == 0) atomicExch(&row_status[chunk], pack_status(tag, kAggregate, chunk_total));
      int prefix = 0;
      for (int64_t top = chunk - 1;; top -= warpSize) {
        const int64_t j = top - lane;  // lane 0: the nearest chunk of this window
        unsigned long long word = 0;
        bool inclusive = true;  // before the row's first chunk: nothing to add
        if (j >= 0) {
          const volatile unsigned long long* p = row_status + j;
          do {
            word = *p;
          } while ((unsigned)(word >> 34) != tag);
          inclusive = ((word >> 32) & 3) == kInclusive;
        }
        // The nearest lane holding an inclusive prefix; lanes up to it contribute.
        int stop = inclusive ? lane : warpSize;
        for (int d = warpSize / 2; d > 0; d /= 2) {
          const int other = __shfl_xor(stop, d);
          stop = other < stop ? other : stop;
        }
        int add = (j >= 0 && lane <= stop) ? (int)(unsigned)word : 0;
        for (int d = warpSize / 2; d > 0; d /= 2) add += __shfl_xor(add, d);
        prefix += add;
        if (stop < warpSize) break;
      }
      if (lane == 0) {
        atomicExch(&row_status[chunk], pack_status(tag, kInclusive, prefix + chunk_total));
        s_prefix = prefix;
      }
    }
  }
  __syncthreads();
  const int offset = s_prefix + base;

  if (aligned && first + kPerThread <= end) {
    int4* p = reinterpret_cast<int4*>(y_row + first);
#pragma unroll
    for (int k = 0; k < kPerThread / 4; ++k)
      p[k] = make_int4(offset + v[4 * k], offset + v[4 * k + 1], offset + v[4 * k + 2], offset + v[4 * k + 3]);
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k)
      if (first + k < end) y_row[first + k] = offset + v[k];
  }
}

// Kept between calls: the chunks' status words, then the ticket counter (zeroed once when
// allocated); the host counts the tickets handed out and the calls (the tag: 1, 2, ...).
static unsigned long long* g_state = nullptr;
static size_t g_state_words = 0;
static unsigned long long g_tickets = 0;
static unsigned g_tag = 0;

extern "C" int inclusive_scan(const int* x, int* y, int64_t M, int64_t N, hipStream_t stream) {
  if (M == 0 || N == 0) return hipSuccess;
  const int64_t chunks = (N + kChunk - 1) / kChunk;
  const size_t words = (size_t)(M * chunks) + 1;
  if (words > g_state_words) {
    if (g_state != nullptr) hipFree(g_state);
    g_state = nullptr;
    g_state_words = 0;
    hipError_t err = hipMalloc((void**)&g_state, words * sizeof(unsigned long long));
    if (err != hipSuccess) return err;
    err = hipMemsetAsync(g_state, 0, words * sizeof(unsigned long long), stream);
    if (err != hipSuccess) return err;
    g_state_words = words;
    g_tickets = 0;
    g_tag = 0;
  }
  g_tag = (g_tag + 1) & ((1u << 30) - 1);
  if (g_tag == 0) g_tag = 1;  // 0 is the zeroed buffer's tag
  unsigned long long* ticket = g_state + (g_state_words - 1);
  hipLaunchKernelGGL(scan_single_pass, dim3((unsigned)(M * chunks)), dim3(kBlock), 0, stream, x, y, N, chunks,
                     g_state, ticket, g_tickets, g_tag);
  g_tickets += (unsigned long long)(M * chunks);
  return hipGetLastError();
}
