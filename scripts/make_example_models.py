#!/usr/bin/python3
"""Writes tilefuse's bundled example models into OUT_DIR (normally examples/models).

Usage: make_example_models.py OUT_DIR

For each model NAME it writes OUT_DIR/NAME.onnx, OUT_DIR/NAME/inputs/<input>.npy (seeded random
data) and OUT_DIR/NAME/expected/<output>.npy. The expectations are computed here with numpy in
float64 and then cast, independently of tilefuse, so the end-to-end tests compare tilefuse against
numpy and not against itself. Deterministic: the same onnx/numpy produce the same bytes.
"""
import argparse
import math
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, mapping, numpy_helper

PRODUCER = "tilefuse scripts/make_example_models.py"
LAYERNORM_EPS = 1e-5
MASK_FILL = -1e9  # what attention code writes into masked-out scores before Softmax

# Small but realistic activation shapes: (batch, sequence, hidden).
BATCH, SEQ, HIDDEN = 2, 32, 128


# ---------------------------------------------------------------- numpy ground truth (float64)

erf64 = np.vectorize(math.erf, otypes=[np.float64])


def gelu64(x):
    return 0.5 * x * (1.0 + erf64(x / math.sqrt(2.0)))


def layernorm64(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYERNORM_EPS) * gamma + beta


def softmax64(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def f64(a):
    return np.asarray(a, dtype=np.float64)


# ---------------------------------------------------------------- graph building helpers

class GraphBuilder:
    """Collects nodes and initializers; names every node after its output for readable models."""

    def __init__(self):
        self.nodes = []
        self.initializers = []

    def const(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, output, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, **attrs))
        return output

    def model(self, name, inputs, outputs, opset):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, producer_name=PRODUCER,
                                  opset_imports=[helper.make_opsetid("", opset)])
        onnx.checker.check_model(model, full_check=True)
        return model


