#!/usr/bin/env python3
"""Checks that includes only point down the layers (DESIGN.md).

The layers and what each links come from CMakeLists.txt's tilefuse_layer(...) calls: a file in
src/<dir>/ may include headers of its own layer and of the layers it links, directly or through
them, and nothing else. The public headers in include/tilefuse/ may include only each other.
Every violation is printed as FILE:LINE: message; the exit status is 1 if there is any.

    scripts/check_layers.py [REPO_ROOT]
"""
import pathlib
import re
import sys

LAYER_CALL = re.compile(r"tilefuse_layer\(\s*(\w+)\s+(\w+)([^)]*)\)", re.S)
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_layers(cmake_text):
    """Returns {dir: set of dirs it may include}, from the tilefuse_layer calls."""
    dir_of, links = {}, {}
    for name, folder, rest in LAYER_CALL.findall(cmake_text):
        dir_of[name] = folder
        links[name] = [dep for dep in rest.split() if dep.startswith("tilefuse_")]

    def reachable(name, seen):
        for dep in links.get(name, []):
            if dep in dir_of and dep not in seen:
                seen.add(dep)
                reachable(dep, seen)
        return seen

    return {dir_of[name]: {dir_of[d] for d in reachable(name, {name})} for name in dir_of}


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def check(root):
    allowed = read_layers((root / "CMakeLists.txt").read_text())
    problems = []
    for folder, may_include in sorted(allowed.items()):
        for path in sorted((root / "src" / folder).rglob("*")):
            if path.suffix not in (".h", ".cpp", ".inc"):
                continue
            text = path.read_text()
            for match in QUOTED_INCLUDE.finditer(text):
                target = match.group(1).split("/")[0]
                if target == "tilefuse" or "/" not in match.group(1):
                    continue  # the public headers, or a file next to this one
                if target not in allowed:
                    continue  # not a layer (e.g. a generated file)
                if target not in may_include:
                    problems.append(f"{path.relative_to(root)}:{line_of(text, match.start())}: layer '{folder}' "
                                    f"includes {match.group(1)}, but it does not link layer '{target}' "
                                    f"(it may include: {', '.join(sorted(may_include))})")
    for path in sorted((root / "include" / "tilefuse").glob("*.h")):
        text = path.read_text()
        for match in QUOTED_INCLUDE.finditer(text):
            if not match.group(1).startswith("tilefuse/"):
                problems.append(f"{path.relative_to(root)}:{line_of(text, match.start())}: the public header "
                                f"includes {match.group(1)}: public headers include only include/tilefuse/")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = check(root)
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} includes against the layering" if problems else
          "check_layers: every include points down the layers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
