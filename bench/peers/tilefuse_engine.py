"""tilefuse through its command line: a cold `run` (correctness and compile time), then `bench` (latency, STREAM).

`tilefuse bench` cannot read input files (it fills seeded random inputs itself), so correctness is
checked by `tilefuse run --input ...` on the very inputs PyTorch saw, and the inputs of every engine
are drawn from bench's distribution (models.py). Compile time is the wall time of that first `run`
with a fresh --cache-dir: process start, import, planning, C++ compilation of every kernel, tuning
(--topn, where this tilefuse has it), one run.
`bench` then reuses that cache, so it compiles nothing.
"""
import json
import os
import shutil
import subprocess
import time

import numpy as np

from measure import Result, check_outputs

MODE = "fused"


class TilefuseError(Exception):
    """A tilefuse command failed; the message holds its command line and its error output."""


def tuning_args(tilefuse, topn):
    """["--topn", N] when this tilefuse tunes (the tuning issue's --topn), else [] (untuned builds)."""
    proc = subprocess.run([tilefuse, "run", "--help"], capture_output=True, text=True)
    return ["--topn", str(topn)] if topn and "--topn" in proc.stdout else []


def measure_tilefuse(tilefuse, tuning, prepared, variant, threads, work_dir, timing, timeout_s):
    """One Result for `variant` of `prepared` at `threads` (tuning: tuning_args()); bench's STREAM probe goes into extra."""
    result = Result(prepared.case_id, "tilefuse", threads, variant=variant)
    model = prepared.onnx[variant]
    cache_dir = os.path.join(work_dir, f"tilefuse-cache.{variant}.t{threads}")
    shutil.rmtree(cache_dir, ignore_errors=True)  # cold: the compile time counts every kernel
    try:
        outputs, result.compile_s, result.extra["compile_ms_reported"] = cold_run(
            tilefuse, tuning, model, prepared.inputs, threads, cache_dir, work_dir, timeout_s)
        if not check_outputs(result, outputs, prepared.reference, prepared.reference64):
            return result
        report = bench(tilefuse, tuning, model, threads, cache_dir, timing, timeout_s)
    except subprocess.TimeoutExpired as error:
        result.status, result.detail = "TIMEOUT", f"{' '.join(error.cmd)}: no answer after {error.timeout:.0f} s"
        return result
    except TilefuseError as error:
        result.detail = str(error)
        return result
    fill_from_bench(result, report, timing.iterations)
    return result


def cold_run(tilefuse, tuning, model, input_files, threads, cache_dir, work_dir, timeout_s):
    """(outputs {name: array}, wall seconds, compile_ms tilefuse reports) of `tilefuse run` on the given inputs."""
    out_dir = os.path.join(work_dir, f"tilefuse-out.t{threads}")
    command = [tilefuse, "run", model, "--mode", MODE, "--threads", str(threads), "--cache-dir", cache_dir,
               "--output-dir", out_dir, "--json"] + tuning
    for name, path in input_files.items():
        command += ["--input", f"{name}={path}"]
    started = time.perf_counter()
    report = run_json(command, timeout_s)
    wall_s = time.perf_counter() - started
    outputs = {out["name"]: np.load(out["path"]) for out in report["outputs"]}
    return outputs, wall_s, report.get("compile_ms")


def bench(tilefuse, tuning, model, threads, cache_dir, timing, timeout_s):
    command = [tilefuse, "bench", model, "--modes", MODE, "--threads", str(threads), "--cache-dir", cache_dir,
               "--iters", str(timing.iterations), "--warmup", str(timing.warmup),
               "--stream-mib", str(timing.stream_mib), "--json"] + tuning
    return run_json(command, timeout_s)


def fill_from_bench(result, report, iterations):
    fused = report["modes"][MODE]
    result.status = "ok"
    result.median_ms, result.min_ms = fused["median_ms"], fused["min_ms"]
    result.p10_ms, result.p90_ms = fused["p10_ms"], fused["p90_ms"]
    result.iterations = iterations
    result.extra.update(stream_triad_gbps=report["stream_triad_gbps"], copy_nt_gbps=report["copy_nt_gbps"],
                        kernels=fused["kernels"], plan_bytes=fused["bytes"])


def run_json(command, timeout_s):
    proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        message = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise TilefuseError(f"`{' '.join(command)}` exited {proc.returncode}: {message[-1] if message else ''}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as error:
        raise TilefuseError(f"`{' '.join(command)}` --json printed no JSON ({error}): {proc.stdout[:200]!r}")