def tensor_info(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def f32_info(name, shape):
    return tensor_info(name, TensorProto.FLOAT, shape)


def add_erf_gelu(g, x, prefix, out=None):
    """GELU as PyTorch's exporter writes it for approximate='none': x*0.5*(1+erf(x/sqrt(2)))."""
    sqrt2 = g.const(f"{prefix}_sqrt2", np.float32(math.sqrt(2.0)))
    one = g.const(f"{prefix}_one", np.float32(1.0))
    half = g.const(f"{prefix}_half", np.float32(0.5))
    scaled = g.op("Div", [x, sqrt2], f"{prefix}_div")
    erf = g.op("Erf", [scaled], f"{prefix}_erf")
    shifted = g.op("Add", [erf, one], f"{prefix}_add")
    product = g.op("Mul", [x, shifted], f"{prefix}_mul")
    return g.op("Mul", [product, half], out or f"{prefix}_out")


def add_decomposed_layernorm(g, x, gamma, beta, prefix, out=None):
    """LayerNorm over the last axis, opset-13 style (ReduceMean with an `axes` attribute)."""
    two = g.const(f"{prefix}_two", np.float32(2.0))
    eps = g.const(f"{prefix}_eps", np.float32(LAYERNORM_EPS))
    mean = g.op("ReduceMean", [x], f"{prefix}_mean", axes=[-1], keepdims=1)
    centered = g.op("Sub", [x, mean], f"{prefix}_centered")
    squared = g.op("Pow", [centered, two], f"{prefix}_squared")
    var = g.op("ReduceMean", [squared], f"{prefix}_var", axes=[-1], keepdims=1)
    var_eps = g.op("Add", [var, eps], f"{prefix}_var_eps")
    std = g.op("Sqrt", [var_eps], f"{prefix}_std")
    normed = g.op("Div", [centered, std], f"{prefix}_normed")
    scaled = g.op("Mul", [normed, gamma], f"{prefix}_scaled")
    return g.op("Add", [scaled, beta], out or f"{prefix}_out")


# ---------------------------------------------------------------- the models
# Each builder takes a numpy Generator and returns (model, {input: array}, {output: array}).

def add_elementwise_chain(g):
    """The 12 ops of the elementwise chain: x and y inputs, constants row_scale, col_bias,
    half, row_floor, col_div, one; output "out"."""
    t = g.op("Mul", ["x", "row_scale"], "t01_mul_row")
    t = g.op("Add", [t, "col_bias"], "t02_add_col")
    t = g.op("Sigmoid", [t], "t03_sigmoid")
    t = g.op("Sub", [t, "half"], "t04_sub_scalar")
    t = g.op("Mul", [t, "x"], "t05_mul_x")
    t = g.op("Tanh", [t], "t06_tanh")
    t = g.op("Max", [t, "row_floor"], "t07_max_row")
    t = g.op("Exp", [t], "t08_exp")
    t = g.op("Div", [t, "col_div"], "t09_div_col")
    t = g.op("Add", [t, "one"], "t10_add_scalar")
    t = g.op("Log", [t], "t11_log")
    g.op("Mul", [t, "y"], "out")


def bias_gelu(rng):
    x = rng.standard_normal((BATCH, SEQ, HIDDEN), dtype=np.float32)
    b = rng.standard_normal(HIDDEN, dtype=np.float32)
    g = GraphBuilder()
    g.const("b", b)
    biased = g.op("Add", ["x", "b"], "biased")
    add_erf_gelu(g, biased, "gelu", out="y")
    model = g.model("bias_gelu", [f32_info("x", x.shape)], [f32_info("y", x.shape)], opset=13)
    return model, {"x": x}, {"y": gelu64(f64(x) + f64(b))}


def layernorm_params(rng):
    gamma = (1.0 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    return gamma, beta


def layernorm_decomposed(rng):
    x = rng.standard_normal((BATCH, SEQ, HIDDEN), dtype=np.float32) * 2 + 0.5
    gamma, beta = layernorm_params(rng)
    g = GraphBuilder()
    g.const("gamma", gamma)
    g.const("beta", beta)
    add_decomposed_layernorm(g, "x", "gamma", "beta", "ln", out="y")
    model = g.model("layernorm_decomposed", [f32_info("x", x.shape)], [f32_info("y", x.shape)],
                    opset=13)
    return model, {"x": x}, {"y": layernorm64(f64(x), f64(gamma), f64(beta))}


def layernorm_opset17(rng):
    x = rng.standard_normal((BATCH, SEQ, HIDDEN), dtype=np.float32) * 2 + 0.5
    gamma, beta = layernorm_params(rng)
    g = GraphBuilder()
    g.const("gamma", gamma)
    g.const("beta", beta)
    g.op("LayerNormalization", ["x", "gamma", "beta"], "y", axis=-1, epsilon=LAYERNORM_EPS)
    model = g.model("layernorm_opset17", [f32_info("x", x.shape)], [f32_info("y", x.shape)],
                    opset=17)
    return model, {"x": x}, {"y": layernorm64(f64(x), f64(gamma), f64(beta))}


def scale_mask_softmax(rng):
    heads, head_dim = 4, 32
    scores = rng.standard_normal((BATCH, heads, SEQ, SEQ), dtype=np.float32) * 4
    # Key padding mask (True = attend), broadcast over heads and query positions. Every row keeps
    # at least its first key so no Softmax row is fully masked.
    lengths = rng.integers(1, SEQ + 1, size=BATCH)
    mask = (np.arange(SEQ)[None, :] < lengths[:, None]).reshape(BATCH, 1, 1, SEQ)
    scale = np.float32(1.0 / math.sqrt(head_dim))
    g = GraphBuilder()
    g.const("scale", scale)
    g.const("mask_fill", np.float32(MASK_FILL))
    scaled = g.op("Mul", ["scores", "scale"], "scaled")
    masked = g.op("Where", ["mask", scaled, "mask_fill"], "masked")
    g.op("Softmax", [masked], "probs", axis=-1)
    model = g.model("scale_mask_softmax",
                    [f32_info("scores", scores.shape),
                     tensor_info("mask", TensorProto.BOOL, mask.shape)],
                    [f32_info("probs", scores.shape)], opset=13)
    expected = softmax64(np.where(mask, f64(scores) * f64(scale), MASK_FILL))
    return model, {"scores": scores, "mask": mask}, {"probs": expected}


def elementwise_chain(rng):
    x = rng.standard_normal((BATCH, SEQ, HIDDEN), dtype=np.float32)
    y = rng.standard_normal((BATCH, 1, HIDDEN), dtype=np.float32)        # broadcast input
    row_scale = rng.uniform(0.5, 1.5, HIDDEN).astype(np.float32)         # [H] row vector
    col_bias = rng.standard_normal((SEQ, 1), dtype=np.float32)           # [S, 1] column vector
    row_floor = rng.uniform(-0.5, 0.0, (1, HIDDEN)).astype(np.float32)   # [1, H] row vector
    col_div = rng.uniform(1.0, 2.0, (SEQ, 1)).astype(np.float32)         # [S, 1], positive
    half, one = np.float32(0.5), np.float32(1.0)                         # scalars
    g = GraphBuilder()
    for name, value in [("row_scale", row_scale), ("col_bias", col_bias), ("row_floor", row_floor),
                        ("col_div", col_div), ("half", half), ("one", one)]:
        g.const(name, value)
    add_elementwise_chain(g)
    model = g.model("elementwise_chain",
                    [f32_info("x", x.shape), f32_info("y", y.shape)],
                    [f32_info("out", x.shape)], opset=13)

    x64 = f64(x)
    t = x64 * f64(row_scale) + f64(col_bias)
    t = 1.0 / (1.0 + np.exp(-t)) - 0.5
    t = np.tanh(t * x64)
    t = np.exp(np.maximum(t, f64(row_floor))) / f64(col_div)
    expected = np.log(t + 1.0) * f64(y)
    return model, {"x": x, "y": y}, {"out": expected}


def mlp_block(rng):
    hidden, ffn = 64, 256
    x = rng.standard_normal((BATCH, SEQ, hidden), dtype=np.float32)
    w1 = (rng.standard_normal((hidden, ffn)) / math.sqrt(hidden)).astype(np.float32)
    b1 = (0.1 * rng.standard_normal(ffn)).astype(np.float32)
    w2 = (rng.standard_normal((ffn, hidden)) / math.sqrt(ffn)).astype(np.float32)
    b2 = (0.1 * rng.standard_normal(hidden)).astype(np.float32)
    gamma = (1.0 + 0.1 * rng.standard_normal(hidden)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(hidden)).astype(np.float32)
    g = GraphBuilder()
    for name, value in [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2),
                        ("gamma", gamma), ("beta", beta)]:
        g.const(name, value)
    h = g.op("MatMul", ["x", "w1"], "fc1")
    h = g.op("Add", [h, "b1"], "fc1_bias")
    h = add_erf_gelu(g, h, "gelu")
    h = g.op("MatMul", [h, "w2"], "fc2")
    h = g.op("Add", [h, "b2"], "fc2_bias")
    h = g.op("Add", [h, "x"], "residual")
    add_decomposed_layernorm(g, h, "gamma", "beta", "ln", out="y")
    model = g.model("mlp_block", [f32_info("x", x.shape)], [f32_info("y", x.shape)], opset=13)

    h64 = gelu64(f64(x) @ f64(w1) + f64(b1)) @ f64(w2) + f64(b2) + f64(x)
    return model, {"x": x}, {"y": layernorm64(h64, f64(gamma), f64(beta))}


def symbolic_batch(rng):
    heads, head_dim = 4, HIDDEN // 4
    batch = 3  # the committed input fixes N; deliberately not BATCH
    x = rng.standard_normal((batch, SEQ, HIDDEN), dtype=np.float32)
    bias = (0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    scale = np.float32(0.5)
    g = GraphBuilder()
    g.const("bias", bias)
    g.const("scale", scale)
    g.const("idx0", np.int64(0))
    g.const("idx1", np.int64(1))
    g.const("axes0", np.array([0], dtype=np.int64))
    g.const("heads", np.array([heads], dtype=np.int64))
    g.const("head_dim", np.array([head_dim], dtype=np.int64))
    g.const("minus_one", np.array([-1], dtype=np.int64))
    # The shape chain PyTorch's exporter writes for x.view(x.size(0), x.size(1), heads, -1).
    shape = g.op("Shape", ["x"], "x_shape")
    n = g.op("Gather", [shape, "idx0"], "n", axis=0)
    s = g.op("Gather", [shape, "idx1"], "s", axis=0)
    n1 = g.op("Unsqueeze", [n, "axes0"], "n_1d")
    s1 = g.op("Unsqueeze", [s, "axes0"], "s_1d")
    split_shape = g.op("Concat", [n1, s1, "heads", "head_dim"], "split_shape", axis=0)
    merged_shape = g.op("Concat", [n1, s1, "minus_one"], "merged_shape", axis=0)

    t = g.op("Mul", ["x", "scale"], "scaled")
    t = g.op("Add", [t, "bias"], "biased")
    t = g.op("Reshape", [t, split_shape], "split_heads")
    t = g.op("Softmax", [t], "probs", axis=-1)
    t = g.op("Reshape", [t, merged_shape], "merged")
    g.op("Add", [t, "x"], "y")
    dims = ["N", SEQ, HIDDEN]
    model = g.model("symbolic_batch", [f32_info("x", dims)], [f32_info("y", dims)], opset=13)

    t = (f64(x) * f64(scale) + f64(bias)).reshape(batch, SEQ, heads, head_dim)
    expected = softmax64(t).reshape(batch, SEQ, HIDDEN) + f64(x)
    return model, {"x": x}, {"y": expected}


MODELS = [bias_gelu, layernorm_decomposed, layernorm_opset17, scale_mask_softmax,
          elementwise_chain, mlp_block, symbolic_batch]


# ---------------------------------------------------------------- writing

def write_arrays(directory, arrays, dtypes):
    os.makedirs(directory)
    for name, array in arrays.items():
        np.save(os.path.join(directory, f"{name}.npy"), np.asarray(array, dtype=dtypes[name]))


def onnx_dtypes(value_infos):
    return {v.name: mapping.TENSOR_TYPE_TO_NP_TYPE[v.type.tensor_type.elem_type]
            for v in value_infos}


def write_model(out_dir, index, build):
    name = build.__name__
    rng = np.random.default_rng(1000 + index)
    model, inputs, expected = build(rng)
    assert [v.name for v in model.graph.input] == list(inputs), name
    assert [v.name for v in model.graph.output] == list(expected), name
    onnx.save(model, os.path.join(out_dir, f"{name}.onnx"))
    data_dir = os.path.join(out_dir, name)
    shutil.rmtree(data_dir, ignore_errors=True)  # no stale inputs from an older version
    write_arrays(os.path.join(data_dir, "inputs"), inputs, onnx_dtypes(model.graph.input))
    write_arrays(os.path.join(data_dir, "expected"), expected, onnx_dtypes(model.graph.output))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="directory to write, normally examples/models")
    out_dir = parser.parse_args().out_dir
    os.makedirs(out_dir, exist_ok=True)
    for index, build in enumerate(MODELS):
        write_model(out_dir, index, build)
        print(f"wrote {os.path.join(out_dir, build.__name__)}.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main())
