#include "driver/package_writer.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "build/compile_pool.h"
#include "build/hashing.h"
#include "io/file_reading.h"
#include "ir/error.h"
#include "ir/log.h"
#include "ir/printer.h"
#include "runtime/cpu_isa.h"
#include "runtime/model_package.h"
#include "tilefuse/kernel_abi.h"
#include "tilefuse/version.h"

namespace tilefuse::driver {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
namespace package = runtime::package;

void write_file(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out.flush()) fail_user("cannot write '{}': {}", file.string(), std::strerror(errno));
}

// What one kernel step of the package runs: its library as tuned (or, still untuned, its first
// candidate) and where that came from.
struct PackagedKernel {
  size_t step = 0;
  std::string name;
  std::string kernel_key;  // the candidate's cache directory name; "jit" for a jit kernel
  std::string source;      // the kernel's C++ as the cache compiled it
  std::string symbol_prefix;
  const BuiltKernel* built = nullptr;
  bool unmeasured = false;
};

PackagedKernel packaged_kernel(size_t step, const fusion::FusedKernel& kernel, const BuiltKernel& built) {
  PackagedKernel out{step, kernel.name, "jit", "", fmt::format("tf_step{}", step), &built, false};
  const runtime::KernelLibrary* library = built.library.get();
  if (library == nullptr) {  // TopN candidates never measured: the seed's rule is the first one
    library = built.candidate_libraries.at(0).get();
    out.unmeasured = true;
    logger().warn("package: kernel {} never ran, so its {} candidates were not measured: it takes the first, unmeasured",
                 kernel.name, built.candidate_libraries.size());
  }
  const fs::path dir = fs::path(library->path()).parent_path();
  if (built.path != tiling::CompilePath::Jit) out.kernel_key = dir.filename().string();
  out.source = io::read_file((dir / "kernel.cpp").string());  // beside kernel.so in every cache entry (build/library_entry.h)
  return out;
}

// weights.bin, written as it grows: large tensors (what graph.tfir's external<OFFSET> points at)
// and the GEMMs' packed weights, each at an aligned offset.
class WeightsFile {
 public:
  explicit WeightsFile(const fs::path& file) : file_(file), out_(file, std::ios::binary) {
    if (!out_) fail_user("cannot write '{}': {}", file.string(), std::strerror(errno));
  }
  int64_t place(const void* data, size_t bytes) {
    static const char zeros[package::kWeightAlignment] = {};
    out_.write(zeros, static_cast<std::streamsize>((package::kWeightAlignment - size_ % package::kWeightAlignment) %
                                                   package::kWeightAlignment));
    size_ = (size_ + package::kWeightAlignment - 1) / package::kWeightAlignment * package::kWeightAlignment;
    const auto offset = static_cast<int64_t>(size_);
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    size_ += bytes;
    return offset;
  }
  void close() {
    if (!out_.flush()) fail_user("cannot write '{}': {}", file_.string(), std::strerror(errno));
    out_.close();
  }

 private:
  fs::path file_;
  std::ofstream out_;
  size_t size_ = 0;
};

// Each library call's packed weights, placed in weights.bin: per step, [offset, bytes] pairs.
std::vector<json> place_packed_weights(const PackageContents& c, WeightsFile& weights) {
  std::vector<json> out(c.plan.steps.size(), json::array());
  for (size_t i = 0; i < c.calls.size(); ++i) {
    if (!c.calls[i]) continue;
    for (const runtime::PackedOperand* p : c.calls[i]->packed_operands()) {
      out[i].push_back(json::array({weights.place(p->data(), p->bytes()), p->bytes()}));
    }
  }
  return out;
}

std::string blocking_text(const runtime::GemmBlocking& b) {
  return fmt::format("mc={} kc={} nc={} nb={}", b.mc, b.kc, b.nc, b.nb);
}

json blocking_json(const runtime::GemmBlocking& b) { return json::array({b.mc, b.kc, b.nc, b.nb}); }

std::vector<std::string> names_of(const std::vector<Value*>& values) {
  std::vector<std::string> out;
  for (const Value* v : values) out.push_back(v->name);
  return out;
}

