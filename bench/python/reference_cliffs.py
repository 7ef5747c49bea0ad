#!/usr/bin/env python3
"""Ops that ran (or still run) on the reference interpreter's loops, at model sizes, against ONNX
Runtime: PyTorch modules exported here (TorchScript exporter, opset 17), both engines through
their Python sessions at the same thread count, best of `--runs` after 0.2 s of quiet each (ONNX
Runtime's pool spins after its runs), and the worst difference between their outputs.

    PYTHONPATH=build/python:bench/python build/peers-venv/bin/python bench/python/reference_cliffs.py \\
        [--threads 2] [--runs 5] [--only REGEX]

Einsum, Trilu and the recurrent ops have fast paths since 2026-12-07 (passes/einsum_as_matmul.h,
passes/trilu_as_where.h, runtime/recurrent_call.h); ScatterND, ScatterElements, Resize (cubic, and
upsampling by 2), TopK of integers, OneHot, flips, LayerNorm over a transposed tensor, MaxPool's
indices, GridSample, RoiAlign, Conv, ConvTranspose and MaxPool over three spatial dims and
trilinear Resize since the same day's fourth round (runtime/scatter_call.h, runtime/resize_blend.h,
runtime/topk_call.h, passes/one_hot_as_where.h, decompose_composites.h, runtime/pool_call.h,
runtime/grid_sample_call.h, runtime/roi_align_call.h, runtime/conv3d_slices.h,
runtime/max_pool3d_slices.h, runtime/resize_call.h). EmbeddingBag (a Loop) is still a reference
kernel; NonMaxSuppression's output size depends on the data, so a model with it runs on the
reference interpreter (the session falls back, and says so).
"""
import argparse
import pathlib
import re
import tempfile

import numpy as np
import onnxruntime as ort
import torch
import torch.nn.functional as F
import torchvision

import tilefuse
from session_timing import best_ms


class Einsum(torch.nn.Module):
    def __init__(self, equation):
        super().__init__()
        self.equation = equation

    def forward(self, a, b):
        return torch.einsum(self.equation, a, b)


class Recurrent(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.layer = kind(256, 256, batch_first=True)

    def forward(self, x):
        return self.layer(x)[0]


class Lambda(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *inputs):
        return self.fn(*inputs)


class KvUpdate(torch.nn.Module):
    def forward(self, cache, k, pos):
        cache = cache.clone()
        cache[:, :, pos] = k
        return cache * 1.0


def boxes(count):
    """Corner boxes (x1, y1, x2, y2) inside a 500 x 500 image, 0 to 500 wide."""
    b = torch.rand(count, 4) * 500
    b[:, 2:] += b[:, :2]
    return b


def cases():
    r = torch.randn
    return {
        "einsum_scores": (Einsum("bhqd,bhkd->bhqk"), (r(8, 12, 128, 64), r(8, 12, 128, 64))),
        "einsum_weighted_values": (Einsum("bhqk,bhkd->bhqd"), (r(8, 12, 128, 128), r(8, 12, 128, 64))),
        "einsum_projection": (Einsum("bsd,df->bsf"), (r(8, 128, 768), r(768, 768))),
        "einsum_outer": (Einsum("i,j->ij"), (r(4096), r(512))),
        "triu": (Lambda(lambda x: torch.triu(x, 1) + x), (r(8, 512, 512),)),
        "lstm": (Recurrent(torch.nn.LSTM).eval(), (r(4, 100, 256),)),
        "gru": (Recurrent(torch.nn.GRU).eval(), (r(4, 100, 256),)),
        "kv_cache_scatter": (KvUpdate(), (r(1, 12, 1024, 64), r(1, 12, 64), torch.tensor(5))),
        "scatter_add": (Lambda(lambda x, i, s: x.scatter_add(1, i, s)),
                        (r(64, 4096), torch.randint(0, 4096, (64, 1024)), r(64, 1024))),
        "bicubic": (Lambda(lambda x: F.interpolate(x, scale_factor=2, mode="bicubic")), (r(1, 3, 256, 256),)),
        "bilinear_x2": (Lambda(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear")), (r(1, 64, 128, 128),)),
        "nearest_x2": (Lambda(lambda x: F.interpolate(x, scale_factor=2, mode="nearest")), (r(1, 64, 128, 128),)),
        "flip": (Lambda(lambda x: torch.flip(x, [2])), (r(8, 256, 1024),)),
        "one_hot": (Lambda(lambda i: F.one_hot(i, 1000).float()), (torch.randint(0, 1000, (4096,)),)),
        "topk_i64": (Lambda(lambda x: torch.topk(x, 10)[0]), (torch.randint(0, 10**6, (256, 4096)),)),
        "argsort": (Lambda(lambda x: torch.argsort(x, dim=-1)), (r(64, 1024),)),
        "layer_norm_of_channels": (Lambda(lambda x: F.layer_norm(x.transpose(1, 2), (256,)).transpose(1, 2)),
                                   (r(8, 256, 512),)),
        "maxpool_indices": (torch.nn.MaxPool2d(2, return_indices=True), (r(1, 64, 128, 128),)),
        "grid_sample": (Lambda(lambda x, g: F.grid_sample(x, g, align_corners=False)),
                        (r(1, 32, 64, 64), torch.rand(1, 64, 64, 2) * 2 - 1)),
        "embedding_bag": (torch.nn.EmbeddingBag(10000, 128, mode="mean"), (torch.randint(0, 10000, (64, 20)),)),
        "roi_align": (Lambda(lambda x, b: torchvision.ops.roi_align(x, [b], (7, 7), 1.0 / 16, 2)),
                      (r(1, 256, 50, 50), boxes(300) / 2)),
        "nms": (Lambda(lambda b, s: torchvision.ops.nms(b, s, 0.5)), (boxes(2000), torch.rand(2000))),
        "conv3d": (torch.nn.Conv3d(16, 32, 3, padding=1), (r(1, 16, 16, 64, 64),)),
        "maxpool3d": (torch.nn.MaxPool3d(2), (r(1, 32, 32, 64, 64),)),
        "convtranspose3d": (torch.nn.ConvTranspose3d(16, 8, 2, stride=2), (r(1, 16, 16, 32, 32),)),
        "trilinear_x2": (Lambda(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear")), (r(1, 16, 16, 32, 32),)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    torch.manual_seed(0)
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    with tempfile.TemporaryDirectory() as work:
        for name, (module, inputs) in cases().items():
            if not re.search(args.only, name):
                continue
            path = str(pathlib.Path(work) / f"{name}.onnx")
            torch.onnx.export(module, inputs, path, opset_version=17, dynamo=False)
            theirs = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            feeds = {i.name: t.numpy() for i, t in zip(theirs.get_inputs(), inputs)}
            ours = tilefuse.InferenceSession(path, threads=args.threads)
            a, b = ours.run(None, feeds)[0], theirs.run(None, feeds)[0]
            error = np.max(np.abs(a - b)) / max(1e-30, np.max(np.abs(b)))
            t_ours = best_ms(ours, feeds, args.runs, settle_s=0.2)
            t_theirs = best_ms(theirs, feeds, args.runs, settle_s=0.2)
            print(f"{name:24s} tilefuse {t_ours:9.3f} ms  ORT {t_theirs:8.3f} ms  x ORT {t_theirs / t_ours:6.2f}  "
                  f"error {error:.1e}", flush=True)


if __name__ == "__main__":
    main()
