"""The two pictures of a run (matplotlib, Agg backend, SVG): bandwidth against the STREAM roofline,
and tilefuse's latency ratio to each peer. One panel per thread count; numbers come from tables.py,
the same as the Markdown tables.
"""
import os

import matplotlib

matplotlib.use("Agg")  # no display: files only
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: small files that diff and search
import matplotlib.pyplot as plt  # noqa: E402

import tables  # noqa: E402
from tables import PEERS, TILEFUSE  # noqa: E402

MARKERS = {TILEFUSE: "o", "onnxruntime": "s", "eager": "^", "inductor": "D", "inductor-max-autotune": "v"}
COLORS = {TILEFUSE: "tab:red", "onnxruntime": "tab:blue", "eager": "tab:green", "inductor": "tab:purple",
          "inductor-max-autotune": "tab:gray"}


def draw(run, results_dir, stem):
    """Writes <stem>.bandwidth.svg and <stem>.ratios.svg; returns their paths."""
    paths = []
    for name, draw_panel in (("bandwidth", bandwidth_panel), ("ratios", ratio_panel)):
        figure, axes = plt.subplots(len(run["threads"]), 1, squeeze=False,
                                    figsize=(max(8, 0.7 * len(tables.rows(run))), 4.5 * len(run["threads"])))
        for ax, threads in zip(axes[:, 0], run["threads"]):
            draw_panel(ax, run, threads)
        figure.tight_layout()
        paths.append(os.path.join(results_dir, f"{stem}.{name}.svg"))
        figure.savefig(paths[-1], metadata={"Date": None})  # no timestamp inside: reruns diff cleanly
        plt.close(figure)
    return paths


def bandwidth_panel(ax, run, threads):
    """Achieved GB/s (compulsory bytes / median) per model and engine, with the STREAM triad and
    non-temporal copy lines: a memory-bound model's engine can at best reach about those lines."""
    rows = tables.rows(run)
    for engine in tables.engines_present(run):
        points = [(i, tables.gbps(run, case_id, variant, engine, threads)) for i, (case_id, variant, _) in enumerate(rows)]
        points = [(i, g) for i, g in points if g]
        if points:
            ax.scatter(*zip(*points), marker=MARKERS[engine], color=COLORS[engine], label=engine, zorder=3)
    for key, style, name in (("stream_triad_gbps", "--", "STREAM triad"), ("copy_nt_gbps", ":", "NT copy")):
        value = tables.stream(run, threads, key)
        if value:
            ax.axhline(value, linestyle=style, color="black", linewidth=1, label=f"{name} {value:.1f} GB/s")
    ax.set_yscale("log")
    ax.set_ylabel("GB/s (compulsory bytes / median)")
    finish(ax, rows, f"Achieved bandwidth vs STREAM, {threads} thread(s) (higher is better)")


def ratio_panel(ax, run, threads):
    """tilefuse median / peer median per model: below 1 tilefuse is faster."""
    rows = tables.rows(run)
    peers = [p for p in PEERS if p in tables.engines_present(run)]
    width = 0.8 / max(1, len(peers))
    for k, peer in enumerate(peers):
        bars = [(i + (k - (len(peers) - 1) / 2) * width, tables.ratio(run, case_id, variant, peer, threads))
                for i, (case_id, variant, _) in enumerate(rows)]
        bars = [(x, r) for x, r in bars if r]
        if bars:
            ax.bar(*zip(*bars), width=width, color=COLORS[peer], label=f"tilefuse / {peer}")
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    ax.set_ylabel("tilefuse median / peer median")
    finish(ax, rows, f"Latency ratio, {threads} thread(s) (below 1: tilefuse faster)")


def finish(ax, rows, title):
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([label for _, _, label in rows], rotation=35, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
