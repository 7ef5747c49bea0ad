// Directories of the kernel cache. Libraries found there are loaded into the process, so the
// cache root must belong to the user and be writable by nobody else, and nobody else may be able
// to swap it for another directory: every directory above it must be changeable only by the
// user or by root (a world-writable directory such as /tmp is fine only with its sticky bit,
// which keeps others from renaming what they do not own).
#pragma once

#include <string>

namespace tilefuse::build {

// Creates `path` with mode 0700 (its missing parents too), then checks, without following
// symlinks: `path` is a directory (not a symlink) owned by the current user and not writable by
// group or others; each directory above it is owned by the user or root and, if group or
// others may write to it, has the sticky bit; a symlink above it is owned by the user or root.
// Throws UserError naming the directory and the rule otherwise.
void ensure_private_directory(const std::string& path);

// Creates `path` with mode 0700 unless it exists; its parent must exist.
void make_directory(const std::string& path);

}  // namespace tilefuse::build
