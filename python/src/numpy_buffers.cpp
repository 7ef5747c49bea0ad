#include "numpy_buffers.h"

#include <optional>
#include <string_view>

#include "tilefuse/error.h"

namespace tilefuse::python {
namespace {

// The dtype of a buffer's struct-module format ("f", "<f", "=d", "?", ...), if tilefuse has it.
std::optional<DType> dtype_of_format(const char* format, Py_ssize_t itemsize) {
  std::string_view f = format == nullptr ? "B" : format;  // no format means unsigned bytes
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.remove_prefix(1);
  if (f.size() != 1) return std::nullopt;
  switch (f[0]) {
    case 'f': return DType::f32;
    case 'd': return DType::f64;
    case 'e': return DType::f16;
    case 'b': return DType::i8;
    case 'B': return DType::u8;
    case '?': return DType::boolean;
    case 'i':
    case 'l':
    case 'q':
      if (itemsize == 4) return DType::i32;
      if (itemsize == 8) return DType::i64;
      return std::nullopt;
    default: return std::nullopt;
  }
}

const char* format_of(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f";
    case DType::f64: return "d";
    case DType::f16: return "e";
    case DType::bf16: return "H";
    case DType::i8: return "b";
    case DType::u8: return "B";
    case DType::i32: return "i";
    case DType::i64: return sizeof(long) == 8 ? "l" : "q";  // NumPy's own int64 is a long where that has 8 bytes
    case DType::boolean: return "?";
  }
  return "B";
}

py::module_& numpy() {
  static auto* module = new py::module_(py::module_::import("numpy"));  // never freed: outlives interpreter teardown order
  return *module;
}

// What to_numpy hands NumPy: a tensor behind the buffer protocol.
struct TensorBuffer {
  Tensor tensor;
};

}  // namespace

const char* numpy_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::f16: return "float16";
    case DType::bf16: return "uint16";
    case DType::i8: return "int8";
    case DType::u8: return "uint8";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
    case DType::boolean: return "bool";
  }
  return "float32";
}

BorrowedInput::~BorrowedInput() { release(); }

void BorrowedInput::release() {
  if (held_) PyBuffer_Release(&buffer_);
  held_ = false;
}

bool BorrowedInput::try_view(PyObject* object) {
  if (!PyObject_CheckBuffer(object)) return false;
  if (PyObject_GetBuffer(object, &buffer_, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return false;
  }
  held_ = true;
  const std::optional<DType> dtype = dtype_of_format(buffer_.format, buffer_.itemsize);
  if (!dtype || dtype_size(*dtype) != static_cast<size_t>(buffer_.itemsize) || !PyBuffer_IsContiguous(&buffer_, 'C')) {
    release();
    return false;
  }
  std::vector<int64_t> shape(buffer_.shape, buffer_.shape + buffer_.ndim);
  // An empty buffer may have no address; the tensor still needs one to be defined.
  static char empty;
  tensor_ = Tensor::view(*dtype, std::move(shape), buffer_.len == 0 ? &empty : buffer_.buf);
  return true;
}

void BorrowedInput::borrow(py::handle value, const std::string& name, DType declared) {
  if (try_view(value.ptr())) return;
  copied_ = true;
  // A NumPy array keeps its dtype (a wrong one is then reported by the input checks, as ONNX
  // Runtime does); lists, scalars and other array-likes take the declared dtype.
  py::object array_type = numpy().attr("ndarray");
  if (py::isinstance(value, array_type)) {
    py::object native = value.attr("dtype").attr("newbyteorder")("=");
    converted_ = numpy().attr("ascontiguousarray")(value, py::arg("dtype") = native);
  } else {
    converted_ = numpy().attr("ascontiguousarray")(value, py::arg("dtype") = numpy_dtype_name(declared));
  }
  if (!try_view(converted_.ptr())) {
    throw UserError("input '" + name + "': NumPy dtype " + py::str(converted_.attr("dtype")).cast<std::string>() +
                    " is not a tensor type tilefuse runs (float32, float16, float64, int8, uint8, int32, int64, "
                    "bool)");
  }
}

py::object to_numpy(Tensor tensor) {
  static auto* asarray = new py::object(numpy().attr("asarray"));
  return (*asarray)(py::cast(TensorBuffer{std::move(tensor)}));
}

void register_tensor_buffer(py::module_& module) {
  py::class_<TensorBuffer>(module, "_TensorBuffer", py::buffer_protocol(),
                           "A tensor's memory as NumPy sees it; what output arrays keep alive.")
      .def_buffer([](TensorBuffer& b) {
        Tensor& t = b.tensor;
        const auto itemsize = static_cast<py::ssize_t>(dtype_size(t.dtype()));
        std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
        std::vector<py::ssize_t> strides(shape.size());
        py::ssize_t stride = itemsize;
        for (size_t i = shape.size(); i-- > 0;) {
          strides[i] = stride;
          stride *= shape[i];
        }
        static char empty;
        void* data = t.numel() == 0 || t.raw() == nullptr ? &empty : t.raw();
        const auto rank = static_cast<py::ssize_t>(shape.size());
        return py::buffer_info(data, itemsize, format_of(t.dtype()), rank, std::move(shape), std::move(strides));
      });
}

}  // namespace tilefuse::python
