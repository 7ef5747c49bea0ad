#!/usr/bin/python3
"""Generates the ONNX project's backend node tests (model.onnx + test_data_set_*/*.pb per case)
into OUT_DIR with Debian's python3-onnx, for tests/conformance.

Usage: gen_onnx_node_tests.py OUT_DIR

Idempotent: a stamp file naming the onnx and numpy versions makes a second call instant and
silent. The data is written to a sibling temporary directory and renamed into place, so an
interrupted run never leaves a half-generated OUT_DIR that looks complete.
"""
import argparse
import os
import shutil
import sys

import numpy as np

STAMP_NAME = ".generated"


def restore_numpy_aliases():
    # numpy 1.24 removed these aliases, but onnx 1.12's backend test cases still use them.
    for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object)):
        if alias not in np.__dict__:
            setattr(np, alias, builtin)


def stamp_text():
    import onnx
    return f"onnx {onnx.__version__}, numpy {np.__version__}\n"


def is_up_to_date(out_dir, expected_stamp):
    try:
        with open(os.path.join(out_dir, STAMP_NAME)) as stamp:
            return stamp.read() == expected_stamp
    except OSError:
        return False


def generate(out_dir):
    restore_numpy_aliases()
    from onnx.backend.test import cmd_tools  # imported after the aliases exist

    tmp_dir = out_dir + ".tmp"
    shutil.rmtree(tmp_dir, ignore_errors=True)
    cmd_tools.generate_data(argparse.Namespace(output=tmp_dir, op_type=None))
    with open(os.path.join(tmp_dir, STAMP_NAME), "w") as stamp:
        stamp.write(stamp_text())
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp_dir, out_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="directory to fill, e.g. build/onnx-node-tests")
    out_dir = os.path.abspath(parser.parse_args().out_dir)
    if is_up_to_date(out_dir, stamp_text()):
        return 0
    print(f"generating ONNX backend node tests into {out_dir} ...", flush=True)
    generate(out_dir)
    count = len(os.listdir(os.path.join(out_dir, "node")))
    print(f"generated {count} ONNX node test cases", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
