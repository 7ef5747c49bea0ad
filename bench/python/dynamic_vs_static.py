#!/usr/bin/env python3
"""Each real-suite architecture's TorchScript export with a dynamic batch and sequence against the
same model exported static, through tilefuse's Python API at 2 threads, after a first run: best of
15 runs each, and the ratio (issue 13 asks for at most 1.10).

    PYTHONPATH=build/python TILEFUSE_CACHE_DIR=build/real-work/full/cache \\
        python3 bench/python/dynamic_vs_static.py [MANIFEST]
"""
import json
import pathlib
import sys

import numpy as np

import tilefuse
from session_timing import best_ms


def main():
    manifest_path = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/real-work/full/manifest.json")
    base = manifest_path.parent
    times = {}
    for e in json.loads(manifest_path.read_text())["entries"]:
        if e["exporter"] != "torchscript":
            continue
        inputs = {name: np.load(base / path) for name, path in e["inputs"].items()}
        times.setdefault(e["arch"], {})[e["shapes"]] = best_ms(tilefuse.InferenceSession(str(base / e["model"]),
                                                                                       threads=2), inputs, runs=15)
    for arch, t in times.items():
        print(f'{arch:20s} static {t["static"]:7.2f} ms  dynamic {t["dynamic"]:7.2f} ms  '
              f'dynamic/static {t["dynamic"] / t["static"]:.3f}')


if __name__ == "__main__":
    main()
