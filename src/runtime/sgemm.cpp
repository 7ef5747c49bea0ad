#include "runtime/sgemm.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "runtime/bf16_pairs.h"
#include "runtime/cpu_isa.h"
#include "runtime/scratch_buffer.h"

namespace tilefuse::runtime {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// True for a problem multiplied in bf16: asked for, or an operand was packed ahead in bf16 pairs.
bool in_bf16(const GemmProblem& pr) {
  return pr.bf16 || (pr.b.packed != nullptr && pr.b.packed->bf16()) || (pr.a.packed != nullptr && pr.a.packed->bf16());
}

// The steps of a micro-panel over depth kc: one per depth step, or per bf16 pair.
int64_t panel_steps(const GemmProblem& pr, int64_t kc) { return in_bf16(pr) ? (kc + 1) / 2 : kc; }

// True where every problem's A was packed ahead of time and its B is not: solve_tile then walks
// each A micro-panel (in L1) along the B part (in L2), and the tile keeps all its rows.
bool walks_rows(std::span<const GemmProblem> problems) {
  return std::all_of(problems.begin(), problems.end(),
                     [](const GemmProblem& p) { return p.a.packed != nullptr && p.b.packed == nullptr; });
}

// True where B is read in place by the micro-kernel instead of packed: rows of contiguous
// columns (a 1x1 convolution's input planes), multiplied in f32 with AVX-512 against an A packed
// ahead of time. Packing such a B only copies it: a 1x1 convolution from 256 to 64 maps at 56 x
// 56 spent 9% of its time in the copy, and ran 3-5% faster without it (the micro-kernel's loads
// through masks, from rows ldb apart, cost little more than from a packed panel).
bool b_in_place(const GemmProblem& pr) {
  return vector_isa() == VectorIsa::avx512 && pr.a.packed != nullptr && pr.b.packed == nullptr &&
         pr.b.pack == nullptr && pr.b.view.col_stride == 1 && pr.b.view.row_stride > 0 && !in_bf16(pr);
}

// True where A is read in place by the micro-kernel instead of packed: rows of contiguous depth
// steps, in f32 with AVX-512, an A of at least 1 MiB (beyond what L2 keeps beside the rest) times
// a B of at most two micro-panels, so that each A micro-panel serves two tiles. Attention's
// probabilities times V (64 columns) over 1500 positions spent 41% of its time packing them, and
// ran 1.3 times as fast without; over 512, 1.05-1.1 times. Over 128 (64 KiB) packing won by 5%,
// and at 128 columns the two were even (bench/README.md, "Attention products").
bool a_in_place(const GemmProblem& pr) {
  return vector_isa() == VectorIsa::avx512 && pr.a.packed == nullptr && pr.n <= 2 * kNR && pr.m * pr.k >= (1 << 18) &&
         pr.a.view.col_stride == 1 && pr.a.view.row_stride > 0 && !in_bf16(pr);
}

// The depth of the problems' blocks: the blocking's kc counts the words of a kNR-column B
// micro-panel's column, and a bf16 pair holds two depth steps (kc x 2 measured 4% faster on
// BERT-base). Walking rows, the micro-panel used again and again is a kMR-row A one: kNR / kMR
// times as deep for the same bytes (ResNet-50's 1x1 convolutions ran 3-8% faster with 512 than
// with 192, fewer passes over C). Equal blocks: 768 in blocks of at most 384 is 2 x 384, not
// 384 + 384 + 0; bf16 blocks are whole pairs.
int64_t depth_block(std::span<const GemmProblem> problems, const GemmBlocking& blocking) {
  int64_t k = 0;
  bool bf16 = false;
  for (const GemmProblem& p : problems) k = std::max(k, p.k), bf16 = bf16 || in_bf16(p);
  if (k == 0) return 0;
  const int64_t words = walks_rows(problems) ? blocking.kc * kNR / kMR : blocking.kc;
  const int64_t most = bf16 ? 2 * words : words;
  const int64_t kc = ceil_div(k, ceil_div(k, most));
  return bf16 ? round_up(kc, 2) : kc;
}

// The tiles of all problems, numbered problem-major, then row block, then column block.
struct TileGrid {
  int64_t mc = 0, nc = 0, kc = 0;
  std::vector<int64_t> first_tile;  // per problem, plus the total at the end
  std::vector<int64_t> col_tiles;   // per problem
};

// The work of one tile of C in micro-kernel tiles, with the packing it does itself: its own copy
// of a B packed during the run (half a micro-kernel pass per column panel: a 1x1 convolution
// with 64 maps spent 9% of its time copying B; three where B is a convolution's input unfolded
// while packed: ResNet-50's stride-2 layers spent 6-12% of their time there, with 512 and 256
// maps) and of an A packed during the run (12 rows, where a B panel has 32).
double tile_work(const GemmProblem& p, int64_t rows, int64_t cols) {
  double work = micro_tiles(rows, cols);
  if (p.b.pack != nullptr) {
    work += 3.0 * micro_tiles(kMR, cols);
  } else if (p.b.packed == nullptr && !b_in_place(p)) {
    work += 0.5 * micro_tiles(kMR, cols);
  }
  if (p.a.packed == nullptr) work += 0.5 * kMR / kNR * micro_tiles(rows, kNR);
  return work;
}

// The tiles of mc x nc of every problem, in the grid's order, dealt out as the team deals blocks
// (equal runs, the first workers one more): the work of the busiest worker.
double busiest_worker(std::span<const GemmProblem> problems, int64_t mc, int64_t nc, int workers) {
  thread_local std::vector<double> work;  // per tile; keeps its capacity from call to call
  work.clear();
  for (const GemmProblem& p : problems) {
    for (int64_t i = 0; i < p.m; i += mc) {
      for (int64_t j = 0; j < p.n; j += nc) work.push_back(tile_work(p, std::min(mc, p.m - i), std::min(nc, p.n - j)));
    }
  }
  double most = 0;
  for (int w = 0; w < workers; ++w) {
    const auto [first, end] = worker_blocks(static_cast<int64_t>(work.size()), workers, w);
    double sum = 0;
    for (int64_t t = first; t < end; ++t) sum += work[static_cast<size_t>(t)];
    most = std::max(most, sum);
  }
  return most;
}

// The splits tile_grid has searched for, per calling thread: a run multiplies the same shapes
// every time, and searching again each time cost 1% of MobileNetV3's run. The key is everything
// the search reads: per problem its sizes and which operands are packed how, then the starting
// tile counts and the team size.
struct SplitMemo {
  std::vector<int64_t> key;
  int64_t mc = 0, nc = 0;
};
constexpr size_t kMaxSplitMemos = 256;  // more distinct products than a model has; then start over
thread_local std::vector<SplitMemo> t_split_memos;

const std::vector<int64_t>& split_key(std::span<const GemmProblem> problems, int64_t row_tiles, int64_t col_tiles,
                                      int workers) {
  thread_local std::vector<int64_t> key;  // keeps its capacity from call to call
  key.clear();
  for (const GemmProblem& p : problems) {
    key.insert(key.end(), {p.m, p.n, (p.a.packed != nullptr) + 2 * (p.b.packed != nullptr) + 4 * b_in_place(p)});
  }
  key.insert(key.end(), {row_tiles, col_tiles, workers});
  return key;
}

const SplitMemo* remembered_split(const std::vector<int64_t>& key) {
  for (const SplitMemo& memo : t_split_memos) {
    if (memo.key == key) return &memo;
  }
  return nullptr;
}

void remember_split(const std::vector<int64_t>& key, int64_t mc, int64_t nc) {
  if (t_split_memos.size() == kMaxSplitMemos) t_split_memos.clear();
  t_split_memos.push_back({key, mc, nc});
}

// Splits the problems' rows and columns into tiles of at most the blocking's mc x nc (a packed A
// that the micro-kernel walks keeps its rows whole: solve_tile walks them mc at a time). Where
// that gives fewer than 8 tiles per worker, the finer split that leaves the busiest worker the
// least work is taken instead (196 columns on two workers as 128 + 68 gave one 1.6 times the other's
// work; 112 + 84 or two row tiles balance them). Tiles are whole micro-panels of an operand packed
// ahead (its panels start there), otherwise 12 rows by 16 columns.
// Fills `grid` (whose vectors keep their capacity from call to call: a steady run allocates nothing).
void tile_grid(std::span<const GemmProblem> problems, const GemmBlocking& blocking, int workers, TileGrid& grid) {
  int64_t m = 0, n = 0;
  for (const GemmProblem& p : problems) m = std::max(m, p.m), n = std::max(n, p.n);
  const bool b_packed = std::any_of(problems.begin(), problems.end(), [](const GemmProblem& p) { return p.b.packed; });
  const int64_t col_step = b_packed ? kNR : 16;
  const auto count = static_cast<int64_t>(problems.size());
  const int64_t row_tiles = walks_rows(problems) ? 1 : std::max<int64_t>(1, ceil_div(m, blocking.mc));
  const int64_t col_tiles = std::max<int64_t>(1, ceil_div(n, blocking.nc));
  auto rows_of = [&](int64_t tiles) { return std::max<int64_t>(kMR, round_up(ceil_div(m, tiles), kMR)); };
  auto cols_of = [&](int64_t tiles) { return std::max<int64_t>(col_step, round_up(ceil_div(n, tiles), col_step)); };
  grid.mc = rows_of(row_tiles), grid.nc = cols_of(col_tiles);
  if (count * row_tiles * col_tiles < 8 * workers && workers > 1) {
    const std::vector<int64_t>& key = split_key(problems, row_tiles, col_tiles, workers);
    if (const SplitMemo* memo = remembered_split(key)) {
      grid.mc = memo->mc, grid.nc = memo->nc;
    } else {
      double least = busiest_worker(problems, grid.mc, grid.nc, workers);
      for (int64_t r = row_tiles; count * r * col_tiles <= 8 * workers && r <= ceil_div(m, kMR); ++r) {
        for (int64_t c = col_tiles; count * r * c <= 8 * workers && c <= ceil_div(n, col_step); ++c) {
          const double work = busiest_worker(problems, rows_of(r), cols_of(c), workers);
          if (work < 0.98 * least) least = work, grid.mc = rows_of(r), grid.nc = cols_of(c);
        }
      }
      remember_split(key, grid.mc, grid.nc);
    }
  }
  grid.first_tile.clear();
  grid.col_tiles.clear();
  grid.kc = depth_block(problems, blocking);
  int64_t total = 0;
  for (const GemmProblem& p : problems) {
    grid.first_tile.push_back(total);
    const int64_t cols = ceil_div(p.n, grid.nc);
    grid.col_tiles.push_back(cols);
    total += ceil_div(p.m, grid.mc) * cols;
  }
  grid.first_tile.push_back(total);
}

// A worker's packing buffers (t_pack_b_f32: a B packed in f32, then converted to bf16 pairs).
thread_local ScratchBuffer t_pack_a, t_pack_b, t_pack_b_f32;

// The kMR-row (or kNR-column) micro-panels of one block: panel p starts at base + p * stride.
// An operand read in place (ld > 0) is no panels but the operand itself: B's depth step, A's
// row, is ld further.
struct Panels {
  const float* base;
  int64_t stride;
  int64_t ld = 0;
  const float* operator[](int64_t p) const { return base + p * stride; }
};

Panels a_block(const GemmProblem& pr, int64_t row0, int64_t rows, int64_t k0, int64_t kc) {
  if (pr.a.packed != nullptr) return {pr.a.packed->panel(row0 / kMR, k0), pr.a.packed->panel_stride()};
  if (a_in_place(pr)) return {pr.a.view.at(row0, k0), kMR * pr.a.view.row_stride, pr.a.view.row_stride};
  const int64_t steps = panel_steps(pr, kc);
  float* dst = t_pack_a.floats(static_cast<size_t>(round_up(rows, kMR) * steps));
  if (in_bf16(pr)) {
    pack_a_bf16(pr.a.view, row0, rows, k0, kc, dst);
  } else {
    pack_a(pr.a.view, row0, rows, k0, kc, dst);
  }
  return {dst, steps * kMR};
}

Panels b_block(const GemmProblem& pr, int64_t k0, int64_t kc, int64_t col0, int64_t cols) {
  if (pr.b.packed != nullptr) return {pr.b.packed->panel(col0 / kNR, k0), pr.b.packed->panel_stride()};
  if (b_in_place(pr)) return {pr.b.view.at(k0, col0), kNR, pr.b.view.row_stride};
  const bool bf16 = in_bf16(pr);
  float* dst = (bf16 ? t_pack_b_f32 : t_pack_b).floats(static_cast<size_t>(round_up(cols, kNR) * kc));
  if (pr.b.pack != nullptr) {
    (*pr.b.pack)(k0, kc, col0, cols, dst);
  } else {
    pack_b(pr.b.view, k0, kc, col0, cols, dst);
  }
  if (!bf16) return {dst, kc * kNR};
  const int64_t steps = panel_steps(pr, kc);
  float* pairs = t_pack_b.floats(static_cast<size_t>(round_up(cols, kNR) * steps));
  b_panels_to_bf16(dst, ceil_div(cols, kNR), kc, pairs);
  return {pairs, steps * kNR};
}

// How the micro-kernel stores C rows i .. i + kMR x columns j .. j + kNR over a depth block
// that is the problem's first and/or last.
TileStore tile_store(const GemmProblem& pr, int64_t i, int64_t j, bool first, bool last) {
  TileStore store;
  store.accumulate = pr.accumulate || !first;
  store.alpha = pr.alpha;
  if (first && pr.row_bias != nullptr) store.row_bias = pr.row_bias + i;
  if (first && pr.col_bias != nullptr) store.col_bias = pr.col_bias + j;
  if (last && pr.residual != nullptr) store.residual = pr.residual + i * pr.ldc + j;
  if (last) store.activation = pr.activation;
  return store;
}

// A prefetch of a whole A micro-panel of `steps` steps.
Prefetch whole_a_panel(const float* panel, int64_t steps) {
  return {reinterpret_cast<const char*>(panel), ceil_div(steps * kMR * static_cast<int64_t>(sizeof(float)), 64)};
}

// The micro-kernel down every row panel of a tile for the B micro-panel `b` (columns j .. j +
// n), over the depth block that is the problem's first and/or last. `next`, if not null, is the
// B micro-panel after it: each call fetches a share of it into L2.
void run_column_panel(const GemmProblem& pr, const Panels& a, int64_t row0, int64_t rows, int64_t kc, bool first,
                      bool last, const float* b, int64_t j, int n, const float* next) {
  const int64_t a_panels = ceil_div(rows, kMR), steps = panel_steps(pr, kc);
  const TileColumn column{a[0], a.stride, next, 2 * steps, in_bf16(pr)};  // a B micro-panel is 2 lines per step
  float* c = pr.c + row0 * pr.ldc + j;
  TileStore tile = tile_store(pr, row0, j, first, last);
  if (a.ld == 0) return microkernel_column(kc, column, b, c, pr.ldc, rows, n, tile);
  // A read in place (f32): tile by tile.
  for (int64_t ip = 0; ip < a_panels; ++ip, next_in_column(tile, pr.ldc)) {
    const int m = static_cast<int>(std::min<int64_t>(kMR, rows - ip * kMR));
    microkernel_a_in_place(kc, a[ip], a.ld, b, c + ip * kMR * pr.ldc, pr.ldc, m, n, tile, column_share(column, ip, a_panels));
  }
}

// The micro-kernel along every column panel of a part of B (columns part0 .. part0 + cols), for
// each A micro-panel of rows row0 .. row0 + rows in turn: C is written a row panel at a time, in
// runs the hardware's prefetcher follows, and each call fetches the C tile of the next (see
// Prefetch). `fetch_next_a`: A was packed ahead of time and comes from memory, so the first call
// along a row panel brings the next A micro-panel into L2.
void walk_rows(const GemmProblem& pr, const Panels& a, int64_t row0, int64_t rows, int64_t kc, int64_t k0,
               const Panels& b, int64_t part0, int64_t cols, bool fetch_next_a) {
  const int64_t a_panels = ceil_div(rows, kMR);
  auto rows_at = [&](int64_t i) { return static_cast<int>(std::min<int64_t>(kMR, row0 + rows - i)); };
  for (int64_t ip = 0; ip < a_panels; ++ip) {
    const int64_t i = row0 + ip * kMR;
    const int m = rows_at(i);
    TileRow row{b[0], b.stride, b.ld > 0 ? b.ld : kNR, b.ld > 0, in_bf16(pr)};
    if (ip + 1 < a_panels) row.after = pr.c + (i + kMR) * pr.ldc + part0, row.after_rows = rows_at(i + kMR);
    const Prefetch first = fetch_next_a && ip + 1 < a_panels ? whole_a_panel(a[ip + 1], panel_steps(pr, kc)) : Prefetch{};
    float* c = pr.c + i * pr.ldc + part0;
    TileStore tile = tile_store(pr, i, part0, k0 == 0, k0 + kc == pr.k);
    if (a.ld == 0) {  // a packed A: the row of tiles in one call
      microkernel_row(kc, a[ip], row, c, pr.ldc, m, cols, tile, first);
      continue;
    }
    // A read in place (f32, its B packed): tile by tile.
    for (int64_t j = 0; j < cols; j += kNR, next_in_row(tile)) {
      microkernel_a_in_place(kc, a[ip], a.ld, b[j / kNR], c + j, pr.ldc, m, static_cast<int>(std::min<int64_t>(kNR, cols - j)),
                             tile, row_prefetch(row, c, m, j, cols, first));
    }
  }
}

// C rows [row0, row0 + rows) x columns [col0, col0 + cols) of one problem, in blocks of at most
// the blocking's.
void solve_tile(const GemmProblem& pr, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                const GemmBlocking& blocking) {
  if (pr.k == 0) {
    // An empty sum: C = bias (plus C when accumulating), then the epilogue.
    for (int64_t i = row0; i < row0 + rows; ++i) {
      for (int64_t j = col0; j < col0 + cols; ++j) {
        float v = (pr.row_bias ? pr.row_bias[i] : 0.0f) + (pr.col_bias ? pr.col_bias[j] : 0.0f);
        if (pr.accumulate) v += pr.c[i * pr.ldc + j];
        if (pr.residual != nullptr) v += pr.residual[i * pr.ldc + j];
        pr.c[i * pr.ldc + j] = pr.activation != nullptr ? (*pr.activation)(v) : v;
      }
    }
    return;
  }
  // A B packed here is packed part by part, so each part is used from L2 rather than memory
  // (a convolution's unfolded input over a whole image is megabytes).
  const int64_t part = pr.b.packed != nullptr || blocking.nb <= 0 ? cols : blocking.nb;
  const int64_t kc_max = blocking.kc;  // depth_block's
  const int64_t mc = std::max<int64_t>(kMR, blocking.mc / kMR * kMR);
  auto depth = [&](int64_t k0) { return std::min(kc_max, pr.k - k0); };
  // The depth block at k0 of one part of B times the tile's rows (A panels `a`): a row panel at
  // a time, or, for a B packed ahead of time, mc rows at a time.
  auto solve_block = [&](const Panels& a, int64_t k0, int64_t part0) {
    const int64_t kc = depth(k0), part_cols = std::min(part, col0 + cols - part0);
    const Panels b = b_block(pr, k0, kc, part0, part_cols);
    const int64_t b_panels = ceil_div(part_cols, kNR);
    if (pr.a.packed != nullptr || (pr.b.packed == nullptr && pr.m * pr.n >= (1 << 18))) {
      // A row panel at a time along the part. A weight packed ahead of time as A (a
      // convolution's) comes from memory, a row panel at a time: each is used along the whole
      // part from L1, and the next is fetched meanwhile (its depth block lies a panel's depth
      // away, beyond the hardware's prefetcher). Two operands packed here (attention's Q K^T)
      // are in L2, and a C of 1 MiB or more goes to memory: walking rows, C is written in runs,
      // a tile ahead of its stores, at a depth of 64 1.5-1.7 times as fast as down column
      // panels. A C that stays in cache (128 x 128) was 5% faster down column panels
      // (bench/README.md, "Attention products").
      walk_rows(pr, a, row0, rows, kc, k0, b, part0, part_cols, pr.a.packed != nullptr);
      return;
    }
    // A weight packed ahead of time as B: each B micro-panel is used down mc rows from L1.
    for (int64_t r0 = row0; r0 < row0 + rows; r0 += mc) {
      const int64_t chunk = std::min(mc, row0 + rows - r0);
      const Panels chunk_a{a[(r0 - row0) / kMR], a.stride, a.ld};
      for (int64_t jp = 0; jp < b_panels; ++jp) {
        const int64_t j = part0 + jp * kNR;
        const int n = static_cast<int>(std::min<int64_t>(kNR, part0 + part_cols - j));
        // The weight comes from memory: its next panel is fetched meanwhile.
        const float* next = jp + 1 < b_panels ? b[jp + 1] : nullptr;
        run_column_panel(pr, chunk_a, r0, chunk, kc, k0 == 0, k0 + kc == pr.k, b[jp], j, n, next);
      }
    }
  };
  if (pr.a.packed != nullptr) {
    // Revisiting a packed A costs nothing: each part of C is finished over the whole depth while
    // it stays in L2 (a convolution's weights times its unfolded input), and each depth block of
    // the part is packed once for all the tile's rows, which pass by a row panel at a time.
    for (int64_t part0 = col0; part0 < col0 + cols; part0 += part) {
      for (int64_t k0 = 0; k0 < pr.k; k0 += kc_max) solve_block(a_block(pr, row0, rows, k0, depth(k0)), k0, part0);
    }
    return;
  }
  // An A packed here is packed once per depth block, and every part of B passes by it.
  for (int64_t k0 = 0; k0 < pr.k; k0 += kc_max) {
    const Panels a = a_block(pr, row0, rows, k0, depth(k0));
    for (int64_t part0 = col0; part0 < col0 + cols; part0 += part) solve_block(a, k0, part0);
  }
}

// ---- matrix-vector products ----

// A product with one row or one column against an operand packed ahead of time: one column of
// C from a packed A (a 1x1 convolution over a single position: squeeze-and-excitation), or one
// row from a packed B (a classifier's Gemm on one image). Its panels are read once, each value
// used, where the micro-kernel would compute a whole tile for one row or column.
bool is_gemv(const GemmProblem& p) {
  if (p.k == 0 || p.b.pack != nullptr || in_bf16(p)) return false;
  return (p.n == 1 && p.a.packed != nullptr && p.b.packed == nullptr) ||
         (p.m == 1 && p.b.packed != nullptr && p.a.packed == nullptr);
}

// The packed operand's outputs: rows of C for a packed A, columns for a packed B.
bool gemv_by_rows(const GemmProblem& p) { return p.n == 1 && p.a.packed != nullptr; }
int gemv_width(const GemmProblem& p) { return gemv_by_rows(p) ? kMR : kNR; }
int64_t gemv_panels(const GemmProblem& p) { return ceil_div(gemv_by_rows(p) ? p.m : p.n, gemv_width(p)); }

// Panels [first, end) of one product, then the epilogue a tile store gives.
void solve_gemv(const GemmProblem& pr, int64_t first, int64_t end) {
  const bool by_rows = gemv_by_rows(pr);
  const PackedOperand& w = by_rows ? *pr.a.packed : *pr.b.packed;
  const int width = gemv_width(pr);
  // The vector: B's only column or A's only row, gathered when it is strided.
  const float* x = by_rows ? pr.b.view.data : pr.a.view.data;
  if (const int64_t stride = by_rows ? pr.b.view.row_stride : pr.a.view.col_stride; stride != 1) {
    float* gathered = t_pack_b.floats(static_cast<size_t>(pr.k));
    for (int64_t k = 0; k < pr.k; ++k) gathered[k] = x[k * stride];
    x = gathered;
  }
  float* y = t_pack_a.floats(static_cast<size_t>((end - first) * width));
  panel_gemv(w.panel(first, 0), width, pr.k, end - first, x, y);
  const int64_t last = std::min(by_rows ? pr.m : pr.n, end * width);
  for (int64_t o = first * width; o < last; ++o) {
    float* c = by_rows ? pr.c + o * pr.ldc : pr.c + o;
    float v = pr.alpha * y[o - first * width];
    if (pr.col_bias != nullptr) v += pr.col_bias[by_rows ? 0 : o];
    if (pr.row_bias != nullptr) v += pr.row_bias[by_rows ? o : 0];
    if (pr.accumulate) v += *c;
    if (pr.residual != nullptr) v += pr.residual[c - pr.c];
    *c = pr.activation != nullptr ? (*pr.activation)(v) : v;
  }
}

// The panels of all products, spread over the team: one worker per 256 KiB of packed weights
// (below that, waking another worker costs more than reading the rest).
void gemv(ThreadTeam& team, std::span<const GemmProblem> problems) {
  // Per problem, its first panel in the numbering of all. Kept per calling thread so that a steady
  // run allocates nothing; the workers read it through this reference (a thread_local named in the
  // lambda would be each worker's own).
  thread_local std::vector<int64_t> first_panels;
  std::vector<int64_t>& first = first_panels;
  first.assign(1, 0);
  size_t bytes = 0;
  for (const GemmProblem& p : problems) {
    first.push_back(first.back() + gemv_panels(p));
    bytes += static_cast<size_t>(gemv_panels(p) * gemv_width(p) * p.k) * sizeof(float);
  }
  const int workers = static_cast<int>(std::clamp<size_t>(bytes / (256 << 10), 1, static_cast<size_t>(team.size())));
  team.run(
      first.back(),
      [&](int, int64_t begin, int64_t end) {
        for (size_t i = 0; i < problems.size(); ++i) {
          const int64_t lo = std::max(begin, first[i]), hi = std::min(end, first[i + 1]);
          if (lo < hi) solve_gemv(problems[i], lo - first[i], hi - first[i]);
        }
      },
      workers);
}

}  // namespace