// The packaged kernel of plan step `i`; null for a step that is not a kernel.
const PackagedKernel* kernel_of_step(const std::vector<PackagedKernel>& kernels, size_t i) {
  auto it = std::find_if(kernels.begin(), kernels.end(), [&](const PackagedKernel& k) { return k.step == i; });
  return it == kernels.end() ? nullptr : &*it;
}

// One line per step for model.cpp's opening comment.
std::string step_line(size_t i, const fusion::PlanStep& step, const PackageContents& c, const PackagedKernel* k) {
  if (step.kind == fusion::StepKind::Kernel) {
    std::string ops;
    for (const Node* n : step.kernel.nodes) ops += (ops.empty() ? "" : " ") + n->op;
    return fmt::format("//   {:>3}  kernel   {} ({}) -> kernel key {}{}\n", i, step.kernel.name, ops, k->kernel_key,
                       k->unmeasured ? ", first candidate, unmeasured" : "");
  }
  std::string extra;
  if (c.calls[i] && c.calls[i]->tunes_blocking()) extra = ", GEMM blocking " + blocking_text(c.calls[i]->blocking());
  const char* how = step.kind == fusion::StepKind::View ? "view" : c.calls[i] ? "library" : "host";
  return fmt::format("//   {:>3}  {:<7}  {} @{}{}\n", i, how, step.node->op, step.node->name, extra);
}

