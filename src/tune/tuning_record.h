// `optimize_tiling`: the tuner's verdict for one static kernel, so later runs compile and measure
// nothing. Three lines, written atomically (temp + rename):
//   upb=4;ct=8192;nt=1;pf=0;bd=2|0|2      tiling_repr|workspace|block_dim of the winner
//   topn=3                                how many candidates were measured (1: model only)
//   sha256=<hex of the two lines above>   a torn or edited file is detected and re-tuned
#pragma once

#include <optional>
#include <string>

#include "tiling/kernel_tiling.h"

namespace tilefuse::tune {

struct TuningRecord {
  tiling::TilingCandidate winner;
  int topn = 1;
};

// md5(tiling_repr|workspace|block_dim): a candidate's directory name under static_kernel/.
std::string kernel_key(const tiling::TilingCandidate& candidate);

void write_tuning_record(const std::string& path, const TuningRecord& record);
// nullopt if the file is missing; also nullopt (with a warning naming the file and the problem)
// if it is malformed or its checksum does not match.
std::optional<TuningRecord> read_tuning_record(const std::string& path);

}  // namespace tilefuse::tune
