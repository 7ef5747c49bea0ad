#!/bin/bash
# The table of bench/package/results.md: every suite model (build/real-work, from
# bench/real/run_real.py's first run) and every bundled model, as a package against the executor,
# then each suite package in a fresh process linked only to the runtime library.
#   bench/package/run_all.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
cmake --build "$build" --target package_ab run_package_example
out=$(mktemp -d)
for m in bert gpt2 vit resnet50 mobilenet_v3_large convnext_tiny; do
  dir="$build/real-work/full/$m"
  [ -d "$dir" ] || { echo "$m: $dir missing (run bench/real/run_real.py first)"; continue; }
  args=()
  for f in "$dir"/inputs/*.npy; do args+=(--input "$(basename "$f" .npy)=$f"); done
  "$build/package_ab" "$dir/torchscript_static.onnx" "$out/$m.tfx" "${args[@]}" --runs 20
  "$build/run_package_example" "$out/$m.tfx" "$out/out-$m" 10
done
for f in examples/models/*.onnx; do
  "$build/package_ab" "$f" "$out/$(basename "$f" .onnx).tfx" --runs 200
done
rm -rf "$out"
