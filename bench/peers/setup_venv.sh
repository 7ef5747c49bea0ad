#!/bin/bash
# Creates the peer benchmarks' Python virtual env VENV_DIR, or reuses it, and installs from PyPI
# whatever of requirements.txt it lacks. torch comes from PyTorch's CPU-only index first (a few
# hundred MB instead of several GB of CUDA wheels); PEERS_TORCH_INDEX overrides that index.
# Usage: setup_venv.sh VENV_DIR
set -euo pipefail
venv=${1:?usage: setup_venv.sh VENV_DIR}
requirements="$(dirname "$0")/requirements.txt"
torch_index=${PEERS_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}

if [ ! -x "$venv/bin/python" ]; then
  if ! python3 -c "import ensurepip" 2>/dev/null; then
    echo "setup_venv.sh: python3 cannot create a virtual env: install the Debian package python3-venv" >&2
    exit 1
  fi
  echo "creating the virtual env $venv"
  python3 -m venv "$venv"
fi
if "$venv/bin/python" -c "import torch, onnx, onnxruntime, numpy, matplotlib" 2>/dev/null; then
  exit 0
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -c "import torch" 2>/dev/null || "$venv/bin/python" -m pip install --index-url "$torch_index" torch
"$venv/bin/python" -m pip install -r "$requirements"
