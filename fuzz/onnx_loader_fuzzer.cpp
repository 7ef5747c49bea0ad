// libFuzzer target for the ONNX loader (`make fuzz`). Any input must either import or fail with
// a UserError; every other exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include <spdlog/spdlog.h>

#include "frontend/onnx_importer.h"
#include "ir/log.h"
#include "ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    tilefuse::logger().set_level(spdlog::level::warn);
    return true;
  }();
  (void)quiet;
  try {
    tilefuse::frontend::import_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>");
  } catch (const tilefuse::UserError&) {
  }
  return 0;
}
