#!/usr/bin/env python3
"""tilefuse and ONNX Runtime on the real-model suite's static TorchScript exports through their
Python APIs, timed one engine at a time in one process (ONNX Runtime's pool spins after its runs
and would take tilefuse's cores if the calls alternated), at 2 and 1 threads: the last table in
results.md. Each engine's time is the best of 12 runs in each of `ROUNDS` rounds (default 3),
the engines taking turns round by round, so that a burst of the host's noise (on this project's
VMs, up to 2x for seconds at a time) slows both engines' best or neither, not one.

    PYTHONPATH=build/python TILEFUSE_CACHE_DIR=build/real-work/full/cache \\
        build/peers-venv/bin/python bench/python/one_engine_at_a_time.py [MANIFEST [ARCH,...] [ROUNDS]]

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
    archs = sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] else None
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    entries = [e for e in json.loads(manifest_path.read_text())["entries"]
               if e["exporter"] == "torchscript" and e["shapes"] == "static" and (archs is None or e["arch"] in archs)]
    for threads in (2, 1):
        ratios = []
        for e in entries:
            inputs = {name: np.load(base / path) for name, path in e["inputs"].items()}
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            ort_session = ort.InferenceSession(str(base / e["model"]), options, providers=["CPUExecutionProvider"])
            tf_session = tilefuse.InferenceSession(str(base / e["model"]), threads=threads)
            ort_ms = tf_ms = float("inf")
            for _ in range(rounds):
                ort_ms = min(ort_ms, best_ms(ort_session, inputs, settle_s=0.2))
                tf_ms = min(tf_ms, best_ms(tf_session, inputs, settle_s=0.2))
            del ort_session, tf_session
            ratios.append(ort_ms / tf_ms)
            print(f'{threads}t {e["arch"]:20s} tilefuse {tf_ms:7.2f} ms  ort {ort_ms:7.2f} ms  x ORT {ratios[-1]:.2f}',
                  flush=True)
        print(f"{threads}t geomean x ORT {np.exp(np.mean(np.log(ratios))):.3f}")


if __name__ == "__main__":
    main()
