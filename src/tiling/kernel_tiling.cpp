#include "tiling/kernel_tiling.h"

#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace tilefuse::tiling {

std::string KernelTiling::repr() const {
  return fmt::format("upb={};ct={};nt={};pf={};bd={}", units_per_block, column_tile, stream_stores ? 1 : 0,
                     prefetch_ahead, block_dim);
}

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos; (pos = text.find(sep, start)) != std::string::npos; start = pos + 1) {
    parts.push_back(text.substr(start, pos - start));
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::optional<int64_t> parse_int(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// "key=value" with the expected key and a non-negative integer value.
std::optional<int64_t> field(const std::string& part, const char* key) {
  std::string prefix = std::string(key) + "=";
  if (part.rfind(prefix, 0) != 0) return std::nullopt;
  auto v = parse_int(part.substr(prefix.size()));
  if (!v || *v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::optional<KernelTiling> parse_tiling_repr(const std::string& text) {
  std::vector<std::string> parts = split(text, ';');
  if (parts.size() != 5) return std::nullopt;
  auto upb = field(parts[0], "upb"), ct = field(parts[1], "ct"), nt = field(parts[2], "nt");
  auto pf = field(parts[3], "pf"), bd = field(parts[4], "bd");
  if (!upb || !ct || !nt || !pf || !bd || *upb < 1 || *nt > 1 || *bd < 1) return std::nullopt;
  KernelTiling t{*upb, *ct, *nt == 1, *pf, *bd};
  if (t.repr() != text) return std::nullopt;  // canonical text only
  return t;
}

std::string TilingCandidate::record() const {
  return fmt::format("{}|{}|{}", tiling.repr(), workspace, tiling.block_dim);
}

std::optional<TilingCandidate> parse_candidate_record(const std::string& line) {
  std::vector<std::string> parts = split(line, '|');
  if (parts.size() != 3) return std::nullopt;
  auto tiling = parse_tiling_repr(parts[0]);
  auto workspace = parse_int(parts[1]), block_dim = parse_int(parts[2]);
  if (!tiling || !workspace || !block_dim || *workspace < 0 || *block_dim != tiling->block_dim) return std::nullopt;
  TilingCandidate c;
  c.tiling = *tiling;
  c.workspace = *workspace;
  return c;
}

}  // namespace tilefuse::tiling
