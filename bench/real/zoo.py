"""A wide differential sweep: many architectures users export from PyTorch (torchvision
classifiers and segmenters, Hugging Face encoders and decoders), small and with random weights
(nothing is downloaded), each exported with the TorchScript exporter and run by tilefuse and by
ONNX Runtime on the same inputs. It answers two questions the eight-model suite cannot: does the
model import, and is tilefuse's answer right?

    PYTHONPATH=build/python build/peers-venv/bin/python bench/real/zoo.py [--only REGEX] \\
        [--dynamic] [--work-dir build/zoo] [--out bench/real/results/zoo.md]

Per model: import and run status, the worst |tilefuse - ORT| over the largest |ORT| (fused), and
the median latency of both engines at 2 threads (small models: a smoke number, not a benchmark).
A failure prints tilefuse's error message, which must name what it rejects.
"""
import argparse
import copy
import json
import pathlib
import re
import time
import traceback

import numpy as np
import torch
from torch import nn

SEED = 1234


class FirstOutput(nn.Module):
    """Calls a Hugging Face model by keyword and returns its first output tensor."""

    def __init__(self, model, names, **kwargs):
        super().__init__()
        self.model, self.names, self.kwargs = model, names, kwargs

    def forward(self, *args):
        out = self.model(**dict(zip(self.names, args)), return_dict=False, **self.kwargs)
        return out[0]


def image(side=64, batch=1):
    return lambda gen: (torch.randn(batch, 3, side, side, generator=gen),)


