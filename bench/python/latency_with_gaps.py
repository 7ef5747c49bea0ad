#!/usr/bin/env python3
"""tilefuse and ONNX Runtime on one model called back to back, then with a pause before each
call (as a service answering requests now and then): the median and 90th percentile of 300
calls per engine, thread count and pause. A team whose workers fell asleep during the pause
pays their wake-up on the next call.

    PYTHONPATH=build/python build/peers-venv/bin/python bench/python/latency_with_gaps.py MODEL.onnx \\
        [--threads 1,2] [--gaps-ms 0,2,10]

Inputs are uniform [0, 1) floats of the model's static input shapes.
"""
import argparse
import time

import numpy as np
import onnx
import onnxruntime as ort

import tilefuse


def feeds_for(model_path):
    rng = np.random.default_rng(0)
    graph = onnx.load(model_path).graph
    return {i.name: rng.random([d.dim_value for d in i.type.tensor_type.shape.dim], dtype=np.float32)
            for i in graph.input}


def timed_calls(session, feeds, gap_s, calls=300):
    """Milliseconds of each of `calls` runs, each after `gap_s` seconds of sleep."""
    times = []
    for _ in range(calls):
        if gap_s:
            time.sleep(gap_s)
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def sessions(model_path, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    yield "tilefuse", tilefuse.InferenceSession(model_path, threads=threads)
    yield "onnxruntime", ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--gaps-ms", default="0,2,10")
    args = parser.parse_args()
    feeds = feeds_for(args.model)
    print("| engine | threads | pause ms | median ms | p90 ms |\n| --- | ---: | ---: | ---: | ---: |")
    for threads in (int(t) for t in args.threads.split(",")):
        for engine, session in sessions(args.model, threads):
            for _ in range(200):  # warm: compile, tune, caches
                session.run(None, feeds)
            for gap_ms in (float(g) for g in args.gaps_ms.split(",")):
                ms = timed_calls(session, feeds, gap_ms / 1e3)
                print(f"| {engine} | {threads} | {gap_ms:g} | {np.median(ms):.4f} | {np.percentile(ms, 90):.4f} |",
                      flush=True)
            del session


if __name__ == "__main__":
    main()
