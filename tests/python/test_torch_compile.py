"""tilefuse.compile and the torch.compile backend on small modules, against eager PyTorch.
Skipped where torch is not installed (a PyPI package, never a requirement of `make test`)."""
import logging

import numpy as np
import pytest

import tilefuse

torch = pytest.importorskip("torch")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)
        self.up = torch.nn.Linear(32, 64)
        self.down = torch.nn.Linear(64, 32)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class TwoOutputs(torch.nn.Module):
    def forward(self, a, b):
        return a * b, torch.softmax(a - b, dim=-1)


def make(module):
    torch.manual_seed(0)
    return module.eval()


def test_compile_matches_eager_and_shares_memory():
    block = make(Block())
    x = torch.randn(4, 8, 32)
    fast = tilefuse.compile(block, (x,))
    y = fast(x)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape
    with torch.no_grad():
        torch.testing.assert_close(y, block(x), rtol=1e-4, atol=1e-4)
    assert fast.session.counters()["inputs_converted"] == 0  # the tensor's memory, read in place


def test_compile_with_a_dynamic_batch():
    block = make(Block())
    fast = tilefuse.compile(block, torch.randn(2, 8, 32), dynamic_shapes=[{0: "batch"}])
    assert isinstance(fast.session.get_inputs()[0].shape[0], str)
    for batch in (1, 5):
        x = torch.randn(batch, 8, 32)
        with torch.no_grad():
            torch.testing.assert_close(fast(x), block(x), rtol=1e-4, atol=1e-4)


def test_compile_returns_a_tuple_for_several_outputs():
    a, b = torch.randn(3, 16), torch.randn(3, 16)
    fast = tilefuse.compile(make(TwoOutputs()), (a, b))
    product, soft = fast(a, b)
    torch.testing.assert_close(product, a * b)
    torch.testing.assert_close(soft, torch.softmax(a - b, dim=-1), rtol=1e-5, atol=1e-6)


def test_inputs_that_need_grad_are_refused_while_gradients_are_on():
    block = make(Block())
    x = torch.randn(2, 8, 32)
    fast = tilefuse.compile(block, (x,))
    with pytest.raises(tilefuse.UserError, match="requires grad"):
        fast(x.requires_grad_())
    with torch.no_grad():  # no graph is recorded: the same tensor is fine
        torch.testing.assert_close(fast(x), block(x), rtol=1e-4, atol=1e-4)


@pytest.fixture
def sessions_made(monkeypatch):
    """The sessions the backend makes: proof that tilefuse, not PyTorch, ran the graph."""
    made = []

    class Counting(tilefuse.InferenceSession):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(tilefuse.torch_compile, "InferenceSession", Counting)
    torch._dynamo.reset()
    return made


def test_dynamo_backend_matches_eager(sessions_made):
    block = make(Block())
    fast = torch.compile(block, backend=tilefuse.dynamo_backend, dynamic=False)
    with torch.no_grad():
        for batch in (4, 2):
            x = torch.randn(batch, 8, 32)
            torch.testing.assert_close(fast(x), block(x), rtol=1e-4, atol=1e-4)
    assert len(sessions_made) == 2  # a static graph per shape
    assert all(s.counters()["runs"] >= 1 for s in sessions_made)


def test_dynamo_backend_compiles_a_dynamic_graph_per_shape(sessions_made, caplog):
    block = make(Block())
    fast = torch.compile(block, backend=tilefuse.dynamo_backend)  # dynamo goes dynamic on the second shape
    with torch.no_grad(), caplog.at_level(logging.WARNING, logger="tilefuse"):
        for batch in (4, 2, 3, 2):
            x = torch.randn(batch, 8, 32)
            torch.testing.assert_close(fast(x), block(x), rtol=1e-4, atol=1e-4)
    assert "left to PyTorch" not in caplog.text
    assert 3 <= len(sessions_made) <= 4  # a shape seen again reuses its specialization


def test_dynamo_backend_hands_back_to_pytorch_after_a_parameter_changes(sessions_made, caplog):
    block = make(Block())
    x = torch.randn(4, 8, 32)
    fast = torch.compile(block, backend=tilefuse.dynamo_backend, dynamic=False)
    with torch.no_grad():
        fast(x)
        block.up.weight.mul_(2.0)  # in place: the compiled constants are stale
        with caplog.at_level(logging.WARNING, logger="tilefuse"):
            torch.testing.assert_close(fast(x), block(x), rtol=1e-4, atol=1e-4)
    assert "a parameter changed" in caplog.text


def test_dynamo_backend_leaves_what_it_cannot_take_to_pytorch(caplog):
    class Unsupported(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(x).abs()  # an operator the TorchScript exporter cannot export

    x = torch.randn(4, 16)
    torch._dynamo.reset()
    fast = torch.compile(make(Unsupported()), backend=tilefuse.dynamo_backend, dynamic=False)
    with caplog.at_level(logging.WARNING, logger="tilefuse"), torch.no_grad():
        torch.testing.assert_close(fast(x), torch.fft.rfft(x).abs())
    assert "left to PyTorch" in caplog.text


def test_compile_takes_a_transformer_encoder_layer_even_under_no_grad():
    layer = make(torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, dropout=0.0))
    x = torch.randn(2, 16, 64)
    with torch.no_grad():  # where PyTorch's fused fast path, which no exporter takes, is on
        fast = tilefuse.compile(layer, (x,))
        torch.testing.assert_close(fast(x), layer(x), rtol=1e-4, atol=1e-4)
