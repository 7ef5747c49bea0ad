#!/usr/bin/env python3
"""tilefuse and ONNX Runtime on the real-model suite's static TorchScript exports through their
Python APIs, timed one engine at a time in one process (ONNX Runtime's pool spins after its runs
and would take tilefuse's cores if the calls alternated), 12 runs each, best, at 2 and 1 threads:
the last table in results.md.

    PYTHONPATH=build/python TILEFUSE_CACHE_DIR=build/real-work/full/cache \\
        build/peers-venv/bin/python bench/python/one_engine_at_a_time.py [MANIFEST [ARCH,...]]

MANIFEST defaults to build/real-work/full/manifest.json (bench/real/run_real.py writes it); a
comma-separated list of architectures (e.g. mobilenet_v3_large,resnet50) limits the run to them.
"""
import json
import pathlib
import sys

import numpy as np
import onnxruntime as ort

import tilefuse
from session_timing import best_ms


def main():
    manifest_path = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/real-work/full/manifest.json")
    base = manifest_path.parent
    archs = sys.argv[2].split(",") if len(sys.argv) > 2 else None
    entries = [e for e in json.loads(manifest_path.read_text())["entries"]
               if e["exporter"] == "torchscript" and e["shapes"] == "static" and (archs is None or e["arch"] in archs)]
    for threads in (2, 1):
        ratios = []
        for e in entries:
            inputs = {name: np.load(base / path) for name, path in e["inputs"].items()}
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            ort_ms = best_ms(ort.InferenceSession(str(base / e["model"]), options, providers=["CPUExecutionProvider"]),
                             inputs, settle_s=0.2)
            tf_ms = best_ms(tilefuse.InferenceSession(str(base / e["model"]), threads=threads), inputs, settle_s=0.2)
            ratios.append(ort_ms / tf_ms)
            print(f'{threads}t {e["arch"]:20s} tilefuse {tf_ms:7.2f} ms  ort {ort_ms:7.2f} ms  x ORT {ratios[-1]:.2f}',
                  flush=True)
        print(f"{threads}t geomean x ORT {np.exp(np.mean(np.log(ratios))):.3f}")


if __name__ == "__main__":
    main()
