#include "tiling/tiling_space.h"

#include <algorithm>
#include <set>

namespace tilefuse::tiling {

namespace {

std::vector<int64_t> block_dims(int device_limit) {
  std::set<int64_t> dims = {1, std::max(1, device_limit / 2), std::max(1, device_limit)};
  return {dims.begin(), dims.end()};
}

// Elements per column tile: from a few KiB (L1) to a few hundred KiB (L2) of each tensor, or
// the whole row when rows are short enough to be one unit. All are multiples of 16 floats, so a
// tile is whole AVX-512 (and AVX2) vectors and only a row's end has a scalar tail.
//
// A column reduction keeps an accumulator per column of its tile in L1: tiles of 64 to 512
// floats, or all columns (rounded up to whole vectors) when there are fewer.
std::vector<int64_t> column_tiles(const KernelProfile& p) {
  if (p.column_reduction) {
    std::vector<int64_t> tiles;
    for (int64_t ct : {64, 128, 256, 512}) {
      if (ct < p.columns) tiles.push_back(ct);
    }
    if (p.columns <= 512) tiles.push_back((p.columns + 15) / 16 * 16);
    return tiles;
  }
  if (p.reduces) return {0};
  std::vector<int64_t> tiles;
  if (p.walks_across_rows) {
    // A tile's column loads touch one cache line per column: 64 to 256 lines stay in L1 while
    // the tile walks down the rows that share them.
    for (int64_t ct : {64, 128, 256}) {
      if (ct < p.inner) tiles.push_back(ct);
    }
    return tiles.empty() ? std::vector<int64_t>{0} : tiles;
  }
  for (int64_t ct : {2048, 4096, 8192, 16384, 32768}) {
    if (ct < p.inner) tiles.push_back(ct);
  }
  if (p.inner <= 32768) tiles.push_back(0);
  return tiles;
}

// In elements ahead; for column reductions, in reduced rows ahead.
std::vector<int64_t> prefetch_distances(const KernelProfile& p) {
  if (!p.has_streamed_contiguous_input) return {0};
  if (p.column_reduction) return {0, 4};
  if (p.reduces) return p.inner >= 256 ? std::vector<int64_t>{0, p.inner} : std::vector<int64_t>{0};
  return {0, 4096};
}

int64_t units_of(const KernelProfile& p, int64_t column_tile) {
  return std::max<int64_t>(1, p.outer * p.column_tiles(column_tile));
}

}  // namespace

std::vector<KernelTiling> enumerate_tilings(const KernelProfile& p, int device_limit) {
  std::vector<KernelTiling> out;
  std::set<std::string> seen;
  const bool may_stream = p.streamable_write_bytes > 0 && !p.row_by_row;
  const std::vector<bool> stream = may_stream ? std::vector<bool>{false, true} : std::vector<bool>{false};
  for (int64_t bd : block_dims(device_limit)) {
    for (int64_t ct : column_tiles(p)) {
      const int64_t units = units_of(p, ct);
      for (int64_t blocks_per_worker : {1, 2, 4, 8}) {
        const int64_t blocks = p.row_by_row ? units : std::min(units, bd * blocks_per_worker);
        const int64_t upb = (units + blocks - 1) / blocks;
        for (bool nt : stream) {
          for (int64_t pf : prefetch_distances(p)) {
            KernelTiling t{upb, ct, nt, pf, std::min(bd, blocks)};
            if (seen.insert(t.repr()).second) out.push_back(t);
          }
        }
      }
    }
  }
  return out;
}

int64_t workspace_bytes(const KernelProfile& p, const KernelTiling& t) { return p.scratch_row_bytes * t.block_dim; }

}  // namespace tilefuse::tiling