// The CPU features the kernels were compiled for: the toolchain target's list, before its hash.
std::vector<std::string> cpu_features(const std::string& target) {
  std::istringstream in(target.substr(0, target.find('|')));
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// model.cpp: what the package runs, step by step (in its opening comment), and the table that
// maps each kernel step to its kernel's renamed entry points in model.so.
std::string model_source(const PackageContents& c, const std::vector<PackagedKernel>& kernels) {
  std::string out = fmt::format("// Model package of graph '{}', generated by tilefuse {} for a CPU with\n//  ", c.graph.name,
                                kVersion);
  size_t column = 4;
  for (const std::string& feature : cpu_features(c.toolchain.target)) {  // wrapped at 100 columns
    if (column + feature.size() + 1 > 100) out += "\n//  ", column = 4;
    out += " " + feature;
    column += feature.size() + 1;
  }
  out += fmt::format(
      "\n// Tuned for {} worker thread(s). The runtime runs these {} steps in order, every buffer in one\n"
      "// arena planned per input shape (runtime/step_runner.h):\n//\n",
      c.device_threads, c.plan.steps.size());
  for (size_t i = 0; i < c.plan.steps.size(); ++i) out += step_line(i, c.plan.steps[i], c, kernel_of_step(kernels, i));
  out += "//\n// Each kernel is kernels/<step>_<name>.cpp, compiled with its entry points renamed tf_step<N>_*.\n"
         "#include \"tilefuse/kernel_abi.h\"\n\nextern \"C\" {\n";
  for (const PackagedKernel& k : kernels) {
    out += fmt::format("int64_t {0}_num_blocks(const int64_t* symbols, int64_t workers);\n"
                       "size_t {0}_scratch_bytes(const int64_t* symbols);\n"
                       "void {0}_run_blocks(void* const* buffers, const int64_t* symbols, int64_t workers, "
                       "int64_t first_block, int64_t end_block, void* scratch);\n",
                       k.symbol_prefix);
  }
  out += "}\n\n";
  if (kernels.empty()) {
    return out + "extern \"C\" __attribute__((visibility(\"default\"))) const tf_package_kernel* tf_package_kernels("
                 "size_t* count) {\n  *count = 0;\n  return nullptr;\n}\n";
  }
  out += "namespace {\n\nconst tf_package_kernel kKernels[] = {\n";
  for (const PackagedKernel& k : kernels) {
    out += fmt::format("    {{{0}, \"{1}\", \"{2}\", {3}_num_blocks, {3}_scratch_bytes, {3}_run_blocks}},\n", k.step,
                       k.name, k.kernel_key, k.symbol_prefix);
  }
  return out + "};\n\n}  // namespace\n\n"
               "extern \"C\" __attribute__((visibility(\"default\"))) const tf_package_kernel* tf_package_kernels("
               "size_t* count) {\n  *count = sizeof(kKernels) / sizeof(kKernels[0]);\n  return kKernels;\n}\n";
}

std::string kernel_file_name(const PackagedKernel& k) { return fmt::format("kernels/{}_{}.cpp", k.step, k.name); }

// Compiles every kernel (renamed) and model.cpp into objects in `build_dir`, in parallel, and
// links them into model.so in `dir`.
void build_library(const PackageContents& c, const fs::path& dir, const fs::path& build_dir,
                   const std::vector<PackagedKernel>& kernels) {
  std::vector<std::string> objects(kernels.size() + 1);
  std::vector<build::CompileJob> jobs;
  for (size_t j = 0; j < kernels.size(); ++j) {
    const PackagedKernel& k = kernels[j];
    objects[j] = (build_dir / fmt::format("kernel{}.o", j)).string();
    std::vector<std::string> renames;
    for (const char* entry : {"abi_version", "num_blocks", "scratch_bytes", "run_blocks"}) {
      renames.push_back(fmt::format("tf_{}={}_{}", entry, k.symbol_prefix, entry));
    }
    jobs.push_back({k.name, [&c, &dir, &k, &objects, j, renames] {
                      build::compile_object(c.toolchain, (dir / kernel_file_name(k)).string(), objects[j], renames);
                    }});
  }
  objects.back() = (build_dir / "model.o").string();
  jobs.push_back({"model.cpp", [&] { build::compile_object(c.toolchain, (dir / package::kSource).string(), objects.back()); }});
  build::run_compile_jobs(std::move(jobs), c.compile_threads);
  build::link_shared_library(c.toolchain, objects, (dir / package::kLibrary).string());
}

json value_specs(const std::vector<Value*>& values) {
  json out = json::array();
  for (const Value* v : values) {
    json shape = json::array();
    for (const Dim& d : v->shape) shape.push_back(d.to_string());
    out.push_back({{"name", v->name}, {"type", v->type_string()}, {"dtype", dtype_name(v->dtype)}, {"shape", shape}});
  }
  return out;
}

// Packages of the If branches that run as sub-models, in branches/<step>_<then|else>.tfx: per
// step, {"then_branch": path, "else_branch": path} relative to the package.
std::vector<json> write_branches(const PackageContents& c, const fs::path& dir) {
  std::vector<json> out(c.plan.steps.size(), json());
  for (size_t i = 0; i < c.plan.steps.size(); ++i) {
    const fusion::PlanStep& step = c.plan.steps[i];
    if (step.kind == fusion::StepKind::Kernel || step.node->op != "If" || !c.calls[i] || !c.save_branch) continue;
    for (const bool then_side : {true, false}) {
      const std::string relative = fmt::format("branches/{}_{}.tfx", i, then_side ? "then" : "else");
      c.save_branch(i, then_side, (dir / relative).string());
      out[i][then_side ? "then_branch" : "else_branch"] = relative;
    }
  }
  return out;
}

json step_json(size_t i, const PackageContents& c, const PackagedKernel* k, const json& packed, const json& branches) {
  const fusion::PlanStep& step = c.plan.steps[i];
  json s = {{"kind", std::string(fusion::step_kind_name(step.kind))}};
  if (step.kind != fusion::StepKind::Kernel) {
    s["node"] = step.node->name;
    if (!branches.is_null()) s["branches"] = branches;
    if (c.calls[i] && c.calls[i]->tunes_blocking()) s["blocking"] = blocking_json(c.calls[i]->blocking());
    if (!packed.empty()) s["packed_weights"] = packed;
    return s;
  }
  const fusion::FusedKernel& kernel = step.kernel;
  std::vector<std::string> nodes, buffers;
  for (const Node* n : kernel.nodes) nodes.push_back(n->name);
  for (const Value* v : k->built->source.buffers) buffers.push_back(v->name);
  s.update({{"name", kernel.name},
            {"nodes", nodes},
            {"inputs", names_of(kernel.inputs)},
            {"outputs", names_of(kernel.outputs)},
            {"patterns", kernel.patterns},
            {"buffers", buffers},
            {"symbols", k->built->source.symbols},
            {"block_dim", k->built->block_dim},
            {"compile_path", std::string(tiling::compile_path_name(k->built->path))},
            {"kernel_key", k->kernel_key},
            {"tiling", k->unmeasured ? k->built->candidates.at(0).tiling.repr() : k->built->tiling_repr},
            {"unmeasured", k->unmeasured},
            {"source", kernel_file_name(*k)}});
  return s;
}

// Each row chain (fusion/row_chains.h) as its three step indices.
json row_chains_json(const fusion::FusionPlan& plan) {
  json out = json::array();
  for (const fusion::RowChain& c : plan.row_chains) out.push_back({c.first_product, c.kernel, c.second_product});
  return out;
}

json manifest(const PackageContents& c, const std::vector<PackagedKernel>& kernels, const std::vector<json>& packed,
              const std::vector<json>& branches, const fs::path& dir) {
  json steps = json::array();
  for (size_t i = 0; i < c.plan.steps.size(); ++i) {
    steps.push_back(step_json(i, c, kernel_of_step(kernels, i), packed[i], branches[i]));
  }
  json files = json::object();
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = fs::relative(entry.path(), dir).string();
    files[name] = {{"bytes", entry.file_size()}, {"sha256", build::sha256_file_hex(entry.path().string())}};
  }
  return {{"format", package::kFormatName},
          {"format_version", package::kFormatVersion},
          {"tilefuse_version", kVersion},
          {"kernel_abi_version", TILEFUSE_KERNEL_ABI_VERSION},
          {"graph", c.graph.name},
          {"mode", c.fused ? "fused" : "unfused"},
          {"compiler", c.toolchain.version},
          {"target", c.toolchain.target},
          {"cpu_features", cpu_features(c.toolchain.target)},
          {"device_threads", c.device_threads},
          {"gemm_blocking", blocking_json(c.default_blocking)},
          // The micro-kernel whose panel layout the packed weights have (runtime/sgemm.h).
          {"packed_weights_isa", runtime::own_gemm_engine() ? runtime::isa_name(runtime::vector_isa()) : "none"},
          {"precision", runtime::precision_name(c.precision)},
          {"inputs", value_specs(c.graph.inputs())},
          {"outputs", value_specs(c.graph.outputs())},
          {"steps", steps},
          {"row_chains", row_chains_json(c.plan)},
          {"files", files}};
}