double micro_tiles(int64_t rows, int64_t cols) {
  const int64_t row_rest = rows % kMR, col_rest = cols % kNR;
  const double row_part = row_rest == 0 ? 0.0 : row_rest <= 4 ? 1.0 / 3 : row_rest <= 8 ? 2.0 / 3 : 1.0;
  const double col_part = col_rest == 0 ? 0.0 : col_rest <= 16 ? 0.5 : 1.0;
  return (static_cast<double>(rows / kMR) + row_part) * (static_cast<double>(cols / kNR) + col_part);
}

GemmBlocking default_blocking(int64_t l1d_bytes, int64_t l2_bytes) {
  GemmBlocking b;
  // `l1_depth`: the depth at which the B values of a micro-kernel pass stay in L1, a whole
  // 32-column micro-panel with AVX-512 (kc x 32 in half of L1), a 16-column half with AVX2's
  // 6 x 16 sub-tiles (kc x 16 in three quarters of L1: on Zen 3, kc = 384 ran BERT-sized GEMMs at
  // 88-90 GFLOP/s where 128 ran them at 79-80 and 512 at 84-89). mc and nb are sized from it.
  const int64_t l1_depth = vector_isa() == VectorIsa::avx2 ? std::clamp<int64_t>(l1d_bytes * 3 / 4 / (16 * 4), 64, 512)
                                                           : std::clamp<int64_t>(l1d_bytes / 2 / (kNR * 4), 64, 512);
  // The depth is what amortises a micro-kernel pass's fixed work and, above all, the passes over
  // C: every depth block reads and writes C again, from memory once C outgrows L2 (a 1024 x 3072
  // MLP output is 12 MiB). With AVX-512 a B micro-panel four times deeper than L1 holds streams
  // from L2 at about 15 bytes a cycle, well within its bandwidth, and measured faster: on Zen 5,
  // kc = 768 against 192 ran the 1024 x 3072 x 768 MLP product at 225 GFLOP/s against 155-170
  // at 1 thread, BERT-sized projections 5-25% faster, nothing slower.
  b.kc = vector_isa() == VectorIsa::avx2 ? l1_depth : std::min<int64_t>(4 * l1_depth, 1024);
  b.mc = std::clamp<int64_t>(l2_bytes / 2 / (l1_depth * 4) / kMR * kMR, kMR, 1020);
  b.nc = 4096;
  b.nb = std::max<int64_t>(kNR, l2_bytes / 4 / (l1_depth * 4) / kNR * kNR);
  return b;
}

