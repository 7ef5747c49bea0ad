#include "api/model_packaging.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "api/output_files.h"
#include "build/artifact_cache.h"
#include "build/file_lock.h"
#include "build/hashing.h"
#include "build/toolchain.h"
#include "codegen/support_headers.h"
#include "driver/executor.h"
#include "ir/error.h"
#include "ir/log.h"
#include "ir/printer.h"
#include "runtime/model_package.h"
#include "tilefuse/version.h"

namespace tilefuse::api {

namespace {

namespace fs = std::filesystem;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// What a cached package depends on: the graph with every constant's bytes (hashed, not printed),
// the mode, the device limit, TopN, the products' precision, the compiler and the code generator.
std::string package_key(const Graph& graph, Mode mode, const driver::ExecutorOptions& options) {
  std::string data_hashes;
  PrintOptions print;
  print.place_data = [&](const Tensor& t) {
    data_hashes += build::sha256_hex({static_cast<const char*>(t.raw()), t.nbytes()});
    return static_cast<int64_t>(data_hashes.size());
  };
  const std::string text = print_graph(graph, print);
  const std::string identity =
      fmt::format("{}\n{}\nmode {} threads {} topn {} precision {}\n{}\n{}\ncodegen {}", text, data_hashes,
                  mode_name(mode), options.device.threads, options.autotune_topn,
                  runtime::precision_name(runtime::effective_precision(options.precision)),
                  build::Toolchain::from_environment().identity, kVersion, codegen::kCodegenVersion);
  return build::sha256_hex(identity).substr(0, 16);
}

}  // namespace

bool is_model_package(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::exists(fs::path(path) / runtime::package::kManifest, ec);
}

PackageBuild build_package(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode,
                           const ExecutionOptions& options, const std::string& path) {
  if (mode == Mode::reference) fail_user("a model package needs --mode fused or unfused (reference mode has no kernels)");
  PackageBuild out;
  auto start = std::chrono::steady_clock::now();
  driver::ExecutorCounters counters;
  driver::Executor executor(graph, executor_options(mode, options), counters);
  out.compile_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  executor.run(inputs.by_name());
  out.tune_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  executor.save_package(path);
  out.write_ms = ms_since(start);
  out.counters = counter_values(counters);
  return out;
}

LoadedPackage load_package(const std::string& path, std::optional<int> threads) {
  const auto start = std::chrono::steady_clock::now();
  LoadedPackage out;
  out.executable = runtime::load_model_package(path, threads);
  out.load_ms = ms_since(start);
  return out;
}

RunResult run_package(const LoadedPackage& package, const runtime::BoundInputs& inputs) {
  RunResult result = run_executable(*package.executable, inputs);
  result.compile_ms = package.load_ms;
  result.compile_phases_ms["package_load"] = package.load_ms;
  return result;
}

CachedPackage cached_package(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode,
                             const ExecutionOptions& options) {
  const driver::ExecutorOptions resolved = executor_options(mode, options);
  // The cache's trust checks (a private root) before anything in it is loaded.
  const build::ArtifactCache cache(resolved.cache_dir.empty() ? build::ArtifactCache::default_root() : resolved.cache_dir);
  const fs::path dir = fs::path(cache.root()) / "packages" / (safe_file_stem(graph.name) + "-" + package_key(graph, mode, resolved));
  fs::create_directories(dir);
  const std::string path = (dir / "model.tfx").string();
  CachedPackage out;
  build::FileLock lock((dir / "build.lock").string());  // one process builds, the others wait and load it
  if (is_model_package(path)) {
    try {
      out.loaded = load_package(path, options.threads);
      return out;
    } catch (const UserError& e) {
      logger().warn("cpp wrapper: the cached package cannot be used, building it again: {}", e.what());
    }
  }
  const auto build_start = std::chrono::steady_clock::now();
  out.built = build_package(graph, inputs, mode, options, path);
  out.build_ms = ms_since(build_start);
  out.loaded = load_package(path, options.threads);
  return out;
}

RunResult run_with_cpp_wrapper(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode,
                               const ExecutionOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const CachedPackage package = cached_package(graph, inputs, mode, options);
  RunResult result = run_package(package.loaded, inputs);
  result.compile_ms = ms_since(start) - result.elapsed_ms;
  if (package.build_ms > 0) result.compile_phases_ms["package_build"] = package.build_ms;
  result.counters["package_built"] = package.build_ms > 0;
  result.precision = runtime::precision_name(runtime::effective_precision(options.precision));
  for (const char* name : {"compiles", "cache_hits", "candidates_measured", "kernels_tuned"}) {
    if (package.built.counters.count(name)) result.counters[name] = package.built.counters.at(name);
  }
  return result;
}

bool cpp_wrapper_from_environment() {
  const char* value = std::getenv("TILEFUSE_CPP_WRAPPER");
  if (value == nullptr || std::string_view(value).empty() || std::string_view(value) == "0") return false;
  if (std::string_view(value) == "1") return true;
  fail_user("TILEFUSE_CPP_WRAPPER must be 0 or 1, got '{}'", value);
}

}  // namespace tilefuse::api
