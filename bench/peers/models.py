"""The PyTorch modules every engine runs, and their benchmark sizes.

One nn.Module feeds PyTorch eager, TorchInductor and (through torch.onnx.export) ONNX Runtime and
tilefuse, so all engines compute the same function. Parameters come from a fixed seed, so a worker
process that rebuilds a module gets bit-identical weights.

Inputs are drawn as `tilefuse bench` fills its own random inputs (floats uniform in [-1, 1), booleans
50/50, integers in [0, 4)): bench cannot read input files, and erf/tanh/exp kernels take data-dependent paths, so the
timed data of every engine must come from the same distribution.
"""
import dataclasses
import math

import torch
from torch import nn

PARAM_SEED = 1234
INPUT_SEED = 4321
LAYERNORM_EPS = 1e-5


# ---------------------------------------------------------------- modules

class ElementwiseChain(nn.Module):
    """The 12-op chain of scripts/make_example_models.py `add_elementwise_chain`, op for op:
    row ([H]), column ([S,1]) and scalar broadcasts, sigmoid/tanh/exp/log and two divisions."""

    def __init__(self, seq, hidden):
        super().__init__()
        self.register_buffer("row_scale", torch.empty(hidden).uniform_(0.5, 1.5))
        self.register_buffer("col_bias", torch.randn(seq, 1))
        self.register_buffer("row_floor", torch.empty(1, hidden).uniform_(-0.5, 0.0))
        self.register_buffer("col_div", torch.empty(seq, 1).uniform_(1.0, 2.0))

    def forward(self, x, y):
        t = torch.sigmoid(x * self.row_scale + self.col_bias) - 0.5
        t = torch.maximum(torch.tanh(t * x), self.row_floor)
        t = torch.log(torch.exp(t) / self.col_div + 1.0)
        return t * y


class BiasGelu(nn.Module):
    """Bias add then exact GELU: exported as Add, Div, Erf, Add, Mul, Mul."""

    def __init__(self, width):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(width))

    def forward(self, x):
        return nn.functional.gelu(x + self.bias)


def layer_norm(hidden):
    """nn.LayerNorm with non-trivial gamma/beta (opset 13 exports it decomposed, opset 17 as LayerNormalization)."""
    norm = nn.LayerNorm(hidden, eps=LAYERNORM_EPS)
    with torch.no_grad():
        norm.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
        norm.bias.copy_(0.1 * torch.randn(hidden))
    return norm


class ScaleMaskSoftmax(nn.Module):
    """Attention scores: scale, mask out with -inf where keep is False, softmax over keys."""

    def __init__(self, head_dim):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, scores, keep):
        return torch.softmax((scores * self.scale).masked_fill(~keep, float("-inf")), dim=-1)


class ColumnStats(nn.Module):
    """A sum and a mean over the outer axis (column reductions: memory is read in rows, results
    are kept per column), added so that the case has one output. The summed values are shifted
    away from zero: a sum of zero-mean values cancels, and its relative error says nothing."""

    def forward(self, x):
        return (x + 1.5).sum(dim=0) + x.mean(dim=0)


class ChannelNorm(nn.Module):
    """Batch normalisation as training computes it: per-channel mean and variance of an NCHW
    activation (reducing the batch and spatial axes around the kept channel axis), then the
    normalised activation."""

    def forward(self, x):
        mean = x.mean(dim=(0, 2, 3), keepdim=True)
        var = ((x - mean) * (x - mean)).mean(dim=(0, 2, 3), keepdim=True)
        return (x - mean) * torch.rsqrt(var + LAYERNORM_EPS)


class EmbedAndMask(nn.Module):
    """A transformer's prologue: token plus position embeddings (Gather), and the padding mask
    expanded to additive attention scores [B, 1, S, S] (Unsqueeze, Expand, Cast, Sub, Mul), here
    added to each token's mean embedding so that the case has one output."""

    def __init__(self, vocab, seq, hidden):
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(seq, hidden)

    def forward(self, ids, keep):
        batch, seq = ids.shape
        h = self.tokens(ids) + self.positions(torch.arange(seq).unsqueeze(0))
        mask = keep[:, None, None, :].expand(batch, 1, seq, seq).to(torch.float32)
        return h.mean(dim=-1)[:, None, :, None] + (1.0 - mask) * -10000.0


