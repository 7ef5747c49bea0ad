"""Facts about the machine and the software versions, recorded with every run.

Numbers from different machines or library versions are not comparable; each results file says
where and with what it was measured.
"""
import os
import platform
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LSCPU_FIELDS = ("Model name", "CPU(s)", "Thread(s) per core", "L1d cache", "L2 cache", "L3 cache", "Flags")


def machine_facts():
    cpu = lscpu()
    flags = cpu.pop("Flags", "").split()
    cpu["AVX-512"] = "yes" if "avx512f" in flags else "no"
    return {"cpu": cpu, "memory_gib": memory_gib(), "kernel": platform.release(),
            "load_average_at_start": list(os.getloadavg())}


def lscpu():
    proc = subprocess.run(["lscpu"], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    facts = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in LSCPU_FIELDS:
            facts[key.strip()] = value.strip()
    return facts


def memory_gib():
    with open("/proc/meminfo") as f:
        kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    return round(kib / (1 << 20), 1)


def versions():
    import numpy
    import onnx
    import onnxruntime
    import torch
    return {"tilefuse": git_describe(), "torch": torch.__version__, "onnxruntime": onnxruntime.__version__,
            "onnx": onnx.__version__, "numpy": numpy.__version__, "python": platform.python_version(),
            "c++ compiler": first_line(["c++", "--version"])}


def tuning_environment():
    """The environment variables that change how the engines run (thread pools, BLAS kernels, tilefuse)."""
    prefixes = ("OPENBLAS_", "OMP_", "MKL_", "KMP_", "GOMP_", "TILEFUSE_", "TORCHINDUCTOR_", "ORT_")
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(prefixes)}


def git_describe():
    """tilefuse prints no version: the commit of the source tree it was built from (`-dirty` when edited)."""
    return first_line(["git", "-C", REPO, "describe", "--always", "--dirty"]) or "unknown"


def first_line(command):
    try:
        proc = subprocess.run(command, capture_output=True, text=True)
    except OSError:
        return None
    lines = proc.stdout.strip().splitlines()
    return lines[0] if lines else None
