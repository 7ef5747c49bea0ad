// `tilefuse inspect model.tfx`: what a model package holds (its manifest: inputs, outputs, target
// CPU, the steps and each kernel's tuned candidate) and whether every file still has the sha256
// the manifest recorded.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tilefuse::api {

// The manifest plus "checksums": per file "ok", "mismatch" or "missing", and "intact": all ok.
// Throws UserError when `path` holds no readable manifest.
nlohmann::json package_report(const std::string& path);

std::string package_report_to_text(const nlohmann::json& report);

}  // namespace tilefuse::api
