#!/usr/bin/env python3
"""Checks tilefuse against PyTorch on models written by PyTorch's own ONNX exporter.

This is what a new user does: build small PyTorch modules (LayerNorm, masked softmax, GELU, bias+GELU,
an MLP block, nn.TransformerEncoderLayer in eval mode), export them with torch.onnx.export at opsets
13 and 17 (static shapes, and a dynamic batch axis run at another batch size) with the TorchScript
exporter (dynamo=False), and with the dynamo exporter, torch.onnx.export's default since torch 2.9, at
its default opset and at opset 17; run each file with `tilefuse run --mode M --json` for M in reference, fused, unfused, and
compare tilefuse's .npy outputs with PyTorch's. ONNX Runtime, when installed, runs the same file as
a baseline row: it shows how far an independent runtime is from PyTorch on the same export.

Usage:
  scripts/check_pytorch_exports.py [--tilefuse build/tilefuse] [--only REGEX] [--modes reference,fused]
                                   [--work-dir DIR] [--rtol 1e-4] [--abs-floor 1e-2]

Python: run it with any python3. When that interpreter lacks torch/onnx/numpy, the script creates
the virtual env --venv (default $TILEFUSE_TORCH_VENV or ~/.cache/tilefuse/torch-venv) with
`python3 -m venv`, installs bench/peers/requirements.txt from PyPI into it, and re-runs itself there.

Error measure, per output: max abs err = max |t - p|; max rel err = max |t - p| / max(|p|, abs_floor),
so elements whose PyTorch value is below the floor are judged on absolute error (a relative error of
a value that is nearly zero says nothing; with the defaults, |t - p| <= 1e-6 there, a few float32 ulps
of an O(1) activation). An output passes when max rel err <= rtol, its shape matches and NaNs appear
exactly where PyTorch has them; or ("ok f64") when it is within rtol of PyTorch's float64 result, where
PyTorch's float32 arithmetic is the less exact one. Exit status: 0 when every tilefuse row passes and
every export succeeded, 1 otherwise.
Everything (models, inputs, outputs, results.json, a per-run kernel cache) stays under --work-dir.
"""
import argparse
import contextlib
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIREMENTS = os.path.join(REPO, "bench", "peers", "requirements.txt")
DEFAULT_VENV = os.environ.get("TILEFUSE_TORCH_VENV", os.path.expanduser("~/.cache/tilefuse/torch-venv"))
MODES = ("reference", "fused", "unfused")
TILEFUSE_TIMEOUT_S = 900  # a fused run compiles kernels with the system compiler; a busy machine is slow


# ---------------------------------------------------------------- python environment

def have_python_deps():
    try:
        import numpy, onnx, torch  # noqa: F401
        return True
    except ImportError:
        return False


def reexec_in_venv(venv):
    """Creates the venv when missing, installs the requirements, and replaces this process by itself run there."""
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"creating virtual env {venv}: torch from PyPI is a download of several GB (CUDA wheels); "
              "PIP_INDEX_URL=https://download.pytorch.org/whl/cpu with PIP_EXTRA_INDEX_URL=https://pypi.org/simple "
              "gets the CPU-only build", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-r", REQUIREMENTS], check=True)
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):  # already re-run there (a venv's python is a symlink)
        sys.exit(f"{venv} exists but lacks torch/onnx/numpy: run {python} -m pip install -r {REQUIREMENTS}")
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


# ---------------------------------------------------------------- the PyTorch modules under test

BATCH, SEQ, HIDDEN, HEADS = 2, 16, 64, 4
DYNAMIC_RUN_BATCH = 3  # a dynamic-batch export is run at a batch size other than the one it was traced with


