// The public C++ API of tilefuse. It needs only this directory on the include path.
//
//   tilefuse::Model model = tilefuse::load_onnx("model.onnx");
//   tilefuse::Executable exe = tilefuse::compile(model);        // plans, builds and loads once
//   std::map<std::string, tilefuse::Tensor> outputs = exe.run({{"x", x}});
//   exe.save("model.tfx");                                        // a package to deploy
//
// A deployed program needs only libtilefuse_runtime (no compiler, no ONNX, no OpenSSL):
//
//   tilefuse::Executable exe = tilefuse::Executable::load("model.tfx");
//
// Errors the caller can fix (a bad model, an input of the wrong dtype or shape, a bad option)
// throw tilefuse::UserError with a message naming the thing and the rule; anything else thrown is
// a bug in tilefuse.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tilefuse/error.h"
#include "tilefuse/options.h"
#include "tilefuse/tensor.h"
#include "tilefuse/version.h"

namespace tilefuse {

namespace api {
struct Model;
}

// An input or output as the model declares it, e.g.
// {"x", "f32[N, 128]", DType::f32, {-1, 128}, {"N", ""}}.
struct TensorSpec {
  std::string name;
  std::string type;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;          // -1 where the dim is symbolic
  std::vector<std::string> dim_names;  // per dim: the symbolic expression ("N", "2*S"), "" where constant
};

class Executable;

// A loaded model. Cheap to copy: copies share the graph.
class Model {
 public:
  std::vector<TensorSpec> inputs() const;
  std::vector<TensorSpec> outputs() const;

 private:
  explicit Model(std::shared_ptr<const api::Model> model) : model_(std::move(model)) {}
  friend Model load_onnx(const std::string& path);
  friend Model load_onnx_bytes(const std::string& bytes, const std::string& origin);
  friend Executable compile(const Model& model, const Options& options);
  std::shared_ptr<const api::Model> model_;
};

Model load_onnx(const std::string& path);
// The same from a serialized ModelProto in memory (`origin` names it in error messages). A model
// whose tensors live in external data files needs load_onnx(path), which knows their folder.
Model load_onnx_bytes(const std::string& bytes, const std::string& origin = "<memory>");

// A model compiled for this machine: every kernel built (or found in the cache) and loaded. Cheap
// to copy: copies share the compiled model. run() may be called from several threads at once;
// each concurrent call works in an arena of its own.
class Executable {
 public:
  std::vector<TensorSpec> inputs() const;
  std::vector<TensorSpec> outputs() const;
  Mode mode() const;

  // Runs on `inputs` (every model input, by name, with the declared dtype and shape) and returns
  // the outputs by name.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs) const;
  // Writes the outputs into `outputs`: a tensor already there with the right dtype and shape is
  // written in place (unless it shares memory with an input or another output), any other entry is
  // replaced. When the caller passes the same input and output tensors again with the same shapes,
  // a run of generated kernels, GEMMs, convolutions and views allocates nothing.
  void run(const std::map<std::string, Tensor>& inputs, std::map<std::string, Tensor>& outputs) const;

  // Launches per run: kernels, library calls and host steps (views are free).
  int64_t launches() const;
  // Events since compile(): "compiles", "cache_hits", "kernels_tuned", "runs", ...
  std::map<std::string, int64_t> counters() const;

  // Writes this model as a package, the directory `path` (conventionally model.tfx): one
  // library holding every kernel as tuned (run once first, on representative inputs, so that
  // the kernels with TopN candidates are measured; those never run take their first candidate
  // and the log says so), the weights in a file that is mapped at load, and a manifest (inputs,
  // outputs, target CPU, versions, sizes and checksums). Fused or unfused mode only. An existing
  // package at `path` is replaced; any other file there is an error.
  void save(const std::string& path) const;

  // Loads a package written by save() or `tilefuse compile`: compiles and tunes nothing, maps the
  // weights, and needs only libtilefuse_runtime. Of `options`, only `threads` applies (default:
  // the thread count the package was tuned for, at most this machine's cores). Throws UserError
  // naming the file and the problem for a missing, damaged or foreign package, or one built for
  // a CPU feature this machine lacks.
  static Executable load(const std::string& path, const Options& options = {});

  struct Impl;  // runtime/executable_impl.h

 private:
  explicit Executable(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  friend Executable compile(const Model& model, const Options& options);
  std::shared_ptr<Impl> impl_;
};

// Plans, generates, compiles (through the on-disk cache) and loads every kernel of `model`. In
// fused mode with autotune_topn above 1, the first run measures the static kernels' candidates on
// its inputs; later runs, in any process, reuse the recorded winners.
Executable compile(const Model& model, const Options& options = {});

// Sends tilefuse's log to stderr at `level` (trace, debug, info, warn, error, critical, off);
// empty: TILEFUSE_LOG_LEVEL, else warn. A program that never calls it gets spdlog's defaults.
// Throws UserError for an unknown level.
void configure_logging(const std::string& level = "");

// One-shot convenience: compile(model, options).run(inputs). Kernels come from the on-disk cache
// after the first time, but planning and loading are repeated: keep an Executable to run many times.
std::map<std::string, Tensor> run(const Model& model, const std::map<std::string, Tensor>& inputs,
                                  const Options& options = {});

}  // namespace tilefuse
