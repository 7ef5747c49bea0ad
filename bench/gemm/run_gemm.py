"""The GEMM/convolution engine shoot-out: runs gemm_shootout (tilefuse, OpenBLAS, BLIS, oneDNN and
the FMA peak, in one process) and times ONNX Runtime on the same shapes, at the same thread
counts, then writes bench/gemm/results/shootout.{json,md}.

    run_gemm.py --shootout build/gemm_shootout [--threads 1,2] [--quick]
    run_gemm.py --shootout build/gemm_shootout --from-json results/shootout.json   (re-render only)

ONNX Runtime runs each shape as a one-node model (MatMul with the weight as an initializer, or
Conv with weight and bias initializers), so it prepacks weights as it would in a real model.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ["tilefuse", "openblas", "blis", "onednn", "ort"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def shootout_lines(binary, args):
    p = subprocess.run([binary] + args, capture_output=True, text=True, check=True)
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]


def onnx_model(shape):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    if shape["kind"] == "gemm":
        b, m, n, k = shape["batch"], shape["m"], shape["n"], shape["k"]
        a_dims = [b, m, k] if b > 1 else [m, k]
        inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_dims)]
        inits = []
        if shape["b_constant"]:
            inits.append(numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "b"))
        else:
            inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, [b, k, n]))
        node = helper.make_node("MatMul", ["a", "b"], ["y"])
        feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
                 for i in inputs}
    else:
        c, h, w, maps, kern = shape["c"], shape["h"], shape["w"], shape["maps"], shape["kernel"]
        g, s, p = shape["groups"], shape["stride"], shape["pad"]
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])]
        inits = [numpy_helper.from_array(rng.standard_normal((maps, c // g, kern, kern)).astype(np.float32), "w"),
                 numpy_helper.from_array(rng.standard_normal(maps).astype(np.float32), "bias")]
        node = helper.make_node("Conv", ["x", "w", "bias"], ["y"], kernel_shape=[kern, kern], strides=[s, s],
                                pads=[p, p, p, p], group=g)
        feeds = {"x": rng.standard_normal((1, c, h, w)).astype(np.float32)}
    graph = helper.make_graph([node], shape["shape"], inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), feeds


def ort_ms(shape, threads, reps):
    import onnxruntime as ort

    model, feeds = onnx_model(shape)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    for _ in range(2):
        sess.run(None, feeds)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def table(rows, threads_list):
    """One Markdown table: per shape and thread count, GFLOP/s and share of the FMA peak per engine."""
    peaks = {r["threads"]: r["peak_gflops"] for r in rows if r["kind"] == "peak"}
    by = {}
    for r in rows:
        if r["kind"] != "peak":
            by.setdefault((r["kind"], r["shape"], r["family"]), {})[(r["engine"], r["threads"])] = r
    out = ["FMA peak (register-only FMA chains, same run): "
           + ", ".join(f"{peaks[t]:.0f} GFLOP/s at {t} thread{'s' if t > 1 else ''}" for t in threads_list), ""]
    head = "| kind | shape | family | threads | " + " | ".join(ENGINES) + " | best | tilefuse / best |"
    out += [head, "|" + "---|" * (len(ENGINES) + 6)]
    for (kind, shape, family), cells in by.items():
        for t in threads_list:
            vals = {e: cells[(e, t)]["gflops"] for e in ENGINES if (e, t) in cells}
            if not vals:
                continue
            best = max(vals, key=vals.get)
            fmt = []
            for e in ENGINES:
                if e not in vals:
                    fmt.append("-")
                    continue
                cell = f"{vals[e]:.0f} ({100 * vals[e] / peaks[t]:.0f}%)"
                fmt.append(f"**{cell}**" if e == best else cell)
            ratio = vals.get("tilefuse", 0) / vals[best]
            out.append(f"| {kind} | {shape} | {family} | {t} | " + " | ".join(fmt) + f" | {best} | {ratio:.2f} |")
    out += ["", "Cells: GFLOP/s (share of the FMA peak at that thread count); bold is the fastest engine."]
    return "\n".join(out)


def family_table(rows, threads_list):
    """Geometric mean GFLOP/s per shape family and engine, and tilefuse's share of the best engine."""
    peaks = {r["threads"]: r["peak_gflops"] for r in rows if r["kind"] == "peak"}
    fams = []
    for r in rows:
        if r["kind"] != "peak" and r["family"] not in fams:
            fams.append(r["family"])
    out = ["| family | threads | " + " | ".join(ENGINES) + " | tilefuse / best engine (geomean) |",
           "|" + "---|" * (len(ENGINES) + 3)]
    for fam in fams:
        for t in threads_list:
            cells = [r for r in rows if r["kind"] != "peak" and r["family"] == fam and r["threads"] == t]
            shapes = sorted({r["shape"] for r in cells})
            per = {(r["shape"], r["engine"]): r["gflops"] for r in cells}
            fmt = []
            for e in ENGINES:
                vals = [per[(sh, e)] for sh in shapes if (sh, e) in per]
                fmt.append("-" if len(vals) < len(shapes) else
                           f"{np.exp(np.mean(np.log(vals))):.0f} ({100 * np.exp(np.mean(np.log(vals))) / peaks[t]:.0f}%)")
            ratios = [per[(sh, "tilefuse")] / max(v for (s2, e), v in per.items() if s2 == sh)
                      for sh in shapes if (sh, "tilefuse") in per]
            out.append(f"| {fam} | {t} | " + " | ".join(fmt) + f" | {np.exp(np.mean(np.log(ratios))):.2f} |")
    return "\n".join(out)


