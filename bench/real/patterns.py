"""The graph shapes users write, one small PyTorch module each, exported and run by tilefuse and
by ONNX Runtime on the same inputs, both measured against PyTorch's float64 answer (the zoo's
harness, bench/real/zoo.py). Where the zoo asks "does this architecture run, and right?", this
sweep asks it of the pieces architectures are made of: reductions over every axis, views and
index ops between computations, masks, gathers, integer and boolean arithmetic, broadcasting
corners, normalisations, activations, windows and resampling.

    PYTHONPATH=build/python build/peers-venv/bin/python bench/real/patterns.py [--only REGEX] \\
        [--dynamic] [--work-dir build/patterns] [--out bench/real/results/patterns.md]

`--dynamic` exports dim 0 of every batched input as a symbol and feeds three samples stacked.
A failure prints tilefuse's error message, which must name what it rejects.
"""
import torch
import torch.nn.functional as F
from torch import nn

import zoo


class Pattern(nn.Module):
    """forward(*inputs) = fn(self, *inputs); `layers` are its submodules (weights)."""

    def __init__(self, fn, layers):
        super().__init__()
        self.fn = fn
        self.layers = nn.ModuleDict(layers)

    def forward(self, *inputs):
        return self.fn(self.layers, *inputs)


def floats(*shape, low=-3.0, high=3.0):
    return lambda gen: torch.rand(*shape, generator=gen) * (high - low) + low


def ints(high, *shape):
    return lambda gen: torch.randint(0, high, shape, generator=gen)


def bools(*shape):
    return lambda gen: torch.rand(*shape, generator=gen) < 0.5


def pattern(name, fn, *inputs, layers=None, unbatched=()):
    """`inputs` make the example inputs; `unbatched`: positions without a batch dim."""
    def build():
        return Pattern(fn, {k: make() for k, make in (layers or {}).items()})

    def make_inputs(gen):
        return tuple(make(gen) for make in inputs)
    make_inputs.unbatched = set(unbatched)
    return name, build, make_inputs


X = floats(4, 6, 8)      # a [batch, rows, cols] activation
IMG = floats(2, 4, 9, 9)  # a small NCHW map
GRID = floats(2, 5, 7, 2, low=-1.3, high=1.3)  # where GridSample reads IMG, beyond its edges too

