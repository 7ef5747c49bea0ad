"""The README's Python and CMake examples, run or checked here so that they stay true."""
import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_example_runs(index, monkeypatch):
    code = blocks("python")[index]
    if "import torch" in code:
        pytest.importorskip("torch")
    monkeypatch.chdir(ROOT)
    exec(compile(code, f"README.md python block {index}", "exec"), {})


def test_cmake_example_is_the_external_project():
    project = (ROOT / "tests/install/external_project/CMakeLists.txt").read_text()
    (example,) = blocks("cmake")
    for line in example.strip().splitlines():
        assert line in project.splitlines(), line
