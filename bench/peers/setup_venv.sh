#!/bin/bash
# Creates the benchmarks' Python virtual env VENV_DIR (bench/peers and bench/real share it), or
# reuses it, and installs from PyPI whatever of requirements.txt it lacks. Everything comes from
# PyPI by default, so a machine that reaches only PyPI (or a mirror of it) can run the benchmarks.
# PEERS_TORCH_INDEX, when set, is an extra index asked first for torch and torchvision (for
# example https://download.pytorch.org/whl/cpu, whose CPU-only wheels are a few hundred MB
# instead of PyPI's CUDA builds).
# Usage: setup_venv.sh VENV_DIR
set -euo pipefail
venv=${1:?usage: setup_venv.sh VENV_DIR}
requirements="$(dirname "$0")/requirements.txt"

if [ ! -x "$venv/bin/python" ]; then
  if ! python3 -c "import ensurepip" 2>/dev/null; then
    echo "setup_venv.sh: python3 cannot create a virtual env: install the Debian package python3-venv" >&2
    exit 1
  fi
  echo "creating the virtual env $venv"
  python3 -m venv "$venv"
fi
if "$venv/bin/python" -c "import torch, torchvision, transformers, onnx, onnxscript, onnxruntime, numpy, matplotlib" 2>/dev/null; then
  exit 0
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
if [ -n "${PEERS_TORCH_INDEX:-}" ]; then
  "$venv/bin/python" -m pip install --index-url "$PEERS_TORCH_INDEX" torch torchvision ||
    echo "setup_venv.sh: $PEERS_TORCH_INDEX did not serve torch; installing it from PyPI" >&2
fi
"$venv/bin/python" -m pip install -r "$requirements"
