// A model package (model.tfx): a model compiled and tuned ahead of time, run here with nothing
// but the runtime. `tilefuse compile` and Executable::save write it (driver/package_writer.h);
// this reads it. A directory of:
//   manifest.json  what it is: format and tilefuse versions, the graph's inputs and outputs, the
//                  target CPU's features, the thread count it was tuned for, its plan (the steps,
//                  the kernel each kernel step runs and how it was tuned, each GEMM's blocking),
//                  and every other file's size and sha256
//   graph.tfir     the planned graph in the IR's text form (ir/printer.h), its large tensors as
//                  external<OFFSET> into weights.bin
//   weights.bin    constant data, 64-byte aligned, mapped (not read or parsed) at load
//   model.cpp      the generated whole-model source: every kernel's source, renamed, and the
//                  table of the kernels by step with their kernel keys
//   model.so       model.cpp compiled: every kernel in one library
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "tilefuse/tilefuse.h"

namespace tilefuse::runtime {

namespace package {
inline constexpr int kFormatVersion = 1;
inline constexpr const char* kFormatName = "tilefuse-model-package";
inline constexpr const char* kManifest = "manifest.json";
inline constexpr const char* kGraph = "graph.tfir";
inline constexpr const char* kWeights = "weights.bin";
inline constexpr const char* kSource = "model.cpp";
inline constexpr const char* kLibrary = "model.so";
inline constexpr size_t kWeightAlignment = 64;
}  // namespace package

// Loads the package at `dir`. `threads`: worker threads (default: the package's own, at most
// this machine's cores). Throws UserError naming the file and what is wrong with it.
std::shared_ptr<Executable::Impl> load_model_package(const std::string& dir, std::optional<int> threads);

// The CPU features (as the package's manifest lists them, e.g. "AVX512F") that this CPU lacks,
// among those the runtime knows how to check.
std::vector<std::string> missing_cpu_features(const std::vector<std::string>& features);

}  // namespace tilefuse::runtime
