#include "runtime/model_package.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "fusion/fusion_plan.h"
#include "fusion/iteration_space.h"
#include "fusion/shape_only_steps.h"
#include "ir/error.h"
#include "io/file_reading.h"
#include "ir/log.h"
#include "ir/parser.h"
#include "runtime/branch_call.h"
#include "runtime/cpu_isa.h"
#include "runtime/device_limit.h"
#include "runtime/executable_impl.h"
#include "runtime/kernel_library.h"
#include "runtime/library_call.h"
#include "runtime/sgemm.h"
#include "runtime/step_runner.h"
#include "runtime/thread_team.h"
#include "tilefuse/kernel_abi.h"
#include "tilefuse/version.h"

namespace tilefuse::runtime {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Everything that is wrong with a package is reported through this: the file and the problem.
template <typename... Args>
[[noreturn]] void fail_package(const fs::path& file, fmt::format_string<Args...> format, Args&&... args) {
  fail_user("model package file '{}': {}", file.string(), fmt::format(format, std::forward<Args>(args)...));
}

json read_manifest(const fs::path& dir) {
  if (!fs::is_directory(dir)) fail_user("model package '{}': not a directory (a package is the directory `tilefuse compile -o` writes)", dir.string());
  const fs::path file = dir / package::kManifest;
  if (!fs::exists(file)) fail_package(file, "missing: '{}' is not a model package", dir.string());
  json manifest;
  try {
    manifest = json::parse(io::read_file(file.string()));
    if (manifest.value("format", "") != package::kFormatName) fail_package(file, "not a tilefuse model package manifest");
    const int version = manifest.at("format_version").get<int>();
    if (version != package::kFormatVersion) {
      fail_package(file, "format version {} (tilefuse {}); this tilefuse {} reads version {}: compile the model again",
                   version, manifest.value("tilefuse_version", "?"), kVersion, package::kFormatVersion);
    }
    const int abi = manifest.at("kernel_abi_version").get<int>();
    if (abi != TILEFUSE_KERNEL_ABI_VERSION) {
      fail_package(file, "kernel ABI version {}, this runtime's is {}: compile the model again", abi,
                   TILEFUSE_KERNEL_ABI_VERSION);
    }
  } catch (const json::exception& e) {
    fail_package(file, "malformed: {}", e.what());
  }
  return manifest;
}

// Each file the manifest lists is there with its recorded size: a truncated or replaced file is
// refused here, before anything is mapped or loaded. (Checksums are `tilefuse inspect`'s business:
// hashing the weights on every load would cost more than mapping them.)
void check_files(const fs::path& dir, const json& manifest) {
  for (const auto& [name, info] : manifest.at("files").items()) {
    const fs::path file = dir / name;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) fail_package(file, "missing (the manifest lists it)");
    const auto bytes = fs::file_size(file, ec);
    const auto expected = info.at("bytes").get<uintmax_t>();
    if (ec || bytes != expected) fail_package(file, "is {} bytes, the manifest says {}: truncated or replaced", bytes, expected);
  }
}

// The file's bytes, mapped copy-on-write: pages are read when first touched, and nothing writes
// them back.
struct MappedFile {
  std::shared_ptr<void> region;
  size_t size = 0;
};

MappedFile map_file(const fs::path& file) {
  MappedFile out;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_package(file, "cannot be opened ({})", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail_package(file, "cannot be read ({})", std::strerror(errno));
  }
  out.size = static_cast<size_t>(st.st_size);
  if (out.size == 0) {
    ::close(fd);
    return out;
  }
  void* p = ::mmap(nullptr, out.size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) fail_package(file, "cannot be mapped ({})", std::strerror(errno));
  const size_t size = out.size;
  out.region = std::shared_ptr<void>(p, [size](void* q) { ::munmap(q, size); });
  return out;
}

