"""Fixtures for the Python API tests (ctest's python_api runs them with PYTHONPATH=build/python).

Run by hand: PYTHONPATH=build/python python3 -m pytest tests/python
"""
import os
import pathlib

import numpy as np
import pytest

MODELS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "models"


def bundled_models():
    return sorted(p.stem for p in MODELS.glob("*.onnx"))


def read_arrays(model, kind):
    """{name: array} from examples/models/<model>/<kind>/*.npy."""
    return {p.stem: np.load(p) for p in sorted((MODELS / model / kind).glob("*.npy"))}


@pytest.fixture(scope="session")
def models_dir():
    return MODELS


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """A kernel cache apart from the user's: ctest's (TILEFUSE_CACHE_DIR), else one per run."""
    if not os.environ.get("TILEFUSE_CACHE_DIR"):
        monkeypatch.setenv("TILEFUSE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
