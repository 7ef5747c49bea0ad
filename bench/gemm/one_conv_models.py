"""The one-convolution models behind bench/README.md's AVX2 section ("CNN kernels on AVX2"): stems
and grouped convolutions, each a Conv (plus ReLU for the grouped ones) with constant random
weights, timed alone with `tilefuse bench`:

    build/peers-venv/bin/python bench/gemm/one_conv_models.py build/one-conv
    for m in build/one-conv/*.onnx; do build/tilefuse bench $m --modes fused --threads 1 --iters 50; done
"""
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: (channels, side, maps, kernel, stride, pad, groups, relu)
MODELS = {
    "stem_16_3s2": (3, 224, 16, 3, 2, 1, 1, False),
    "stem_32_3s2": (3, 224, 32, 3, 2, 1, 1, False),
    "stem_64_7s2": (3, 224, 64, 7, 2, 3, 1, False),
    "stem_64_4s4": (3, 224, 64, 4, 4, 0, 1, False),
    "stem_96_4s4": (3, 224, 96, 4, 4, 0, 1, False),
    "regnet_g16_14": (400, 14, 400, 3, 1, 1, 25, True),
    "regnet_g16_56": (96, 56, 96, 3, 1, 1, 6, True),
    "resnext_g8_28": (256, 28, 256, 3, 1, 1, 32, True),
}


def model(channels, side, maps, kernel, stride, pad, groups, relu):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((maps, channels // groups, kernel, kernel)) * 0.1).astype(np.float32)
    b = rng.standard_normal(maps).astype(np.float32)
    out = (side + 2 * pad - kernel) // stride + 1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if relu else "y"], group=groups,
                              kernel_shape=[kernel, kernel], pads=[pad] * 4, strides=[stride, stride])]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    graph = helper.make_graph(nodes, "one_conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, side, side])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, maps, out, out])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/one-conv")
    out.mkdir(parents=True, exist_ok=True)
    for name, spec in MODELS.items():
        onnx.save(model(*spec), out / f"{name}.onnx")
        print(out / f"{name}.onnx")


if __name__ == "__main__":
    main()
