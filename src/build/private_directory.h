// Directories of the kernel cache. Libraries found there are loaded into the process, so the
// cache root must belong to the user and be writable by nobody else.
#pragma once

#include <string>

namespace tilefuse::build {

// Creates `path` with mode 0700 (its missing parents with default modes), then checks that it is
// a directory owned by the current user and not writable by group or others. Throws UserError
// naming the directory and the rule otherwise.
void ensure_private_directory(const std::string& path);

// Creates `path` with mode 0700 unless it exists; its parent must exist.
void make_directory(const std::string& path);

}  // namespace tilefuse::build
