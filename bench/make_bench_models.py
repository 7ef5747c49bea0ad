#!/usr/bin/python3
"""Writes LARGE variants of the bundled memory-bound models for `tilefuse bench` into OUT_DIR.

Usage: make_bench_models.py OUT_DIR [--mib N] [--dynamic] [--dtype f16|bf16 ...]

Every model's main input and output are N MiB of float32 each (default 128), so a run touches
at least 2 N MiB, far more than the caches hold (--dtype: the same shapes in f16 or bf16, half
the bytes). Only the .onnx files are written: bench fills
the inputs with seeded random data. --dynamic also writes NAME_dynamic.onnx, the same graph with
its leading dim a symbol ("batch", as a dynamic-batch export has it), and inputs/NAME/*.npy of
the static sizes to run both with (`bench --input`), for the jit path's shape buckets. The graphs are the ones of scripts/make_example_models.py
(same helpers, same op sequences), only bigger; nothing here is committed.
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from make_example_models import (GraphBuilder, add_elementwise_chain, LAYERNORM_EPS, MASK_FILL,  # noqa: E402
                                 add_decomposed_layernorm, add_erf_gelu, f32_info, tensor_info)

HIDDEN = 1024      # rows of 4 KiB: the hidden size of a mid-sized transformer
FFN = 4096         # bias+GELU runs on the MLP's wide activation
HEADS, SEQ = 16, 512


def rows_for(mib, row_elements):
    """Rows of `row_elements` float32 that make one tensor of `mib` MiB."""
    return max(1, (mib << 20) // (4 * row_elements))


def chain_graph(rng):
    """A graph holding the constants both chains broadcast (row, column and scalar operands)."""
    g = GraphBuilder()
    g.const("row_scale", rng.uniform(0.5, 1.5, HIDDEN).astype(np.float32))
    g.const("col_bias", rng.standard_normal((SEQ, 1), dtype=np.float32))
    g.const("row_floor", rng.uniform(-0.5, 0.0, (1, HIDDEN)).astype(np.float32))
    g.const("col_div", rng.uniform(1.0, 2.0, (SEQ, 1)).astype(np.float32))
    g.const("half", np.float32(0.5))
    g.const("one", np.float32(1.0))
    return g


def chain_model(g, name, batch):
    """x f32[batch, SEQ, HIDDEN] and y f32[batch, 1, HIDDEN] in, "out" of x's shape out."""
    shape = [batch, SEQ, HIDDEN]
    return g.model(name, [f32_info("x", shape), f32_info("y", [batch, 1, HIDDEN])],
                   [f32_info("out", shape)], opset=13)


def elementwise_chain(mib, rng):
    batch = rows_for(mib, SEQ * HIDDEN)
    g = chain_graph(rng)
    add_elementwise_chain(g)
    return chain_model(g, "elementwise_chain_large", batch)


def elementwise_chain_arith(mib, rng):
    """The chain's shape and broadcasts with arithmetic only (no vector math): the memory-bound
    case, where fusion's gain is all in the traffic it saves."""
    batch = rows_for(mib, SEQ * HIDDEN)
    g = chain_graph(rng)
    t = g.op("Mul", ["x", "row_scale"], "t01_mul_row")
    t = g.op("Add", [t, "col_bias"], "t02_add_col")
    t = g.op("Relu", [t], "t03_relu")
    t = g.op("Sub", [t, "half"], "t04_sub_scalar")
    t = g.op("Mul", [t, "x"], "t05_mul_x")
    t = g.op("Abs", [t], "t06_abs")
    t = g.op("Max", [t, "row_floor"], "t07_max_row")
    t = g.op("Neg", [t], "t08_neg")
    t = g.op("Div", [t, "col_div"], "t09_div_col")
    t = g.op("Sub", ["one", t], "t10_sub_from_scalar")  # 1 + |...| / col_div >= 1
    t = g.op("Sqrt", [t], "t11_sqrt")
    g.op("Mul", [t, "y"], "out")
    return chain_model(g, "elementwise_chain_arith_large", batch)


def bias_gelu(mib, rng):
    shape = [rows_for(mib, FFN), FFN]
    g = GraphBuilder()
    g.const("b", rng.standard_normal(FFN, dtype=np.float32))
    biased = g.op("Add", ["x", "b"], "biased")
    add_erf_gelu(g, biased, "gelu", out="y")
    return g.model("bias_gelu_large", [f32_info("x", shape)], [f32_info("y", shape)], opset=13)


def layernorm_params(g, rng):
    g.const("gamma", (1.0 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32))
    g.const("beta", (0.1 * rng.standard_normal(HIDDEN)).astype(np.float32))


def layernorm_decomposed(mib, rng):
    shape = [rows_for(mib, HIDDEN), HIDDEN]
    g = GraphBuilder()
    layernorm_params(g, rng)
    add_decomposed_layernorm(g, "x", "gamma", "beta", "ln", out="y")
    return g.model("layernorm_decomposed_large", [f32_info("x", shape)], [f32_info("y", shape)], opset=13)


