"""The real-model suite: every architecture of models.py at its published size, exported by both
of PyTorch's exporters (static shapes, and dynamic batch/sequence), checked and then timed.

    run_real.py --tilefuse build/tilefuse --work-dir build/real-work [--archs bert,...] [--quick]

Per model and export it records:
  imports          yes, or tilefuse's error message
  correctness      worst |tilefuse - X| / max|X| for X = ONNX Runtime and PyTorch eager, in fused
                   mode (and in reference mode for the first export of each architecture)
  latency          median ms of tilefuse fused, ONNX Runtime and PyTorch eager at 1 and 2 threads
                   (static exports only; the dynamic ones are checked, not timed)
  compile          tilefuse's cold compile (empty kernel cache) and ONNX Runtime's session creation
  plan             launches and compulsory bytes, fused vs unfused (`tilefuse inspect --json`)
Nothing is timed before the outputs have been compared. Results go to bench/real/results/
(results.json, results.md, speed.png); the Markdown has the table the README summarises.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def worst_relative(actual, expected):
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if actual.shape != expected.shape:
        return float("inf")
    scale = max(float(np.abs(expected).max()), 1e-30)
    return float(np.nan_to_num(np.abs(actual - expected), nan=np.inf).max() / scale)


def input_args(work, entry):
    args = []
    for name, rel in entry["inputs"].items():
        args += ["--input", f"{name}={os.path.join(work, rel)}"]
    return args


def tilefuse_run(tilefuse, work, entry, mode, cache, threads=2, out_dir=None):
    out_dir = out_dir or os.path.join(work, "out", entry["arch"], f'{entry["exporter"]}_{entry["shapes"]}_{mode}')
    os.makedirs(out_dir, exist_ok=True)
    cmd = [tilefuse, "run", os.path.join(work, entry["model"]), "--mode", mode, "--output-dir", out_dir,
           "--cache-dir", cache, "--threads", str(threads), "--json"] + input_args(work, entry)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        return None, (lines[-1] if lines else f"exit code {p.returncode}")[:400]
    summary = json.loads(p.stdout)
    return summary, np.load(summary["outputs"][0]["path"])


def tilefuse_bench(tilefuse, work, entry, cache, threads, iters, extra=()):
    cmd = [tilefuse, "bench", os.path.join(work, entry["model"]), "--modes", "fused", "--iters", str(iters),
           "--warmup", "2", "--threads", str(threads), "--cache-dir", cache, "--stream-mib", "64", "--per-step",
           "--json"] + input_args(work, entry) + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, None
    report = json.loads(p.stdout)
    return report["modes"]["fused"]["median_ms"], report


def bf16_section(args, entry, row):
    """--precision bf16 at each thread count, and its accuracy against f32 on the suite's inputs."""
    for threads in args.threads:
        ms, report = tilefuse_bench(args.tilefuse, args.work_dir, entry, args.cache, threads, args.iters,
                                    ["--precision", "bf16", "--accuracy", "--samples", "1"])
        row[f"tilefuse_bf16_ms_{threads}t"] = ms
        if report and "accuracy" in report:
            out = report["accuracy"]["outputs"][0]
            row["bf16_worst_relative"] = out["worst_relative_error"]
            row["bf16_top1_agreement"] = out.get("top1_agreement")


