// tests/conformance/skipped_node_tests.txt: in-scope node tests we knowingly do not run, one
// `test_name  # reason` per line. Every entry must carry a reason.
#pragma once

#include <map>
#include <string>

namespace tilefuse::conformance {

std::string skip_list_path();

// Case name -> reason. Throws UserError naming the file and line for an entry without a reason,
// a duplicate, or an unreadable file.
std::map<std::string, std::string> read_skip_list(const std::string& path);

}  // namespace tilefuse::conformance