PATTERNS = [
    # Reductions over every axis set, kept and dropped.
    pattern("sum_axis0", lambda m, x: x.sum(0), X),
    pattern("mean_axis1_keepdim", lambda m, x: x.mean(1, keepdim=True) * x, X),
    pattern("amax_axes02", lambda m, x: x.amax((0, 2)), X),
    pattern("amin_last", lambda m, x: x.amin(-1), X),
    pattern("prod_middle", lambda m, x: (x * 0.5).prod(1), X),
    pattern("var_std", lambda m, x: x.var(-1) + x.std(1).sum(-1, keepdim=True), X),
    pattern("logsumexp", lambda m, x: torch.logsumexp(x, dim=1), X),
    pattern("l2_norm", lambda m, x: x / x.norm(dim=-1, keepdim=True), X),
    pattern("argmax_argmin", lambda m, x: x.argmax(1) * 10 + x.argmin(-1).sum(-1, keepdim=True), X),
    pattern("cumsum", lambda m, x: x.cumsum(1) - x.cumsum(-1), X),
    pattern("softmax_each_axis", lambda m, x: x.softmax(0) + x.softmax(1) + x.log_softmax(-1), X),
    pattern("sum_everything", lambda m, x: x - x.sum() / x.numel(), X),
    # One tensor read by several consumers (siblings).
    pattern("shared_input", lambda m, x: x.sum(-1, keepdim=True) + x.amax(-1, keepdim=True) * x.exp(), X),
    pattern("shared_column_stats", lambda m, x: (x - x.mean(0)) / (x.std(0) + 1e-3), X),
    # Views between computations.
    pattern("reshape_between", lambda m, x: torch.relu(x * 2).reshape(x.shape[0], -1).softmax(-1), X),
    pattern("transpose_between", lambda m, x: (x.transpose(1, 2) + 1).sigmoid().sum(1), X),
    pattern("permute_contiguous", lambda m, x: x.permute(2, 0, 1).contiguous() * 3, X),
    pattern("flatten_unsqueeze", lambda m, x: x.flatten(1).unsqueeze(1).squeeze(1).tanh(), X),
    pattern("expand_repeat", lambda m, x: x[:, :1, :].expand(-1, 6, -1) + x.repeat(1, 1, 2)[..., ::2], X),
    pattern("chunk_split", lambda m, x: torch.stack(x.chunk(2, -1), 0).sum(0) * x.split([2, 4], 1)[1].mean(), X),
    pattern("slices_with_steps", lambda m, x: x[:, 1::2, ::3] * x[:, -3:, 2:5].sum(), X),
    pattern("flip_roll", lambda m, x: x.flip(-1) + torch.roll(x, 2, dims=1), X),
    pattern("cat_stack", lambda m, x: torch.cat([x, x.exp(), -x], 1).sum(1, keepdim=True) + torch.stack([x, x], -1).mean(-1), X),
    pattern("pad_modes", lambda m, x: F.pad(x, (1, 2)) [..., :8] + F.pad(x.unsqueeze(1), (1, 1, 2, 0), mode="reflect")
            [:, 0, 2:, 1:-1] + F.pad(x.unsqueeze(1), (2, 2, 0, 0), mode="replicate")[:, 0, :, 2:-2], X),
    # Index ops: gathers, masks, embeddings, one-hots.
    pattern("index_select", lambda m, x, i: x.index_select(2, i) * 2, X, ints(8, 5), unbatched=[1]),
    pattern("gather_along", lambda m, x, i: torch.gather(x, 2, i), X, ints(8, 4, 6, 3)),
    pattern("take_rows", lambda m, x, i: x[:, i] + 1, X, ints(6, 3), unbatched=[1]),
    pattern("negative_index", lambda m, x: x[:, -1] - x[:, 0], X),
    pattern("masked_fill", lambda m, x, b: x.masked_fill(b, -1e4).softmax(-1), X, bools(4, 6, 8)),
    pattern("where_broadcast", lambda m, x: torch.where(x > 0, x, x.mean(-1, keepdim=True)), X),
    pattern("causal_mask", lambda m, x: (x @ x.transpose(1, 2)).masked_fill(
        torch.ones(6, 6, dtype=torch.bool).triu(1), float("-inf")).softmax(-1), X),
    pattern("triangles_of_values", lambda m, x: torch.triu(x, 1) + torch.tril(x, -2) * 0.5 + torch.triu(x.int(), -1), X),
    pattern("embedding_positions_mask", lambda m, ids, mask: (m["emb"](ids) + m["pos"](torch.arange(ids.shape[1])))
            * mask.unsqueeze(-1).float(),
            ints(50, 2, 7), ints(2, 2, 7), layers={"emb": lambda: nn.Embedding(50, 16), "pos": lambda: nn.Embedding(7, 16)}),
    pattern("attention_mask_expansion", lambda m, x, mask: ((x @ x.transpose(1, 2)) / 4 +
            (1.0 - mask[:, None, :].float()) * torch.finfo(torch.float32).min).softmax(-1) @ x, X, ints(2, 4, 6)),
    pattern("one_hot", lambda m, i: F.one_hot(i, 9).float() * 2 - 1, ints(9, 4, 5)),
    pattern("topk", lambda m, x: torch.topk(x, 3, dim=-1).values + torch.topk(x, 2, dim=1, largest=False).values.sum((1, 2))
            .reshape(-1, 1, 1) + torch.topk(x, 2, dim=0).indices.sum(), X),
    pattern("sort", lambda m, x: torch.sort(x, dim=-1, descending=True).values * 2, X),
    pattern("scatter_add_free_index_put", lambda m, x: torch.zeros_like(x).index_copy(2, torch.tensor([0, 3, 7]),
            x[..., :3].exp()) + x, X),
    # Integer, boolean and float64 arithmetic.
    pattern("integer_math", lambda m, i: (i * 3 + 7) // 2 - torch.remainder(i, 5) * i.sign(), ints(100, 4, 6)),
    pattern("integer_reductions", lambda m, i: i.sum(-1) + i.amax(1, keepdim=True).squeeze(1).sum(-1, keepdim=True), ints(100, 4, 6, 5)),
    pattern("bool_logic", lambda m, x: ((x > 0) & (x < 1) | (x < -2)).float() + (~(x > 0.5)).float() * 3, X),
    pattern("comparisons_to_ints", lambda m, x: (x > 0).long().sum(-1) + (x == x.round()).int().sum(-1), X),
    pattern("float64_chain", lambda m, x: (x.double().exp() * 1e-3 + x.double() ** 2).sum(-1), X),
    pattern("casts_round_trip", lambda m, x: (x * 10).int().float() / 10 + x.half().float(), X),
    pattern("arange_arithmetic", lambda m, x: x + torch.arange(8, dtype=torch.float32) * 0.1 - torch.arange(x.shape[1])
            .unsqueeze(-1), X),
    # Broadcasting corners.
    pattern("outer_broadcast", lambda m, a, b: a.unsqueeze(-1) * b.unsqueeze(-2) + a.unsqueeze(-1), floats(4, 5), floats(4, 7)),
    pattern("size_one_dims", lambda m, x, y: x + y, floats(4, 1, 8), floats(1, 6, 1), unbatched=[1]),
    pattern("scalar_tensors", lambda m, x: x * x.new_tensor(2.5) + torch.tensor(1.0) / (x.abs() + 1), X),
    pattern("pow_variants", lambda m, x: x ** 2 + x.abs() ** 0.5 + torch.pow(2.0, x) + x.abs().rsqrt().clamp(max=5), X),
    # Normalisations.
    pattern("layer_norm_two_axes", lambda m, x: m["ln"](x), X, layers={"ln": lambda: nn.LayerNorm([6, 8])}),
    pattern("rms_norm", lambda m, x: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * 1.5, X),
    pattern("group_norm", lambda m, x: m["gn"](x), IMG, layers={"gn": lambda: nn.GroupNorm(2, 4)}),
    pattern("instance_norm", lambda m, x: m["inn"](x), IMG, layers={"inn": lambda: nn.InstanceNorm2d(4, affine=True)}),
    pattern("batch_norm_eval", lambda m, x: m["bn"](x).relu(), IMG, layers={"bn": lambda: nn.BatchNorm2d(4)}),
    # Activations, each with its own export.
    pattern("activations", lambda m, x: F.gelu(x, approximate="tanh") + F.gelu(x) + F.silu(x) + F.mish(x) +
            F.softplus(x) + F.elu(x) + F.selu(x) + F.hardtanh(x) + F.leaky_relu(x, 0.2) + F.celu(x) +
            F.hardsigmoid(x) + F.hardswish(x) + F.logsigmoid(x) + F.softsign(x) + F.relu6(x), X),
    pattern("prelu", lambda m, x: m["p"](x), IMG, layers={"p": lambda: nn.PReLU(4, 0.3)}),
    pattern("clamp_bounds", lambda m, x: x.clamp(-1, 0.5) + x.clamp(min=0.2) + torch.clamp(x, max=-0.1), X),
    pattern("erf_trig", lambda m, x: torch.erf(x) + torch.sin(x) * torch.cos(x) + torch.atan(x) + torch.tanh(x) +
            torch.tan(x * 0.4), X),
    pattern("inverse_trig_in_domain", lambda m, x: torch.asin(x) * torch.acos(x),
            floats(4, 6, 8, low=-0.99, high=0.99)),
    pattern("logs_of_positives", lambda m, x: x.log() + x.log1p() + x.sqrt() + x.reciprocal(), floats(4, 6, 8, low=0.1, high=4)),
    # Products.
    pattern("batched_matmul_broadcast", lambda m, a, b: a @ b, floats(2, 3, 5, 8), floats(8, 4), unbatched=[1]),
    pattern("einsum_heads", lambda m, q, k: torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(-1), floats(2, 2, 5, 4), floats(2, 2, 5, 4)),
    pattern("einsum_projection_grouped", lambda m, x, w: torch.einsum("bshd,hdf->bsf", x, w).relu(), floats(2, 5, 3, 4),
            floats(3, 4, 6), unbatched=[1]),
    pattern("einsum_outer_and_sum", lambda m, a, b: (lambda o: o + torch.einsum("bij->bj", o)[:, None])(
            torch.einsum("bi,bj->bij", a, b)), floats(2, 5), floats(2, 3)),
    pattern("linear_3d_bias_gelu", lambda m, x: F.gelu(m["fc"](x)), X, layers={"fc": lambda: nn.Linear(8, 12)}),
    pattern("matrix_vector", lambda m, x, v: x @ v, X, floats(8), unbatched=[1]),
    # Windows and resampling.
    pattern("conv1d_dilated", lambda m, x: m["c"](x), floats(2, 4, 20), layers={"c": lambda: nn.Conv1d(4, 6, 3, dilation=2, padding=2)}),
    pattern("conv2d_groups_stride", lambda m, x: m["c"](x), IMG, layers={"c": lambda: nn.Conv2d(4, 8, 3, stride=2, groups=2)}),
    pattern("conv_transpose2d", lambda m, x: m["c"](x), IMG, layers={"c": lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1,
                                                                                                     output_padding=1)}),
    pattern("pools_ceil_mode", lambda m, x: F.max_pool2d(x, 2, ceil_mode=True) + F.avg_pool2d(x, 2, ceil_mode=True), IMG),
    pattern("adaptive_pools", lambda m, x: F.adaptive_avg_pool2d(x, 3) + F.adaptive_max_pool2d(x, 3), IMG),
    pattern("pixel_shuffle", lambda m, x: F.pixel_shuffle(x, 2) * 2, IMG),
    pattern("pixel_unshuffle", lambda m, x: F.pixel_unshuffle(x[..., :8, :8], 2) + 1, IMG),
    pattern("interpolate_modes", lambda m, x: F.interpolate(x, scale_factor=2, mode="nearest")[..., :9, :9] +
            F.interpolate(x, size=(9, 9), mode="bilinear", align_corners=True) +
            F.interpolate(x, size=(9, 9), mode="bilinear", align_corners=False), IMG),
    pattern("grid_sample", lambda m, x, grid: F.grid_sample(x, grid, align_corners=False), IMG, GRID),
    pattern("grid_sample_modes", lambda m, x, grid: F.grid_sample(x, grid, mode="nearest", padding_mode="border") +
            F.grid_sample(x, grid, mode="bicubic", padding_mode="reflection", align_corners=True) +
            F.grid_sample(x, grid, padding_mode="reflection"), IMG, GRID),
    # Layers users take whole from torch.nn.
    pattern("multihead_attention", lambda m, x: m["mha"](x, x, x, need_weights=False)[0], floats(4, 6, 16),
            layers={"mha": lambda: nn.MultiheadAttention(16, 4, batch_first=True)}),
    pattern("sdpa_causal", lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
            floats(2, 2, 6, 8), floats(2, 2, 6, 8), floats(2, 2, 6, 8)),
    pattern("lstm", lambda m, x: m["lstm"](x)[0], floats(3, 5, 8), layers={"lstm": lambda: nn.LSTM(8, 6, batch_first=True)}),
    pattern("gru_bidirectional", lambda m, x: m["gru"](x)[0], floats(3, 5, 8),
            layers={"gru": lambda: nn.GRU(8, 6, batch_first=True, bidirectional=True)}),
    # More of what models write by hand.
    pattern("max_with_indices", lambda m, x: x.max(1).values + x.max(-1, keepdim=True).indices.float().sum(1), X),
    pattern("cosine_similarity", lambda m, a, b: F.cosine_similarity(a, b, dim=-1), X, X),
    pattern("nan_to_num", lambda m, x: torch.nan_to_num(x.log(), nan=0.0, neginf=-5.0), X),
    pattern("clamp_tensor_bounds", lambda m, x, lo: torch.max(torch.min(x, lo + 1), lo), X, floats(8), unbatched=[1]),
    pattern("baddbmm", lambda m, b, x, y: torch.baddbmm(b, x, y, beta=0.5, alpha=2.0), floats(3, 4, 5), floats(3, 4, 6),
            floats(3, 6, 5)),
    pattern("meshgrid_positions", lambda m, x: x + torch.stack(torch.meshgrid(torch.arange(6.0), torch.arange(8.0),
            indexing="ij")).sum(0), X),
    pattern("unfold_patches", lambda m, x: x.unfold(2, 3, 3).unfold(3, 3, 3).sum((-1, -2)), IMG),
]

if __name__ == "__main__":
    zoo.main(PATTERNS, "patterns", __doc__, output_batch=False)
