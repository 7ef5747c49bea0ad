// The decision variables of one fused kernel's tiling, and their canonical text. One value of
// this struct is one TopN candidate; its text (`repr`) identifies the candidate in caches
// (kernel_key), in `optimize_tiling` and in logs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tilefuse::tiling {

struct KernelTiling {
  int64_t units_per_block = 1;  // work units (rows, or row x column tiles) per block
  int64_t column_tile = 0;      // elementwise kernels and column reductions: elements per column tile; 0 = whole row
  bool stream_stores = false;   // full-size f32 outputs bypass the caches (non-temporal stores)
  int64_t prefetch_ahead = 0;   // contiguous streamed inputs are prefetched this many elements (column
                                // reductions: reduced rows) ahead; 0 = off
  int64_t block_dim = 1;        // workers the kernel runs on at once (<= the device limit)

  // Canonical text, e.g. "upb=4;ct=8192;nt=1;pf=0;bd=2".
  std::string repr() const;
  bool operator==(const KernelTiling&) const = default;
};

// The inverse of repr(); nullopt for any text repr() could not have written.
std::optional<KernelTiling> parse_tiling_repr(const std::string& text);

// One TopN candidate as the cache and the tuner see it.
struct TilingCandidate {
  KernelTiling tiling;
  int64_t workspace = 0;       // scratch bytes of all workers together
  double predicted_us = 0;     // the cost model's estimate
  std::string explanation;     // how the estimate was reached (debug output, tune-report)

  // tiling_repr|workspace|block_dim: the line `optimize_tiling` records; its md5 is the
  // candidate's kernel_key (tune/tuning_record.h).
  std::string record() const;
};

// Parses a record() line back (tiling, workspace, block_dim); nullopt if malformed or inconsistent.
std::optional<TilingCandidate> parse_candidate_record(const std::string& line);

}  // namespace tilefuse::tiling
