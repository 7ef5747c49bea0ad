"""PyTorch modules compiled by tilefuse: ``tilefuse.compile`` and the ``torch.compile`` backend.

Both go through ONNX: the module is exported with ``torch.onnx.export`` (the TorchScript
exporter at opset 17) and compiled like any model. Inference only: while gradients are on, a
tensor that needs them is refused by ``compile``'s callable and left to PyTorch by the backend.
torch is imported only when one of these is called.
"""
from __future__ import annotations

import logging
import os
import tempfile
from typing import Any, Callable, Dict, Optional, Sequence, Union

from .session import InferenceSession, UserError

_log = logging.getLogger("tilefuse")

DynamicShapes = Optional[Sequence[Optional[Dict[int, Any]]]]


def _torch():
    try:
        import torch
    except ImportError as e:
        raise UserError("tilefuse.compile needs PyTorch: `pip install torch` (it is not a dependency of tilefuse)") from e
    return torch


def _dynamic_axes(names: Sequence[str], dynamic_shapes: DynamicShapes) -> Dict[str, Dict[int, str]]:
    """torch.onnx.export's dynamic_axes from one {axis: name or torch.export.Dim} per input."""
    if dynamic_shapes is None:
        return {}
    if len(dynamic_shapes) != len(names):
        raise UserError(f"dynamic_shapes has {len(dynamic_shapes)} entries, but the module takes {len(names)} inputs")
    axes = {}
    for name, dims in zip(names, dynamic_shapes):
        if dims:
            axes[name] = {int(axis): getattr(dim, "__name__", None) or str(dim) for axis, dim in dims.items()}
    return axes


def _export(module: Any, example_inputs: Sequence[Any], path: str, dynamic_shapes: DynamicShapes) -> None:
    torch = _torch()
    names = [f"input_{i}" for i in range(len(example_inputs))]

    # The module called as user code calls it: exported bare, a module whose forward has default
    # arguments gets them traced as tensors (nn.TransformerEncoderLayer then fails inside PyTorch:
    # "scaled_dot_product_attention(): argument 'is_causal' must be bool, not Tensor").
    class Called(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.module = module if isinstance(module, torch.nn.Module) else None

        def forward(self, *inputs: Any) -> Any:
            return (self.module or module)(*inputs)

    # With gradients on: under no_grad, nn.TransformerEncoderLayer and nn.MultiheadAttention take
    # fused fast paths that no ONNX exporter supports. Nothing is trained; the trace only records.
    with torch.enable_grad():
        torch.onnx.export(
            Called(),
            tuple(example_inputs),
            path,
            input_names=names,
            dynamic_axes=_dynamic_axes(names, dynamic_shapes) or None,
            opset_version=17,
            dynamo=False,
        )


class CompiledModule:
    """A torch module compiled by tilefuse: call it with tensors like the module, get tensors back.

    Inputs are handed over without a copy when they are contiguous CPU tensors; outputs are
    tensors over the output arrays' memory (no copy). ``session`` is the InferenceSession behind it.
    """

    def __init__(self, session: InferenceSession, single_output: bool) -> None:
        self.session = session
        self._names = [i.name for i in session.get_inputs()]
        self._single = single_output

    def __call__(self, *inputs: Any) -> Any:
        torch = _torch()
        if len(inputs) != len(self._names):
            raise UserError(f"the compiled module takes {len(self._names)} inputs, got {len(inputs)}")
        feeds = {}
        for name, x in zip(self._names, inputs):
            if isinstance(x, torch.Tensor):
                if x.requires_grad and torch.is_grad_enabled():
                    raise UserError(f"input {name!r} requires grad: tilefuse runs inference only (use torch.no_grad())")
                x = x.detach().cpu().contiguous().numpy()
            feeds[name] = x
        outputs = [torch.from_numpy(y) for y in self.session.run(None, feeds)]
        return outputs[0] if self._single else tuple(outputs)


def compile(
    module: Any,
    example_inputs: Union[Sequence[Any], Any],
    dynamic_shapes: DynamicShapes = None,
    *,
    threads: Optional[int] = None,
    topn: Optional[int] = None,
    cache_dir: Optional[str] = None,
    mode: Optional[str] = None,
) -> CompiledModule:
    """Compiles a PyTorch module for inference on this CPU.

    ``example_inputs``: a tensor or a tuple of tensors, as the module is called. The module is
    exported with them, compiled, and run on them once (which measures the tiling candidates).
    ``dynamic_shapes``: one entry per input, None (static) or {axis: name} (that axis varies at
    run time, e.g. ``[{0: "batch"}]``); a ``torch.export.Dim`` serves as a name. Without it,
    every call must use the example inputs' shapes.

    ``threads``, ``topn``, ``cache_dir`` and ``mode`` are InferenceSession's.

    Returns a callable taking and returning tensors: one tensor for a module that returns one,
    else a tuple.
    """
    torch = _torch()
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    if isinstance(module, torch.nn.Module):
        module = module.eval()
    with torch.no_grad():
        expected = module(*example_inputs)
    with tempfile.TemporaryDirectory(prefix="tilefuse-export-") as tmp:
        path = os.path.join(tmp, "module.onnx")
        _export(module, example_inputs, path, dynamic_shapes)
        session = InferenceSession(path, threads=threads, topn=topn, cache_dir=cache_dir, mode=mode)
    compiled = CompiledModule(session, isinstance(expected, torch.Tensor))
    compiled(*example_inputs)  # the first run tunes, on the inputs the user chose
    return compiled


# Shapes (and size arguments) a dynamic graph keeps compiled at once; calls with others run in PyTorch.
_MAX_SPECIALIZATIONS = 16


def dynamo_backend(gm: Any, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """``torch.compile(model, backend=tilefuse.dynamo_backend)`` (or ``backend="tilefuse"`` once
    tilefuse is imported or installed): each graph dynamo captures is exported and compiled by
    tilefuse on its first call, its parameters as constants. A graph with symbolic shapes (what
    dynamo makes after it sees a second shape) is compiled once per shape it is called with, up
    to 16. A graph tilefuse cannot take (gradients, another device, an operator it lacks) runs
    in PyTorch as it would without the backend, and the log says why; so does a call after a
    parameter changed in place."""
    torch = _torch()
    reason = _unsupported(torch, example_inputs)
    if reason is not None:
        _log.warning("tilefuse backend: graph left to PyTorch (%s)", reason)
        return gm.forward
    # Parameters and buffers arrive as graph inputs; they are exported as the graph's constants
    # (so that the GEMMs' weights are packed once) and checked, cheaply, on every call.
    fixed = {i: (x, x._version) for i, x in enumerate(example_inputs) if isinstance(x, torch.nn.Parameter)}
    compiled: Dict[Any, Optional[CompiledModule]] = {}
    warned = []

    def run(*args: Any) -> Any:
        stale = any(args[i] is not x or x._version != version for i, (x, version) in fixed.items())
        if stale or (torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)):
            if stale and not warned:
                warned.append(True)
                _log.warning("tilefuse backend: a parameter changed since the graph was compiled; PyTorch runs it")
            return gm.forward(*args)
        key = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else a for i, a in enumerate(args) if i not in fixed)
        if key not in compiled and len(compiled) < _MAX_SPECIALIZATIONS:
            compiled[key] = _compile_graph(torch, gm, args, fixed)
        module = compiled.get(key)  # None: it failed to compile, or one shape too many
        return module(args) if module else gm.forward(*args)

    return run


