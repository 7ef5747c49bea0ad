#!/usr/bin/env python3
"""Integer and f64 reductions (runtime/reduce_call.h) against ONNX Runtime, both through their
Python sessions in the same process at the same thread count, alternating: the best of `--runs`
runs of each, per round, and the ratio ORT / tilefuse (above 1: tilefuse is faster). tilefuse
keeps the reference's order for f64 sums (bit for bit); ONNX Runtime keeps none.

    PYTHONPATH=build/python build/peers-venv/bin/python bench/python/native_reductions.py \\
        [--threads 2] [--rounds 3] [--runs 20]
"""
import argparse
import pathlib
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import tilefuse
from session_timing import best_ms

# (name, op, element type, input shape, reduced axes)
CASES = [
    ("int64 sum over (0, 2)", "ReduceSum", TensorProto.INT64, [8, 512, 512], [0, 2]),
    ("int64 sum over the last axis", "ReduceSum", TensorProto.INT64, [8, 512, 512], [2]),
    ("int64 max over (1, 3)", "ReduceMax", TensorProto.INT64, [8, 64, 64, 64], [1, 3]),
    ("f64 mean over (0, 2)", "ReduceMean", TensorProto.DOUBLE, [8, 512, 512], [0, 2]),
    ("f64 sum over the last axis", "ReduceSum", TensorProto.DOUBLE, [8, 512, 512], [2]),
]


def model(op, elem, shape, axes, path):
    x = helper.make_tensor_value_info("x", elem, shape)
    y = helper.make_tensor_value_info("y", elem, None)
    node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=0) if op == "ReduceSum" else \
        helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=0)
    inits = [helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes)] if op == "ReduceSum" else []
    graph = helper.make_graph([node], op, [x], [y], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def sample(elem, shape):
    gen = np.random.default_rng(0)
    if elem == TensorProto.INT64:
        return gen.integers(-1000, 1000, size=shape, dtype=np.int64)
    return gen.standard_normal(size=shape)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    with tempfile.TemporaryDirectory() as work:
        for name, op, elem, shape, axes in CASES:
            path = str(pathlib.Path(work) / "model.onnx")
            model(op, elem, shape, axes, path)
            inputs = {"x": sample(elem, shape)}
            ours = tilefuse.InferenceSession(path, threads=args.threads)
            theirs = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            difference = np.max(np.abs(ours.run(None, inputs)[0] - theirs.run(None, inputs)[0]))
            t, o = [], []
            for _ in range(args.rounds):
                t.append(best_ms(ours, inputs, args.runs, settle_s=0.2))  # after ORT's threads stop spinning
                o.append(best_ms(theirs, inputs, args.runs, settle_s=0.2))
            print(f"{name:32s} tilefuse {min(t):7.3f}-{max(t):7.3f} ms  ORT {min(o):7.3f}-{max(o):7.3f} ms  "
                  f"x ORT {min(o) / min(t):5.2f}  max |difference| {difference:.1e}")


if __name__ == "__main__":
    main()
