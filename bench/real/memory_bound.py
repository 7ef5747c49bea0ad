"""Memory-bound graph shapes at the sizes models run them, timed against ONNX Runtime and
TorchInductor: the kinds of model issue 13 is judged on (reductions over several axes, one
tensor read by several consumers, views between ops, masks, gathers, integer and f64 math,
norms and activations). Where patterns.py checks that each shape runs and is right on tiny
tensors, this sweep asks whether it runs at memory speed: each input is megabytes, so the time
is the bytes moved, not the launch.

    PYTHONPATH=build/python:bench/real build/peers-venv/bin/python bench/real/memory_bound.py \\
        [--only REGEX] [--dynamic] [--inductor] [--work-dir build/memory_bound] [--out FILE]

Same harness as zoo.py (tilefuse and ONNX Runtime each against PyTorch's float64 answer, fused
mode); the table adds TorchInductor's time (`--inductor`) and both peers' time over tilefuse's.
"""
import pathlib
import time

import torch
import torch.nn.functional as F
from torch import nn

import zoo
from patterns import bools, floats, ints, pattern

B, S, D = 8, 512, 512         # [batch, rows, cols]: 8 MiB of f32
X = floats(B, S, D)
COLS = floats(B, 512, 1024)  # column statistics: the f32[4096, 1024] as 8 blocks of 512 rows
IMG = floats(B, 64, 64, 64)  # NCHW maps
HEADS = floats(B, 8, 128, 128)  # attention scores [batch, heads, queries, keys]
VOCAB, HIDDEN, SEQ = 30522, 768, 512