Graph read_graph(const fs::path& dir, const MappedFile& weights) {
  const fs::path weights_file = dir / package::kWeights;
  ParseOptions options;
  options.external_data = [&](DType dtype, const std::vector<int64_t>& dims, int64_t offset) {
    Tensor shape_only = Tensor::view(dtype, dims, nullptr);
    const size_t end = static_cast<size_t>(offset) + shape_only.nbytes();
    if (offset % static_cast<int64_t>(package::kWeightAlignment) != 0 || end > weights.size) {
      fail_package(weights_file, "holds no {} at offset {} ({} bytes long)", shape_only.summary(), offset, weights.size);
    }
    return Tensor::shared(dtype, dims, weights.region, static_cast<uint8_t*>(weights.region.get()) + offset);
  };
  const fs::path file = dir / package::kGraph;
  try {
    return parse_graph(io::read_file(file.string()), options);
  } catch (const UserError& e) {
    fail_package(file, "{}", e.what());
  }
}

std::vector<std::string> strings(const json& j) { return j.get<std::vector<std::string>>(); }

fusion::StepKind step_kind(const std::string& name, const fs::path& file) {
  for (auto kind : {fusion::StepKind::Kernel, fusion::StepKind::LibraryCall, fusion::StepKind::View, fusion::StepKind::Host}) {
    if (fusion::step_kind_name(kind) == name) return kind;
  }
  fail_package(file, "unknown step kind '{}'", name);
}

GemmBlocking blocking_from(const json& j) { return {j.at(0).get<int64_t>(), j.at(1).get<int64_t>(), j.at(2).get<int64_t>(), j.at(3).get<int64_t>()}; }

// The plan the package was compiled with, its steps pointing into `graph`.
class PlanReader {
 public:
  PlanReader(const Graph& graph, fs::path manifest_file) : file_(std::move(manifest_file)) {
    for (Node* n : graph.nodes()) nodes_[n->name] = n;
    for (Value* v : graph.values()) values_[v->name] = v;
  }

  fusion::PlanStep step(const json& j) {
    fusion::PlanStep step;
    step.kind = step_kind(j.at("kind").get<std::string>(), file_);
    if (step.kind != fusion::StepKind::Kernel) {
      step.node = node(j.at("node").get<std::string>());
      return step;
    }
    fusion::FusedKernel& k = step.kernel;
    k.name = j.at("name").get<std::string>();
    for (const std::string& n : strings(j.at("nodes"))) k.nodes.push_back(node(n));
    k.inputs = values(j.at("inputs"));
    k.outputs = values(j.at("outputs"));
    k.patterns = strings(j.at("patterns"));
    fusion::IterationSpaceResult space = fusion::derive_iteration_space(k.nodes);
    if (!space.space) fail_package(file_, "kernel '{}' is not a kernel of this graph: {}", k.name, space.reason);
    k.space = std::move(*space.space);
    return step;
  }

  std::vector<const Value*> buffers(const json& j) {
    std::vector<const Value*> out;
    for (Value* v : values(j)) out.push_back(v);
    return out;
  }

 private:
  Node* node(const std::string& name) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) fail_package(file_, "the plan names node '{}', which graph.tfir lacks", name);
    return it->second;
  }
  std::vector<Value*> values(const json& names) {
    std::vector<Value*> out;
    for (const std::string& name : strings(names)) {
      auto it = values_.find(name);
      if (it == values_.end()) fail_package(file_, "the plan names value '{}', which graph.tfir lacks", name);
      out.push_back(it->second);
    }
    return out;
  }

  fs::path file_;
  std::map<std::string, Node*> nodes_;
  std::map<std::string, Value*> values_;
};

// The package's model.so, open for as long as a kernel of it is.
std::shared_ptr<void> open_library(const fs::path& file) {
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) fail_package(file, "cannot be loaded: {}", ::dlerror());
  return std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
}

int package_threads(std::optional<int> requested, int tuned_for) {
  const DeviceLimit limit = resolve_device_limit(requested);
  return limit.explicit_limit ? limit.threads : std::max(1, std::min(limit.threads, tuned_for));
}

