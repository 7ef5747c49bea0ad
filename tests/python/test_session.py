"""tilefuse.InferenceSession against the bundled models' expected outputs, ONNX Runtime's API
shape, zero-copy inputs, errors and threads."""
import concurrent.futures
import pydoc

import numpy as np
import pytest

import tilefuse
from conftest import MODELS, bundled_models, read_arrays


def session(model, **kwargs):
    return tilefuse.InferenceSession(str(MODELS / f"{model}.onnx"), **kwargs)


def assert_expected(model, outputs, names):
    expected = read_arrays(model, "expected")
    assert sorted(names) == sorted(expected)
    for name, actual in zip(names, outputs):
        np.testing.assert_allclose(actual, expected[name], rtol=1e-4, atol=1e-5, err_msg=f"{model}: {name}")


@pytest.mark.parametrize("model", bundled_models())
@pytest.mark.parametrize("mode", ["fused", "unfused", "reference"])
def test_bundled_model_gives_expected_outputs(model, mode):
    sess = session(model, mode=mode)
    outputs = sess.run(None, read_arrays(model, "inputs"))
    assert all(isinstance(y, np.ndarray) for y in outputs)
    assert_expected(model, outputs, [o.name for o in sess.get_outputs()])


def test_metadata_is_spelled_as_onnx_runtime_spells_it():
    sess = session("symbolic_batch")
    (x,) = sess.get_inputs()
    (y,) = sess.get_outputs()
    assert (x.name, x.type) == ("x", "tensor(float)")
    assert isinstance(x.shape[0], str) and all(isinstance(d, int) for d in x.shape[1:])
    assert y.type == "tensor(float)" and isinstance(y.shape[0], str)
    assert repr(x).startswith("NodeArg(name='x', type='tensor(float)', shape=[")
    static = session("mlp_block").get_inputs()[0]
    assert all(isinstance(d, int) for d in static.shape)


def test_symbolic_batch_runs_at_several_sizes():
    sess = session("symbolic_batch")
    x = read_arrays("symbolic_batch", "inputs")["x"]
    whole = sess.run(None, {"x": x})[0]
    for n in (1, x.shape[0] - 1, 2 * x.shape[0]):
        batch = np.ascontiguousarray(np.resize(x, (n,) + x.shape[1:]))
        (y,) = sess.run(None, {"x": batch})
        assert y.shape[0] == n
        reference = tilefuse.InferenceSession(str(MODELS / "symbolic_batch.onnx"), mode="reference")
        np.testing.assert_allclose(y, reference.run(None, {"x": batch})[0], rtol=1e-4, atol=1e-5)
    assert whole.shape[0] == x.shape[0]


def test_contiguous_inputs_are_read_in_place_and_others_converted_once():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    address, converted = sess._input_address("x", x)
    assert (address, converted) == (x.ctypes.data, False)
    sess.run(None, {"x": x})
    assert sess.counters()["inputs_converted"] == 0

    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), dtype=x.dtype)
    wide[..., ::2] = x
    strided = wide[..., ::2]  # not contiguous: converted
    assert sess._input_address("x", strided)[1] is True
    np.testing.assert_array_equal(sess.run(None, {"x": strided})[0], sess.run(None, {"x": x})[0])
    assert sess.counters()["inputs_converted"] == 1


def test_a_released_output_is_written_again_and_a_held_one_never():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    first = sess.run(None, {"x": x})[0]
    held = first.copy()
    second = sess.run(None, {"x": x * 2})[0]  # `first` is still held: a new array
    assert second.ctypes.data != first.ctypes.data
    np.testing.assert_array_equal(first, held)  # and untouched
    address = second.ctypes.data
    del second  # released: the next run writes into its memory (had it been freed, this takes it)
    blocker = np.empty_like(held)
    third = sess.run(None, {"x": x})[0]
    assert blocker.ctypes.data != address
    assert third.ctypes.data == address
    np.testing.assert_array_equal(third, held)