class ViewsBetweenOps(nn.Module):
    """Elementwise work with views between the ops, as attention code writes it: SiLU, a head
    split (view), a scale and shift per head, a slice of each head, and the heads moved forward."""

    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.register_buffer("scale", torch.empty(heads, 1).uniform_(0.5, 1.5))

    def forward(self, x):
        batch, seq, width = x.shape
        t = (torch.sigmoid(x) * x).view(batch, seq, self.heads, width // self.heads)
        t = t * self.scale + 1.0
        return t[..., : width // self.heads // 2].transpose(1, 2)


class IndexArithmetic(nn.Module):
    """Integer arithmetic as model code writes it on ids (bucketing: multiply, add, floor division
    and modulo of int64), and a padding mask from the same ids, applied as a float factor."""

    def forward(self, ids):
        return (((ids * 3 + 7) // 2) % 5).to(torch.float32) * (ids != 0)


class TransposeOut(nn.Module):
    """An activation, then its transpose materialised (a layout change between two layers)."""

    def forward(self, x):
        return (torch.sigmoid(x) * x).transpose(0, 1).contiguous() + 1.0


class GatherAlongAxis(nn.Module):
    """torch.gather along the last axis (each row picks entries by index), then a shift."""

    def forward(self, x, index):
        return torch.gather(x, 1, index) + 1.0


class GatedConcat(nn.Module):
    """Branches joined and split again, as gated and U-Net layers write them: two inputs concatenated
    on the channel axis, halved again (a GLU: sigmoid of one half times the other), then a border
    of zeros (F.pad)."""

    def forward(self, a, b):
        x = torch.cat([torch.relu(a), b * 0.5], dim=1)
        g, v = x.chunk(2, dim=1)
        return nn.functional.pad(torch.sigmoid(g) * v, (1, 1, 1, 1))


class ConcatRows(nn.Module):
    """Two branches joined along the first axis (torch.cat on dim 0: a batch built from parts),
    then an activation over the whole."""

    def forward(self, a, b):
        return torch.relu(torch.cat([torch.sigmoid(a), b * 2.0], dim=0)) + 1.0


class ConcatColumns(nn.Module):
    """Two branches joined along the last axis (torch.cat on dim -1: features side by side), then
    scaled."""

    def forward(self, a, b):
        return torch.cat([a * 3.0, b + 1.0], dim=-1) * 0.5


class RepeatRows(nn.Module):
    """x.repeat: the rows repeated (an ONNX Tile), then shifted."""

    def forward(self, x):
        return x.repeat(2, 1) + 1.0


class SplitProduct(nn.Module):
    """A projection-sized activation split in halves along its last axis (torch.split), the halves
    multiplied, as gated units do, plus a slice of a second input."""

    def forward(self, a, b):
        half = a.shape[1] // 2
        x, y = torch.split(a * 2.0, half, dim=1)
        return x * y + b[:, :half]


class IndexSelect(nn.Module):
    """Rows picked by index (index_select: a Gather on axis 0), then scaled and shifted."""

    def forward(self, x, rows):
        return x.index_select(0, rows) * 2.0 + 1.0


class MlpBlock(nn.Module):
    """Transformer MLP: MatMul+bias, GELU, MatMul+bias, residual add, LayerNorm."""

    def __init__(self, hidden, ffn):
        super().__init__()
        self.up = nn.Linear(hidden, ffn)
        self.down = nn.Linear(ffn, hidden)
        self.norm = nn.LayerNorm(hidden, eps=LAYERNORM_EPS)

    def forward(self, x):
        return self.norm(x + self.down(nn.functional.gelu(self.up(x))))


class Encoder(nn.Module):
    """nn.TransformerEncoderLayer (post-norm, ReLU) called as user code calls it; the TorchScript
    exporter fails on the bare layer ("argument 'is_causal' must be bool, not Tensor")."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(hidden, heads, dim_feedforward=ffn, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class LatencyChain(nn.Module):
    """30 chained small ops (10 x Mul by a row vector, Add a column vector, Tanh): per-launch
    overhead dominates, not bandwidth."""

    def __init__(self, side, links=10):
        super().__init__()
        self.scales = nn.ParameterList(torch.empty(side).uniform_(0.5, 1.5) for _ in range(links))
        self.shifts = nn.ParameterList(0.1 * torch.randn(side, 1) for _ in range(links))

    def forward(self, x):
        for scale, shift in zip(self.scales, self.shifts):
            x = torch.tanh(x * scale + shift)
        return x


# ---------------------------------------------------------------- cases

@dataclasses.dataclass
class Case:
    """One module at one size. `opsets` lists the ONNX exports (one table row each)."""
    model: str
    size: str
    make_module: object          # () -> nn.Module
    input_shapes: dict           # name -> (shape, torch dtype), in forward's argument order
    memory_bound: bool
    opsets: tuple = (17,)
    iters_factor: int = 1        # small cases run more iterations: their runs are short and noisier

    @property
    def id(self):
        return f"{self.model}-{self.size}"

    def build_module(self):
        torch.manual_seed(PARAM_SEED)
        return self.make_module().eval()

    def make_inputs(self):
        """Inputs drawn as tilefuse bench draws its own (see the module docstring)."""
        generator = torch.Generator().manual_seed(INPUT_SEED)
        inputs = {}
        for name, (shape, dtype) in self.input_shapes.items():
            if dtype == torch.bool:
                inputs[name] = torch.rand(shape, generator=generator) < 0.5
            elif dtype == torch.int64:
                inputs[name] = torch.randint(0, 4, shape, generator=generator)
            else:
                inputs[name] = torch.rand(shape, generator=generator) * 2 - 1
        return inputs


def f32(*shape):
    return (tuple(shape), torch.float32)


def elementwise_chain(size, batch, seq, hidden):
    return Case("elementwise_chain", size, lambda: ElementwiseChain(seq, hidden),
                {"x": f32(batch, seq, hidden), "y": f32(batch, 1, hidden)}, memory_bound=True, opsets=(13,))


def bias_gelu(size, rows, width):
    return Case("bias_gelu", size, lambda: BiasGelu(width), {"x": f32(rows, width)}, memory_bound=True, opsets=(13,))


def layernorm(size, rows, hidden):
    return Case("layernorm", size, lambda: layer_norm(hidden), {"x": f32(rows, hidden)},
                memory_bound=True, opsets=(13, 17))


def scale_mask_softmax(size, batch, heads, seq):
    return Case("scale_mask_softmax", size, lambda: ScaleMaskSoftmax(64),
                {"scores": f32(batch, heads, seq, seq), "keep": ((batch, 1, 1, seq), torch.bool)}, memory_bound=True)


def column_stats(size, rows, columns):
    return Case("column_stats", size, ColumnStats, {"x": f32(rows, columns)}, memory_bound=True, opsets=(13,))


def channel_norm(size, batch, channels, side):
    return Case("channel_norm", size, ChannelNorm, {"x": f32(batch, channels, side, side)}, memory_bound=True,
                opsets=(13,))


def embed_and_mask(size, batch, seq, hidden, vocab):
    return Case("embed_and_mask", size, lambda: EmbedAndMask(vocab, seq, hidden),
                {"ids": ((batch, seq), torch.int64), "keep": ((batch, seq), torch.bool)}, memory_bound=True)


def views_between_ops(size, batch, seq, width, heads):
    return Case("views_between_ops", size, lambda: ViewsBetweenOps(heads), {"x": f32(batch, seq, width)},
                memory_bound=True)


def index_arithmetic(size, rows, columns):
    return Case("index_arithmetic", size, IndexArithmetic, {"ids": ((rows, columns), torch.int64)}, memory_bound=True)


def transpose_out(size, rows, columns):
    return Case("transpose_out", size, TransposeOut, {"x": f32(rows, columns)}, memory_bound=True)


def gather_along_axis(size, rows, columns, picks):
    return Case("gather_along_axis", size, GatherAlongAxis,
                {"x": f32(rows, columns), "index": ((rows, picks), torch.int64)}, memory_bound=True)


def gated_concat(size, batch, channels, side):
    return Case("gated_concat", size, GatedConcat,
                {"a": f32(batch, channels, side, side), "b": f32(batch, channels, side, side)}, memory_bound=True)


def concat_rows(size, rows, columns):
    return Case("concat_rows", size, ConcatRows, {"a": f32(rows, columns), "b": f32(rows, columns)}, memory_bound=True)


def concat_columns(size, rows, columns):
    return Case("concat_columns", size, ConcatColumns, {"a": f32(rows, columns), "b": f32(rows, columns)}, memory_bound=True)


def repeat_rows(size, rows, columns):
    return Case("repeat_rows", size, RepeatRows, {"x": f32(rows, columns)}, memory_bound=True)


def split_product(size, rows, columns):
    return Case("split_product", size, SplitProduct, {"a": f32(rows, columns), "b": f32(rows, columns)}, memory_bound=True)


def index_select(size, rows, columns, picks):
    return Case("index_select", size, IndexSelect, {"x": f32(rows, columns), "rows": ((picks,), torch.int64)},
                memory_bound=True)


def mlp_block(size, batch, seq, hidden):
    return Case("mlp_block", size, lambda: MlpBlock(hidden, 4 * hidden), {"x": f32(batch, seq, hidden)},
                memory_bound=False)


def encoder_layer(size, batch, seq, hidden, heads):
    return Case("encoder_layer", size, lambda: Encoder(hidden, heads, 4 * hidden), {"x": f32(batch, seq, hidden)},
                memory_bound=False)


def latency_chain():
    return Case("latency_chain", "64x64", lambda: LatencyChain(64), {"x": f32(64, 64)}, memory_bound=False,
                iters_factor=50)


def small_cases():
    """Sizes that fit the L2 cache: launch and compute overhead, not bandwidth."""
    return [
        dataclasses.replace(elementwise_chain("small", 2, 128, 256), iters_factor=5),
        dataclasses.replace(bias_gelu("small", 256, 1024), iters_factor=5),
        dataclasses.replace(layernorm("small", 256, 1024), iters_factor=5),
        dataclasses.replace(scale_mask_softmax("small", 1, 4, 128), iters_factor=5),
        dataclasses.replace(column_stats("small", 256, 1024), iters_factor=5),
        dataclasses.replace(embed_and_mask("small", 1, 128, 256, 1000), iters_factor=5),
        dataclasses.replace(views_between_ops("small", 1, 128, 512, 8), iters_factor=5),
        dataclasses.replace(index_arithmetic("small", 256, 512), iters_factor=5),
        dataclasses.replace(transpose_out("small", 256, 512), iters_factor=5),
        dataclasses.replace(gather_along_axis("small", 256, 1024, 256), iters_factor=5),
        dataclasses.replace(gated_concat("small", 1, 16, 64), iters_factor=5),
        dataclasses.replace(index_select("small", 512, 1024, 256), iters_factor=5),
        dataclasses.replace(concat_rows("small", 128, 1024), iters_factor=5),
        dataclasses.replace(concat_columns("small", 128, 1024), iters_factor=5),
        dataclasses.replace(repeat_rows("small", 256, 1024), iters_factor=5),
        dataclasses.replace(split_product("small", 256, 1024), iters_factor=5),
        dataclasses.replace(mlp_block("small", 1, 128, 256), iters_factor=5),
        dataclasses.replace(encoder_layer("small", 2, 128, 256, 4), iters_factor=5),
        latency_chain(),
    ]


def large_cases():
    """64 MiB main input (and output) per memory-bound model: far beyond the caches, bandwidth-bound."""
    return [
        elementwise_chain("large", 32, 512, 1024),
        bias_gelu("large", 4096, 4096),
        layernorm("large", 16384, 1024),
        scale_mask_softmax("large", 4, 16, 512),
        column_stats("large", 4096, 4096),
        channel_norm("large", 32, 64, 90),
        embed_and_mask("large", 8, 512, 768, 32000),
        views_between_ops("large", 16, 1024, 1024, 16),
        index_arithmetic("large", 4096, 2048),
        transpose_out("large", 2048, 4096),
        gather_along_axis("large", 4096, 2048, 1024),
        gated_concat("large", 8, 64, 128),
        index_select("large", 8192, 2048, 4096),
        concat_rows("large", 8192, 1024),
        concat_columns("large", 8192, 1024),
        repeat_rows("large", 8192, 1024),
        split_product("large", 16384, 1024),
        mlp_block("large", 4, 256, 768),
        encoder_layer("large", 4, 256, 512, 8),
    ]


def all_cases(quick):
    """Quick mode (smoke test): the small sizes only."""
    return small_cases() if quick else small_cases() + large_cases()


def tensor_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)
