#!/usr/bin/env python3
"""Benchmarks tilefuse against ONNX Runtime, PyTorch eager and TorchInductor on the same models, in one run.

For each model and size (models.py): export it with torch.onnx.export, save inputs and PyTorch eager's
outputs (prepare.py); then, per thread count, run every engine on it back to back: check its outputs
against PyTorch eager, then time it (warm-up, repeated runs, median/min/p10/p90). tilefuse bench's
STREAM triad, measured in the same run, is the roofline. Writes RESULTS_DIR/<timestamp>.{json,md} and
the pictures, and copies them to latest.* (report.py, plots.py).

Usage: run_peers.py [--quick] [--threads 1,2] [--only REGEX] [--tilefuse build/tilefuse]
       run_peers.py --report-only RESULTS.json   (re-render the Markdown and pictures of a run)
Normally started by `make bench-peers` (PEERS_ARGS=--quick for the smoke test).
"""
import argparse
import dataclasses
import datetime
import json
import os
import re
import shlex
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import engines  # noqa: E402
import machine  # noqa: E402
import report  # noqa: E402
from inductor_worker import InductorWorker  # noqa: E402
from measure import Result, Timing  # noqa: E402
from models import all_cases  # noqa: E402
from prepare import prepare  # noqa: E402
from tilefuse_engine import measure_tilefuse, tuning_args  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ("tilefuse", "onnxruntime", "eager", "inductor", "inductor-max-autotune")
# On CPU, max-autotune only adds a search over GEMM templates (its other settings tune Triton/GPU
# kernels), so it can only differ from the default on models with matmuls, and that search costs
# minutes per model on 2 cores.
MAX_AUTOTUNE_MODELS = ("mlp_block", "encoder_layer")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--quick", action="store_true", default=os.environ.get("PEERS_QUICK") == "1",
                        help="smoke test: small sizes, fewer runs, threads 2 (also PEERS_QUICK=1)")
    parser.add_argument("--threads", help="comma-separated thread counts (default 1,2; quick: 2)")
    parser.add_argument("--only", default="", help="only cases whose id (model-size) matches this regex")
    parser.add_argument("--engines", default=",".join(ENGINES), help="engines to run (default: all)")
    parser.add_argument("--max-autotune-models", default=",".join(MAX_AUTOTUNE_MODELS),
                        help="models Inductor max-autotune runs on (default %(default)s)")
    parser.add_argument("--tilefuse", default=os.environ.get("TILEFUSE", os.path.join(machine.REPO, "build", "tilefuse")))
    parser.add_argument("--topn", type=int, default=3,
                        help="tilefuse tuning candidates per kernel, passed where tilefuse has --topn (0: none)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, help="timed runs of a large case (default 10; quick: 3); small cases x5, 64x64 x50")
    parser.add_argument("--stream-mib", type=int, default=128, help="MiB per array of bench's bandwidth probes")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per engine per case (compile + measure)")
    parser.add_argument("--work-dir", default=os.path.join(machine.REPO, "build", "peers-work"),
                        help="models, inputs, outputs and caches (large: several GB)")
    parser.add_argument("--results-dir", help="default bench/peers/results; quick: build/peers-results-quick")
    parser.add_argument("--report-only", metavar="RESULTS_JSON", help="only re-render a run's Markdown and pictures")
    args = parser.parse_args()
    args.threads = [int(t) for t in (args.threads or ("2" if args.quick else "1,2")).split(",")]
    args.engines = [e for e in args.engines.split(",") if e]
    unknown = sorted(set(args.engines) - set(ENGINES))
    if unknown:
        parser.error(f"--engines: unknown {unknown}; known: {', '.join(ENGINES)}")
    args.iters = args.iters or (3 if args.quick else 10)
    args.results_dir = args.results_dir or (os.path.join(machine.REPO, "build", "peers-results-quick") if args.quick
                                            else os.path.join(HERE, "results"))
    return args


def main():
    args = parse_args()
    if args.report_only:
        with open(args.report_only) as f:
            run = json.load(f)
        stem = os.path.basename(args.report_only)[:-len(".json")]
        print("\n".join(report.write(run, os.path.dirname(os.path.abspath(args.report_only)), stem)))
        return 0
    if not os.access(args.tilefuse, os.X_OK):
        sys.exit(f"tilefuse binary '{args.tilefuse}' not found or not executable: run `make build` or pass --tilefuse")
    started = time.time()
    run = describe_run(args)
    cases = [c for c in all_cases(args.quick) if re.search(args.only, c.id)]
    print(f"{len(cases)} cases, threads {args.threads}, engines {args.engines}; work dir {args.work_dir}", flush=True)
    measure_all(run, cases, Timing(**run["timing"]), args)
    run["elapsed_s"] = round(time.time() - started, 1)
    print(f"\nfinished in {run['elapsed_s'] / 60:.1f} min", flush=True)
    print("\n".join(report.save(run, args.results_dir, latest=not args.quick)))
    return 0


def describe_run(args):
    """What a reader needs to trust and reproduce the numbers: when, how, where, with which versions."""
    args.tuning = tuning_args(args.tilefuse, args.topn)
    timing = Timing(warmup=args.warmup, iterations=args.iters, stream_mib=args.stream_mib)
    return {"started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(shlex.quote(a) for a in sys.argv), "quick": args.quick, "threads": args.threads,
            "machine": machine.machine_facts(), "versions": machine.versions(), "tilefuse_args": args.tuning,
            "environment": machine.tuning_environment(),
            "timing": dataclasses.asdict(timing)}


def measure_all(run, cases, timing, args):
    """Fills run's cases, results and Inductor start-up times, exporting and measuring one case at a time."""
    run["cases"], results = {}, []
    args.inductor_workers = {}  # (mode, threads) -> InductorWorker, started on first use
    try:
        for case in cases:
            prepared, prepared_json = prepare_case(case, args.work_dir)
            run["cases"][case.id] = describe_case(case, prepared)
            for threads in args.threads:
                results += measure_case(case, prepared, prepared_json, threads, timing.scaled(case.iters_factor), args)
    finally:
        for worker in args.inductor_workers.values():
            worker.close()
    run["inductor_startup_s"] = {w.tag: w.startup_s for w in args.inductor_workers.values()}
    run["results"] = [dataclasses.asdict(r) for r in results]


def prepare_case(case, work_dir):
    print(f"\n== {case.id}: exporting", flush=True)
    prepared = prepare(case, work_dir)
    prepared_json = os.path.join(work_dir, case.id, "prepared.json")
    with open(prepared_json, "w") as f:
        json.dump(dataclasses.asdict(prepared), f)
    return prepared, prepared_json


def describe_case(case, prepared):
    return {"model": case.model, "size": case.size, "memory_bound": case.memory_bound,
            "inputs": {name: [list(shape), str(dtype).replace("torch.", "")]
                       for name, (shape, dtype) in case.input_shapes.items()},
            "variants": list(case_variants(case)), "compulsory_bytes": prepared.compulsory_bytes,
            "export_errors": prepared.export_errors}


def case_variants(case):
    return [f"opset{opset}" for opset in case.opsets]


def measure_case(case, prepared, prepared_json, threads, timing, args):
    """Every engine on one case at one thread count, back to back, so they share the machine's state."""
    case_dir = os.path.join(args.work_dir, case.id)
    results = []
    for engine in args.engines:
        for variant in (case_variants(case) if engine in ("tilefuse", "onnxruntime") else [None]):
            load_before = os.getloadavg()[0]
            result = measure_one(engine, case, prepared, prepared_json, variant, threads, timing, case_dir, args)
            result.extra["load_average_1min"] = [load_before, os.getloadavg()[0]]  # other processes' share of the CPUs
            print_progress(result)
            results.append(result)
    return results


def measure_one(engine, case, prepared, prepared_json, variant, threads, timing, case_dir, args):
    if variant is not None and variant not in prepared.onnx:
        return Result(case.id, engine, threads, variant=variant, detail=prepared.export_errors[variant])
    if engine == "tilefuse":
        return measure_tilefuse(args.tilefuse, args.tuning, prepared, variant, threads, case_dir, timing, args.timeout)
    if engine == "onnxruntime":
        return engines.measure_onnxruntime(prepared, variant, threads, timing)
    if engine == "eager":
        return engines.measure_eager(case, prepared, threads, timing)
    mode = None if engine == "inductor" else "max-autotune"
    if mode and case.model not in args.max_autotune_models.split(","):
        return Result(case.id, engine, threads, status="SKIP",
                      detail="no matmul: on CPU max-autotune only searches GEMM templates, so it equals the default")
    worker = args.inductor_workers.setdefault((mode, threads), InductorWorker(mode, threads, args.work_dir))
    return worker.measure(case, prepared_json, timing, args.timeout)


def print_progress(result):
    what = f"  t{result.threads} {result.engine}{' ' + result.variant if result.variant else ''}: {result.status}"
    if result.status == "ok":
        compile_s = f", compile {result.compile_s:.1f} s" if result.compile_s is not None else ""
        what += f"  median {result.median_ms:.3f} ms (min {result.min_ms:.3f}){compile_s}"
    else:
        what += f"  {result.detail[:200]}"
    print(what, flush=True)


if __name__ == "__main__":
    sys.exit(main())
