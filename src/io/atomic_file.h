// Atomic file writes: the data goes to a temporary file in the same directory, which is then
// renamed over the target. The file is fsync'ed before the rename and its directory after, so
// once the call returns the new contents survive a crash. A reader (or a crash) never sees a
// half-written file, and a failed write leaves any previous file untouched.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace tilefuse::io {

// Writes the concatenation of `pieces` to `path`. Throws UserError naming the file and the
// system's reason on failure.
void write_file_atomically(const std::string& path, std::span<const std::span<const char>> pieces);
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace tilefuse::io