// A loaded package: the plan read back, every kernel from the one library, the library calls
// prepared, and the same step runner the compiler's executor uses.
struct PackagedModel : Executable::Impl, KernelProvider {
  fs::path dir;
  json manifest;
  MappedFile weights;
  Graph graph_;
  fusion::FusionPlan plan;
  std::shared_ptr<void> library;
  std::vector<StepKernel> kernels;  // per step
  std::vector<KernelStep> kernel_steps;
  std::vector<std::unique_ptr<LibraryCall>> calls;
  std::vector<bool> shape_only;
  std::shared_ptr<ThreadTeam> team;
  RunOptions run_options;
  RunCounters run_counters;
  int64_t packed_weight_bytes = 0;
  std::unique_ptr<StepRunner> runner;

  PackagedModel(fs::path package_dir, std::optional<int> threads) : dir(std::move(package_dir)) {
    try {  // a field the manifest lacks or holds in the wrong type: malformed, whichever step reads it
      timed("manifest", [&] {
        manifest = read_manifest(dir);
        check_files(dir, manifest);
        check_cpu();
      });
      timed("map", [&] { weights = map_file(dir / package::kWeights); });
      timed("graph", [&] { graph_ = read_graph(dir, weights); });
      timed("plan", [&] { read_plan(); });
      team = ThreadTeam::shared(package_threads(threads, manifest.at("device_threads").get<int>()));
      run_options.superkernel = superkernel_mode_from_environment();
      timed("kernels", [&] { load_kernels(); });
      timed("library_calls", [&] { prepare_calls(); });
    } catch (const json::exception& e) {
      fail_package(dir / package::kManifest, "malformed: {}", e.what());
    }
    runner = std::make_unique<StepRunner>(graph_, plan, kernel_steps, calls, shape_only, *team, *this, run_options,
                                          run_counters);
  }

  // Where a load spends its time, for the debug log.
  std::string load_phases;
  template <typename F>
  void timed(const char* phase, F&& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    load_phases += fmt::format("{}{} {:.1f} ms", load_phases.empty() ? "" : ", ", phase,
                               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }

  void check_cpu() const {
    const auto missing = missing_cpu_features(strings(manifest.at("cpu_features")));
    if (!missing.empty()) {
      fail_user("model package '{}' was compiled for a CPU with {}, which this CPU lacks: compile the model on (or "
                "for) this machine", dir.string(), fmt::join(missing, ", "));
    }
  }

  void read_plan() {
    PlanReader reader(graph_, dir / package::kManifest);
    const json& steps = manifest.at("steps");
    plan.graph_name = graph_.name;
    kernel_steps.resize(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      plan.steps.push_back(reader.step(steps[i]));
      if (plan.steps[i].kind == fusion::StepKind::Kernel) {
        kernel_steps[i] = {reader.buffers(steps[i].at("buffers")), strings(steps[i].at("symbols"))};
      }
    }
    shape_only = fusion::find_shape_only_steps(plan);
    // Packages written before row chains have none: their steps then run one by one.
    for (const json& c : manifest.value("row_chains", json::array())) {
      const fusion::RowChain chain{c.at(0).get<size_t>(), c.at(1).get<size_t>(), c.at(2).get<size_t>()};
      if (chain.second_product >= plan.steps.size() || chain.first_product + 1 != chain.kernel ||
          chain.kernel + 1 != chain.second_product || plan.steps[chain.kernel].kind != fusion::StepKind::Kernel) {
        fail_package(dir / package::kManifest, "row chain {} names steps that are not a product, a kernel and a product", c.dump());
      }
      plan.steps[chain.kernel].kernel.row_by_row = true;
      plan.row_chains.push_back(chain);
    }
  }

  void load_kernels() {
    kernels.resize(plan.steps.size());
    const fs::path file = dir / package::kLibrary;
    library = open_library(file);
    auto list = reinterpret_cast<tf_package_kernels_fn>(::dlsym(library.get(), TILEFUSE_SYMBOL_PACKAGE_KERNELS));
    if (list == nullptr) fail_package(file, "has no {} table", TILEFUSE_SYMBOL_PACKAGE_KERNELS);
    size_t count = 0;
    const tf_package_kernel* table = list(&count);
    for (size_t k = 0; k < count; ++k) {
      const tf_package_kernel& entry = table[k];
      const auto step = static_cast<size_t>(entry.step);
      if (entry.step < 0 || step >= plan.steps.size() || plan.steps[step].kind != fusion::StepKind::Kernel ||
          plan.steps[step].kernel.name != entry.name) {
        fail_package(file, "its kernel '{}' for step {} does not match the manifest's plan", entry.name, entry.step);
      }
      kernels[step].library = KernelLibrary::from_entry_points(library, entry, fmt::format("{}:{}", file.string(), entry.name));
      kernels[step].block_dim = manifest.at("steps")[step].at("block_dim").get<int>();
    }
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (plan.steps[i].kind == fusion::StepKind::Kernel && !kernels[i].library) {
        fail_package(file, "has no kernel for step {} ('{}')", i, plan.steps[i].kernel.name);
      }
    }
  }