def tokens(vocab=256, seq=16, mask=True):
    def make(gen):
        ids = torch.randint(0, vocab, (1, seq), generator=gen)
        if not mask:
            return (ids,)
        m = torch.ones(1, seq, dtype=torch.int64)
        m[:, seq - seq // 4:] = 0
        return ids, m
    return make


def tv(name, side=64, **kwargs):
    def build():
        import torchvision.models as tvm
        return getattr(tvm, name)(weights=None, **kwargs)
    return name, build, image(side)


def tv_segmentation(name, side=64):
    class Out(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    def build():
        import torchvision.models.segmentation as seg
        return Out(getattr(seg, name)(weights=None, weights_backbone=None, num_classes=5, aux_loss=False))
    return name, build, image(side)


def hf(name, config_class, model_class, inputs, names, **config):
    def build():
        import transformers
        cfg = getattr(transformers, config_class)(**config)
        cfg._attn_implementation = "eager"
        return FirstOutput(getattr(transformers, model_class)(cfg), names)
    return name, build, inputs


TEXT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=256,
            max_position_embeddings=64)
TEXT_NAMES = ["input_ids", "attention_mask"]

MODELS = [
    tv("resnet18"), tv("resnext50_32x4d"), tv("wide_resnet50_2"), tv("vgg11_bn", side=224), tv("alexnet", side=224),
    tv("squeezenet1_1"), tv("densenet121"), tv("googlenet", aux_logits=False, init_weights=True),
    tv("inception_v3", side=96, aux_logits=False, init_weights=True), tv("shufflenet_v2_x1_0"),
    tv("mobilenet_v2"), tv("mobilenet_v3_small"), tv("mnasnet1_0"), tv("efficientnet_b0"), tv("efficientnet_v2_s"),
    tv("regnet_y_400mf"), tv("regnet_x_400mf"), tv("convnext_tiny"), tv("swin_t", side=64), tv("swin_v2_t", side=64),
    tv("vit_b_16", side=32, image_size=32), tv("maxvit_t", side=64),
    tv_segmentation("lraspp_mobilenet_v3_large"), tv_segmentation("deeplabv3_mobilenet_v3_large"),
    tv_segmentation("fcn_resnet50"),
    hf("distilbert", "DistilBertConfig", "DistilBertModel", tokens(), TEXT_NAMES, dim=64, n_layers=2, n_heads=4,
       hidden_dim=128, vocab_size=256, max_position_embeddings=64),
    hf("roberta", "RobertaConfig", "RobertaModel", tokens(), TEXT_NAMES, **TEXT),
    hf("albert", "AlbertConfig", "AlbertModel", tokens(), TEXT_NAMES, embedding_size=32, **TEXT),
    hf("electra", "ElectraConfig", "ElectraModel", tokens(), TEXT_NAMES, embedding_size=32, **TEXT),
    hf("deberta_v2", "DebertaV2Config", "DebertaV2Model", tokens(), TEXT_NAMES, **TEXT),
    hf("mobilebert", "MobileBertConfig", "MobileBertModel", tokens(), TEXT_NAMES, hidden_size=64,
       num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=256, embedding_size=32,
       intra_bottleneck_size=32, true_hidden_size=32, max_position_embeddings=64),
    hf("opt", "OPTConfig", "OPTModel", tokens(), TEXT_NAMES, hidden_size=64, num_hidden_layers=2,
       num_attention_heads=4, ffn_dim=128, vocab_size=256, max_position_embeddings=64, word_embed_proj_dim=64),
    hf("gpt_neo", "GPTNeoConfig", "GPTNeoModel", tokens(), TEXT_NAMES, hidden_size=64, num_layers=2, num_heads=4,
       vocab_size=256, max_position_embeddings=64, attention_types=[[["global", "local"], 1]], window_size=8),
    hf("bloom", "BloomConfig", "BloomModel", tokens(), TEXT_NAMES, hidden_size=64, n_layer=2, n_head=4,
       vocab_size=256),
    hf("mistral", "MistralConfig", "MistralModel", tokens(), TEXT_NAMES, hidden_size=64, intermediate_size=128,
       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
       max_position_embeddings=64, sliding_window=8),
    hf("qwen2", "Qwen2Config", "Qwen2Model", tokens(), TEXT_NAMES, hidden_size=64, intermediate_size=128,
       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=256, max_position_embeddings=64),
    hf("phi", "PhiConfig", "PhiModel", tokens(), TEXT_NAMES, hidden_size=64, intermediate_size=128,
       num_hidden_layers=2, num_attention_heads=4, vocab_size=256, max_position_embeddings=64),
    hf("gemma", "GemmaConfig", "GemmaModel", tokens(), TEXT_NAMES, hidden_size=64, intermediate_size=128,
       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, head_dim=16, vocab_size=256,
       max_position_embeddings=64),
    hf("t5_encoder", "T5Config", "T5EncoderModel", tokens(), TEXT_NAMES, d_model=64, d_kv=16, d_ff=128,
       num_layers=2, num_heads=4, vocab_size=256),
    hf("bart", "BartConfig", "BartModel", tokens(mask=False), ["input_ids"], d_model=64, encoder_layers=1,
       decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
       decoder_ffn_dim=128, vocab_size=256, max_position_embeddings=64),
    hf("wav2vec2", "Wav2Vec2Config", "Wav2Vec2Model", lambda gen: (torch.randn(1, 4000, generator=gen),),
       ["input_values"], hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
       conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
       num_conv_pos_embedding_groups=4),
    hf("swin_hf", "SwinConfig", "SwinModel", image(64), ["pixel_values"], image_size=64, patch_size=4,
       embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4),
    hf("deit", "DeiTConfig", "DeiTModel", image(32), ["pixel_values"], hidden_size=64, num_hidden_layers=2,
       num_attention_heads=4, intermediate_size=128, image_size=32, patch_size=8),
    hf("beit", "BeitConfig", "BeitModel", image(32), ["pixel_values"], hidden_size=64, num_hidden_layers=2,
       num_attention_heads=4, intermediate_size=128, image_size=32, patch_size=8,
       use_relative_position_bias=True),
    hf("dinov2", "Dinov2Config", "Dinov2Model", image(32), ["pixel_values"], hidden_size=64, num_hidden_layers=2,
       num_attention_heads=4, mlp_ratio=2, image_size=32, patch_size=8),
    hf("segformer", "SegformerConfig", "SegformerModel", image(64), ["pixel_values"], num_encoder_blocks=2,
       depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], num_attention_heads=[1, 2], patch_sizes=[7, 3],
       strides=[4, 2], mlp_ratios=[2, 2]),
    hf("mobilevit", "MobileViTConfig", "MobileViTModel", image(64), ["pixel_values"], image_size=64,
       hidden_sizes=[32, 40, 48], neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64]),
    hf("convnextv2", "ConvNextV2Config", "ConvNextV2Model", image(64), ["pixel_values"], hidden_sizes=[16, 32],
       depths=[1, 1], num_stages=2),
    hf("clip_text", "CLIPTextConfig", "CLIPTextModel", tokens(), TEXT_NAMES, hidden_size=64, intermediate_size=128,
       num_hidden_layers=2, num_attention_heads=4, vocab_size=256, max_position_embeddings=64),
]


