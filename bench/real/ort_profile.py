"""ONNX Runtime's own per-node times for one model: the line tilefuse's `bench --per-step` is
compared with, layer by layer.

    build/peers-venv/bin/python bench/real/ort_profile.py MODEL.onnx [--threads 1] [--runs 30] [--top 40]

Runs the model `--runs` times with ORT's profiler on (float inputs from a fixed seed; symbolic
dims as 1), then prints the median time of each node over the runs, slowest first, and the sum.
ORT names a node it fused (Conv + Add + Relu) after its last op's output, with `_nchwc` appended
where it runs in its blocked layout.
"""
import argparse
import collections
import json
import os

import numpy as np
import onnxruntime as ort


def node_medians(model, threads=1, runs=30):
    """[(median ms, node name, op)] of ONNX Runtime's profile of `model`, slowest first."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_profiling = True
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = (rng.random(shape) if "float" in i.type else rng.integers(0, 4, shape)).astype(
            np.float32 if "float" in i.type else np.int64)
    for _ in range(runs):
        session.run(None, feeds)
    trace = session.end_profiling()
    with open(trace) as f:
        events = json.load(f)
    os.remove(trace)
    times = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            times[(e["name"][: -len("_kernel_time")], e["args"].get("op_name", ""))].append(e["dur"] / 1e3)
    return sorted(((float(np.median(v)), node, op) for (node, op), v in times.items()), reverse=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    rows = node_medians(args.model, args.threads, args.runs)
    print(f"{args.model}: {args.threads} thread(s), {args.runs} runs, sum of node medians {sum(r[0] for r in rows):.2f} ms")
    for ms, node, op in rows[: args.top]:
        print(f"{ms:8.3f}  {op:18s} {node}")


if __name__ == "__main__":
    main()
