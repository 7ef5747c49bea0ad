// tilefuse._native: the public C++ API (include/tilefuse/tilefuse.h) as a Python extension, built
// on nothing else. The classes users meet (InferenceSession and its friends, in ONNX Runtime's
// shape) are Python, in python/tilefuse/; this module compiles or loads a model, moves tensors
// across without copying them, and releases the GIL while a model runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "numpy_buffers.h"
#include "tilefuse/tilefuse.h"

namespace tilefuse::python {
namespace {

Mode mode_named(const std::string& name) {
  if (name == "fused") return Mode::fused;
  if (name == "unfused") return Mode::unfused;
  if (name == "reference") return Mode::reference;
  throw UserError("mode must be 'fused', 'unfused' or 'reference', got '" + name + "'");
}

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::fused: return "fused";
    case Mode::unfused: return "unfused";
    case Mode::reference: return "reference";
  }
  return "fused";
}

// (name, dims, dtype) per input or output: a dim is an int, or its symbol as a string.
py::list describe(const std::vector<TensorSpec>& specs) {
  py::list out;
  for (const TensorSpec& s : specs) {
    py::list dims;
    for (size_t i = 0; i < s.shape.size(); ++i) {
      if (s.shape[i] >= 0) {
        dims.append(s.shape[i]);
      } else {
        dims.append(s.dim_names[i]);
      }
    }
    out.append(py::make_tuple(s.name, dims, std::string(dtype_name(s.dtype))));
  }
  return out;
}

// A compiled (or loaded) model and the order of its inputs and outputs.
class Session {
 public:
  explicit Session(Executable executable) : executable_(std::move(executable)) {
    for (const TensorSpec& s : executable_.inputs()) input_dtypes_.emplace(s.name, s.dtype);
    for (const TensorSpec& s : executable_.outputs()) output_names_.push_back(s.name);
  }

  static Session compile(const Model& model, const std::string& mode, std::optional<int> threads,
                         std::optional<int> topn, const std::string& cache_dir, std::optional<bool> cpp_wrapper,
                         std::optional<bool> superkernel, const std::string& precision) {
    Options options;
    options.mode = mode_named(mode);
    options.threads = threads;
    options.autotune_topn = topn;
    options.cache_dir = cache_dir;
    options.cpp_wrapper = cpp_wrapper;
    options.superkernel = superkernel;
    options.precision = precision;
    py::gil_scoped_release release;  // compiling takes seconds; other Python threads go on
    return Session(tilefuse::compile(model, options));
  }

  static Session load(const std::string& path, std::optional<int> threads) {
    py::gil_scoped_release release;
    return Session(Executable::load(path, Options{.threads = threads}));
  }

  py::list inputs() const { return describe(executable_.inputs()); }
  py::list outputs() const { return describe(executable_.outputs()); }
  std::string mode() const { return mode_name(executable_.mode()); }
  int64_t launches() const { return executable_.launches(); }

  std::map<std::string, int64_t> counters() const {
    std::map<std::string, int64_t> out = executable_.counters();
    out["inputs_converted"] = inputs_converted_;
    return out;
  }

  void save(const std::string& path) const {
    py::gil_scoped_release release;
    executable_.save(path);
  }

  // The outputs at `indices` (all of them, in order, when None) for `feeds` {name: array-like}.
  py::list run(const std::optional<std::vector<size_t>>& indices, const py::dict& feeds) {
    std::vector<BorrowedInput> borrowed(feeds.size());
    std::map<std::string, Tensor> inputs;
    size_t i = 0;
    for (auto [key, value] : feeds) {
      std::string name = py::cast<std::string>(key);
      borrowed[i].borrow(value, name, declared_dtype(name));
      inputs_converted_ += borrowed[i].copied();
      inputs.emplace(std::move(name), borrowed[i].tensor());
      ++i;
    }
    std::map<std::string, Tensor> results = take_released_outputs();
    {
      py::gil_scoped_release release;
      executable_.run(inputs, results);
    }
    py::list out;
    if (!indices) {
      for (const std::string& name : output_names_) out.append(to_numpy(results.at(name)));
    } else {
      for (size_t index : *indices) {
        const std::string& name = output_names_.at(index);
        out.append(to_numpy(results.at(name)));  // copies share the tensor: an output asked for twice is one array's memory
      }
    }
    last_outputs_ = std::move(results);
    return out;
  }