def run_times(run, repeats=20, warmup_runs=10, warmup_s=0.5):
    """Milliseconds of `repeats` timed runs after untimed ones (at least `warmup_runs`, for at
    least `warmup_s`). tilefuse's first runs on a cold cache decide and record things (the
    SuperKernel's choice, a symbolic shape's kernels) that later runs only read: timed after one
    run, a 6 us graph measured 0.27 ms."""
    start, done = time.perf_counter(), 0
    while done < warmup_runs or time.perf_counter() - start < warmup_s:
        run()
        done += 1
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def median_ms(run, repeats=20, warmup_runs=10, warmup_s=0.5):
    """The median of run_times."""
    return float(np.median(run_times(run, repeats, warmup_runs, warmup_s)))


def wake_zero_weights(module):
    """Draws weight matrices that are initialised to zero (torchvision's ViT head, zero-init
    residual branches): left at zero, the output would be the bias alone, whatever the input."""
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for p in module.parameters():
            if p.dim() >= 2 and not p.any():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.02)


def calibrate_batch_norms(module, make_inputs):
    """Gives every BatchNorm the statistics of real activations, as training would.

    Random weights with the default running statistics (mean 0, variance 1) let activations
    shrink layer after layer: GoogLeNet's features reach 1e-11 and its logits are the final
    bias alone, so any engine "agrees" with any other. Statistics gathered from four inputs in
    train mode keep every layer at unit scale."""
    norms = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a plain average over the calibration batch
    samples = [make_inputs(torch.Generator().manual_seed(SEED + 100 + k)) for k in range(4)]
    batch = tuple(torch.cat(parts) for parts in zip(*samples))
    module.train()
    with torch.no_grad():
        module(*batch)
    module.eval()


def unbatched(make_inputs):
    """Positions of the inputs without a batch dim (indices, tables): a --dynamic run keeps the
    first sample's. Set as an attribute of make_inputs; none by default."""
    return getattr(make_inputs, "unbatched", set())


def sample_feeds(make_inputs, names, seeds):
    """The inputs of the given samples, stacked along the batch."""
    samples = [make_inputs(torch.Generator().manual_seed(seed)) for seed in seeds]
    fixed = unbatched(make_inputs)
    return {n: (parts[0] if i in fixed else torch.cat(parts)).numpy()
            for i, (n, parts) in enumerate(zip(names, zip(*samples)))}


def insensitive(session, feeds, want, other):
    """True when the reference output does not move with the input: then agreement proves nothing."""
    other = {n: other[n] for n in feeds}
    moved = np.max(np.abs(session.run(None, other)[0].astype(np.float64) - want))
    return moved <= 1e-3 * max(float(np.max(np.abs(want))), 1e-30)


def float64_answer(module, feeds, names):
    """The module's first output computed in float64 by PyTorch: the truth both engines' f32
    answers are measured against (None where a model does not run in float64)."""
    try:
        wide = copy.deepcopy(module).double()
        args = [torch.from_numpy(feeds[n]) for n in names]
        args = [a.double() if a.is_floating_point() else a for a in args]
        with torch.no_grad():
            out = wide(*args)
        return (out[0] if isinstance(out, (tuple, list)) else out).numpy()
    except Exception:  # e.g. an op without a float64 kernel
        return None


