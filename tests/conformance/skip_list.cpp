#include "conformance/skip_list.h"

#include <fstream>

#include "ir/error.h"

namespace tilefuse::conformance {

std::string skip_list_path() {
  return std::string(TILEFUSE_SOURCE_DIR) + "/tests/conformance/skipped_node_tests.txt";
}

namespace {

std::string trim(const std::string& s) {
  const char* space = " \t\r";
  size_t begin = s.find_first_not_of(space);
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(space) - begin + 1);
}

}  // namespace

std::map<std::string, std::string> read_skip_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail_user("cannot read the node-test skip list '{}'", path);
  std::map<std::string, std::string> entries;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;  // blank line or comment
    size_t hash = text.find('#');
    std::string name = trim(text.substr(0, hash));
    std::string reason = hash == std::string::npos ? "" : trim(text.substr(hash + 1));
    if (name.empty() || name.find_first_of(" \t") != std::string::npos || reason.empty()) {
      fail_user("{}:{}: expected `test_name  # reason`, got '{}'", path, line_no, text);
    }
    if (!entries.emplace(name, reason).second) fail_user("{}:{}: '{}' is listed twice", path, line_no, name);
  }
  return entries;
}

}  // namespace tilefuse::conformance