// An existing package at `path` may be replaced; anything else there is the user's.
void check_target(const fs::path& path) {
  if (!fs::exists(path)) return;
  const fs::path manifest_file = path / package::kManifest;
  bool is_package = fs::is_directory(path) && fs::exists(manifest_file);
  if (is_package) {
    try {
      is_package = json::parse(io::read_file(manifest_file.string())).value("format", "") == package::kFormatName;
    } catch (const json::exception&) {
      is_package = false;
    }
  }
  if (!is_package) fail_user("cannot write the model package '{}': something that is not a model package is there", path.string());
}

}  // namespace

void write_package(const PackageContents& c, const std::string& path_text) {
  const fs::path path = fs::absolute(path_text).lexically_normal();
  check_target(path);
  const fs::path staging = path.string() + fmt::format(".partial-{}", ::getpid());
  const fs::path build_dir = path.string() + fmt::format(".build-{}", ::getpid());
  fs::remove_all(staging);
  fs::remove_all(build_dir);
  fs::create_directories(staging / "kernels");
  fs::create_directories(build_dir);
  try {
    std::vector<PackagedKernel> kernels;
    for (size_t i = 0; i < c.plan.steps.size(); ++i) {
      if (c.plan.steps[i].kind == fusion::StepKind::Kernel) kernels.push_back(packaged_kernel(i, c.plan.steps[i].kernel, c.kernels[i]));
    }
    WeightsFile weights(staging / package::kWeights);
    PrintOptions print;
    print.place_data = [&](const Tensor& t) { return weights.place(t.raw(), t.nbytes()); };
    write_file(staging / package::kGraph, print_graph(c.graph, print));
    const std::vector<json> packed = place_packed_weights(c, weights);
    weights.close();
    for (const PackagedKernel& k : kernels) write_file(staging / kernel_file_name(k), k.source);
    write_file(staging / package::kSource, model_source(c, kernels));
    build_library(c, staging, build_dir, kernels);
    const std::vector<json> branches = write_branches(c, staging);
    write_file(staging / package::kManifest, manifest(c, kernels, packed, branches, staging).dump(2) + "\n");
  } catch (...) {
    fs::remove_all(staging);
    fs::remove_all(build_dir);
    throw;
  }
  fs::remove_all(build_dir);
  fs::remove_all(path);
  fs::rename(staging, path);
  logger().info("package: wrote {}", path.string());
}

}  // namespace tilefuse::driver