def test_misaligned_input_is_read_in_place_and_correct():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    storage = np.empty(x.size + 1, dtype=x.dtype)
    shifted = storage[1:].reshape(x.shape)  # 4 bytes past an aligned start
    shifted[...] = x
    assert sess._input_address("x", shifted) == (shifted.ctypes.data, False)
    assert_expected("mlp_block", sess.run(None, {"x": shifted}), ["y"])


def test_lists_take_the_declared_dtype():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    np.testing.assert_allclose(sess.run(None, {"x": x.tolist()})[0], sess.run(None, {"x": x})[0], rtol=1e-6)


def test_outputs_are_new_arrays_that_keep_their_memory():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    (first,) = sess.run(None, {"x": x})
    kept = first.copy()
    (second,) = sess.run(None, {"x": x * 2})
    assert not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, kept)  # the second run did not write into the first's array
    first[...] = 0  # writable, and the next run does not see it
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], kept)
    del sess
    np.testing.assert_array_equal(second, second.copy())  # still readable without the session


def test_output_names_select_and_order():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    (y,) = sess.run(["y"], {"x": x})
    y1, y2 = sess.run(["y", "y"], {"x": x})
    np.testing.assert_array_equal(y, y1)
    np.testing.assert_array_equal(y1, y2)
    with pytest.raises(tilefuse.UserError, match="'nope' is not an output of the model; its outputs are 'y'"):
        sess.run(["nope"], {"x": x})


def test_user_errors_are_value_errors_naming_the_input():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    assert issubclass(tilefuse.UserError, ValueError)
    with pytest.raises(tilefuse.UserError, match="input 'x'.*f64"):
        sess.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(tilefuse.UserError, match="input 'x'"):
        sess.run(None, {"x": x[..., :-1].copy()})
    with pytest.raises(tilefuse.UserError, match="'x'"):
        sess.run(None, {})
    with pytest.raises(tilefuse.UserError, match="'bogus'"):
        sess.run(None, {"x": x, "bogus": x})
    with pytest.raises(tilefuse.UserError, match="NumPy dtype complex64"):
        sess.run(None, {"x": x.astype(np.complex64)})


def test_bad_models_are_user_errors(tmp_path):
    with pytest.raises(tilefuse.UserError, match="missing.onnx"):
        tilefuse.InferenceSession(str(tmp_path / "missing.onnx"))
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model at all")
    with pytest.raises(tilefuse.UserError, match="broken.onnx"):
        tilefuse.InferenceSession(str(broken))
    with pytest.raises(tilefuse.UserError):
        tilefuse.InferenceSession(b"\x08\x07garbage")
    with pytest.raises(tilefuse.UserError, match="mode"):
        session("mlp_block", mode="fastest")


def test_a_model_can_come_as_bytes():
    sess = tilefuse.InferenceSession((MODELS / "bias_gelu.onnx").read_bytes())
    assert_expected("bias_gelu", sess.run(None, read_arrays("bias_gelu", "inputs")),
                    [o.name for o in sess.get_outputs()])


def test_threads_and_onnx_runtime_session_options_agree():
    x = read_arrays("mlp_block", "inputs")
    one = session("mlp_block", threads=1).run(None, x)[0]
    options = tilefuse.SessionOptions()
    options.intra_op_num_threads = 2
    two = session("mlp_block", sess_options=options, providers=["CPUExecutionProvider"]).run(None, x)[0]
    np.testing.assert_allclose(one, two, rtol=1e-5, atol=1e-6)


def test_concurrent_runs_from_python_threads():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    scales = [0.5 * i for i in range(16)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda s: sess.run(None, {"x": x * s})[0], scales))
    for s, y in zip(scales, results):
        np.testing.assert_array_equal(y, sess.run(None, {"x": x * s})[0])