def relative_error(got, want, scale):
    if got.shape != want.shape:
        return float("inf")
    return float(np.max(np.abs(got.astype(np.float64) - want))) / scale


def inductor_ms(module, feeds, names, threads):
    """TorchInductor's median time (torch.compile, PyTorch's own CPU code generator) on `threads`
    threads, or None where it does not compile the module. Its compile happens in the warm-up."""
    args = [torch.from_numpy(feeds[n]) for n in names]
    torch.set_num_threads(threads)
    try:
        compiled = torch.compile(module)
        with torch.no_grad():
            return median_ms(lambda: compiled(*args))
    except Exception as e:  # Inductor's failure, not ours
        print(f"inductor: {' '.join(str(e).split())[:200]}", flush=True)
        return None
    finally:
        torch.set_num_threads(1)


def export(module, make_inputs, path, dynamic, output_batch=True):
    """Exports `module` on the first sample to `path` (TorchScript exporter, opset 17); `dynamic`:
    a symbolic batch (and sequence, for token inputs). Returns the input names."""
    args = make_inputs(torch.Generator().manual_seed(SEED))
    names = [f"input_{i}" for i in range(len(args))]
    axes = None
    if dynamic:
        fixed = unbatched(make_inputs)
        axes = {n: ({0: "batch", 1: "seq"} if a.dtype == torch.int64 and a.dim() > 1 else {0: "batch"})
                for i, (n, a) in enumerate(zip(names, args)) if i not in fixed}
        if output_batch:  # else the exporter names the output's dims (a reduction over the batch has none)
            axes["output"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(module, args, str(path), dynamo=False, opset_version=17, input_names=names,
                          output_names=["output"], dynamic_axes=axes)
    return names


def check(name, build, make_inputs, work, threads, dynamic, output_batch=True, inductor=False):
    import onnxruntime as ort
    import tilefuse
    row = {"model": name}
    torch.manual_seed(SEED)
    try:
        module = build()
        wake_zero_weights(module)
        calibrate_batch_norms(module, make_inputs)
        module.eval()
    except Exception as e:  # the model's own failure at this size, not ours
        row.update(status="model failed", error=str(e).splitlines()[0][:200])
        return row
    path = work / f"{name}{'_dynamic' if dynamic else ''}.onnx"
    try:
        names = export(module, make_inputs, path, dynamic, output_batch)
    except Exception as e:  # the exporter's failure, not ours
        row.update(status="export failed", error=str(e).splitlines()[0][:200])
        return row
    seeds = [SEED + k for k in range(3 if dynamic else 1)]
    full = sample_feeds(make_inputs, names, seeds)
    # The reference answer from a session whose pool does not spin after its runs: a spinning
    # pool would hold the cores while tilefuse is timed. ORT is timed last, in its own session.
    quiet = ort.SessionOptions()
    quiet.intra_op_num_threads = threads
    quiet.add_session_config_entry("session.intra_op.allow_spinning", "0")
    reference = ort.InferenceSession(str(path), quiet, providers=["CPUExecutionProvider"])
    feeds = {i.name: full[i.name] for i in reference.get_inputs()}  # unused inputs are dropped by the exporter
    want = reference.run(None, feeds)[0]
    if insensitive(reference, feeds, want, sample_feeds(make_inputs, names, [s + 7 for s in seeds])):
        row.update(status="degenerate", error="the reference output does not depend on the input")
        return row
    del reference
    try:
        session = tilefuse.InferenceSession(str(path), threads=threads)
        got = session.run(None, feeds)[0]
        tilefuse_ms = median_ms(lambda: session.run(None, feeds))
    except Exception as e:
        row.update(status="tilefuse failed", error=" ".join(str(e).split())[:300])
        return row
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    ort_session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    # f32 rounding grows with depth: a deep network with trained-like statistics moves by 1e-4
    # between two correct engines. So each is measured against the float64 truth, and tilefuse
    # passes within 1e-4 of it or within 4x ONNX Runtime's own error.
    scale = max(float(np.max(np.abs(want))), 1e-30)
    err = relative_error(got, want, scale)
    row.update(error_vs_ort=err, shape=list(want.shape))
    ort_ms = median_ms(lambda: ort_session.run(None, feeds))
    del ort_session
    if inductor:
        row["inductor_ms"] = inductor_ms(module, full, names, threads)
    truth = float64_answer(module, full, names)  # after the timings: PyTorch's pool may spin too
    if truth is not None:
        row.update(error_vs_f64=relative_error(got, truth, scale), ort_error_vs_f64=relative_error(want, truth, scale))
        ok = row["error_vs_f64"] <= max(1e-4, 4 * row["ort_error_vs_f64"])
    else:
        ok = err < 1e-4
    row.update(status="ok" if ok else "WRONG", tilefuse_ms=tilefuse_ms, ort_ms=ort_ms)
    return row


def write_markdown(rows, out, threads, dynamic, name="zoo"):
    shapes = "a symbolic batch fed 3 samples (`--dynamic`)" if dynamic else "static shapes"
    lines = [f"# {name.capitalize()} sweep: import and correctness against ONNX Runtime ({time.strftime('%Y-%m-%d')}, "
             f"{threads} threads, TorchScript exporter, opset 17, {shapes}, random weights)", "",
             f"Command: `PYTHONPATH=build/python:bench/real build/peers-venv/bin/python bench/real/{name}.py"
             f"{' --dynamic' if dynamic else ''}`. Errors: worst "
             "|difference| / largest |ORT output| of the first output, fused mode; f64: PyTorch's answer in "
             "float64. ok: tilefuse within 1e-4 of f64 or within 4x ORT's own error. Small models: the times "
             "are a smoke check, not a benchmark.", "",
             "| model | status | tilefuse vs f64 | ORT vs f64 | tilefuse vs ORT | tilefuse ms | ORT ms | message |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        err = " | ".join(f"{r[k]:.1e}" if k in r else "-" for k in ("error_vs_f64", "ort_error_vs_f64", "error_vs_ort"))
        t = f"{r['tilefuse_ms']:.3f}" if "tilefuse_ms" in r else "-"
        o = f"{r['ort_ms']:.3f}" if "ort_ms" in r else "-"
        lines.append(f"| {r['model']} | {r['status']} | {err} | {t} | {o} | {r.get('error', '')} |")
    pathlib.Path(out).write_text("\n".join(lines) + "\n")


def main(models=MODELS, name="zoo", doc=__doc__, output_batch=True, write=write_markdown):
    """Checks and times `models`; `write(rows, out, threads, dynamic, name)` writes the table."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=".", help="regex over model names")
    ap.add_argument("--work-dir", default=f"build/{name}")
    ap.add_argument("--out", help=f"default bench/real/results/{name}.md, or {name}_dynamic.md with --dynamic")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dynamic", action="store_true",
                    help="export a symbolic batch (and sequence for token inputs) and feed a batch of 3")
    ap.add_argument("--inductor", action="store_true", help="time TorchInductor (torch.compile) too")
    args = ap.parse_args()
    # PyTorch builds, exports and answers in float64 on one thread: its OpenMP workers would
    # spin after each of those and take the cores from the engines being timed.
    torch.set_num_threads(1)
    # nn.MultiheadAttention's inference fast path is one fused op the exporter cannot write
    # (ViT-B/16 failed on it); the plain path exports as MatMul, Softmax and friends.
    torch.backends.mha.set_fastpath_enabled(False)
    work = pathlib.Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for model, build, make_inputs in models:
        if not re.search(args.only, model):
            continue
        try:
            row = check(model, build, make_inputs, work, args.threads, args.dynamic, output_batch, args.inductor)
        except Exception as e:
            row = {"model": model, "status": "harness failed", "error": repr(e)[:200]}
            traceback.print_exc()
        print(json.dumps(row), flush=True)
        rows.append(row)
    (work / f"{name}.json").write_text(json.dumps(rows, indent=1))
    out = args.out or f"bench/real/results/{name}{'_dynamic' if args.dynamic else ''}.md"
    write(rows, out, args.threads, args.dynamic, name)


if __name__ == "__main__":
    main()
