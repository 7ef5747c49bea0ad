"""Exports the suite's architectures to ONNX with both of PyTorch's exporters, static and with
dynamic batch/sequence, and saves each model's inputs and PyTorch eager's outputs as .npy.

    export.py --size tiny|full --out DIR [--archs bert,gpt2,...] [--batch 1]

DIR/<arch>/<exporter>_<shapes>.onnx, DIR/<arch>/inputs/<name>.npy, DIR/<arch>/eager.npy and
DIR/manifest.json (one entry per export: paths, or the exporter's error).
Exporters: "torchscript" (torch.onnx.export(dynamo=False)) and "dynamo" (the default
torch.export-based exporter).
"""
import argparse
import contextlib
import inspect
import io
import json
import os
import sys
import time
import traceback
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

INPUT_SEED = 4321
OPSET = 18


def export_one(module, inputs, path, exporter, dynamic_axes):
    names = list(inputs)
    args = tuple(inputs.values())
    kwargs = dict(input_names=names, output_names=["output"], opset_version=OPSET)
    if dynamic_axes:
        kwargs["dynamic_axes"] = {n: dynamic_axes[n] for n in names if n in dynamic_axes}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        if exporter == "torchscript":
            torch.onnx.export(module, args, path, dynamo=False, **kwargs)
        else:
            if dynamic_axes:
                kwargs.pop("dynamic_axes")
                # In argument order; Dim.AUTO lets torch.export keep a dim symbolic where it can.
                specs = tuple({a: torch.export.Dim.AUTO for a in dynamic_axes.get(n, {})} for n in names)
                # A forward(*args) takes all inputs as its one argument `args`.
                varargs = any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(module.forward).parameters.values())
                kwargs["dynamic_shapes"] = (specs,) if varargs else specs
            program = torch.onnx.export(module, args, dynamo=True, report=False, verbose=False, **kwargs)
            program.save(path)


def export_arch(arch, size, out_dir, batch, variants):
    gen = torch.Generator().manual_seed(INPUT_SEED)
    module = arch.build(size)
    inputs = arch.inputs(size, batch, gen)
    arch_dir = os.path.join(out_dir, arch.name)
    os.makedirs(os.path.join(arch_dir, "inputs"), exist_ok=True)
    for name, t in inputs.items():
        np.save(os.path.join(arch_dir, "inputs", f"{name}.npy"), t.numpy())
    with torch.no_grad():
        eager = module(*inputs.values())
    np.save(os.path.join(arch_dir, "eager.npy"), eager.numpy())
    entries = []
    for exporter, shape_mode in variants:
        path = os.path.join(arch_dir, f"{exporter}_{shape_mode}.onnx")
        entry = {"arch": arch.name, "family": arch.family, "exporter": exporter, "shapes": shape_mode,
                 "model": os.path.relpath(path, out_dir),
                 "inputs": {n: os.path.join(arch.name, "inputs", f"{n}.npy") for n in inputs},
                 "eager": os.path.join(arch.name, "eager.npy")}
        start = time.perf_counter()
        try:
            export_one(module, inputs, path, exporter, arch.dynamic if shape_mode == "dynamic" else None)
            entry["export_seconds"] = round(time.perf_counter() - start, 1)
        except Exception as e:  # an exporter failure is a row of the table, not a crash
            entry["export_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
            traceback.print_exc(limit=2, file=sys.stderr)
        print(f"{arch.name:20s} {exporter:12s} {shape_mode:8s} "
              f"{entry.get('export_error', 'ok (%.1f s)' % entry.get('export_seconds', 0))}", flush=True)
        entries.append(entry)
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=["tiny", "full"], default="full")
    ap.add_argument("--out", required=True)
    ap.add_argument("--archs", default=",".join(a.name for a in models.ARCHS))
    # torch.export specialises dims of size 1, so the dynamic exports need a batch of 2 or more.
    ap.add_argument("--batch", type=int, default=2,
                    help="batch of the example inputs (default 2; run_real.py, as `make bench-real`, exports the "
                         "full size at 1: pass --batch 1 to compare with its numbers)")
    ap.add_argument("--variants", default="torchscript_static,torchscript_dynamic,dynamo_static,dynamo_dynamic",
                    help="exporter_shapes pairs to export (exporter: torchscript|dynamo, shapes: static|dynamic)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    manifest = {"size": args.size, "batch": args.batch, "opset": OPSET, "torch": torch.__version__, "entries": []}
    for name in args.archs.split(","):
        variants = [tuple(v.split("_")) for v in args.variants.split(",")]
        manifest["entries"] += export_arch(models.arch(name), args.size, args.out, args.batch, variants)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
