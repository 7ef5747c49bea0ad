"""The peers run in Python: ONNX Runtime, PyTorch eager and TorchInductor, one function each.

Each returns a measure.Result: outputs checked against PyTorch eager's saved reference first, and
only then timed, each engine in the configuration its users would pick for CPU inference.
"""
import time

import numpy as np
import torch

from measure import Result, check_outputs, inductor_engine, time_calls
from prepare import OUTPUT_NAME


def load_inputs(prepared):
    return {name: np.load(path) for name, path in prepared.inputs.items()}


def measure_onnxruntime(prepared, variant, threads, timing):
    """ORT's CPU provider, ORT_ENABLE_ALL, `threads` intra-op threads. Timed through IOBinding with the
    inputs and the output buffer bound once, so a timed run neither copies inputs nor allocates."""
    import onnxruntime as ort

    result = Result(prepared.case_id, "onnxruntime", threads, variant=variant)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    inputs = load_inputs(prepared)
    try:
        started = time.perf_counter()
        session = ort.InferenceSession(prepared.onnx[variant], options, providers=["CPUExecutionProvider"])
        outputs = session.run(None, inputs)
        result.compile_s = time.perf_counter() - started  # session creation (graph optimisation) + first run
    except Exception as error:  # ORT rejects the model: this row's status, the run goes on
        result.detail = f"{type(error).__name__}: {str(error).strip()[:300]}"
        return result
    names = [out.name for out in session.get_outputs()]
    if not check_outputs(result, dict(zip(names, outputs)), prepared.reference, prepared.reference64):
        return result
    binding = session.io_binding()
    for name, array in inputs.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(array))
    for name, array in zip(names, outputs):
        binding.bind_ortvalue_output(name, ort.OrtValue.ortvalue_from_numpy(np.empty_like(array)))
    result.set_timing(time_calls(lambda: session.run_with_iobinding(binding), timing.warmup, timing.iterations))
    result.status = "ok"
    return result


def measure_eager(case, prepared, threads, timing):
    """PyTorch eager under inference_mode with `threads` intra-op threads (nn.TransformerEncoderLayer
    takes its fused fast path there, as it does for users)."""
    torch.set_num_threads(threads)
    return measure_module(case.build_module(), "eager", prepared, threads, timing, compiles=False)


def measure_inductor(case, prepared, threads, timing, mode):
    """torch.compile(module, mode=mode) on CPU. compile_s is the first call (trace, codegen, C++ build);
    the caller gives each compile a fresh process and cache, so it is cold."""
    torch.set_num_threads(threads)  # Inductor writes this thread count into its OpenMP kernels
    compiled = torch.compile(case.build_module(), mode=mode)
    return measure_module(compiled, inductor_engine(mode), prepared, threads, timing, compiles=True)


def measure_module(module, engine, prepared, threads, timing, compiles):
    result = Result(prepared.case_id, engine, threads)
    inputs = [torch.from_numpy(array) for array in load_inputs(prepared).values()]
    with torch.inference_mode():
        started = time.perf_counter()
        output = module(*inputs)
        if compiles:
            result.compile_s = time.perf_counter() - started
        if not check_outputs(result, {OUTPUT_NAME: output.numpy()}, prepared.reference, prepared.reference64):
            return result
        result.set_timing(time_calls(lambda: module(*inputs), timing.warmup, timing.iterations))
    result.status = "ok"
    return result
