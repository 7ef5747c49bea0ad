"""tilefuse: a fusion compiler and profile-guided autotuner for ONNX models on CPUs.

ONNX Runtime's API, compiled::

    import tilefuse
    sess = tilefuse.InferenceSession("model.onnx")
    y, = sess.run(None, {"x": x})

A compiled package, loaded without compiling::

    sess.save("model.tfx")
    sess = tilefuse.load("model.tfx")

A PyTorch module (when torch is installed)::

    fast = tilefuse.compile(module, (example_input,))
    y = fast(x)
    fast = torch.compile(module, backend=tilefuse.dynamo_backend)

The log goes to stderr at the level in TILEFUSE_LOG_LEVEL (default: warn);
``tilefuse.configure_logging("info")`` changes it.
"""
import sys

from ._native import NeedsReferenceMode, UserError, __version__, configure_logging
from .session import (
    ExecutionMode,
    GraphOptimizationLevel,
    InferenceSession,
    NodeArg,
    RunOptions,
    SessionOptions,
    disable_telemetry_events,
    enable_telemetry_events,
    get_available_providers,
    get_device,
    load,
    set_default_logger_severity,
    set_default_logger_verbosity,
)
from .io_binding import IOBinding, OrtValue
from .torch_compile import compile, dynamo_backend

configure_logging()

if "torch" in sys.modules:  # torch.compile(backend="tilefuse") from a build tree; installs use the entry point
    from .torch_compile import register_dynamo_backend

    register_dynamo_backend()

__all__ = [
    "ExecutionMode",
    "GraphOptimizationLevel",
    "IOBinding",
    "InferenceSession",
    "NeedsReferenceMode",
    "NodeArg",
    "OrtValue",
    "RunOptions",
    "SessionOptions",
    "UserError",
    "__version__",
    "compile",
    "configure_logging",
    "disable_telemetry_events",
    "enable_telemetry_events",
    "dynamo_backend",
    "get_available_providers",
    "get_device",
    "load",
    "set_default_logger_severity",
    "set_default_logger_verbosity",
]
