#!/usr/bin/env python3
"""torchvision's video classifiers (R3D-18, MC3-18, R(2+1)D-18: 3-D convolutions, a residual
after each block's second one) against ONNX Runtime: exported here (TorchScript exporter, opset
17, random weights), a [1, 3, 16, 112, 112] clip, both engines through their Python sessions at
the same thread count, best of `--runs` after 0.2 s of quiet each, and tilefuse's worst
difference from PyTorch eager relative to its largest output.

    PYTHONPATH=build/python:bench/python build/peers-venv/bin/python bench/python/video_models.py \\
        [--threads 2] [--runs 3] [--models r3d_18,mc3_18,r2plus1d_18]
"""
import argparse
import pathlib
import tempfile

import numpy as np
import onnxruntime as ort
import torch
import torchvision

import tilefuse
from session_timing import best_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--models", default="r3d_18,mc3_18,r2plus1d_18")
    args = parser.parse_args()
    torch.manual_seed(0)
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    with tempfile.TemporaryDirectory() as work:
        for name in args.models.split(","):
            model = getattr(torchvision.models.video, name)(weights=None).eval()
            clip = torch.randn(1, 3, 16, 112, 112)
            path = str(pathlib.Path(work) / f"{name}.onnx")
            torch.onnx.export(model, (clip,), path, opset_version=17, dynamo=False)
            theirs = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            feeds = {theirs.get_inputs()[0].name: clip.numpy()}
            ours = tilefuse.InferenceSession(path, threads=args.threads)
            with torch.no_grad():
                expected = model(clip).numpy()
            error = np.max(np.abs(ours.run(None, feeds)[0] - expected)) / np.max(np.abs(expected))
            t_ours = best_ms(ours, feeds, args.runs, settle_s=0.2)
            t_theirs = best_ms(theirs, feeds, args.runs, settle_s=0.2)
            print(f"{name:12s} tilefuse {t_ours:8.1f} ms  ORT {t_theirs:8.1f} ms  x ORT {t_theirs / t_ours:5.2f}  "
                  f"error vs eager {error:.1e}", flush=True)


if __name__ == "__main__":
    main()
