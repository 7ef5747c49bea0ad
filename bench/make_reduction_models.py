#!/usr/bin/python3
"""Writes the single-purpose models the fusion-coverage numbers in bench/README.md were measured on.

Usage: make_reduction_models.py OUT_DIR

- gelu_tanh:        f32[4096, 4096] -> GELU, tanh form, as PyTorch exports approximate="tanh"
- column_stats:     ReduceSum(x + 1.5) + ReduceMean(x) over axis 0 of f32[4096, 4096] (siblings)
- full_mean_sq:     ReduceMean(x * x) over all of f32[4096, 4096] (a split reduction)
- column_sum_16:    ReduceSum over axis 0 of f32[262144, 16] (a narrow column reduction)

Then, e.g.: build/tilefuse bench OUT_DIR/gelu_tanh.onnx --modes fused --threads 2 --topn 4
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def scalar(name, value):
    return helper.make_tensor(name, TensorProto.FLOAT, [], [value])


def axes(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def model(name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def gelu_tanh():
    n = helper.make_node
    nodes = [n("Mul", ["x", "half"], ["a"]), n("Pow", ["x", "three"], ["p"]), n("Mul", ["p", "k"], ["pk"]),
             n("Add", ["x", "pk"], ["s"]), n("Mul", ["s", "r"], ["sr"]), n("Tanh", ["sr"], ["t"]),
             n("Add", ["t", "one"], ["t1"]), n("Mul", ["a", "t1"], ["y"])]
    consts = [scalar("half", 0.5), scalar("three", 3.0), scalar("k", 0.044715), scalar("r", 0.7978845608),
              scalar("one", 1.0)]
    return model("gelu_tanh", nodes, [info("x", [4096, 4096])], [info("y", [4096, 4096])], consts)


def column_stats():
    n = helper.make_node
    nodes = [n("Add", ["x", "shift"], ["xs"]), n("ReduceSum", ["xs", "axis0"], ["s"], keepdims=0),
             n("ReduceMean", ["x"], ["m"], axes=[0], keepdims=0), n("Add", ["s", "m"], ["y"])]
    return model("column_stats", nodes, [info("x", [4096, 4096])], [info("y", [4096])],
                 [scalar("shift", 1.5), axes("axis0", [0])])


def full_mean_sq():
    n = helper.make_node
    nodes = [n("Mul", ["x", "x"], ["sq"]), n("ReduceMean", ["sq"], ["y"], keepdims=0)]
    return model("full_mean_sq", nodes, [info("x", [4096, 4096])], [info("y", [])])


def column_sum_16():
    nodes = [helper.make_node("ReduceSum", ["x", "axis0"], ["y"], keepdims=0)]
    return model("column_sum_16", nodes, [info("x", [262144, 16])], [info("y", [16])], [axes("axis0", [0])])


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 1
    os.makedirs(sys.argv[1], exist_ok=True)
    for build in (gelu_tanh, column_stats, full_mean_sq, column_sum_16):
        path = os.path.join(sys.argv[1], f"{build.__name__}.onnx")
        onnx.save(build(), path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