class _GraphSpecialization:
    """A dynamo graph compiled for one call's shapes: its tensors are the model's inputs; its
    parameters and size arguments are constants."""

    def __init__(self, module: CompiledModule, tensor_positions: Sequence[int]) -> None:
        self.module = module
        self.tensor_positions = tensor_positions

    def __call__(self, args: Sequence[Any]) -> Any:
        return tuple(self.module(*(args[i] for i in self.tensor_positions)))


def _compile_graph(torch: Any, gm: Any, args: Sequence[Any], fixed: Dict[int, Any]) -> Optional[_GraphSpecialization]:
    constants = {i: x.detach() for i, (x, _) in fixed.items()}  # the same memory, outside autograd
    constants.update({i: a for i, a in enumerate(args) if not isinstance(a, torch.Tensor)})
    fed = [i for i in range(len(args)) if i not in constants]

    class Bound(torch.nn.Module):
        def forward(self, *tensors: Any) -> Any:
            given = iter(tensors)
            return gm(*(constants[i] if i in constants else next(given) for i in range(len(args))))

    try:
        with tempfile.TemporaryDirectory(prefix="tilefuse-dynamo-") as tmp:
            path = os.path.join(tmp, "graph.onnx")
            _export(Bound(), [args[i] for i in fed], path, None)
            session = InferenceSession(path)
    except Exception as e:  # an export or import failure: PyTorch runs this graph
        _log.warning("tilefuse backend: graph left to PyTorch (%s: %s)", type(e).__name__,
                     str(e).splitlines()[0] if str(e) else "")
        return None
    return _GraphSpecialization(CompiledModule(session, single_output=False), fed)


def _unsupported(torch: Any, example_inputs: Sequence[Any]) -> Optional[str]:
    for x in example_inputs:
        if not isinstance(x, torch.Tensor):
            if isinstance(x, (int, torch.SymInt)):
                continue  # a size: each call's value is a constant of that call's specialization
            return f"an input is {type(x).__name__}"
        if x.device.type != "cpu":
            return f"an input is on {x.device}"
        if torch.is_grad_enabled() and x.requires_grad and not isinstance(x, torch.nn.Parameter):
            return "an input requires grad (tilefuse runs inference only)"
    if torch.is_grad_enabled():
        return "gradients are enabled (tilefuse runs inference only: call the model under torch.no_grad())"
    return None


def register_dynamo_backend() -> None:
    """Makes ``torch.compile(..., backend="tilefuse")`` work (installed packages register it
    through the torch_dynamo_backends entry point; this is for running from a build tree)."""
    from torch._dynamo import list_backends, register_backend

    if "tilefuse" not in list_backends(exclude_tags=()):
        register_backend(dynamo_backend, name="tilefuse")