  // The previous run's outputs whose arrays Python has let go of, for this run to write into. A
  // new tensor per run was zeroed page by page before the model wrote it: for a 24 MB output,
  // 3 ms of first-touch page faults on a 1.4 ms LayerNorm. Taken under the GIL, so a concurrent
  // run finds none and allocates its own.
  std::map<std::string, Tensor> take_released_outputs() {
    std::map<std::string, Tensor> released;
    for (auto& [name, tensor] : last_outputs_) {
      if (tensor.sole_owner()) released.emplace(name, std::move(tensor));
    }
    last_outputs_.clear();
    return released;
  }

  // Where run() reads `value` from and whether it converts it: what the zero-copy tests check.
  py::tuple input_address(const std::string& name, py::handle value) const {
    BorrowedInput borrowed;
    borrowed.borrow(value, name, declared_dtype(name));
    return py::make_tuple(reinterpret_cast<uintptr_t>(borrowed.tensor().raw()), borrowed.copied());
  }

 private:
  // What a list or scalar fed as `name` is converted to. An unknown name is left to the input
  // checks, which list the model's inputs.
  DType declared_dtype(const std::string& name) const {
    auto it = input_dtypes_.find(name);
    return it == input_dtypes_.end() ? DType::f32 : it->second;
  }

  Executable executable_;
  std::map<std::string, DType> input_dtypes_;
  std::vector<std::string> output_names_;
  int64_t inputs_converted_ = 0;  // under the GIL
  std::map<std::string, Tensor> last_outputs_;  // under the GIL: see take_released_outputs
};

}  // namespace
}  // namespace tilefuse::python

PYBIND11_MODULE(_native, m) {
  namespace py = pybind11;
  using namespace tilefuse;
  using namespace tilefuse::python;
  m.doc() = "tilefuse's C++ core. Use the classes in the tilefuse package; this module is their engine.";
  m.attr("__version__") = kVersion;
  // A mistake the caller can fix: a ValueError, with the message the command line prints.
  py::register_exception<UserError>(m, "UserError", PyExc_ValueError);
  // A UserError that mode="reference" avoids (tilefuse.InferenceSession falls back on it).
  py::register_exception<NeedsReferenceMode>(m, "NeedsReferenceMode", m.attr("UserError"));
  register_tensor_buffer(m);

  py::class_<Model>(m, "Model", "An imported ONNX model.")
      .def("inputs", [](const Model& model) { return describe(model.inputs()); })
      .def("outputs", [](const Model& model) { return describe(model.outputs()); });
  m.def("load_onnx", [](const std::string& path) {
    py::gil_scoped_release release;
    return load_onnx(path);
  }, py::arg("path"), "Imports an ONNX file.");
  m.def("load_onnx_bytes", [](const py::bytes& bytes) {
    std::string data = bytes;
    py::gil_scoped_release release;
    return load_onnx_bytes(data, "<bytes>");
  }, py::arg("data"), "Imports a serialized ONNX model.");
  m.def("configure_logging", &configure_logging, py::arg("level") = "",
        "Sends tilefuse's log to stderr at `level`; empty: TILEFUSE_LOG_LEVEL, else warn.");

  py::class_<Session>(m, "Session", "A compiled or loaded model.")
      .def_static("compile", &Session::compile, py::arg("model"), py::arg("mode") = "fused",
                  py::arg("threads") = std::nullopt, py::arg("topn") = std::nullopt, py::arg("cache_dir") = "",
                  py::arg("cpp_wrapper") = std::nullopt, py::arg("superkernel") = std::nullopt,
                  py::arg("precision") = "")
      .def_static("load", &Session::load, py::arg("path"), py::arg("threads") = std::nullopt)
      .def("inputs", &Session::inputs)
      .def("outputs", &Session::outputs)
      .def("mode", &Session::mode)
      .def("launches", &Session::launches)
      .def("counters", &Session::counters)
      .def("save", &Session::save, py::arg("path"))
      .def("run", &Session::run, py::arg("indices"), py::arg("feeds"))
      .def("input_address", &Session::input_address, py::arg("name"), py::arg("value"));
}
