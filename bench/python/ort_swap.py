#!/usr/bin/env python3
"""A script written against ONNX Runtime's Python API, run twice: once as written, once with
tilefuse's session class swapped in. Reports, per model, whether the swap worked and the largest
difference between the two sessions' outputs, and the per-call overhead of both on a tiny model
(Relu over 64 floats), measured in the same process.

    PYTHONPATH=build/python build/peers-venv/bin/python bench/python/ort_swap.py \
        [--real build/real-work/full/manifest.json] [--json out.json]

Needs onnxruntime and onnx (bench/peers/setup_venv.sh makes a venv with both).
"""
import argparse
import json
import pathlib
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper

import tilefuse

ROOT = pathlib.Path(__file__).resolve().parents[2]


def ort_script(session_class, model_path, feeds_from_files):
    """What a user's ONNX Runtime script does; only `session_class` changes between the runs."""
    sess = session_class(str(model_path), providers=["CPUExecutionProvider"])
    feeds = {i.name: feeds_from_files[i.name] for i in sess.get_inputs()}
    output_names = [o.name for o in sess.get_outputs()]
    return output_names, sess.run(output_names, feeds)


def bundled_cases():
    for model in sorted((ROOT / "examples" / "models").glob("*.onnx")):
        inputs = {p.stem: np.load(p) for p in (model.parent / model.stem / "inputs").glob("*.npy")}
        yield model.stem, model, inputs


def real_cases(manifest_path):
    manifest = json.loads(pathlib.Path(manifest_path).read_text())
    base = pathlib.Path(manifest_path).parent
    for e in manifest["entries"]:
        if e["exporter"] != "torchscript":
            continue
        inputs = {name: np.load(base / p) for name, p in e["inputs"].items()}
        yield f'{e["arch"]} ({e["shapes"]})', base / e["model"], inputs


def compare(name, model, inputs):
    row = {"model": name}
    try:
        ort_names, ort_outputs = ort_script(onnxruntime.InferenceSession, model, inputs)
        start = time.perf_counter()
        tf_names, tf_outputs = ort_script(tilefuse.InferenceSession, model, inputs)
        row["tilefuse_first_run_s"] = round(time.perf_counter() - start, 2)
    except Exception as e:  # reported, not raised: the table shows every model
        row.update(ok=False, error=f"{type(e).__name__}: {e}".splitlines()[0])
        return row
    diffs = [float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
             for a, b in zip(ort_outputs, tf_outputs)]
    same_form = ort_names == tf_names and all(a.shape == b.shape and a.dtype == b.dtype
                                              for a, b in zip(ort_outputs, tf_outputs))
    row.update(ok=same_form and max(diffs) <= 1e-4, max_abs_diff=max(diffs))
    return row


def tiny_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def per_call_us(sess, x, calls=100_000, repeats=5):
    """The best of `repeats` averages over `calls` calls, in microseconds."""
    feeds = {"x": x}
    sess.run(None, feeds)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            sess.run(None, feeds)
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def overhead():
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/tiny.onnx"
        tiny_model(path)
        x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
        sessions = {"onnxruntime": onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"]),
                    "tilefuse": tilefuse.InferenceSession(path)}
        # Interleaved rounds, so that drift in the machine's speed falls on both alike.
        us = {name: [] for name in sessions}
        for _ in range(3):
            for name, sess in sessions.items():
                us[name].append(per_call_us(sess, x))
        result = {name: min(v) for name, v in us.items()}
        result["ratio_tilefuse_over_ort"] = result["tilefuse"] / result["onnxruntime"]
        return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", help="the real-model suite's manifest.json (bench/real/run_real.py writes it)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    cases = list(bundled_cases()) + (list(real_cases(args.real)) if args.real else [])
    rows = []
    for name, model, inputs in cases:
        rows.append(compare(name, model, inputs))
        r = rows[-1]
        detail = f'max |diff| {r["max_abs_diff"]:.2e}' if "max_abs_diff" in r else r["error"]
        print(f'{"ok  " if r["ok"] else "FAIL"} {name:32s} {detail}', flush=True)
    calls = overhead()
    print(f'per-call overhead, Relu on 64 floats: tilefuse {calls["tilefuse"]:.2f} us, '
          f'onnxruntime {calls["onnxruntime"]:.2f} us (ratio {calls["ratio_tilefuse_over_ort"]:.2f}); '
          f'onnxruntime {onnxruntime.__version__}, numpy {np.__version__}')
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"models": rows, "overhead_us": calls}, indent=1))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