def render(rows, threads_list):
    return (f"# GEMM/convolution engine shoot-out ({datetime.date.today()}, {os.cpu_count()} CPUs)\n\n"
            "## By family\n\n" + family_table(rows, threads_list) + "\n\n## Every shape\n\n"
            + table(rows, threads_list) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shootout", required=True, help="the gemm_shootout binary")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--quick", action="store_true", help="fewer shapes and repetitions")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--from-json", help="re-render the Markdown of an earlier run's JSON, measuring nothing")
    args = ap.parse_args()
    threads_list = [int(t) for t in args.threads.split(",")]
    if args.from_json:
        with open(args.from_json) as f:
            md = render(json.load(f), threads_list)
        with open(os.path.splitext(args.from_json)[0] + ".md", "w") as f:
            f.write(md)
        print(md)
        return
    extra = ["--quick"] if args.quick else []
    log("running gemm_shootout (tilefuse, OpenBLAS, BLIS, oneDNN, FMA peak)")
    rows = shootout_lines(args.shootout, ["--threads", args.threads] + extra)
    shapes = shootout_lines(args.shootout, ["--list"] + extra)
    peaks = {r["threads"]: r["peak_gflops"] for r in rows if r["kind"] == "peak"}
    try:
        import onnxruntime as ort
        log(f"timing ONNX Runtime {ort.__version__} on {len(shapes)} shapes")
        for t in threads_list:
            for s in shapes:
                ms = ort_ms(s, t, 5 if args.quick else 15)
                gflops = s["flops"] / (ms * 1e6)
                rows.append({"kind": s["kind"], "shape": s["shape"], "family": s["family"], "engine": "ort",
                             "threads": t, "ms": ms, "gflops": gflops, "peak_gflops": peaks[t],
                             "peak_share": gflops / peaks[t]})
    except ImportError:
        log("onnxruntime is not importable: the ORT column stays empty (use the bench/peers venv)")
    os.makedirs(args.results, exist_ok=True)
    name = "shootout_quick" if args.quick else "shootout"
    with open(os.path.join(args.results, name + ".json"), "w") as f:
        json.dump(rows, f, indent=1)
    md = render(rows, threads_list)
    with open(os.path.join(args.results, name + ".md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
