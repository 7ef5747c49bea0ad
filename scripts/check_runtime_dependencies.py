#!/usr/bin/env python3
"""Checks that the runtime library links none of the compiler-side dependencies.

A deployed model needs the runtime (thread team, kernel loader, arena, library calls) and not
the compiler: `ldd` of libtilefuse_runtime.so must name no libonnx, protobuf, OpenSSL (libcrypto,
libssl) or hwloc. Nor OpenBLAS: it is loaded on first use (src/reference/openblas.h), since
loading it starts a thread pool that spins beside the runtime's workers. Prints what it links; exit status 1 on a forbidden dependency.

    scripts/check_runtime_dependencies.py build/libtilefuse_runtime.so
"""
import re
import subprocess
import sys

FORBIDDEN = re.compile(r"lib(onnx|protobuf|crypto|ssl|hwloc|openblas)\b")


def main():
    library = sys.argv[1]
    ldd = subprocess.run(["ldd", library], capture_output=True, text=True, check=True).stdout
    names = [line.split()[0] for line in ldd.splitlines() if line.strip()]
    bad = [n for n in names if FORBIDDEN.search(n)]
    print(f"{library} links: {', '.join(names)}")
    if bad:
        print(f"forbidden dependencies of the runtime: {', '.join(bad)}")
        return 1
    print("no compiler-side dependency (onnx, protobuf, OpenSSL, hwloc) and no OpenBLAS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