def inspect_plan(tilefuse, work, entry):
    """Launches and compulsory bytes of the fused and unfused plans (symbolic dims at inspect's defaults)."""
    p = subprocess.run([tilefuse, "inspect", os.path.join(work, entry["model"]), "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return {}
    report = json.loads(p.stdout)
    keys = {"kernels_fused": "launches", "kernels_unfused": "unfused_launches", "bytes_fused": "bytes_fused",
            "bytes_unfused": "bytes_unfused"}
    return {new: report[old] for old, new in keys.items() if old in report}


def feeds(work, entry):
    return {n: np.load(os.path.join(work, rel)) for n, rel in entry["inputs"].items()}


def ort_session(path, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    start = time.perf_counter()
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess, (time.perf_counter() - start) * 1e3


def median_ms(fn, iters, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def eager_latency(arch, size, batch, threads, iters):
    import torch
    import models
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(4321)
    module = models.arch(arch).build(size)
    inputs = models.arch(arch).inputs(size, batch, gen)
    with torch.no_grad():
        return median_ms(lambda: module(*inputs.values()), iters)


def measure(args, manifest, entry, first_of_arch):
    work, tf = args.work_dir, args.tilefuse
    row = {k: entry[k] for k in ("arch", "family", "exporter", "shapes")}
    if "export_error" in entry:
        row["imports"] = "export failed: " + entry["export_error"]
        return row
    path = os.path.join(work, entry["model"])
    eager = np.load(os.path.join(work, entry["eager"]))
    # The first export of an architecture compiles into an empty cache (the cold compile time);
    # the others share the suite's cache, as a user's second model would.
    cache = os.path.join(work, "cold-cache") if first_of_arch else args.cache
    if first_of_arch:
        shutil.rmtree(cache, ignore_errors=True)
    summary, fused = tilefuse_run(tf, work, entry, "fused", cache)
    if summary is None:
        row["imports"] = fused
        return row
    row["imports"] = "yes"
    if first_of_arch:
        row["tilefuse_cold_compile_ms"] = summary["compile_ms"]
        row["tilefuse_cold_compile_phases_ms"] = summary.get("compile_phases_ms", {})
    sess, row["ort_session_ms"] = ort_session(path, 2)
    ort_out = sess.run(None, feeds(work, entry))[0]
    row["err_fused_vs_ort"] = worst_relative(fused, ort_out)
    row["err_fused_vs_eager"] = worst_relative(fused, eager)
    row["err_ort_vs_eager"] = worst_relative(ort_out, eager)
    if first_of_arch and not args.quick:
        ref_summary, ref = tilefuse_run(tf, work, entry, "reference", args.cache)
        if ref_summary is not None:
            row["err_reference_vs_ort"] = worst_relative(ref, ort_out)
            row["err_reference_vs_eager"] = worst_relative(ref, eager)
    row.update(inspect_plan(tf, work, entry))
    if entry["shapes"] != "static":
        return row
    for threads in args.threads:
        ms, report = tilefuse_bench(tf, work, entry, args.cache, threads, args.iters)
        steps = report.get("per_step", []) if report else None
        row[f"tilefuse_ms_{threads}t"] = ms
        if threads == max(args.threads) and steps:
            row["per_step_top"] = steps[:8]
            by_kind = {}
            for s in steps:
                by_kind[s["kind"]] = by_kind.get(s["kind"], 0.0) + s["share"]
            row["time_share_by_kind"] = by_kind
        sess, _ = ort_session(path, threads)
        f = feeds(work, entry)
        row[f"ort_ms_{threads}t"] = median_ms(lambda: sess.run(None, f), args.iters)
        row[f"eager_ms_{threads}t"] = eager_latency(entry["arch"], manifest["size"], manifest["batch"], threads, args.iters)
    bf16_section(args, entry, row)
    return row


def fmt_err(v):
    return "-" if v is None else f"{v:.1e}"


def fmt_ms(v):
    return "-" if v is None else f"{v:.1f}"


def markdown(rows, threads):
    t = max(threads)
    head = ("| model | exporter | shapes | imports | err vs ORT | err vs eager | "
            + " | ".join(f"tilefuse / ORT / eager ms ({n}t)" for n in threads)
            + f" | x ORT ({t}t) | cold compile s | ORT session s | launches fused/unfused |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        lat = []
        for n in threads:
            lat.append(" / ".join(fmt_ms(r.get(k)) for k in (f"tilefuse_ms_{n}t", f"ort_ms_{n}t", f"eager_ms_{n}t")))
        ratio = "-"
        if r.get(f"tilefuse_ms_{t}t") and r.get(f"ort_ms_{t}t"):
            ratio = f"{r[f'ort_ms_{t}t'] / r[f'tilefuse_ms_{t}t']:.2f}"
        imports = r.get("imports", "-")
        if imports != "yes":
            imports = imports.replace("|", "/")[:120]
        compile_s = f"{r['tilefuse_cold_compile_ms'] / 1e3:.1f}" if r.get("tilefuse_cold_compile_ms") else "-"
        session_s = f"{r['ort_session_ms'] / 1e3:.2f}" if r.get("ort_session_ms") else "-"
        launches = f"{r.get('launches', '-')}/{r.get('unfused_launches', '-')}"
        lines.append(f"| {r['arch']} | {r['exporter']} | {r['shapes']} | {imports} | {fmt_err(r.get('err_fused_vs_ort'))} | "
                     f"{fmt_err(r.get('err_fused_vs_eager'))} | " + " | ".join(lat) +
                     f" | {ratio} | {compile_s} | {session_s} | {launches} |")
    lines.append("")
    lines.append("x ORT = ORT's median / tilefuse's median (above 1: tilefuse is faster). Errors are worst "
                 "|difference| / largest |reference output|, fused mode.")
    lines.append("")
    lines.append("Where a cold compile goes (seconds, empty cache, first export of each architecture): "
                 "support headers = writing the kernel header and precompiling it, and calibration = the "
                 "hardware model, are once per cache; kernels = code generation, compiles and cache lookups; "
                 "library calls = weight packing.")
    lines.append("")
    phases = ("plan", "support_headers", "calibration", "kernels", "library_calls")
    lines.append("| model | exporter | total | " + " | ".join(p.replace("_", " ") for p in phases) + " |")
    lines.append("|---|---|---|" + "---|" * len(phases))
    for r in rows:
        ph = r.get("tilefuse_cold_compile_phases_ms")
        if ph:
            lines.append(f"| {r['arch']} | {r['exporter']} | {r['tilefuse_cold_compile_ms'] / 1e3:.2f} | "
                         + " | ".join(f"{ph.get(p, 0) / 1e3:.2f}" for p in phases) + " |")
    lines.append("")
    lines.append("bf16 products (`--precision bf16`; ONNX Runtime stays f32): x ORT and x tilefuse f32 per thread "
                 "count, and the worst |bf16 - f32| / max |f32| on the suite's inputs (the README promises 2e-2):")
    lines.append("")
    lines.append("| model | exporter | " + " | ".join(f"bf16 ms / x ORT / x f32 ({n}t)" for n in threads)
                 + " | worst relative error | top-1 agreement |")
    lines.append("|---|---|" + "---|" * (len(threads) + 2))
    for r in rows:
        if r.get(f"tilefuse_bf16_ms_{t}t") is None:
            continue
        cells = []
        for n in threads:
            ms, ort, f32 = r.get(f"tilefuse_bf16_ms_{n}t"), r.get(f"ort_ms_{n}t"), r.get(f"tilefuse_ms_{n}t")
            cells.append("-" if not ms else f"{ms:.1f} / {ort / ms:.2f} / {f32 / ms:.2f}" if ort and f32 else fmt_ms(ms))
        top1 = r.get("bf16_top1_agreement")
        lines.append(f"| {r['arch']} | {r['exporter']} | " + " | ".join(cells)
                     + f" | {fmt_err(r.get('bf16_worst_relative'))} | {'-' if top1 is None else f'{100 * top1:.0f}%'} |")
    lines.append("")
    lines.append("Where the time goes (share of tilefuse's fused run by step kind, static exports, "
                 f"{t} threads):")
    lines.append("")
    lines.append("| model | exporter | kernel | library (GEMM/conv) | host | copy |")
    lines.append("|---|---|---|---|---|---|")
    for r in rows:
        k = r.get("time_share_by_kind")
        if k:
            lines.append(f"| {r['arch']} | {r['exporter']} | " + " | ".join(
                f"{100 * k.get(kind, 0):.0f}%" for kind in ("kernel", "library", "host", "copy")) + " |")
    return "\n".join(lines) + "\n"


def plot(rows, threads, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    t = max(threads)
    timed = [r for r in rows if r.get(f"tilefuse_ms_{t}t") and r.get(f"ort_ms_{t}t")]
    if not timed:
        return
    labels = [f"{r['arch']}\n{r['exporter']}" for r in timed]
    ort = [r[f"ort_ms_{t}t"] / r[f"tilefuse_ms_{t}t"] for r in timed]
    eager = [r[f"eager_ms_{t}t"] / r[f"tilefuse_ms_{t}t"] if r.get(f"eager_ms_{t}t") else 0 for r in timed]
    x = np.arange(len(timed))
    fig, ax = plt.subplots(figsize=(max(8, len(timed) * 0.9), 4.5))
    ax.bar(x - 0.2, ort, 0.4, label="ONNX Runtime time / tilefuse time")
    ax.bar(x + 0.2, eager, 0.4, label="PyTorch eager time / tilefuse time")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel(f"speed-up of tilefuse ({t} threads)")
    ax.set_title("Real-model suite: above 1, tilefuse is faster")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilefuse", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--archs", default=None, help="comma-separated subset of models.py's architectures")
    ap.add_argument("--size", default="full", choices=["full", "tiny"])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="tiny models, 3 iterations, no reference-mode check")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    if args.quick:
        args.size, args.iters = "tiny", 3
    args.threads = [int(t) for t in args.threads.split(",")]
    args.tilefuse = os.path.abspath(args.tilefuse)
    args.work_dir = os.path.join(os.path.abspath(args.work_dir), args.size)
    args.cache = os.path.join(args.work_dir, "cache")
    import models
    archs = args.archs.split(",") if args.archs else [a.name for a in models.ARCHS]
    manifest_path = os.path.join(args.work_dir, "manifest.json")
    if not os.path.exists(manifest_path) or json.load(open(manifest_path))["entries"] == [] or args.archs:
        log(f"exporting {', '.join(archs)} ({args.size}) into {args.work_dir}")
        subprocess.run([sys.executable, os.path.join(HERE, "export.py"), "--size", args.size, "--out", args.work_dir,
                        "--archs", ",".join(archs), "--batch", "1" if args.size == "full" else "2"], check=True)
    manifest = json.load(open(manifest_path))
    rows, seen = [], set()
    for entry in manifest["entries"]:
        if entry["arch"] not in archs:
            continue
        log(f"{entry['arch']} {entry['exporter']} {entry['shapes']}")
        rows.append(measure(args, manifest, entry, entry["arch"] not in seen))
        seen.add(entry["arch"])
        log(json.dumps({k: v for k, v in rows[-1].items() if k != "per_step_top"}))
    os.makedirs(args.results, exist_ok=True)
    import platform
    import torch
    import onnxruntime
    meta = {"size": args.size, "batch": manifest["batch"], "threads": args.threads, "iters": args.iters,
            "torch": torch.__version__, "onnxruntime": onnxruntime.__version__, "machine": platform.processor() or
            platform.machine(), "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}
    suffix = "" if args.size == "full" else "_tiny"
    with open(os.path.join(args.results, f"results{suffix}.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(args.results, f"results{suffix}.md"), "w") as f:
        f.write(f"# Real-model suite ({args.size}, batch {manifest['batch']}, {meta['date']}, torch {meta['torch']}, "
                f"onnxruntime {meta['onnxruntime']}, {meta['cpus']} CPUs)\n\n")
        f.write(markdown(rows, args.threads))
    plot(rows, args.threads, os.path.join(args.results, f"speed{suffix}.png"))
    print(markdown(rows, args.threads))


if __name__ == "__main__":
    main()
