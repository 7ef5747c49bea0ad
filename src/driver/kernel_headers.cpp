#include "driver/kernel_headers.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "build/file_lock.h"
#include "build/hashing.h"
#include "build/precompiled_header.h"
#include "codegen/support_headers.h"
#include "io/atomic_file.h"
#include "io/file_reading.h"
#include "ir/log.h"

namespace tilefuse::driver {

namespace {

namespace fs = std::filesystem;

constexpr const char* kMainHeader = "tilefuse_kernel.h";

// Copies the prebuilt precompiled header into `headers` when it was made for this toolchain;
// returns whether it did.
bool copy_prebuilt(const KernelHeaders& headers, const build::Toolchain& toolchain) {
  const std::string root = prebuilt_kernel_headers_root();
  if (root.empty()) return false;
  const fs::path prebuilt = fs::path(root) / "include" / headers.fingerprint / (std::string(kMainHeader) + ".gch");
  const fs::path identity = prebuilt.string() + ".identity";
  std::error_code ec;
  if (!fs::is_regular_file(prebuilt, ec) || !fs::is_regular_file(identity, ec) ||
      io::read_file(identity.string()) != toolchain.identity) {
    return false;
  }
  const fs::path target = fs::path(headers.dir) / (std::string(kMainHeader) + ".gch");
  build::FileLock lock(fs::path(headers.dir) / (std::string(kMainHeader) + ".lock"));
  if (fs::exists(target)) return true;
  const fs::path temp = target.string() + ".tmp";
  fs::copy_file(prebuilt, temp, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    logger().debug("kernel headers: cannot copy the prebuilt {}: {}", prebuilt.string(), ec.message());
    fs::remove(temp, ec);
    return false;
  }
  fs::rename(temp, target);
  logger().debug("kernel headers: precompiled header copied from {}", prebuilt.string());
  return true;
}

}  // namespace

KernelHeaders install_kernel_headers(const std::string& root) {
  std::string all;
  for (const auto& h : codegen::support_headers()) all += h.relative_path + '\0' + h.text + '\0';
  KernelHeaders out;
  out.fingerprint = build::sha256_hex(all).substr(0, 16);
  const fs::path dir = fs::path(root) / "include" / out.fingerprint;
  for (const auto& h : codegen::support_headers()) {
    fs::path file = dir / h.relative_path;
    if (fs::exists(file) && fs::file_size(file) == h.text.size()) continue;
    fs::create_directories(file.parent_path());
    io::write_file_atomically(file.string(), h.text);
  }
  out.dir = dir.string();
  return out;
}

void precompile_kernel_headers(const KernelHeaders& headers, const build::Toolchain& toolchain) {
  const std::string header = headers.dir + "/" + kMainHeader;
  if (fs::exists(header + ".gch") || copy_prebuilt(headers, toolchain)) return;
  build::ensure_precompiled_header(toolchain, header);
}

std::string prebuilt_kernel_headers_root() {
  std::vector<fs::path> places;
  if (const char* env = std::getenv("TILEFUSE_PREBUILT_KERNEL_HEADERS"); env != nullptr && *env != '\0') places.push_back(env);
  // Next to the binary this code is in: lib/tilefuse/ beside an installed libtilefuse.so, the
  // Python package's folder beside its extension module, or an installed command's lib/tilefuse/.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&prebuilt_kernel_headers_root), &self) != 0 && self.dli_fname != nullptr) {
    const fs::path dir = fs::path(self.dli_fname).parent_path();
    places.push_back(dir / "tilefuse" / "prebuilt-kernel-headers");
    places.push_back(dir / "prebuilt-kernel-headers");
#ifdef TILEFUSE_INSTALL_LIBDIR
    // An installed bin/tilefuse, which links the layers statically: the install's library folder.
    places.push_back(dir.parent_path() / TILEFUSE_INSTALL_LIBDIR / "tilefuse" / "prebuilt-kernel-headers");
#endif
  }
#ifdef TILEFUSE_PREBUILT_KERNEL_HEADERS
  places.push_back(TILEFUSE_PREBUILT_KERNEL_HEADERS);  // the build tree's
#endif
  std::error_code ec;
  for (const fs::path& place : places) {
    if (fs::is_directory(place / "include", ec)) return place.string();
  }
  return "";
}

}  // namespace tilefuse::driver
