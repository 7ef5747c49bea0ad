// Tensors across the Python boundary through the buffer protocol, which every NumPy (1.x and 2.x)
// speaks, so the module needs no NumPy headers and works with whichever NumPy is installed.
//
// In: a C-contiguous buffer of a tilefuse dtype is read where it lies (a Tensor::view over it,
// kept alive by a held Py_buffer); anything else (a strided array, a list, a scalar, a torch
// tensor) is converted once with numpy.ascontiguousarray, to the declared dtype when it is not a
// NumPy array already. Out: a NumPy array over the tensor's own memory, which it keeps alive.
#pragma once

#include <Python.h>

#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "tilefuse/tensor.h"

namespace tilefuse::python {

namespace py = pybind11;

// The NumPy name of a dtype ("float32", ...); bf16, which NumPy lacks, is "uint16" (its bits).
const char* numpy_dtype_name(DType dtype);

// An input as the model sees it, and what keeps its memory alive until the run is over.
class BorrowedInput {
 public:
  BorrowedInput() = default;
  BorrowedInput(const BorrowedInput&) = delete;
  BorrowedInput& operator=(const BorrowedInput&) = delete;
  ~BorrowedInput();

  // Reads `value` as the input `name` declared with `declared` dtype. Throws UserError naming
  // the input when it has no tensor form.
  void borrow(py::handle value, const std::string& name, DType declared);

  const Tensor& tensor() const { return tensor_; }
  bool copied() const { return copied_; }  // converted rather than read in place

 private:
  bool try_view(PyObject* object);
  void release();

  Py_buffer buffer_{};
  bool held_ = false;
  bool copied_ = false;
  py::object converted_;  // the converted array, when there is one
  Tensor tensor_;
};

// A NumPy array over `tensor`'s memory; the array keeps the tensor alive.
py::object to_numpy(Tensor tensor);

// Registers the type that to_numpy hands to NumPy; once, at import.
void register_tensor_buffer(py::module_& module);

}  // namespace tilefuse::python
