// Plain-text tables for terminal output (inspect and run summaries).
#pragma once

#include <string>
#include <vector>

namespace tilefuse::api {

// Each row on its own line, indented by two spaces; every column as wide as its widest cell,
// columns two spaces apart. Rows may have different lengths.
std::string render_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace tilefuse::api
