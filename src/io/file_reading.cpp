#include "io/file_reading.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/error.h"

namespace tilefuse::io {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail_user("{}: file not found", path);
  if (std::filesystem::is_directory(path, ec)) fail_user("{}: is a directory, not a file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_user("{}: cannot open file: {}", path, std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) fail_user("{}: read error: {}", path, std::strerror(errno));
  return std::move(bytes).str();
}

}  // namespace tilefuse::io