  // GEMM, convolution and the runtime's host steps, as the compiler prepared them: each GEMM with
  // the blocking tuned for it, its constant weights mapped as the compiler packed them (packed
  // again only when this process's GEMM micro-kernel differs from the one they were packed for).
  void prepare_calls() {
    calls.resize(plan.steps.size());
    const GemmBlocking fallback = blocking_from(manifest.at("gemm_blocking"));
    const std::string packed_for = manifest.value("packed_weights_isa", "none");
    // bf16 weights are packed in pairs: a CPU that multiplies in f32 instead packs them again.
    const Precision precision = parse_precision(manifest.value("precision", "f32"), "the package's precision");
    const bool use_packed =
        own_gemm_engine() && packed_for == isa_name(vector_isa()) && effective_precision(precision) == precision;
    if (!use_packed && packed_for != "none") {
      logger().info("package {}: its weights were packed for the {} GEMM kernel, this process runs {}: packing again",
                   dir.string(), packed_for, own_gemm_engine() ? isa_name(vector_isa()) : "OpenBLAS");
    }
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const fusion::PlanStep& step = plan.steps[i];
      if (!runs_on_its_node(step, shape_only[i])) continue;
      const json& s = manifest.at("steps")[i];
      if (s.contains("branches")) {
        const json& b = s.at("branches");
        calls[i] = make_branch_call(*step.node, branch(b.at("then_branch").get<std::string>()),
                                    branch(b.at("else_branch").get<std::string>()));
        continue;
      }
      if (!library_call_supports(*step.node)) continue;
      std::optional<PrepackedOperands> prepacked;
      if (use_packed && s.contains("packed_weights")) prepacked.emplace(packed_regions(s.at("packed_weights")), weights.region);
      try {
        calls[i] = prepare_library_call(*step.node, s.contains("blocking") ? blocking_from(s.at("blocking")) : fallback,
                                        precision);
      } catch (const UserError& e) {
        fail_package(dir / package::kWeights, "step {} ({}): {}", i, step.node->name, e.what());
      }
      if (prepacked && prepacked->left() > 0) {
        fail_package(dir / package::kWeights, "step {} ({}): {} packed weights stored that it does not use", i,
                     step.node->name, prepacked->left());
      }
      packed_weight_bytes += static_cast<int64_t>(calls[i]->packed_bytes());
    }
  }

  // A branch of an If, a package inside this one.
  std::unique_ptr<SubgraphRunner> branch(const std::string& relative) const {
    struct PackagedBranch : SubgraphRunner {
      std::shared_ptr<Executable::Impl> model;
      const Graph& graph() const override { return model->graph(); }
      void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) override {
        model->run_checked(inputs, outputs);
      }
    };
    auto runner = std::make_unique<PackagedBranch>();
    runner->model = load_model_package((dir / relative).string(), team->size());
    return runner;
  }

  std::vector<PrepackedOperands::Region> packed_regions(const json& pairs) const {
    std::vector<PrepackedOperands::Region> regions;
    for (const json& pair : pairs) {
      const auto offset = pair.at(0).get<size_t>(), bytes = pair.at(1).get<size_t>();
      if (offset % package::kWeightAlignment != 0 || offset + bytes > weights.size) {
        fail_package(dir / package::kWeights, "holds no packed weights of {} bytes at offset {}", bytes, offset);
      }
      regions.push_back({reinterpret_cast<const float*>(static_cast<const uint8_t*>(weights.region.get()) + offset), bytes});
    }
    return regions;
  }

  // ---- runtime::KernelProvider: every kernel is in the library, tuned already.
  std::vector<StepKernel*> kernels_for(const std::vector<std::vector<int64_t>>& /*symbols*/) override {
    std::vector<StepKernel*> out(kernels.size(), nullptr);
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (kernels[i].library) out[i] = &kernels[i];
    }
    return out;
  }
  void tune(size_t step, StepKernel&, const std::vector<Tensor>&, const std::vector<int64_t>&) override {
    fail_internal("step {} of package '{}' asked for tuning: a package's kernels are tuned when it is compiled", step,
                  dir.string());
  }

  // ---- Executable::Impl
  const Graph& graph() const override { return graph_; }
  Mode mode() const override { return manifest.at("mode").get<std::string>() == "unfused" ? Mode::unfused : Mode::fused; }
  int64_t launches() const override { return fusion::run_time_launches(plan, shape_only); }
  std::map<std::string, int64_t> counters() const override {
    return {{"runs", run_counters.runs.load()},
            {"prepared_shapes", run_counters.prepared_shapes.load()},
            {"evicted_shapes", run_counters.evicted_shapes.load()},
            {"barriers", run_counters.barriers.load()},
            {"superkernel", run_counters.superkernel.load()},
            {"region_waits", run_counters.region_waits.load()},
            {"packed_weight_bytes", packed_weight_bytes},
            {"compiles", 0},
            {"cache_hits", 0},
            {"candidates_measured", 0},
            {"kernels_tuned", 0}};
  }
  void save(const std::string& path) const override {
    fail_user("cannot save '{}': this executable was loaded from the package '{}'; copy that directory instead", path,
              dir.string());
  }
  void run_checked(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) override {
    runner->run(inputs, outputs);
  }
};

}  // namespace

