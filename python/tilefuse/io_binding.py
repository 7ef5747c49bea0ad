"""ONNX Runtime's OrtValue and IOBinding, for scripts written against them, on the CPU.

An OrtValue here holds a NumPy array (``ortvalue_from_numpy`` keeps the caller's array, no
copy). An IOBinding collects inputs and wanted outputs for ``InferenceSession.run_with_iobinding``;
an output bound to a caller's buffer (``bind_output`` with ``buffer_ptr``) receives a copy of
the result, everything else comes back as new arrays.
"""
from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ._native import UserError
from .session import ort_type_of_numpy


def _check_cpu(device_type: str) -> None:
    if str(device_type).lower() != "cpu":
        raise UserError(f"device '{device_type}': tilefuse runs on the CPU ('cpu')")


def _array_at(buffer_ptr: int, element_type: Any, shape: Sequence[int]) -> np.ndarray:
    """The caller's memory at `buffer_ptr` as an array (no copy): what ONNX Runtime binds to."""
    dtype = np.dtype(element_type)
    count = int(np.prod(shape)) if len(shape) else 1
    raw = (ctypes.c_byte * (count * dtype.itemsize)).from_address(int(buffer_ptr))
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(tuple(shape))


class OrtValue:
    """A tensor on the CPU: ``ortvalue_from_numpy(array)``, ``.numpy()``, ``.shape()``,
    ``.data_type()``, ``.device_name()``."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    @staticmethod
    def ortvalue_from_numpy(array: Any, device_type: str = "cpu", device_id: int = 0) -> "OrtValue":
        _check_cpu(device_type)
        return OrtValue(np.asarray(array))

    @staticmethod
    def ortvalue_from_shape_and_type(shape: Sequence[int], element_type: Any, device_type: str = "cpu",
                                     device_id: int = 0) -> "OrtValue":
        _check_cpu(device_type)
        return OrtValue(np.empty(tuple(shape), dtype=element_type))

    def numpy(self) -> np.ndarray:
        return self._array

    def shape(self) -> List[int]:
        return list(self._array.shape)

    def data_type(self) -> str:
        return ort_type_of_numpy(self._array.dtype)

    def element_type(self) -> Any:
        return self._array.dtype.type

    def device_name(self) -> str:
        return "cpu"

    def is_tensor(self) -> bool:
        return True

    def has_value(self) -> bool:
        return True

    def data_ptr(self) -> int:
        return self._array.ctypes.data


class IOBinding:
    """Inputs and outputs bound ahead of ``InferenceSession.run_with_iobinding``."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._inputs: Dict[str, Any] = {}
        self._outputs: List[str] = []
        self._output_buffers: Dict[str, np.ndarray] = {}
        self._results: List[OrtValue] = []

    def bind_cpu_input(self, name: str, arr_on_cpu: Any) -> None:
        self._inputs[name] = arr_on_cpu

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        self._inputs[name] = ortvalue.numpy()

    def bind_input(self, name: str, device_type: str, device_id: int, element_type: Any, shape: Sequence[int],
                   buffer_ptr: int) -> None:
        _check_cpu(device_type)
        self._inputs[name] = _array_at(buffer_ptr, element_type, shape)

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0, element_type: Any = None,
                    shape: Optional[Sequence[int]] = None, buffer_ptr: Optional[int] = None) -> None:
        _check_cpu(device_type)
        self._bind_output_name(name)
        if buffer_ptr is not None:
            if element_type is None or shape is None:
                raise UserError(f"output '{name}': a bound buffer needs its element_type and shape")
            self._output_buffers[name] = _array_at(buffer_ptr, element_type, shape)

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        self._bind_output_name(name)
        self._output_buffers[name] = ortvalue.numpy()

    def _bind_output_name(self, name: str) -> None:
        if name not in self._outputs:
            self._outputs.append(name)

    def clear_binding_inputs(self) -> None:
        self._inputs.clear()

    def clear_binding_outputs(self) -> None:
        self._outputs.clear()
        self._output_buffers.clear()

    def synchronize_inputs(self) -> None:
        """Nothing to wait for on the CPU."""

    def synchronize_outputs(self) -> None:
        """Nothing to wait for on the CPU."""

    def get_outputs(self) -> List[OrtValue]:
        return list(self._results)

    def copy_outputs_to_cpu(self) -> List[np.ndarray]:
        return [value.numpy().copy() for value in self._results]

    def _run(self, run_options: Any = None) -> None:
        names = self._outputs or [o.name for o in self._session.get_outputs()]
        arrays = self._session.run(names, self._inputs, run_options)
        self._results = []
        for name, array in zip(names, arrays):
            bound = self._output_buffers.get(name)
            if bound is not None:
                if bound.shape != array.shape or bound.dtype != array.dtype:
                    raise UserError(f"output '{name}': the bound buffer is {bound.dtype}{list(bound.shape)}, "
                                    f"the result {array.dtype}{list(array.shape)}")
                bound[...] = array
                array = bound
            self._results.append(OrtValue(array))
