#!/usr/bin/env python3
"""Deploys a model package the way a user would, and checks what it computes.

For each model: `tilefuse compile` writes a package (with a kernel cache of its own), the package
is copied to a fresh directory and the cache deleted, and run_package_example (which links only
libtilefuse_runtime.so) runs it with no usable compiler (TILEFUSE_CXX=/bin/false) and an empty
cache directory, which must stay empty: nothing is compiled or tuned at run time. Its outputs are
then compared with the reference interpreter's (`tilefuse run --mode reference`) on the inputs
it wrote. Also checks that the example's ldd names the runtime library and no compiler-side one.

    scripts/check_package_deploy.py TILEFUSE RUN_PACKAGE_EXAMPLE MODEL.onnx [MODEL.onnx ...]
"""
import ast
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

FORBIDDEN = re.compile(r"lib(onnx|protobuf|crypto|ssl|hwloc)\b")
FORMATS = {"<f4": "f", "<f8": "d", "<i8": "q", "<i4": "i", "|b1": "?", "<u1": "B", "|u1": "B", "|i1": "b"}


def read_npy(path):
    """(dtype, shape, values) of a little-endian C-order .npy file, without numpy."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not an .npy file")
    major = data[6]
    header_len = struct.unpack("<H" if major == 1 else "<I", data[8:10] if major == 1 else data[8:12])[0]
    start = (10 if major == 1 else 12) + header_len
    header = ast.literal_eval(data[(10 if major == 1 else 12):start].decode("latin1"))
    code = FORMATS[header["descr"]]
    count = 1
    for d in header["shape"]:
        count *= d
    values = struct.unpack(f"<{count}{code}", data[start:start + count * struct.calcsize(code)])
    return header["descr"], tuple(header["shape"]), values


def run(argv, env=None):
    result = subprocess.run(argv, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit(f"failed ({result.returncode}): {' '.join(argv)}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def compare(actual_path, expected_path):
    a_type, a_shape, a = read_npy(actual_path)
    e_type, e_shape, e = read_npy(expected_path)
    if (a_type, a_shape) != (e_type, e_shape):
        return f"{actual_path}: {a_type}{list(a_shape)}, the reference has {e_type}{list(e_shape)}"
    for i, (x, y) in enumerate(zip(a, e)):
        if abs(x - y) > 1e-4 + 1e-4 * abs(y):
            return f"{actual_path}: element {i} is {x}, the reference says {y}"
    return None


def check_links(example):
    ldd = subprocess.run(["ldd", example], capture_output=True, text=True, check=True).stdout
    if "libtilefuse_runtime" not in ldd:
        raise SystemExit(f"{example} does not link libtilefuse_runtime:\n{ldd}")
    bad = [line.split()[0] for line in ldd.splitlines() if FORBIDDEN.search(line)]
    if bad:
        raise SystemExit(f"{example} links compiler-side libraries: {', '.join(bad)}")


def deploy(tilefuse, example, model, work):
    name = os.path.splitext(os.path.basename(model))[0]
    build_env = dict(os.environ, TILEFUSE_CACHE_DIR=os.path.join(work, "build-cache"))
    built = os.path.join(work, "build", name + ".tfx")
    run([tilefuse, "compile", model, "-o", built, "--topn", "2", "--threads", "2"], build_env)
    deployed = os.path.join(work, "deploy", name + ".tfx")
    shutil.copytree(built, deployed)
    shutil.rmtree(os.path.join(work, "build"))
    shutil.rmtree(os.path.join(work, "build-cache"))

    empty_cache = os.path.join(work, "run-cache")
    run_env = dict(os.environ, TILEFUSE_CXX="/bin/false", TILEFUSE_CACHE_DIR=empty_cache)
    out = os.path.join(work, "out-" + name)
    print(f"{name}: " + run([example, deployed, out, "20"], run_env).strip())
    if os.path.exists(empty_cache):
        raise SystemExit(f"{name}: running the package wrote to the kernel cache {empty_cache}")

    inputs_dir = os.path.join(out, "inputs")
    ref = os.path.join(work, "ref-" + name)
    argv = [tilefuse, "run", model, "--mode", "reference", "--output-dir", ref]
    for f in sorted(os.listdir(inputs_dir)):
        argv += ["--input", f"{f[:-4]}={os.path.join(inputs_dir, f)}"]
    run(argv)
    outputs = sorted(os.listdir(os.path.join(out, "outputs")))
    if not outputs:
        raise SystemExit(f"{name}: the example wrote no outputs")
    for f in outputs:
        problem = compare(os.path.join(out, "outputs", f), os.path.join(ref, f))
        if problem:
            raise SystemExit(f"{name}: {problem}")
    print(f"{name}: {len(outputs)} output(s) match the reference interpreter")


def main():
    tilefuse, example, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    check_links(example)
    with tempfile.TemporaryDirectory(prefix="tilefuse_deploy_") as work:
        for model in models:
            deploy(tilefuse, example, model, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