std::vector<std::string> missing_cpu_features(const std::vector<std::string>& features) {
  // __builtin_cpu_supports takes only literals: the features a generated kernel may use that
  // GCC can ask the CPU about.
  __builtin_cpu_init();
  static const std::map<std::string, bool> known = {
      {"SSE4_2", __builtin_cpu_supports("sse4.2")},     {"AVX", __builtin_cpu_supports("avx")},
      {"AVX2", __builtin_cpu_supports("avx2")},         {"FMA", __builtin_cpu_supports("fma")},
      {"F16C", __builtin_cpu_supports("f16c")},         {"BMI2", __builtin_cpu_supports("bmi2")},
      {"AVX512F", __builtin_cpu_supports("avx512f")},   {"AVX512BW", __builtin_cpu_supports("avx512bw")},
      {"AVX512DQ", __builtin_cpu_supports("avx512dq")}, {"AVX512VL", __builtin_cpu_supports("avx512vl")},
      {"AVX512CD", __builtin_cpu_supports("avx512cd")}, {"AVX512BF16", __builtin_cpu_supports("avx512bf16")},
      {"AVX512VNNI", __builtin_cpu_supports("avx512vnni")}, {"AVX512FP16", __builtin_cpu_supports("avx512fp16")},
  };
  std::vector<std::string> missing;
  for (const std::string& f : features) {
    auto it = known.find(f);
    if (it != known.end() && !it->second) missing.push_back(f);
  }
  return missing;
}

std::shared_ptr<Executable::Impl> load_model_package(const std::string& dir, std::optional<int> threads) {
  const auto start = std::chrono::steady_clock::now();
  auto model = std::make_shared<PackagedModel>(dir, threads);
  logger().debug("package {}: loaded in {:.1f} ms ({} steps, {} weight bytes mapped): {}", dir,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                model->plan.steps.size(), model->weights.size, model->load_phases);
  return model;
}

}  // namespace tilefuse::runtime