namespace {
thread_local PrepackedOperands* t_prepacked = nullptr;
}  // namespace

PrepackedOperands::PrepackedOperands(std::vector<Region> regions, std::shared_ptr<const void> owner)
    : regions_(std::move(regions)), owner_(std::move(owner)), previous_(std::exchange(t_prepacked, this)) {}

PrepackedOperands::~PrepackedOperands() { t_prepacked = previous_; }

PackedOperand PackedOperand::packed(int64_t width, int64_t panels, int64_t depth,
                                    const std::function<void(float*)>& fill) {
  PackedOperand p;
  p.depth_ = depth, p.width_ = width;
  p.bytes_ = static_cast<size_t>(panels * width * depth) * sizeof(float);
  if (PrepackedOperands* supply = t_prepacked) {
    if (supply->next_ == supply->regions_.size()) fail_user("packed weights: fewer were stored than this plan packs");
    const PrepackedOperands::Region& region = supply->regions_[supply->next_++];
    if (region.bytes != p.bytes_) {
      fail_user("packed weights: operand {} was stored with {} bytes, this plan packs {}", supply->next_, region.bytes,
                p.bytes_);
    }
    p.external_ = region.data;
    p.external_owner_ = supply->owner_;
    return p;
  }
  p.storage_ = Arena(std::max(p.bytes_, sizeof(float)));
  fill(reinterpret_cast<float*>(p.storage_.data()));
  return p;
}

