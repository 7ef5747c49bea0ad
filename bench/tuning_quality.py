#!/usr/bin/env python3
"""How good tilefuse's tiling cost model and TopN selection are, measured.

For every bundled example model (or the models given), runs
`tilefuse tune-report MODEL --exhaustive --json`, which compiles and measures the whole tiling
space of every static fused kernel on the model's inputs, candidates listed in the cost model's
order. From that one measurement per kernel it derives:

  topn10_vs_exhaustive   best of the model's first 10 / best of the whole space - 1  (goal <= 3%)
  first_vs_best          the model's first choice / best of the whole space - 1    (goal <= 15% median)
  top3_has_best          whether the measured best (within 2%, the timing noise) is among the first 3
                         (goal >= 85% of kernels)

Usage: /usr/bin/python3 bench/tuning_quality.py [--tilefuse build/tilefuse] [--threads 2]
                                                 [--json out.json] [MODEL.onnx ...]
"""
import argparse
import glob
import json
import statistics
import subprocess
import sys

NOISE = 0.02  # two medians closer than this are the same speed on this (shared, noisy) machine


def tune_report(tilefuse, model, threads):
    """The exhaustive tune-report of `model`, or None (with the reason printed) if it cannot run."""
    run = subprocess.run([tilefuse, "tune-report", model, "--exhaustive", "--json", "--threads", str(threads)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{model}: skipped: {run.stderr.strip().splitlines()[-1] if run.stderr.strip() else run.returncode}")
        return None
    return json.loads(run.stdout)


def kernel_metrics(kernel):
    times = [c["median_us"] if c["measured"] else float("inf") for c in kernel["candidates"]]
    best = min(times)
    return {
        "kernel": kernel["kernel"],
        "candidates": len(times),
        "best_us": best,
        "best_rank": times.index(best),
        "topn10_vs_exhaustive": min(times[:10]) / best - 1,
        "first_vs_best": times[0] / best - 1,
        "top3_has_best": min(times[:3]) <= best * (1 + NOISE),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help="ONNX models (default: examples/models/*.onnx)")
    parser.add_argument("--tilefuse", default="build/tilefuse")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", help="write the per-kernel metrics here")
    args = parser.parse_args()
    models = args.models or sorted(glob.glob("examples/models/*.onnx"))
    rows = []
    for model in models:
        report = tune_report(args.tilefuse, model, args.threads)
        for kernel in report["kernels"] if report else []:
            row = kernel_metrics(kernel)
            row["model"] = model
            rows.append(row)
            print(f"{model:45s} {row['kernel']:40s} space {row['candidates']:3d}  best rank {row['best_rank']:3d}  "
                  f"top10 {100 * row['topn10_vs_exhaustive']:5.1f}%  first {100 * row['first_vs_best']:5.1f}%  "
                  f"top3 {'yes' if row['top3_has_best'] else 'no'}", flush=True)
    if not rows:
        sys.exit("no static kernel with a choice of tilings in these models")
    summary = {
        "kernels": len(rows),
        "max_topn10_vs_exhaustive": max(r["topn10_vs_exhaustive"] for r in rows),
        "median_first_vs_best": statistics.median(r["first_vs_best"] for r in rows),
        "top3_has_best_fraction": sum(r["top3_has_best"] for r in rows) / len(rows),
    }
    print(f"\n{summary['kernels']} kernels: TopN=10 best vs exhaustive best: worst {100 * summary['max_topn10_vs_exhaustive']:.1f}% "
          f"slower (goal <= 3%); model's first choice vs best: median {100 * summary['median_first_vs_best']:.1f}% "
          f"slower (goal <= 15%); TopN=3 contains the best in {100 * summary['top3_has_best_fraction']:.0f}% "
          f"of kernels (goal >= 85%)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "kernels": rows}, f, indent=2)


if __name__ == "__main__":
    main()
