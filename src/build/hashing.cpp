#include "build/hashing.h"

#include <unistd.h>

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "ir/error.h"

namespace tilefuse::build {
namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext start_digest(const EVP_MD* algorithm) {
  DigestContext context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), algorithm, nullptr) != 1) {
    fail_internal("OpenSSL cannot initialise digest {}", EVP_MD_get0_name(algorithm));
  }
  return context;
}

void update_digest(EVP_MD_CTX* context, const char* data, size_t size) {
  if (EVP_DigestUpdate(context, data, size) != 1) fail_internal("OpenSSL digest update failed");
}

std::string finish_digest_hex(EVP_MD_CTX* context) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context, digest, &size) != 1) fail_internal("OpenSSL digest final failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

std::string digest_hex(const EVP_MD* algorithm, std::string_view data) {
  DigestContext context = start_digest(algorithm);
  update_digest(context.get(), data.data(), data.size());
  return finish_digest_hex(context.get());
}

}  // namespace

std::string md5_hex(std::string_view data) { return digest_hex(EVP_md5(), data); }

std::string sha256_hex(std::string_view data) { return digest_hex(EVP_sha256(), data); }

std::string sha256_file_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_user("cannot read '{}': {}", path, std::strerror(errno));
  DigestContext context = start_digest(EVP_sha256());
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    update_digest(context.get(), buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) fail_user("cannot read '{}': read error", path);
  return finish_digest_hex(context.get());
}

std::string sha256_fd_hex(int fd, const std::string& what) {
  DigestContext context = start_digest(EVP_sha256());
  char buffer[1 << 16];
  for (off_t offset = 0;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_user("cannot read '{}': {}", what, std::strerror(errno));
    if (n == 0) break;
    update_digest(context.get(), buffer, static_cast<size_t>(n));
    offset += n;
  }
  return finish_digest_hex(context.get());
}

}  // namespace tilefuse::build