PackedOperand PackedOperand::pack_a(const MatrixView& a, int64_t rows, int64_t depth) {
  return packed(kMR, ceil_div(rows, kMR), depth, [&](float* dst) { runtime::pack_a(a, 0, rows, 0, depth, dst); });
}

PackedOperand PackedOperand::pack_b(const MatrixView& b, int64_t depth, int64_t cols) {
  return packed(kNR, ceil_div(cols, kNR), depth, [&](float* dst) { runtime::pack_b(b, 0, depth, 0, cols, dst); });
}

PackedOperand PackedOperand::pack_b_bf16(const MatrixView& b, int64_t depth, int64_t cols) {
  PackedOperand p = packed(kNR, ceil_div(cols, kNR), (depth + 1) / 2, [&](float* dst) { runtime::pack_b_bf16(b, depth, cols, dst); });
  p.depth_ = depth, p.bf16_ = true;
  return p;
}

PackedOperand PackedOperand::pack_a_bf16(const MatrixView& a, int64_t rows, int64_t depth) {
  PackedOperand p = packed(kMR, ceil_div(rows, kMR), (depth + 1) / 2,
                           [&](float* dst) { runtime::pack_a_bf16(a, 0, rows, 0, depth, dst); });
  p.depth_ = depth, p.bf16_ = true;
  return p;
}

