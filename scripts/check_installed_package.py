#!/usr/bin/env python3
"""Installs the build into a fresh prefix and builds a user's CMake project against it.

`cmake --install BUILD_DIR --prefix TMP/prefix`, then tests/install/external_project is configured
with nothing but -DCMAKE_PREFIX_PATH=TMP/prefix, built, and run: compile_and_run (linking
tilefuse::tilefuse) compiles MODEL.onnx, checks its outputs against MODEL/expected/ and saves a
package; load_and_run (linking tilefuse::runtime alone) loads that package and checks it again.
Exit status 0 when all of that works.

    scripts/check_installed_package.py BUILD_DIR MODEL.onnx
"""
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run(*command, **kwargs):
    print("$", " ".join(str(c) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True, **kwargs)


def main():
    build_dir, model = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    data = model.parent / model.stem
    with tempfile.TemporaryDirectory(prefix="tilefuse-install-") as tmp:
        tmp = pathlib.Path(tmp)
        prefix = tmp / "prefix"
        run("cmake", "--install", build_dir, "--prefix", prefix, stdout=subprocess.DEVNULL)
        for wanted in ("include/tilefuse/tilefuse.h", "lib/libtilefuse.so", "lib/libtilefuse_runtime.so",
                       "lib/cmake/tilefuse/tilefuseConfig.cmake", "bin/tilefuse"):
            if not (prefix / wanted).exists():
                print(f"the install has no {wanted}")
                return 1
        project = tmp / "project"
        # A clean environment for the user's build: no hint of the source or build tree.
        env = {k: v for k, v in os.environ.items() if not k.startswith("CMAKE_")}
        run("cmake", "-S", ROOT / "tests/install/external_project", "-B", project, "-G", "Ninja",
            f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF", env=env,
            stdout=subprocess.DEVNULL)
        run("cmake", "--build", project, env=env, stdout=subprocess.DEVNULL)
        env["TILEFUSE_CACHE_DIR"] = str(tmp / "cache")
        package = tmp / "model.tfx"
        run(project / "compile_and_run", model, data / "inputs", data / "expected", package, env=env)
        run(project / "load_and_run", package, data / "inputs", data / "expected", env=env)
        # The installed command finds the installed precompiled kernel header too: a fresh cache's
        # kernel compiles without precompiling the header (which would log "precompiling").
        env["TILEFUSE_LOG_LEVEL"] = "debug"
        log = subprocess.run([str(prefix / "bin/tilefuse"), "run", str(model), "--cache-dir", str(tmp / "cli-cache")],
                             env=env, capture_output=True, text=True, check=True).stderr
        prebuilt = list((build_dir / "prebuilt-kernel-headers").glob("include/*/tilefuse_kernel.h.gch"))
        if prebuilt and "precompiled header copied" not in log:  # none: the compiler could not make one
            print("the installed tilefuse did not find the installed precompiled kernel header:\n" + log[-2000:])
            return 1
    print("the installed package builds and runs a user's project")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as e:
        print(f"failed ({e.returncode}): {' '.join(map(str, e.cmd))}")
        sys.exit(1)
