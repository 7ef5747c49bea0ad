#!/usr/bin/env python3
"""PyTorch modules four ways, in one process at the same thread count: eager, torch.compile
(Inductor), torch.compile(backend=tilefuse.dynamo_backend) and tilefuse.compile. Prints the median
latency per call and each path's ratio to eager, after checking every path's output against
eager's.

    PYTHONPATH=build/python build/peers-venv/bin/python bench/python/torch_paths.py [--threads 2]
"""
import argparse
import statistics
import time

import torch

import tilefuse


class Mlp(torch.nn.Module):
    def __init__(self, width=768):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def cases():
    torch.manual_seed(0)
    yield "MLP block 768, [1, 128, 768]", Mlp().eval(), torch.randn(1, 128, 768)
    layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True, dropout=0.0).eval()
    yield "encoder layer 768/12, [1, 128, 768]", layer, torch.randn(1, 128, 768)
    yield "elementwise: gelu(x) * sigmoid(x) + 1, [256, 4096]", torch.nn.Sequential().eval(), torch.randn(256, 4096)


def elementwise(x):
    return torch.nn.functional.gelu(x) * torch.sigmoid(x) + 1


def median_ms(fn, x, runs=100):
    with torch.no_grad():
        for _ in range(3):
            fn(x)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} threads; median ms per call (ratio to eager)")
    for name, module, x in cases():
        if name.startswith("elementwise"):
            module = elementwise
        with torch.no_grad():
            expected = module(x)
        torch._dynamo.reset()
        paths = {
            "eager": module,
            "inductor": torch.compile(module),
            "tilefuse backend": torch.compile(module, backend=tilefuse.dynamo_backend),
        }
        if isinstance(module, torch.nn.Module):
            paths["tilefuse.compile"] = tilefuse.compile(module, (x,), threads=args.threads)
        row = []
        for path, fn in paths.items():
            with torch.no_grad():
                torch.testing.assert_close(fn(x), expected, rtol=1e-4, atol=1e-4)
            row.append((path, median_ms(fn, x)))
        eager = row[0][1]
        print(f"{name}: " + ", ".join(f"{p} {ms:.3f} ({ms / eager:.2f})" for p, ms in row), flush=True)


if __name__ == "__main__":
    main()