def layernorm_opset17(mib, rng):
    shape = [rows_for(mib, HIDDEN), HIDDEN]
    g = GraphBuilder()
    layernorm_params(g, rng)
    g.op("LayerNormalization", ["x", "gamma", "beta"], "y", axis=-1, epsilon=LAYERNORM_EPS)
    return g.model("layernorm_opset17_large", [f32_info("x", shape)], [f32_info("y", shape)], opset=17)


def scale_mask_softmax(mib, rng):
    batch = rows_for(mib, HEADS * SEQ * SEQ)
    shape = [batch, HEADS, SEQ, SEQ]
    g = GraphBuilder()
    g.const("scale", np.float32(1.0 / math.sqrt(HIDDEN // HEADS)))
    g.const("mask_fill", np.float32(MASK_FILL))
    scaled = g.op("Mul", ["scores", "scale"], "scaled")
    masked = g.op("Where", ["mask", scaled, "mask_fill"], "masked")
    g.op("Softmax", [masked], "probs", axis=-1)
    return g.model("scale_mask_softmax_large",
                   [f32_info("scores", shape), tensor_info("mask", TensorProto.BOOL, [batch, 1, 1, SEQ])],
                   [f32_info("probs", shape)], opset=13)


def with_symbolic_batch(model):
    """The model with the leading dim of every graph input and output named "batch"."""
    dynamic = onnx.ModelProto()
    dynamic.CopyFrom(model)
    for value in list(dynamic.graph.input) + list(dynamic.graph.output):
        dims = value.type.tensor_type.shape.dim
        if len(dims) >= 2:
            dims[0].dim_param = "batch"
    del dynamic.graph.value_info[:]
    return dynamic


HALF_TYPES = {"f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}


def half_tensor(tensor, elem_type):
    """A float32 TensorProto rounded to f16 or bf16 (to nearest even, as tilefuse rounds)."""
    values = onnx.numpy_helper.to_array(tensor).astype(np.float32)
    # A mask fill of float32's lowest would round to -inf: take the type's lowest finite value.
    largest = 65504.0 if elem_type == TensorProto.FLOAT16 else 3.3895314e38
    values = np.clip(values, -largest, largest)
    if elem_type == TensorProto.FLOAT16:
        raw = values.astype(np.float16).view(np.uint16)
    else:
        bits = values.view(np.uint32).astype(np.uint64)
        raw = ((bits + np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)
    return onnx.helper.make_tensor(tensor.name, elem_type, values.shape, raw.tobytes(), raw=True)


def with_storage_type(model, name):
    """The model with every float32 tensor (inputs, outputs, constants) stored as f16 or bf16, so
    that its kernels move half the bytes. Opset 17: Where, Pow and others take bf16 from 16 on."""
    elem_type = HALF_TYPES[name]
    half = onnx.ModelProto()
    half.CopyFrom(model)
    graph = half.graph
    for i, tensor in enumerate(graph.initializer):
        if tensor.data_type == TensorProto.FLOAT:
            graph.initializer[i].CopyFrom(half_tensor(tensor, elem_type))
    for node in graph.node:
        for attribute in node.attribute:
            if node.op_type == "Constant" and attribute.name == "value" and attribute.t.data_type == TensorProto.FLOAT:
                attribute.t.CopyFrom(half_tensor(attribute.t, elem_type))
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = elem_type
    for opset in half.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = max(opset.version, 17)
    half.graph.name += f"_{name}"
    return half


def write_inputs(model, directory, rng):
    """Seeded .npy files of the model's (static) inputs: normal floats, bools 90% true."""
    os.makedirs(directory, exist_ok=True)
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        if value.type.tensor_type.elem_type == TensorProto.BOOL:
            data = rng.random(shape) > 0.1
        else:
            data = rng.standard_normal(shape, dtype=np.float32)
        np.save(os.path.join(directory, f"{value.name}.npy"), data)


MODELS = [elementwise_chain, elementwise_chain_arith, bias_gelu, layernorm_decomposed, layernorm_opset17, scale_mask_softmax]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="directory to write (a build directory, not the source tree)")
    parser.add_argument("--mib", type=int, default=128, help="MiB of the main input (and output) tensor")
    parser.add_argument("--dynamic", action="store_true", help="also a symbolic-batch variant and .npy inputs")
    parser.add_argument("--dtype", action="append", choices=sorted(HALF_TYPES), default=[],
                        help="also NAME_<dtype>.onnx, every float tensor stored in that type (repeatable)")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for index, build in enumerate(MODELS):
        model = build(args.mib, np.random.default_rng(2000 + index))
        path = os.path.join(args.out_dir, f"{build.__name__}.onnx")
        onnx.save(model, path)
        print(f"wrote {path}")
        for dtype in args.dtype:
            half_path = os.path.join(args.out_dir, f"{build.__name__}_{dtype}.onnx")
            onnx.save(with_storage_type(model, dtype), half_path)
            print(f"wrote {half_path}")
        if args.dynamic:
            dynamic_path = os.path.join(args.out_dir, f"{build.__name__}_dynamic.onnx")
            onnx.save(with_symbolic_batch(model), dynamic_path)
            write_inputs(model, os.path.join(args.out_dir, "inputs", build.__name__), np.random.default_rng(index))
            print(f"wrote {dynamic_path} and inputs/{build.__name__}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
