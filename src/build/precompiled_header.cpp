#include "build/precompiled_header.h"

#include <filesystem>

#include "build/file_lock.h"
#include "build/process.h"
#include "ir/log.h"

namespace tilefuse::build {

void ensure_precompiled_header(const Toolchain& toolchain, const std::string& header_path) {
  if (toolchain.identity.find("clang") != std::string::npos) return;  // .gch is GCC's format
  std::string gch = header_path + ".gch";
  if (std::filesystem::exists(gch)) return;
  FileLock lock(header_path + ".lock");
  if (std::filesystem::exists(gch)) return;  // another process made it while we waited
  std::string temp = gch + ".tmp";
  std::vector<std::string> argv = toolchain.command;
  for (const auto& flag : toolchain.flags) {
    if (flag != "-shared") argv.push_back(flag);
  }
  for (const auto& dir : toolchain.include_dirs) argv.push_back("-I" + dir);
  argv.insert(argv.end(), {"-x", "c++-header", header_path, "-o", temp});
  ProcessResult result = run_process(argv);
  if (!result.succeeded()) {
    logger().warn("precompiling {} failed ({}); kernels compile without it", header_path, result.status_text());
    std::filesystem::remove(temp);
    return;
  }
  std::filesystem::rename(temp, gch);
}

}  // namespace tilefuse::build
