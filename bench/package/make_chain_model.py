#!/usr/bin/env python3
"""A model of many tiny steps, for the step runner's per-step cost: a chain of 120 unary ops
(Relu, Neg, Abs, Sigmoid, Tanh, Exp) on f32[16, 16]. In unfused mode every op is a one-worker
kernel, so the run time is almost all per-step overhead.

    python3 bench/package/make_chain_model.py /tmp/chain.onnx
    build/tilefuse bench /tmp/chain.onnx --modes unfused,fused --iters 200 --threads 2 --stream-mib 16
"""
import sys

import onnx
from onnx import TensorProto, helper

OPS = ["Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Exp"]


def main():
    nodes, previous = [], "x"
    for i in range(120):
        nodes.append(helper.make_node(OPS[i % len(OPS)], [previous], [f"v{i}"], name=f"n{i}"))
        previous = f"v{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 16])],
                              [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [16, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
