#include "api/text_table.h"

#include <algorithm>

namespace tilefuse::api {

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    out += "  ";
    for (size_t c = 0; c < row.size(); ++c) {
      out += row[c];
      // No trailing spaces after the last cell.
      if (c + 1 < row.size()) out += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out += "\n";
  }
  return out;
}

}  // namespace tilefuse::api
