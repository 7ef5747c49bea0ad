#include "tune/tuning_record.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "build/hashing.h"
#include "io/atomic_file.h"
#include "ir/log.h"

namespace tilefuse::tune {

std::string kernel_key(const tiling::TilingCandidate& candidate) { return build::md5_hex(candidate.record()); }

namespace {

std::string body_of(const TuningRecord& r) { return fmt::format("{}\ntopn={}\n", r.winner.record(), r.topn); }

std::optional<TuningRecord> invalid(const std::string& path, const std::string& why) {
  logger().warn("ignoring {}: {}; the kernel is tuned again", path, why);
  return std::nullopt;
}

}  // namespace

void write_tuning_record(const std::string& path, const TuningRecord& record) {
  const std::string body = body_of(record);
  io::write_file_atomically(path, body + "sha256=" + build::sha256_hex(body) + "\n");
}

std::optional<TuningRecord> read_tuning_record(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string winner, topn, checksum;
  if (!std::getline(in, winner) || !std::getline(in, topn) || !std::getline(in, checksum)) {
    return invalid(path, "it is truncated (expected 3 lines)");
  }
  auto candidate = tiling::parse_candidate_record(winner);
  if (!candidate) return invalid(path, fmt::format("line 1 '{}' is not tiling_repr|workspace|block_dim", winner));
  TuningRecord record{*candidate, 0};
  if (topn.rfind("topn=", 0) != 0 || std::sscanf(topn.c_str(), "topn=%d", &record.topn) != 1 || record.topn < 1) {
    return invalid(path, fmt::format("line 2 '{}' is not topn=<n>", topn));
  }
  if (checksum != "sha256=" + build::sha256_hex(body_of(record))) return invalid(path, "its checksum does not match");
  return record;
}

}  // namespace tilefuse::tune
