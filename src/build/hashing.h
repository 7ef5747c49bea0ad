// Message digests as lowercase hex strings (OpenSSL EVP). sha256 names cache entries and checks
// library integrity; md5 is kept only for short, non-security keys such as kernel_key.
#pragma once

#include <string>
#include <string_view>

namespace tilefuse::build {

std::string md5_hex(std::string_view data);
std::string sha256_hex(std::string_view data);
// Streams the file, so large libraries are not read into memory. Throws UserError naming the
// file if it cannot be read.
std::string sha256_file_hex(const std::string& path);
// Hashes the whole file open on `fd` (read with pread from offset 0, so the descriptor's offset
// is not used); `what` names it in the UserError if reading fails.
std::string sha256_fd_hex(int fd, const std::string& what);

}  // namespace tilefuse::build