PackedOperand PackedOperand::view(const float* panels, int64_t width, int64_t depth, bool bf16) {
  PackedOperand p;
  p.depth_ = depth, p.width_ = width, p.bf16_ = bf16;
  p.external_ = panels;
  return p;
}

size_t total_bytes(const std::vector<PackedOperand>& packed) {
  size_t bytes = 0;
  for (const PackedOperand& p : packed) bytes += p.bytes();
  return bytes;
}

std::vector<const PackedOperand*> operands_of(const std::vector<PackedOperand>& packed) {
  std::vector<const PackedOperand*> out;
  for (const PackedOperand& p : packed) out.push_back(&p);
  return out;
}

void sgemm(ThreadTeam& team, std::span<const GemmProblem> problems, const GemmBlocking& blocking) {
  if (!microkernel_supported()) fail_internal("sgemm: this CPU has neither AVX-512 nor AVX2; the caller must fall back");
  if (problems.empty()) return;
  if (std::all_of(problems.begin(), problems.end(), is_gemv)) return gemv(team, problems);
  thread_local TileGrid caller_grid;  // see gemv's first_panels
  TileGrid& grid = caller_grid;
  tile_grid(problems, blocking, team.size(), grid);
  GemmBlocking tile_blocking = blocking;
  tile_blocking.kc = grid.kc;
  team.run(grid.first_tile.back(), [&](int, int64_t first, int64_t end) {
    size_t p = std::upper_bound(grid.first_tile.begin(), grid.first_tile.end(), first) - grid.first_tile.begin() - 1;
    for (int64_t t = first; t < end; ++t) {
      while (t >= grid.first_tile[p + 1]) ++p;
      const GemmProblem& pr = problems[p];
      const int64_t local = t - grid.first_tile[p];
      const int64_t row0 = local / grid.col_tiles[p] * grid.mc, col0 = local % grid.col_tiles[p] * grid.nc;
      solve_tile(pr, row0, std::min(grid.mc, pr.m - row0), col0, std::min(grid.nc, pr.n - col0), tile_blocking);
    }
  });
}

void sgemm_rows(const GemmProblem& problem, int64_t row0, int64_t rows, const GemmBlocking& blocking) {
  if (!microkernel_supported()) fail_internal("sgemm_rows: this CPU has neither AVX-512 nor AVX2");
  GemmBlocking b = blocking;
  b.kc = depth_block({&problem, 1}, blocking);
  solve_tile(problem, row0, rows, 0, problem.n, b);
}

}  // namespace tilefuse::runtime