def test_save_and_load_a_package(tmp_path):
    inputs = read_arrays("mlp_block", "inputs")
    sess = session("mlp_block")
    expected = sess.run(None, inputs)[0]
    sess.save(str(tmp_path / "model.tfx"))
    for loaded in (tilefuse.load(str(tmp_path / "model.tfx")), tilefuse.InferenceSession(tmp_path / "model.tfx")):
        assert [i.name for i in loaded.get_inputs()] == ["x"]
        np.testing.assert_array_equal(loaded.run(None, inputs)[0], expected)
    with pytest.raises(tilefuse.UserError, match="nothing-here"):
        tilefuse.load(str(tmp_path / "nothing-here"))


def test_cpp_wrapper_runs_through_a_cached_package():
    inputs = read_arrays("bias_gelu", "inputs")
    sess = session("bias_gelu", cpp_wrapper=True)
    assert_expected("bias_gelu", sess.run(None, inputs), [o.name for o in sess.get_outputs()])
    assert "package_built" in sess.counters()
    again = session("bias_gelu", cpp_wrapper=True)
    assert_expected("bias_gelu", again.run(None, inputs), [o.name for o in again.get_outputs()])
    assert again.counters()["package_built"] == 0  # the first session's package, from the cache


def test_superkernel_is_chosen_by_keyword_with_the_same_results():
    inputs = read_arrays("mlp_block", "inputs")
    runs = {}
    for superkernel in (True, False):
        sess = session("mlp_block", threads=2, superkernel=superkernel)
        runs[superkernel] = sess.run(None, inputs)[0]
        assert sess.counters()["superkernel"] == int(superkernel)
    np.testing.assert_array_equal(runs[True], runs[False])


def test_bf16_precision_is_chosen_by_keyword_within_its_bound():
    inputs = read_arrays("mlp_block", "inputs")
    f32 = session("mlp_block", precision="f32").run(None, inputs)[0]
    bf16 = session("mlp_block", precision="bf16").run(None, inputs)[0]
    assert np.abs(bf16 - f32).max() <= 2e-2 * np.abs(f32).max()  # the README's bound
    with pytest.raises(tilefuse.UserError, match="must be f32 or bf16"):
        session("mlp_block", precision="half")


def test_onnx_runtime_module_shape():
    tilefuse.set_default_logger_severity(3)
    tilefuse.disable_telemetry_events()
    with pytest.raises(tilefuse.UserError, match="severity"):
        tilefuse.set_default_logger_severity(7)
    tilefuse.set_default_logger_severity(2)
    assert tilefuse.get_available_providers() == ["CPUExecutionProvider"]
    assert tilefuse.get_device() == "CPU"
    options = tilefuse.SessionOptions()
    options.graph_optimization_level = tilefuse.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = session("mlp_block", sess_options=options)
    assert sess.get_session_options() is options
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_overridable_initializers() == []
    x = read_arrays("mlp_block", "inputs")["x"]
    np.testing.assert_array_equal(sess.run(None, {"x": x}, tilefuse.RunOptions())[0], sess.run(None, {"x": x})[0])


def test_help_reads_well():
    text = pydoc.render_doc(tilefuse.InferenceSession, renderer=pydoc.plaintext)
    for phrase in ("ONNX Runtime", "get_inputs", "run(self, output_names", "UserError", "GIL"):
        assert phrase in text
    assert tilefuse.__version__.count(".") == 2


