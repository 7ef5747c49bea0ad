#!/usr/bin/env python3
"""The SuperKernel (issue 16) measured: per model, barriers per run and latency at 2 threads with
`--superkernel off`, `on` and `auto` (the per-model choice), and ONNX Runtime at 2 threads, one
engine at a time (ORT's thread pool keeps spinning after its runs and would slow whatever runs
next to it).

Models: a 30-op elementwise chain on f32[64, 64]; the bundled examples; the tiny real-model
exports (tests/models/real, dynamic batch and sequence) at batch 1, sequence 32 (a GPT-2 block
among them); a small T5 encoder exported here with transformers; and, with --real, the full-size
suite's TorchScript exports (build/real-work/full, `make bench-real` makes them).

    build/peers-venv/bin/python bench/superkernel/run.py [--real] [--out bench/superkernel/results.md]

Needs the peers venv (bench/peers/setup_venv.sh: onnxruntime, torch, transformers) and build/tilefuse.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
TILEFUSE = ROOT / "build" / "tilefuse"
WORK = ROOT / "build" / "superkernel-bench"
THREADS = 2


def chain30(path):
    """30 elementwise ops on f32[64, 64]: one fused kernel, so the run is almost all launch cost."""
    ops = ["Add", "Mul", "Sigmoid", "Tanh", "Sub", "Relu"]
    nodes, prev, inits = [], "x", [helper.make_tensor("c", TensorProto.FLOAT, [], [0.5])]
    for i in range(30):
        op = ops[i % len(ops)]
        ins = [prev, "c"] if op in ("Add", "Mul", "Sub") else [prev]
        nodes.append(helper.make_node(op, ins, [f"v{i}"], name=f"n{i}"))
        prev = f"v{i}"
    graph = helper.make_graph(nodes, "chain30", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [64, 64])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return {"x": np.random.default_rng(0).uniform(-1, 1, (64, 64)).astype(np.float32)}


def t5_encoder(path):
    """A small T5 encoder (d_model 64, 2 layers, 4 heads) at batch 1, sequence 32."""
    import torch
    from transformers import T5Config, T5EncoderModel

    torch.manual_seed(0)
    config = T5Config(vocab_size=256, d_model=64, d_kv=16, d_ff=256, num_layers=2, num_heads=4)
    model = T5EncoderModel(config).eval()

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.randint(0, 256, (1, 32))
    mask = torch.ones(1, 32, dtype=torch.int64)
    torch.onnx.export(Encoder(), (ids, mask), path, input_names=["input_ids", "attention_mask"], opset_version=17,
                      dynamo=False)
    return {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}


def token_inputs(model):
    """Batch 1, sequence 32 for a text model of tests/models/real; its committed inputs otherwise."""
    graph = onnx.load(model, load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    feeds = {}
    for value in graph.input:
        if value.name in inits:
            continue
        dims = value.type.tensor_type.shape.dim
        if value.name in ("input_ids", "attention_mask", "position_ids"):
            shape = (1, 32)
            feeds[value.name] = (np.ones(shape, np.int64) if value.name == "attention_mask"
                                 else np.random.default_rng(1).integers(0, 64, shape).astype(np.int64))
        else:
            committed = Path(model).parent / "inputs" / f"{value.name}.npy"
            feeds[value.name] = np.load(committed)
    return feeds


def models(real):
    WORK.mkdir(parents=True, exist_ok=True)
    out = [("chain30 (64x64)", WORK / "chain30.onnx", chain30(WORK / "chain30.onnx"))]
    for path in sorted((ROOT / "examples/models").glob("*.onnx")):
        inputs = {p.stem: np.load(p) for p in (path.parent / path.stem / "inputs").glob("*.npy")}
        out.append((path.stem, path, inputs))
    for arch in ["gpt2", "bert", "llama", "vit", "whisper_encoder", "convnext_tiny", "mobilenet_v3_large", "resnet50"]:
        model = ROOT / "tests/models/real" / arch / "dynamo_dynamic.onnx"
        out.append((f"{arch} (tiny, b1 s32)" if arch in ("gpt2", "bert", "llama") else f"{arch} (tiny)", model,
                    token_inputs(model)))
    t5 = WORK / "t5_encoder.onnx"
    out.append(("t5 encoder (small, b1 s32)", t5, t5_encoder(t5)))
    if real:
        manifest = json.loads((ROOT / "build/real-work/full/manifest.json").read_text())
        for entry in manifest["entries"]:
            if entry["exporter"] == "torchscript" and entry["shapes"] == "static":
                base = ROOT / "build/real-work/full"
                inputs = {k: np.load(base / v) for k, v in entry["inputs"].items()}
                out.append((f"{entry['arch']} (full)", base / entry["model"], inputs))
    return out


def tilefuse_json(command, model, input_dir, args):
    files = [arg for p in sorted(input_dir.glob("*.npy")) for arg in ("--input", f"{p.stem}={p}")]
    env = dict(os.environ, TILEFUSE_CACHE_DIR=str(WORK / "cache"))
    result = subprocess.run([str(TILEFUSE), command, str(model), *files, "--threads", str(THREADS), "--json", *args],
                            capture_output=True, text=True, env=env, check=True)
    return json.loads(result.stdout)


def tilefuse_ms(model, input_dir, mode, iters):
    report = tilefuse_json("bench", model, input_dir, ["--modes", "fused", "--superkernel", mode, "--iters", str(iters),
                                                       "--warmup", "5", "--stream-mib", "16"])
    return report["modes"]["fused"]["median_ms"]


def barriers(model, input_dir, mode, out_dir):
    report = tilefuse_json("run", model, input_dir, ["--superkernel", mode, "--output-dir", str(out_dir)])
    return report["counters"]["barriers"]


def ort_ms(model, inputs, iters):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    for _ in range(5):
        session.run(None, inputs)
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        session.run(None, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    del session
    time.sleep(0.5)  # ORT's pool spins on after its last run
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", action="store_true", help="also the full-size real-model suite")
    parser.add_argument("--iters", type=int, default=100, help="timed runs per engine and round (the full models: 10)")
    parser.add_argument("--out", type=Path, help="write the table (markdown) here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, inputs in models(args.real):
            input_dir = Path(tmp) / name.replace(" ", "_").replace("(", "").replace(")", "")
            input_dir.mkdir()
            for key, value in inputs.items():
                np.save(input_dir / f"{key}.npy", value)
            iters = 10 if "(full)" in name else args.iters
            row = {"model": name}
            for mode in ("off", "on"):
                row[f"barriers_{mode}"] = barriers(model, input_dir, mode, Path(tmp) / "out")
            # The host is noisy: three rounds of every engine in turn, the median of each one's medians.
            times = {key: [] for key in ("off", "on", "auto", "ort")}
            for _ in range(3):
                for mode in ("off", "on", "auto"):
                    times[mode].append(tilefuse_ms(model, input_dir, mode, iters))
                times["ort"].append(ort_ms(model, inputs, iters))
            for key, values in times.items():
                row[f"ms_{key}"] = statistics.median(values)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    table = ["| model | barriers off | barriers on | off ms | on ms | auto ms | auto vs off | ORT ms | auto vs ORT |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        table.append(f"| {r['model']} | {r['barriers_off']} | {r['barriers_on']} | {r['ms_off']:.4f} | {r['ms_on']:.4f} | "
                     f"{r['ms_auto']:.4f} | {r['ms_off'] / r['ms_auto']:.2f}x | {r['ms_ort']:.4f} | "
                     f"{r['ms_ort'] / r['ms_auto']:.2f}x |")
    text = "\n".join(table)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
