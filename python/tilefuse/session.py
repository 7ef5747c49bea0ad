"""InferenceSession: ONNX Runtime's Python API, run by tilefuse.

A script written for ONNX Runtime works after changing its import and its session class::

    sess = tilefuse.InferenceSession("model.onnx")          # was onnxruntime.InferenceSession
    outputs = sess.run(None, {"x": x})                       # list of numpy.ndarray

What ONNX Runtime's constructor takes beyond the model (``sess_options``, ``providers``,
``provider_options``) is accepted; of the session options only ``intra_op_num_threads`` means
something here (tilefuse's worker threads). ``SessionOptions``, ``RunOptions``,
``GraphOptimizationLevel``, ``ExecutionMode``, ``get_available_providers`` and ``get_device``
exist too, so ``import tilefuse as ort`` works as well.
"""
from __future__ import annotations

import enum
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import logging

from . import _native
from ._native import NeedsReferenceMode, UserError

_log = logging.getLogger("tilefuse")

# ONNX Runtime's spelling of each tensor type ("tensor(float)"), by tilefuse's dtype name.
_ORT_TYPES = {
    "f32": "tensor(float)",
    "f16": "tensor(float16)",
    "bf16": "tensor(bfloat16)",
    "f64": "tensor(double)",
    "i8": "tensor(int8)",
    "i32": "tensor(int32)",
    "i64": "tensor(int64)",
    "u8": "tensor(uint8)",
    "bool": "tensor(bool)",
}

# tilefuse's dtype names by NumPy's.
_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "float64": "f64", "int8": "i8", "int32": "i32", "int64": "i64",
                "uint8": "u8", "bool": "bool"}

PathOrBytes = Union[str, bytes, "os.PathLike[str]"]


def ort_type_of_numpy(dtype: Any) -> str:
    """ONNX Runtime's type string for a NumPy dtype ("tensor(float)")."""
    import numpy

    name = numpy.dtype(dtype).name
    if name not in _DTYPE_NAMES:
        raise UserError(f"NumPy dtype {name} is not a tensor type tilefuse runs")
    return _ORT_TYPES[_DTYPE_NAMES[name]]


class NodeArg:
    """An input or output of a model, as ``InferenceSession.get_inputs()`` lists them.

    ``name``: the ONNX name. ``shape``: one entry per dim, an ``int`` or the symbol as a ``str``
    (``["batch", 128]``). ``type``: ONNX Runtime's type string (``"tensor(float)"``).
    """

    __slots__ = ("name", "shape", "type")

    def __init__(self, name: str, shape: List[Union[int, str]], type: str) -> None:
        self.name = name
        self.shape = shape
        self.type = type

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class GraphOptimizationLevel(enum.IntEnum):
    """Accepted for compatibility; tilefuse always fuses (``mode="unfused"`` turns it off)."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted for compatibility; tilefuse runs each kernel on all its threads."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """ONNX Runtime's session options. ``intra_op_num_threads`` (0: every core) sets tilefuse's
    worker threads; every other attribute is accepted and has no effect."""

    def __init__(self) -> None:
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level = 2
        self.enable_profiling = False

    def add_session_config_entry(self, key: str, value: str) -> None:
        """Accepted and ignored."""

    def add_free_dimension_override_by_name(self, name: str, value: int) -> None:
        """Accepted and ignored: tilefuse compiles for symbolic dims and specializes at run time."""


class RunOptions:
    """ONNX Runtime's run options; accepted and ignored."""

    def __init__(self) -> None:
        self.log_severity_level = 2
        self.terminate = False


def get_available_providers() -> List[str]:
    """The execution providers a session accepts: tilefuse runs on the CPU."""
    return ["CPUExecutionProvider"]


def get_device() -> str:
    return "CPU"


# ONNX Runtime's severities (0 verbose .. 4 fatal) as tilefuse's log levels.
_SEVERITY_LEVELS = ("debug", "info", "warn", "error", "critical")


def set_default_logger_severity(severity: int) -> None:
    """ONNX Runtime's logger severity, 0 (verbose) to 4 (fatal): sets tilefuse's log level."""
    if not 0 <= int(severity) < len(_SEVERITY_LEVELS):
        raise UserError(f"logger severity must be 0 (verbose) to 4 (fatal), got {severity}")
    _native.configure_logging(_SEVERITY_LEVELS[int(severity)])


def set_default_logger_verbosity(verbosity: int) -> None:
    """Accepted for compatibility; tilefuse's verbose level is severity 0."""


def disable_telemetry_events() -> None:
    """Accepted for compatibility: tilefuse sends nothing anywhere."""


def enable_telemetry_events() -> None:
    """Accepted for compatibility: tilefuse sends nothing anywhere."""


