"""Timing and output checks shared by every in-Python engine, and the result record of one measurement.

The method is `tilefuse bench`'s: untimed warm-up runs, then timed runs of one inference each,
reported as median, min and the p10-p90 spread (the same percentile rule as tilefuse), so the
numbers of every engine mean the same thing.
"""
import dataclasses
import os
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from check_pytorch_exports import errors, nan_mismatch  # noqa: E402  (one definition of the error measure)

RTOL = 1e-4        # float32 outputs: max |got - want| / max(|want|, ABS_FLOOR)
ABS_FLOOR = 1e-2   # values below this are judged on absolute error (see check_pytorch_exports.py)


@dataclasses.dataclass
class Result:
    """One engine on one case (and ONNX variant, for the engines that read ONNX) at one thread count.

    status: "ok" (checked and timed), "FAIL" (outputs disagree with PyTorch eager: no time reported),
    "ERROR" (the engine could not run it), "TIMEOUT", "SKIP" (not attempted, with the reason)."""
    case: str
    engine: str
    threads: int
    variant: str = None          # None: the engine runs the PyTorch module, so the row holds for every variant
    status: str = "ERROR"
    detail: str = ""
    max_rel_err: float = None
    compile_s: float = None      # cold: fresh cache, first call
    median_ms: float = None
    min_ms: float = None
    p10_ms: float = None
    p90_ms: float = None
    iterations: int = None
    extra: dict = dataclasses.field(default_factory=dict)

    def set_timing(self, samples_ms):
        """Linear interpolation between order statistics: numpy's default, and tilefuse bench's `quantile`."""
        self.min_ms, self.p10_ms, self.median_ms, self.p90_ms = (
            float(v) for v in np.percentile(samples_ms, [0, 10, 50, 90]))
        self.iterations = len(samples_ms)


def inductor_engine(mode):
    """The engine name of torch.compile's mode (None: the default)."""
    return "inductor" if mode is None else f"inductor-{mode}"


def time_calls(call, warmup, iterations):
    """Wall time in ms of each of `iterations` calls after `warmup` untimed ones."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(iterations):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e3)
    return samples


def check_outputs(result, actual, reference_files, reference64_files):
    """Sets result.status to "FAIL" with the reason, or leaves it for the caller, comparing actual
    ({name: array}) with PyTorch eager's outputs. Passes within RTOL of the float32 reference, or of
    the float64 one where PyTorch's float32 arithmetic is the less exact one. Returns True on a pass."""
    problems, worst, worst64 = [], 0.0, 0.0
    for name, path in reference_files.items():
        want = np.load(path)
        got = actual.get(name)
        if got is None or got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"output '{name}': got {describe(got)}, PyTorch {describe(want)}")
            continue
        problems += nan_mismatch(name, got, want)
        worst = max(worst, errors(got, want, ABS_FLOOR)[1])
        worst64 = max(worst64, errors(got, np.load(reference64_files[name]), ABS_FLOOR)[1])
    result.max_rel_err = min(worst, worst64)
    if worst > RTOL and worst64 > RTOL:
        problems.append(f"max rel err {worst:.3g} (vs PyTorch float64 {worst64:.3g}) > {RTOL:g}")
    if problems:
        result.status, result.detail = "FAIL", "; ".join(problems)
    return not problems


def describe(array):
    return "nothing" if array is None else f"{array.dtype}{list(array.shape)}"


@dataclasses.dataclass
class Timing:
    """How long each engine is measured; the same numbers go to tilefuse bench."""
    warmup: int
    iterations: int
    stream_mib: int  # per array of bench's bandwidth probes

    def scaled(self, factor):
        return dataclasses.replace(self, iterations=self.iterations * factor)