def test_integer_and_bool_outputs_have_numpy_dtypes():
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, [3])
    z = helper.make_tensor_value_info("z", TensorProto.BOOL, [])
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT64),
             helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
             helper.make_node("Greater", ["m", "zero"], ["z"])]
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    graph = helper.make_graph(nodes, "typed", [x], [y, z], initializer=[zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess = tilefuse.InferenceSession(model.SerializeToString())
    assert [o.type for o in sess.get_outputs()] == ["tensor(int64)", "tensor(bool)"]
    ints, positive = sess.run(None, {"x": np.array([1.5, 2.5, -3.5], dtype=np.float32)})
    assert ints.dtype == np.dtype(np.int64) and ints.dtype.char == np.dtype(np.int64).char
    np.testing.assert_array_equal(ints, [1, 2, -3])
    assert positive.dtype == np.bool_ and positive.shape == () and bool(positive)


def nonzero_model():
    """NonZero then a Transpose: an output whose shape depends on the data; the output's declared
    type leaves the shape out, as ONNX Runtime allows."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["i"]), helper.make_node("Transpose", ["i"], ["y"])], "nonzero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def test_a_model_only_the_reference_interpreter_runs_falls_back_with_a_warning(caplog):
    sess = tilefuse.InferenceSession(nonzero_model())
    assert sess.mode == "fused"
    with caplog.at_level("WARNING", logger="tilefuse"):
        (y,) = sess.run(None, {"x": np.array([0, 1, 0, 2], dtype=np.float32)})
    np.testing.assert_array_equal(y, [[1], [3]])
    assert sess.mode == "reference" and "reference interpreter" in caplog.text
    (y,) = sess.run(None, {"x": np.array([5, 1, 0, 2], dtype=np.float32)})
    np.testing.assert_array_equal(y, [[0], [1], [3]])


def test_an_explicit_fused_mode_raises_instead_of_falling_back():
    sess = tilefuse.InferenceSession(nonzero_model(), mode="fused")
    with pytest.raises(tilefuse.NeedsReferenceMode, match="depends on tensor data"):
        sess.run(None, {"x": np.array([0, 1, 0, 2], dtype=np.float32)})
    assert issubclass(tilefuse.NeedsReferenceMode, tilefuse.UserError)


def test_run_lets_other_python_threads_run():
    """With the switch interval at 1000 s, another thread can get the GIL only when it is released:
    it appends its mark during sess.run, or never (a run that kept the GIL would leave it out)."""
    import sys
    import threading

    sess = session("symbolic_batch", mode="reference")  # the slow interpreter: a run of many milliseconds
    x = np.ones((256, 32, 128), dtype=np.float32)
    sess.run(None, {"x": x})
    go, marks = threading.Event(), []
    other = threading.Thread(target=lambda: (go.wait(), marks.append("ran")))
    interval = sys.getswitchinterval()
    other.start()
    try:
        sys.setswitchinterval(1000)
        go.set()  # the other thread wakes, and waits for the GIL
        sess.run(None, {"x": x})
        seen = list(marks)  # read before anything else could release the GIL
    finally:
        sys.setswitchinterval(interval)
        other.join()
    assert seen == ["ran"]


def test_io_binding_and_ort_values_as_onnx_runtime_spells_them():
    sess = session("mlp_block")
    x = read_arrays("mlp_block", "inputs")["x"]
    expected = sess.run(None, {"x": x})[0]

    binding = sess.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y")
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], expected)
    assert binding.get_outputs()[0].data_type() == "tensor(float)"

    # Raw pointers, as performance scripts bind them: the result lands in the caller's buffer.
    out = np.empty_like(expected)
    binding = sess.io_binding()
    binding.bind_input("x", "cpu", 0, np.float32, list(x.shape), x.ctypes.data)
    binding.bind_output("y", "cpu", 0, np.float32, list(out.shape), out.ctypes.data)
    sess.run_with_iobinding(binding)
    np.testing.assert_array_equal(out, expected)

    value = tilefuse.OrtValue.ortvalue_from_numpy(x)
    assert value.numpy() is x and value.shape() == list(x.shape) and value.device_name() == "cpu"
    (y,) = sess.run_with_ort_values(["y"], {"x": value})
    np.testing.assert_array_equal(y.numpy(), expected)
    with pytest.raises(tilefuse.UserError, match="CPU"):
        tilefuse.OrtValue.ortvalue_from_numpy(x, "cuda", 0)