def _threads_from(threads: Optional[int], sess_options: Any) -> Optional[int]:
    if threads is not None:
        return threads
    n = getattr(sess_options, "intra_op_num_threads", 0) if sess_options is not None else 0
    return n if n and n > 0 else None


def _node_args(described) -> List[NodeArg]:
    return [NodeArg(name, list(dims), _ORT_TYPES[dtype]) for name, dims, dtype in described]


def _is_package(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "manifest.json"))


class InferenceSession:
    """A model compiled by tilefuse for this machine, with ONNX Runtime's API.

    ``path_or_bytes``: an ONNX file, a serialized ONNX model, or a package written by
    :meth:`save` or ``tilefuse compile`` (a ``model.tfx`` directory, loaded without compiling).

    ``threads``: worker threads (default: ``sess_options.intra_op_num_threads``, else every core).
    ``topn``: tiling candidates measured per static kernel on the first run, 1-10 (default:
    ``TILEFUSE_AUTOTUNE_TOPN``, else 1: the cost model's choice, nothing measured).
    ``cache_dir``: where kernels and tuning records are kept (default: ``TILEFUSE_CACHE_DIR``,
    else ``~/.cache/tilefuse``).
    ``cpp_wrapper``: run through a whole-model package kept in the cache, built on the first
    run. ``superkernel``: ``True`` runs every step of a run in one parallel region of the worker
    threads, ``False`` one fork/join per step; unset, ``TILEFUSE_SUPERKERNEL``, else whichever
    measured faster on the first run (recorded in the cache). ``precision``: ``"bf16"`` multiplies
    MatMul and Gemm operands rounded to bf16 and sums in f32 (about twice as fast on CPUs with
    avx512_bf16, within the bound the README states), ``"f32"`` exactly; unset,
    ``TILEFUSE_PRECISION``, else ``"f32"``. ``mode``: ``"fused"``, ``"unfused"`` (one kernel per op) or ``"reference"`` (the
    op-by-op interpreter). Unset, it is fused, except for a model fused execution cannot run
    (a tensor whose shape depends on tensor data, as NonZero's): its first run says so in a
    warning and the session goes on in reference mode, correct but slow. ``mode="fused"`` raises
    :class:`tilefuse.NeedsReferenceMode` instead.

    Inputs are read in place when they are C-contiguous with the model's dtype; anything else
    (a strided view, a list, a scalar) is converted once per run. A NumPy array of another
    dtype is an error, as in ONNX Runtime. Outputs are new NumPy arrays that hold their own memory.
    ``run`` releases the GIL, and may be called from several threads at once.

    Raises :class:`tilefuse.UserError` (a ``ValueError``) for a malformed model, an
    unsupported operator, a bad option or input, with the message the command line prints.
    """

    def __init__(
        self,
        path_or_bytes: PathOrBytes,
        sess_options: Any = None,
        providers: Optional[Sequence[Any]] = None,
        provider_options: Optional[Sequence[Dict[Any, Any]]] = None,
        *,
        threads: Optional[int] = None,
        topn: Optional[int] = None,
        cache_dir: Optional[str] = None,
        cpp_wrapper: bool = False,
        superkernel: Optional[bool] = None,
        precision: Optional[str] = None,
        mode: Optional[str] = None,
        **kwargs: Any,  # ONNX Runtime's other keywords (disabled_optimizers, ...): accepted, no effect
    ) -> None:
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        threads = _threads_from(threads, sess_options)
        model = None
        if isinstance(path_or_bytes, (bytes, bytearray)):
            self._model_path = None
            model = _native.load_onnx_bytes(bytes(path_or_bytes))
        else:
            path = os.fspath(path_or_bytes)
            self._model_path = path
            if _is_package(path):
                self._use(_native.Session.load(path, threads))
            else:
                model = _native.load_onnx(path)
        # Only a session whose mode nobody chose falls back to the reference interpreter.
        self._fallback = None
        if model is not None:
            def compile_in(m: str) -> "_native.Session":
                return _native.Session.compile(
                    model, m, threads, topn, cache_dir or "", cpp_wrapper, superkernel, precision or ""
                )

            self._use(compile_in(mode or "fused"))
            self._fallback = compile_in if mode is None else None

    @classmethod
    def _from_native(cls, session: "_native.Session", path: Optional[str]) -> "InferenceSession":
        self = cls.__new__(cls)
        self._sess_options = SessionOptions()
        self._fallback = None
        self._model_path = path
        self._use(session)
        return self

    def _use(self, session: "_native.Session") -> None:
        self._session = session
        self._inputs = _node_args(session.inputs())
        self._outputs = _node_args(session.outputs())
        self._output_index = {o.name: i for i, o in enumerate(self._outputs)}

    def get_inputs(self) -> List[NodeArg]:
        """The model's inputs, in order."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """The model's outputs, in order."""
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        """None: tilefuse folds initializers into the compiled model."""
        return []

    def get_providers(self) -> List[str]:
        return ["CPUExecutionProvider"]

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {"CPUExecutionProvider": {}}

    def get_session_options(self) -> Any:
        return self._sess_options

    def get_modelmeta(self) -> Any:
        """ONNX Runtime's model metadata, mostly empty: tilefuse keeps none of the model's."""
        return _ModelMeta(self._model_path)

    def set_providers(self, providers: Optional[Sequence[Any]] = None, provider_options: Any = None) -> None:
        """Accepted for compatibility: tilefuse runs on the CPU."""

    def disable_fallback(self) -> None:
        """Accepted for compatibility."""

    def enable_fallback(self) -> None:
        """Accepted for compatibility."""

    def end_profiling(self) -> str:
        """No profile is written here ("" as the file); ``tilefuse run --profile`` writes one."""
        return ""

    def run(
        self,
        output_names: Optional[Sequence[str]],
        input_feed: Mapping[str, Any],
        run_options: Any = None,
    ) -> List[Any]:
        """Runs the model on ``input_feed`` ({input name: array}) and returns the outputs named
        in ``output_names`` (all of them, in the model's order, when None or empty) as NumPy
        arrays."""
        feeds = input_feed if type(input_feed) is dict else dict(input_feed)
        indices = None
        if output_names:
            try:
                indices = [self._output_index[name] for name in output_names]
            except KeyError as e:
                raise UserError(
                    f"output {e.args[0]!r} is not an output of the model; its outputs are "
                    + ", ".join(repr(o.name) for o in self._outputs)
                ) from None
        try:
            return self._session.run(indices, feeds)
        except NeedsReferenceMode as e:
            if self._fallback is None:
                raise
            _log.warning("fused execution cannot run this model (%s); running it on the reference interpreter, "
                         "correct but slow (mode='fused' raises instead)", e)
            self._session, self._fallback = self._fallback("reference"), None
            return self._session.run(indices, feeds)

    def io_binding(self) -> "IOBinding":
        """ONNX Runtime's IOBinding (CPU): bind inputs and outputs, then ``run_with_iobinding``."""
        from .io_binding import IOBinding

        return IOBinding(self)

    def run_with_iobinding(self, iobinding: "IOBinding", run_options: Any = None) -> None:
        """Runs on the bound inputs; the outputs are then in ``iobinding.get_outputs()``."""
        iobinding._run(run_options)

    def run_with_ort_values(self, output_names: Optional[Sequence[str]], input_dict_ort_values: Mapping[str, Any],
                            run_options: Any = None) -> List[Any]:
        """``run`` with OrtValues in and out."""
        from .io_binding import OrtValue

        feeds = {name: value.numpy() for name, value in input_dict_ort_values.items()}
        return [OrtValue(array) for array in self.run(output_names, feeds, run_options)]

    # tilefuse's own additions.

    def save(self, path: str) -> None:
        """Writes the compiled model as a package (a ``model.tfx`` directory) that
        ``tilefuse.load`` or ``InferenceSession(path)`` loads without compiling. Run the session
        once first on representative inputs: that run measures the tiling candidates."""
        self._session.save(os.fspath(path))

    @property
    def mode(self) -> str:
        """``"fused"``, ``"unfused"`` or ``"reference"``."""
        return self._session.mode()

    def launches(self) -> int:
        """Kernels, library calls and host steps one run launches."""
        return self._session.launches()

    def counters(self) -> Dict[str, int]:
        """Events since the session was made: compiles, cache hits, kernels tuned, runs, and
        ``inputs_converted`` (inputs that could not be read in place)."""
        return self._session.counters()

    def _input_address(self, name: str, value: Any):
        """(address, converted): where ``run`` would read ``value`` as input ``name``."""
        return self._session.input_address(name, value)


class _ModelMeta:
    """What ``get_modelmeta()`` returns; tilefuse keeps no ONNX metadata beyond the path."""

    def __init__(self, path: Optional[str]) -> None:
        self.producer_name = "tilefuse"
        self.graph_name = os.path.basename(path) if path else ""
        self.domain = ""
        self.description = ""
        self.graph_description = ""
        self.version = 0
        self.custom_metadata_map: Dict[str, str] = {}


def load(path: str, threads: Optional[int] = None) -> InferenceSession:
    """Loads a package written by ``InferenceSession.save`` or ``tilefuse compile``: nothing is
    compiled or tuned; the weights are mapped."""
    path = os.fspath(path)
    return InferenceSession._from_native(_native.Session.load(path, threads), path)