def define_cases():
    """Returns the list of Case; imports torch here so that --help works without it."""
    import torch
    from torch import nn

    class MaskedSoftmax(nn.Module):
        """Attention-score softmax with a boolean keep-mask, as attention code writes it (masked_fill -inf)."""

        def forward(self, scores, keep):
            scores = scores * (1.0 / (HIDDEN // HEADS) ** 0.5)
            return torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)

    class AdditiveMaskSoftmax(nn.Module):
        """Softmax over scores plus an additive float mask (0 or a large negative number)."""

        def forward(self, scores, mask):
            return torch.softmax(scores / (HIDDEN // HEADS) ** 0.5 + mask, dim=-1)

    class BiasGelu(nn.Module):
        def __init__(self, approximate):
            super().__init__()
            self.bias = nn.Parameter(torch.randn(HIDDEN))
            self.approximate = approximate

        def forward(self, x):
            return nn.functional.gelu(x + self.bias, approximate=self.approximate)

    class MlpBlock(nn.Module):
        """Transformer MLP: Linear, GELU, Linear, residual add, LayerNorm."""

        def __init__(self):
            super().__init__()
            self.up = nn.Linear(HIDDEN, 4 * HIDDEN)
            self.down = nn.Linear(4 * HIDDEN, HIDDEN)
            self.norm = nn.LayerNorm(HIDDEN)

        def forward(self, x):
            return self.norm(x + self.down(nn.functional.gelu(self.up(x))))

    class Encoder(nn.Module):
        """nn.TransformerEncoderLayer called as user code calls it. (Exporting the bare layer with the TorchScript
        exporter fails inside PyTorch: "scaled_dot_product_attention(): argument 'is_causal' must be bool, not Tensor".)"""

        def __init__(self, **options):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(HIDDEN, HEADS, dim_feedforward=2 * HIDDEN, **options)

        def forward(self, x, padding=None):
            return self.layer(x) if padding is None else self.layer(x, src_key_padding_mask=padding)

    def layernorm():
        norm = nn.LayerNorm(HIDDEN)
        with torch.no_grad():  # non-trivial affine parameters, so gamma/beta handling is tested
            norm.weight.copy_(torch.randn(HIDDEN))
            norm.bias.copy_(torch.randn(HIDDEN))
        return norm

    def activations(batch):
        return {"x": torch.randn(batch, SEQ, HIDDEN)}

    def scores_and_keep(batch):
        lengths = torch.randint(1, SEQ + 1, (batch,))  # at least one kept key per row, so no row is all -inf
        keep = torch.arange(SEQ)[None, :] < lengths[:, None]
        return {"scores": 3 * torch.randn(batch, HEADS, SEQ, SEQ), "keep": keep[:, None, None, :]}

    def scores_and_additive_mask(batch):
        causal = torch.triu(torch.full((SEQ, SEQ), -1e9), diagonal=1)
        return {"scores": 3 * torch.randn(batch, HEADS, SEQ, SEQ), "mask": causal.expand(batch, 1, SEQ, SEQ).clone()}

    def sequence_first(batch):
        return {"src": torch.randn(SEQ, batch, HIDDEN)}

    def padded_sequences(batch):
        lengths = torch.randint(1, SEQ + 1, (batch,))
        return {"x": torch.randn(batch, SEQ, HIDDEN), "padding": torch.arange(SEQ)[None, :] >= lengths[:, None]}

    return [
        Case("layernorm", layernorm, activations, batch_axis={"x": 0}),
        Case("masked_softmax", MaskedSoftmax, scores_and_keep, batch_axis={"scores": 0, "keep": 0}),
        Case("softmax_additive_mask", AdditiveMaskSoftmax, scores_and_additive_mask,
             batch_axis={"scores": 0, "mask": 0}),
        Case("gelu", nn.GELU, activations),
        Case("gelu_tanh", lambda: nn.GELU(approximate="tanh"), activations),
        Case("bias_gelu", lambda: BiasGelu("none"), activations),
        Case("mlp_block", MlpBlock, activations, batch_axis={"x": 0}),
        # PyTorch exports attention (scaled_dot_product_attention) from opset 14 on, so 14 stands in for 13.
        Case("encoder_layer", Encoder, sequence_first, batch_axis={"src": 1}, opsets=(14, 17)),  # post-norm, ReLU
        Case("encoder_prenorm_gelu_padmask",
             lambda: Encoder(batch_first=True, norm_first=True, activation="gelu"), padded_sequences,
             batch_axis={"x": 0, "padding": 0}, opsets=(14, 17)),
    ]


@dataclasses.dataclass
class Case:
    name: str
    make_module: object  # () -> nn.Module
    make_inputs: object  # batch -> {input name: tensor}, ordered as forward's arguments
    batch_axis: dict = None  # {input name: axis}; set for the cases also exported with a dynamic batch
    opsets: tuple = (13, 17)


@dataclasses.dataclass
class Export:
    """One exported ONNX file and the data to run it with."""
    case: str
    variant: str  # "opset13", "opset17 dyn-batch", "dynamo", ...
    path: str = None
    inputs: dict = None  # name -> numpy array
    input_files: dict = None  # name -> .npy path
    expected: dict = None  # output name -> numpy array (PyTorch, float32)
    expected64: dict = None  # the same computed by PyTorch in float64: how far PyTorch's float32 is from exact
    error: str = None  # why the export itself failed


# ---------------------------------------------------------------- export

def export_variants(cases, try_dynamo):
    variants = []
    for case in cases:
        for opset in case.opsets:
            variants.append((case, f"opset{opset}", dict(opset_version=opset, dynamo=False), None))
        if case.batch_axis:
            variants.append((case, "opset17 dyn-batch", dict(opset_version=17, dynamo=False), case.batch_axis))
        # The dynamo exporter is torch.onnx.export's default since torch 2.9: its default opset (20) and
        # external-data file are what a new user gets; opset 17 is the newest the foundation issue asks for.
        if try_dynamo:
            variants.append((case, "dynamo default", dict(dynamo=True), None))
            variants.append((case, "dynamo opset17", dict(dynamo=True, opset_version=17), None))
    return variants


def export_one(case, variant, options, batch_axis, out_dir):
    """Exports case's module, computes PyTorch's outputs on fresh inputs, writes the inputs as .npy files."""
    import numpy as np
    import torch

    torch.manual_seed(0)
    module = case.make_module().eval()
    run_batch = DYNAMIC_RUN_BATCH if batch_axis else BATCH
    trace_inputs = case.make_inputs(BATCH)
    run_inputs = case.make_inputs(run_batch) if batch_axis else trace_inputs
    names = list(trace_inputs)
    export = Export(case.name, variant, path=os.path.join(out_dir, f"{case.name}.{variant.replace(' ', '.')}.onnx"))
    kwargs = dict(input_names=names, output_names=["y"], **options)
    if batch_axis:
        kwargs["dynamic_axes"] = {name: {axis: "batch"} for name, axis in batch_axis.items()}
    try:
        # Not under no_grad: there nn.TransformerEncoderLayer takes its fused fast path, which no exporter supports.
        with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            torch.onnx.export(module, tuple(trace_inputs.values()), export.path, **kwargs)
    except Exception as error:  # report it as this row's status and go on with the others
        export.error = f"export failed: {type(error).__name__}: {first_line(str(error))}"
        return export
    with torch.no_grad():
        export.expected = {"y": module(*run_inputs.values()).numpy()}
        export.expected64 = {"y": module.double()(*(to_double(t) for t in run_inputs.values())).numpy()}
    export.inputs = {name: tensor.numpy() for name, tensor in run_inputs.items()}
    input_dir = os.path.join(out_dir, "inputs", os.path.basename(export.path)[:-len(".onnx")])
    os.makedirs(input_dir, exist_ok=True)
    for name, array in export.inputs.items():
        np.save(os.path.join(input_dir, f"{name}.npy"), array)
    export.input_files = {name: os.path.join(input_dir, f"{name}.npy") for name in names}
    return export


def to_double(tensor):
    return tensor.double() if tensor.is_floating_point() else tensor


def first_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"


# ---------------------------------------------------------------- running and comparing

@dataclasses.dataclass
class Row:
    case: str
    variant: str
    mode: str
    status: str  # "ok", "ok f64" (see compare), "FAIL" (wrong numbers), "ERROR" (no numbers)
    max_abs: float = None
    max_rel: float = None
    max_rel64: float = None  # against PyTorch's float64 result
    detail: str = ""
    command: str = ""


def run_tilefuse(tilefuse, export, mode, work_dir, cache_dir):
    out_dir = os.path.join(work_dir, "outputs", os.path.basename(export.path)[:-len(".onnx")], mode)
    command = [tilefuse, "run", export.path, "--output-dir", out_dir, "--mode", mode, "--json", "--cache-dir", cache_dir]
    for name, path in export.input_files.items():
        command += ["--input", f"{name}={path}"]
    row = Row(export.case, export.variant, mode, "ERROR", command=" ".join(command))
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=TILEFUSE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        row.detail = f"timed out after {TILEFUSE_TIMEOUT_S} s"
        return row, None
    if proc.returncode != 0:
        row.detail = f"exit {proc.returncode}: {proc.stderr.strip() or proc.stdout.strip()}"
        return row, None
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as error:
        row.detail = f"--json printed no JSON ({error}): {proc.stdout[:200]!r}"
        return row, None
    return row, {out["name"]: out["path"] for out in report["outputs"]}


def run_onnxruntime(export):
    """ONNX Runtime on the same file: the baseline of what an independent runtime gets; None when not installed."""
    try:
        import onnxruntime
    except ImportError:
        return None
    row = Row(export.case, export.variant, "onnxruntime", "ERROR")
    try:
        session = onnxruntime.InferenceSession(export.path, providers=["CPUExecutionProvider"])
        results = session.run(None, export.inputs)
    except Exception as error:
        row.detail = f"{type(error).__name__}: {first_line(str(error))}"
        return row, None
    return row, {out.name: value for out, value in zip(session.get_outputs(), results)}


def compare(row, actual, export, rtol, abs_floor):
    """Fills row's errors and status from actual ({name: array}) against PyTorch's outputs.

    A row also passes ("ok f64") when it misses PyTorch's float32 result but is within rtol of PyTorch's
    float64 result: then PyTorch's own float32 arithmetic is the less exact one (e.g. GELU's far negative tail)."""
    problems = []
    row.max_abs = row.max_rel = row.max_rel64 = 0.0
    for name, want in export.expected.items():
        if name not in actual:
            problems.append(f"output '{name}' missing (got {sorted(actual)})")
            continue
        got = actual[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"'{name}': {got.dtype}{list(got.shape)}, PyTorch {want.dtype}{list(want.shape)}")
            continue
        problems += nan_mismatch(name, got, want)
        max_abs, max_rel = errors(got, want, abs_floor)
        row.max_abs, row.max_rel = max(row.max_abs, max_abs), max(row.max_rel, max_rel)
        row.max_rel64 = max(row.max_rel64, errors(got, export.expected64[name], abs_floor)[1])
    if row.max_rel > rtol and row.max_rel64 > rtol:
        problems.append(f"max rel err {row.max_rel:.3g} (vs PyTorch float64 {row.max_rel64:.3g}) > {rtol:g}")
    row.status = "FAIL" if problems else ("ok" if row.max_rel <= rtol else "ok f64")
    row.detail = "; ".join(problems)


def nan_mismatch(name, got, want):
    import numpy as np
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    if (nan_got == nan_want).all():
        return []
    return [f"'{name}': {int(nan_got.sum())} NaN, PyTorch {int(nan_want.sum())}"]


def errors(got, want, abs_floor):
    """(max |got - want|, max |got - want| / max(|want|, abs_floor)) over the elements where neither is NaN."""
    import numpy as np
    both = ~(np.isnan(got) | np.isnan(want))
    got, want = got[both].astype(np.float64), want[both].astype(np.float64)
    if got.size == 0:
        return 0.0, 0.0
    diff = np.abs(got - want)
    diff[got == want] = 0.0  # equal infinities (a softmax input of -inf stays -inf) are no error
    rel = diff / np.maximum(np.abs(want), abs_floor)
    return float(np.nan_to_num(diff.max(), nan=np.inf)), float(np.nan_to_num(rel.max(), nan=np.inf))


def load_outputs(paths):
    import numpy as np
    return {name: np.load(path) for name, path in paths.items()}


# ---------------------------------------------------------------- report

def print_table(rows):
    header = ("model", "export", "mode", "status", "max abs err", "max rel err", "rel err vs f64")
    cells = [header] + [(r.case, r.variant, r.mode, r.status, fmt_err(r.max_abs), fmt_err(r.max_rel),
                         fmt_err(r.max_rel64)) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for i, row in enumerate(cells):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * width for width in widths))


def fmt_err(value):
    return "-" if value is None else f"{value:.2e}"


def print_problems(rows):
    """One entry per export and message: the modes that share it and the first one's command to reproduce it."""
    groups = {}
    for r in rows:
        if not r.status.startswith("ok"):
            groups.setdefault((r.case, r.variant, r.status, r.detail), []).append(r)
    if not groups:
        return
    print("\nproblems:")
    for (case, variant, status, detail), group in groups.items():
        print(f"- {case} [{variant}] {','.join(r.mode for r in group)}: {status}: {detail}")
        if group[0].command:
            print(f"    repro: {group[0].command}")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--tilefuse", default=os.environ.get("TILEFUSE", os.path.join(REPO, "build", "tilefuse")),
                        help="the tilefuse binary (default $TILEFUSE or build/tilefuse)")
    parser.add_argument("--modes", default=",".join(MODES), help="tilefuse modes to run (default %(default)s)")
    parser.add_argument("--only", default="", help="only cases whose 'name export' matches this regex")
    parser.add_argument("--no-dynamo", action="store_true", help="skip the dynamo exporter (torch.onnx dynamo=True)")
    parser.add_argument("--work-dir", help="where models, inputs, outputs and the kernel cache go (default: a new temp dir)")
    parser.add_argument("--rtol", type=float, default=1e-4, help="pass threshold of max rel err (default %(default)g)")
    parser.add_argument("--abs-floor", type=float, default=1e-2,
                        help="|PyTorch value| below this counts as this in the rel err (default %(default)g)")
    parser.add_argument("--venv", default=DEFAULT_VENV, help="venv to create/use when torch is missing")
    return parser.parse_args()


def main():
    args = parse_args()
    if not os.access(args.tilefuse, os.X_OK):  # checked first: creating the venv downloads gigabytes
        sys.exit(f"tilefuse binary '{args.tilefuse}' not found: run `make build` or pass --tilefuse PATH")
    if not have_python_deps():
        reexec_in_venv(args.venv)
    import torch

    modes = [m for m in args.modes.split(",") if m]
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="tilefuse-torchcheck-")
    model_dir, cache_dir = os.path.join(work_dir, "models"), os.path.join(work_dir, "cache")
    os.makedirs(model_dir, exist_ok=True)
    print(f"torch {torch.__version__}; tilefuse {args.tilefuse}; work dir {work_dir}", flush=True)

    rows = []
    only = re.compile(args.only)
    for case, variant, options, batch_axis in export_variants(define_cases(), not args.no_dynamo):
        if not only.search(f"{case.name} {variant}"):
            continue
        export = export_one(case, variant, options, batch_axis, model_dir)
        if export.error:
            rows.append(Row(case.name, variant, "export", "ERROR", detail=export.error))
            print_progress(rows[-1])
            continue
        baseline = run_onnxruntime(export)
        if baseline:
            row, outputs = baseline
            if outputs is not None:
                compare(row, outputs, export, args.rtol, args.abs_floor)
            rows.append(row)
            print_progress(row)
        for mode in modes:
            started = time.time()
            row, paths = run_tilefuse(args.tilefuse, export, mode, work_dir, cache_dir)
            if paths is not None:
                compare(row, load_outputs(paths), export, args.rtol, args.abs_floor)
            rows.append(row)
            print_progress(row, time.time() - started)

    print()
    print_table(rows)
    print_problems(rows)
    tilefuse_rows = [r for r in rows if r.mode not in ("onnxruntime", "export")]
    failed = sum(not r.status.startswith("ok") for r in tilefuse_rows)
    failed_exports = sum(r.mode == "export" for r in rows)
    print(f"\n{len(tilefuse_rows) - failed}/{len(tilefuse_rows)} tilefuse rows pass "
          f"(rel err = |t-p| / max(|p|, {args.abs_floor:g}) <= {args.rtol:g}); {failed_exports} PyTorch exports failed; "
          f"onnxruntime rows are a baseline only; files in {work_dir}")
    with open(os.path.join(work_dir, "results.json"), "w") as f:
        json.dump([dataclasses.asdict(r) for r in rows], f, indent=1)
    return 1 if failed or failed_exports else 0


def print_progress(row, seconds=None):
    took = f" ({seconds:.1f} s)" if seconds is not None else ""
    print(f"  {row.case} [{row.variant}] {row.mode}: {row.status}{took}"
          + (f"  {first_line(row.detail)[:160]}" if row.detail else ""), flush=True)


if __name__ == "__main__":
    sys.exit(main())
