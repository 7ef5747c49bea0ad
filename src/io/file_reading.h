// Whole-file reads: model files, TensorProto files, a model package's manifest and graph.
#pragma once

#include <string>

namespace tilefuse::io {

// Returns the file's bytes; throws UserError naming `path` when it is missing or unreadable.
std::string read_file(const std::string& path);

}  // namespace tilefuse::io
