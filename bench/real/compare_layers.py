"""Where a model loses or wins against ONNX Runtime, layer by layer: tilefuse's per-step medians
(`tilefuse bench --per-step --json`) and ONNX Runtime's per-node medians (its profiler, as
ort_profile.py), each summed per layer, the layers sorted by how much slower tilefuse is.

    build/peers-venv/bin/python bench/real/compare_layers.py MODEL.onnx [--threads 1] [--runs 30] \\
        [--depth 2 | --group REGEX] [--tilefuse build/tilefuse] [--json]

A layer is the first `--depth` components of a node's name (exporters name nodes by module path:
`/layer1/layer1.0/conv2/Conv` is in `layer1/layer1.0` at depth 2, a ResNet block;
`/features/features.2/...` in `features/features.2`), or the first match of `--group` in it. The
two engines fuse differently and name their fused work after different nodes (ONNX Runtime after
the last op's output), so compare layers, not steps; a tilefuse step counts in the layer most of
the nodes it computes are in (the "nodes" of `bench --per-step --json`). Names without a path are
layers of their own (ONNX Runtime's layout reorders: one for all of each kind). ONNX Runtime's
profiler adds a few microseconds per node, so its sums run above its end-to-end time; tilefuse's
per-step medians leave out the time between steps: compare the layers' differences, not the sums.
Set TILEFUSE_CACHE_DIR to reuse compiled kernels.
"""
import argparse
import collections
import json
import re
import subprocess

from ort_profile import node_medians


def layer_of(name, depth, group):
    if group is not None:
        match = re.search(group, name)
        return match.group(0) if match else "(other)"
    if "/" not in name:
        return re.sub(r"_token_\d+$", "", name)  # ONNX Runtime's reorders: ReorderInput_token_60
    return "/".join(name.strip("/").split("/")[:depth])


def tilefuse_steps(tilefuse, model, threads, runs):
    """(fused median ms, [(median ms, the step's nodes' names)]) from `tilefuse bench --per-step --json`."""
    out = subprocess.run([tilefuse, "bench", model, "--modes", "fused", "--threads", str(threads), "--iters", str(runs),
                          "--per-step", "--json", "--stream-mib", "8"], check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    return report["modes"]["fused"]["median_ms"], [(s["median_ms"], s["nodes"] or [s["name"]]) for s in report["per_step"]]


def step_layer(nodes, depth, group):
    """The layer most of a step's nodes are in (a fused kernel may take an op of the next layer)."""
    layers = [layer_of(n, depth, group) for n in nodes]
    return max(layers, key=layers.count)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--depth", type=int, default=2, help="path components that name a layer")
    parser.add_argument("--group", help="a regex whose first match in a name is its layer (instead of --depth)")
    parser.add_argument("--tilefuse", default="build/tilefuse")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    fused_ms, steps = tilefuse_steps(args.tilefuse, args.model, args.threads, args.runs)
    ort_nodes = node_medians(args.model, args.threads, args.runs)
    ours, theirs = collections.defaultdict(float), collections.defaultdict(float)
    for ms, step_nodes in steps:
        ours[step_layer(step_nodes, args.depth, args.group)] += ms
    for ms, name, _ in ort_nodes:
        theirs[layer_of(name, args.depth, args.group)] += ms
    layers = sorted(set(ours) | set(theirs), key=lambda k: theirs[k] - ours[k])
    rows = [{"layer": k, "tilefuse_ms": ours[k], "ort_ms": theirs[k], "difference_ms": ours[k] - theirs[k]} for k in layers]
    totals = {"tilefuse_steps_ms": sum(ours.values()), "tilefuse_fused_median_ms": fused_ms,
              "ort_nodes_ms": sum(theirs.values())}
    if args.json:
        print(json.dumps({"model": args.model, "threads": args.threads, "layers": rows, **totals}, indent=1))
        return
    print(f"{args.model}, {args.threads} thread(s), medians of {args.runs} runs; "
          f"tilefuse: steps {totals['tilefuse_steps_ms']:.3f} ms (end to end {fused_ms:.3f}), "
          f"ONNX Runtime: nodes {totals['ort_nodes_ms']:.3f} ms")
    width = max(len(r["layer"]) for r in rows)
    print(f"{'layer':{width}s}  {'tilefuse':>9s}  {'ORT':>9s}  {'tf - ORT':>9s}")
    for r in rows:
        print(f"{r['layer']:{width}s}  {r['tilefuse_ms']:9.3f}  {r['ort_ms']:9.3f}  {r['difference_ms']:+9.3f}")


if __name__ == "__main__":
    main()
