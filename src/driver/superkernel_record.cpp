#include "driver/superkernel_record.h"

#include <filesystem>
#include <fstream>

#include "build/hashing.h"
#include "io/atomic_file.h"
#include "ir/log.h"

namespace tilefuse::driver {

namespace {

std::filesystem::path record_path(const std::string& cache_root, const std::string& key) {
  return std::filesystem::path(cache_root) / "superkernel" / build::md5_hex(key).substr(0, 16) / "choice";
}

std::string body(const std::string& choice) { return choice + "\n"; }

}  // namespace

std::optional<std::string> read_superkernel_record(const std::string& cache_root, const std::string& key) {
  const std::filesystem::path path = record_path(cache_root, key);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string choice, checksum;
  if (std::getline(in, choice) && std::getline(in, checksum) && checksum == "sha256=" + build::sha256_hex(body(choice))) {
    return choice;
  }
  logger().warn("ignoring {}: it is truncated or its checksum does not match; the SuperKernel is measured again",
                path.string());
  return std::nullopt;
}

void write_superkernel_record(const std::string& cache_root, const std::string& key, const std::string& choice) {
  const std::filesystem::path path = record_path(cache_root, key);
  std::filesystem::create_directories(path.parent_path());
  io::write_file_atomically(path.string(), body(choice) + "sha256=" + build::sha256_hex(body(choice)) + "\n");
}

}  // namespace tilefuse::driver
