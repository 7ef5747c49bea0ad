"""The same script against ONNX Runtime and tilefuse: only the session class differs, and the
outputs agree within 1e-4. Skipped where onnxruntime is not installed (it is a PyPI package,
never a requirement of `make test`; bench/peers/setup_venv.sh installs it)."""
import numpy as np
import pytest

import tilefuse
from conftest import MODELS, bundled_models, read_arrays

ort = pytest.importorskip("onnxruntime")


def describe(args):
    return [(a.name, a.type, [d if isinstance(d, int) else "sym" for d in a.shape]) for a in args]


# Input dims are named as the model names them; output dims may differ in name, not in kind:
# ONNX Runtime repeats the exporter's names, tilefuse names them by what they are (batch, seq).
def exact(args):
    return [(a.name, a.type, a.shape) for a in args]


@pytest.mark.parametrize("model", bundled_models())
def test_same_script_same_answers(model):
    results = []
    for session_class in (ort.InferenceSession, tilefuse.InferenceSession):
        sess = session_class(str(MODELS / f"{model}.onnx"), providers=["CPUExecutionProvider"])
        feeds = {i.name: read_arrays(model, "inputs")[i.name] for i in sess.get_inputs()}
        names = [o.name for o in sess.get_outputs()]
        results.append((exact(sess.get_inputs()), describe(sess.get_outputs()), sess.run(names, feeds)))
    (ort_in, ort_out, ort_y), (tf_in, tf_out, tf_y) = results
    assert tf_in == ort_in and tf_out == ort_out
    for a, b in zip(ort_y, tf_y):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4)


REAL = sorted((MODELS.parent.parent / "tests" / "models" / "real").glob("*/*.onnx"))


@pytest.mark.parametrize("model", REAL, ids=[f"{p.parent.name}/{p.stem}" for p in REAL])
def test_tiny_real_architectures_match(model):
    """The suite's architectures at tiny size, both exporters (dynamo's with symbolic dims)."""
    inputs = {p.stem: np.load(p) for p in (model.parent / "inputs").glob("*.npy")}
    results = []
    for session_class in (ort.InferenceSession, tilefuse.InferenceSession):
        sess = session_class(str(model), providers=["CPUExecutionProvider"])
        results.append(sess.run(None, {i.name: inputs[i.name] for i in sess.get_inputs()}))
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4)


def io_binding_script(ort_module, model_path, x):
    """A performance-minded ONNX Runtime script: OrtValues, an IOBinding, raw output pointers."""
    sess = ort_module.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    binding.bind_ortvalue_input(sess.get_inputs()[0].name, ort_module.OrtValue.ortvalue_from_numpy(x, "cpu", 0))
    out = np.empty(x.shape, dtype=np.float32)
    binding.bind_output(sess.get_outputs()[0].name, "cpu", 0, np.float32, list(out.shape), out.ctypes.data)
    sess.run_with_iobinding(binding)
    return out


def test_an_io_binding_script_runs_with_either_module():
    x = read_arrays("mlp_block", "inputs")["x"]
    path = str(MODELS / "mlp_block.onnx")
    np.testing.assert_allclose(io_binding_script(tilefuse, path, x), io_binding_script(ort, path, x), rtol=1e-4,
                               atol=1e-4)
