"""Writes each case's ONNX exports, inputs and PyTorch eager reference outputs to disk.

Every engine reads the same files: ONNX Runtime and tilefuse the .onnx, every engine the input
.npy files, and every engine's outputs are compared with the reference .npy files before any of its
times is reported. The float64 reference lets a check pass where PyTorch's own float32 result is
the less exact one (scripts/check_pytorch_exports.py's rule).
"""
import contextlib
import dataclasses
import os
import sys
import warnings

import numpy as np
import torch

from models import tensor_bytes

OUTPUT_NAME = "out"


@dataclasses.dataclass
class Prepared:
    """A case on disk. `onnx` maps a variant ("opset13", "opset17") to its file."""
    case_id: str
    onnx: dict
    inputs: dict            # input name -> .npy path
    reference: dict         # output name -> .npy path (PyTorch eager, float32)
    reference64: dict       # output name -> .npy path (PyTorch eager, float64)
    compulsory_bytes: int   # inputs + parameters + outputs: what any engine must move at least once
    export_errors: dict     # variant -> why torch.onnx.export failed


def prepare(case, work_dir):
    """Exports and writes one case under work_dir/<case id>/; reuses nothing (sizes or code may have changed)."""
    case_dir = os.path.join(work_dir, case.id)
    os.makedirs(case_dir, exist_ok=True)
    module = case.build_module()
    inputs = case.make_inputs()
    onnx_files, errors = {}, {}
    for opset in case.opsets:
        variant, path = f"opset{opset}", os.path.join(case_dir, f"{case.id}.opset{opset}.onnx")
        try:
            export(module, inputs, path, opset)
            onnx_files[variant] = path
        except Exception as error:  # reported as this variant's row; the other engines still run
            errors[variant] = f"torch.onnx.export failed: {type(error).__name__}: {str(error).strip()[:300]}"
    parameter_bytes = tensor_bytes(list(module.parameters()) + list(module.buffers()))
    with torch.inference_mode():
        expected = module(*inputs.values())
        expected64 = module.double()(*(t.double() if t.is_floating_point() else t for t in inputs.values()))
    return Prepared(
        case_id=case.id, onnx=onnx_files,
        inputs=save_all(case_dir, "input", {name: t.numpy() for name, t in inputs.items()}),
        reference=save_all(case_dir, "ref32", {OUTPUT_NAME: expected.numpy()}),
        reference64=save_all(case_dir, "ref64", {OUTPUT_NAME: expected64.numpy()}),
        compulsory_bytes=tensor_bytes(list(inputs.values()) + [expected]) + parameter_bytes,
        export_errors=errors)


def export(module, inputs, path, opset):
    """TorchScript exporter (what check_pytorch_exports.py covers), static shapes, constants folded.
    Not under inference_mode: there nn.TransformerEncoderLayer takes its fused fast path, which the
    exporter cannot trace."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(inputs.values()), path, input_names=list(inputs),
                          output_names=[OUTPUT_NAME], opset_version=opset, dynamo=False)


def save_all(case_dir, kind, arrays):
    paths = {}
    for name, array in arrays.items():
        paths[name] = os.path.join(case_dir, f"{kind}.{name}.npy")
        np.save(paths[name], array)
    return paths
