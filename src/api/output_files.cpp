#include "api/output_files.h"

#include <cctype>
#include <set>

#include <fmt/format.h>

namespace tilefuse::api {
std::string safe_file_stem(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out += safe ? c : '_';
  }
  if (out.empty()) return "output";
  if (out[0] == '.') out[0] = '_';
  return out;
}

std::vector<std::string> output_file_names(const std::vector<std::string>& output_names) {
  std::vector<std::string> files;
  std::set<std::string> used;
  for (const std::string& name : output_names) {
    const std::string stem = safe_file_stem(name);
    std::string file = stem + ".npy";
    for (int i = 1; !used.insert(file).second; ++i) file = fmt::format("{}_{}.npy", stem, i);
    files.push_back(file);
  }
  return files;
}

}  // namespace tilefuse::api