MEMORY_BOUND = [
    # Reductions over several axes.
    pattern("sum_mean_rows_axis", lambda m, x: x.sum(1) + x.mean(1), COLS),
    pattern("mean_axes02", lambda m, x: x.mean((0, 2), keepdim=True) * x, X),
    pattern("var_middle", lambda m, x: x.var(1, keepdim=True) + x, X),
    pattern("amax_subtract", lambda m, x: x - x.amax(1, keepdim=True), X),
    pattern("softmax_axis1", lambda m, x: x.softmax(1), X),
    pattern("logsumexp_last", lambda m, x: torch.logsumexp(x, dim=-1), X),
    pattern("l2_normalize", lambda m, x: F.normalize(x, dim=-1), X),
    pattern("subtract_global_mean", lambda m, x: x - x.mean(), X),
    # One tensor read by several consumers.
    pattern("shared_row_stats", lambda m, x: x.sum(-1, keepdim=True) + x.amax(-1, keepdim=True) * x.exp(), X),
    pattern("shared_column_stats", lambda m, x: (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + 1e-3), COLS),
    pattern("two_branches", lambda m, x: x.sigmoid() * x.relu().sum(-1, keepdim=True), X),
    # Views between ops.
    pattern("reshape_between", lambda m, x: torch.relu(x * 2).reshape(x.shape[0], -1, 256).softmax(-1), X),
    pattern("transpose_between", lambda m, x: (x.transpose(1, 2) + 1).sigmoid().sum(1), X),
    pattern("permute_materialised", lambda m, x: x.permute(0, 2, 1).contiguous() * 3, X),
    pattern("split_heads", lambda m, x: (x.reshape(x.shape[0], S, 8, 64).transpose(1, 2) * 0.125 + 1).tanh(), X),
    pattern("geglu_chunk", lambda m, x: (lambda a, b: a * F.gelu(b))(*x.chunk(2, -1)), X),
    pattern("slices_with_steps", lambda m, x: x[:, 1::2, ::2] * x[:, ::2, 1::2].exp(), X),
    pattern("cat_last", lambda m, x: torch.cat([x, x.exp()], -1) * 2, X),
    pattern("pad_then_add", lambda m, x: F.pad(x, (1, 1, 1, 1))[:, 1:, 1:] * 2, X),
    # Masks.
    pattern("masked_fill_softmax", lambda m, x, b: x.masked_fill(b, -1e4).softmax(-1), X, bools(B, S, D)),
    pattern("attention_mask_expansion", lambda m, s, mask: (s / 8 + (1.0 - mask[:, None, None, :].float())
            * torch.finfo(torch.float32).min).softmax(-1), HEADS, ints(2, B, 128)),
    pattern("triangles_of_values", lambda m, x: torch.triu(x, 1) + torch.tril(x, -2) * 0.5, X),
    pattern("causal_mask_softmax", lambda m, s: s.masked_fill(torch.ones(128, 128, dtype=torch.bool).triu(1),
            float("-inf")).softmax(-1), HEADS),
    pattern("where_broadcast", lambda m, x: torch.where(x > 0, x, x.mean(-1, keepdim=True)), X),
    # Gathers.
    pattern("embedding_positions_mask", lambda m, ids, mask: (m["emb"](ids) + m["pos"](torch.arange(ids.shape[1])))
            * mask.unsqueeze(-1).float(), ints(VOCAB, 4, SEQ), ints(2, 4, SEQ),
            layers={"emb": lambda: nn.Embedding(VOCAB, HIDDEN), "pos": lambda: nn.Embedding(SEQ, HIDDEN)}),
    pattern("index_select_columns", lambda m, x, i: x.index_select(2, i) * 2, X, ints(D, 256), unbatched=[1]),
    pattern("gather_along_last", lambda m, x, i: torch.gather(x, 2, i), X, ints(D, B, S, 128)),
    pattern("take_rows", lambda m, x, i: x[:, i] + 1, X, ints(S, 256), unbatched=[1]),
    # Integer, boolean and float64 math.
    pattern("integer_math", lambda m, i: (i * 3 + 7) // 2 - torch.remainder(i, 5), ints(1000, B, S, D)),
    pattern("integer_row_sums", lambda m, i: i.sum(-1), ints(1000, B, S, D)),
    pattern("bool_logic", lambda m, x: ((x > 0) & (x < 1) | (x < -2)).float(), X),
    pattern("float64_chain", lambda m, x: (x.double().exp() * 1e-3 + x.double() ** 2).sum(-1), X),
    # Norms and activations.
    pattern("layer_norm", lambda m, x: m["ln"](x), X, layers={"ln": lambda: nn.LayerNorm(D)}),
    pattern("rms_norm", lambda m, x: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * 1.5, X),
    pattern("group_norm", lambda m, x: m["gn"](x), IMG, layers={"gn": lambda: nn.GroupNorm(8, 64)}),
    pattern("batch_norm_relu", lambda m, x: m["bn"](x).relu(), IMG, layers={"bn": lambda: nn.BatchNorm2d(64)}),
    pattern("gelu_tanh", lambda m, x: F.gelu(x, approximate="tanh"), X),
    pattern("bias_gelu", lambda m, x, b: F.gelu(x + b), X, floats(D), unbatched=[1]),
    pattern("silu_mul", lambda m, x, y: F.silu(x) * y, X, X),
]


def write_markdown(rows, out, threads, dynamic, name):
    shapes = "a symbolic batch fed 3 samples (`--dynamic`)" if dynamic else "static shapes"
    lines = [f"# Memory-bound sweep ({time.strftime('%Y-%m-%d')}, {threads} threads, TorchScript exporter, "
             f"opset 17, {shapes})", "",
             f"Command: `PYTHONPATH=build/python:bench/real build/peers-venv/bin/python bench/real/{name}.py"
             f"{' --dynamic' if dynamic else ''} --inductor`. Errors as in `zoo.md` (ok: within 1e-4 of "
             "float64 or within 4x ONNX Runtime's own error). x ORT, x Inductor: their median time over "
             "tilefuse's (above 1: tilefuse is faster).", "",
             "| model | status | tilefuse vs f64 | ORT vs f64 | tilefuse ms | ORT ms | Inductor ms | x ORT | x Inductor | message |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        err = " | ".join(f"{r[k]:.1e}" if k in r else "-" for k in ("error_vs_f64", "ort_error_vs_f64"))
        t, o, i = (r.get(k) for k in ("tilefuse_ms", "ort_ms", "inductor_ms"))
        ms = " | ".join(f"{v:.3f}" if v else "-" for v in (t, o, i))
        ratios = " | ".join(f"{v / t:.2f}" if v and t else "-" for v in (o, i))
        lines.append(f"| {r['model']} | {r['status']} | {err} | {ms} | {ratios} | {r.get('error', '')} |")
    pathlib.Path(out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    zoo.main(MEMORY_BOUND, "memory_bound", __doc__, output_batch=False, write=write_markdown)
