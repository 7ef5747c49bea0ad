// Whole-file reads for the frontend's inputs (model files, TensorProto files).
#pragma once

#include <string>

namespace tilefuse::frontend {

// Returns the file's bytes; throws UserError naming `path` when it is missing or unreadable.
std::string read_binary_file(const std::string& path);

}  // namespace tilefuse::frontend
