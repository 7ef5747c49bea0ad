"""Writes a run as JSON (every number) and Markdown (the tables a person reads), plus the pictures.

Files: RESULTS_DIR/<stamp>.json, <stamp>.md, <stamp>.bandwidth.svg, <stamp>.ratios.svg; a full run
also copies them to latest.* so that bench/README.md can link one fixed name.
"""
import json
import os
import shutil

import plots
import tables
from tables import PEERS, TILEFUSE

MiB = 1 << 20


def save(run, results_dir, latest):
    """Writes the run's files; returns the paths written."""
    os.makedirs(results_dir, exist_ok=True)
    stem = run["started"].replace(":", "").replace("-", "")
    json_path = os.path.join(results_dir, f"{stem}.json")
    with open(json_path, "w") as f:
        json.dump(run, f, indent=1)
    written = [json_path] + write(run, results_dir, stem)
    if latest:
        for path in list(written):
            copy = os.path.join(results_dir, "latest" + os.path.basename(path)[len(stem):])
            shutil.copyfile(path, copy)
            written.append(copy)
    return written


def write(run, results_dir, stem):
    """Renders the Markdown and pictures of `run` next to its JSON <stem>.json; returns their paths."""
    pictures = plots.draw(run, results_dir, stem)
    md_path = os.path.join(results_dir, f"{stem}.md")
    with open(md_path, "w") as f:
        f.write(markdown(run, [os.path.basename(p) for p in pictures]))
    return [md_path] + pictures


def markdown(run, pictures):
    parts = [header(run)]
    for threads in run["threads"]:
        parts += [f"## {threads} thread{'s' if threads > 1 else ''}", latency_table(run, threads),
                  ratio_table(run, threads), compile_table(run, threads)]
    parts.append(problems_section(run))
    parts.append("## Pictures\n\n" + "\n\n".join(f"![{p}]({p})" for p in pictures))
    return "\n\n".join(parts) + "\n"


def header(run):
    cpu, versions = run["machine"]["cpu"], run["versions"]
    streams = ", ".join(f"{t} thread(s): triad {fmt(tables.stream(run, t), 1)} GB/s, NT copy "
                        f"{fmt(tables.stream(run, t, 'copy_nt_gbps'), 1)} GB/s" for t in run["threads"])
    lines = [
        f"# Peer benchmarks: run of {run['started']}{' (quick mode)' if run['quick'] else ''}",
        "",
        f"Command: `{run['command']}`; took {run['elapsed_s'] / 60:.1f} min. Timing: {run['timing']['warmup']} "
        f"warm-up runs, then {run['timing']['iterations']} timed runs per large case (x5 small, x50 for 64x64).",
        "",
        "| machine | |", "| --- | --- |",
        f"| CPU | {cpu.get('Model name')} ({cpu.get('CPU(s)')} CPUs, {cpu.get('Thread(s) per core')} thread(s) per core, "
        f"AVX-512 {cpu.get('AVX-512')}) |",
        f"| caches | L1d {cpu.get('L1d cache')}, L2 {cpu.get('L2 cache')}, L3 {cpu.get('L3 cache')} |",
        f"| memory | {run['machine']['memory_gib']} GiB; load average at start "
        f"{', '.join(f'{x:.1f}' for x in run['machine']['load_average_at_start'])} |",
        f"| STREAM (tilefuse bench probes, median over the run) | {streams} |",
        f"| tilefuse options | {' '.join(run.get('tilefuse_args') or []) or 'none (this build has no --topn tuning)'} |",
        "| environment | " + (", ".join(f"{k}={v}" for k, v in run.get("environment", {}).items()) or "nothing set") + " |",
        "| versions | " + ", ".join(f"{k} {v}" for k, v in versions.items()) + " |",
    ]
    return "\n".join(lines)


def latency_table(run, threads):
    engines = tables.engines_present(run)
    lines = ["Median latency in ms [p10-p90]; `-`: not measured (see Problems). MiB: compulsory bytes "
             "(inputs, weights, outputs).", "",
             "| model | MiB | " + " | ".join(engines) + " |", "| --- | ---: |" + " ---: |" * len(engines)]
    for case_id, variant, label in tables.rows(run):
        cells = [latency_cell(tables.result(run, case_id, variant, e, threads)) for e in engines]
        mib = run["cases"][case_id]["compulsory_bytes"] / MiB
        lines.append(f"| {label} | {significant(mib)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def latency_cell(r):
    if not tables.ok(r):
        return "-" if r is None else r["status"]
    return f"{fmt(r['median_ms'])} [{fmt(r['p10_ms'])}-{fmt(r['p90_ms'])}]"


def ratio_table(run, threads):
    peers = [p for p in PEERS if p in tables.engines_present(run)]
    stream = tables.stream(run, threads)
    lines = ["tilefuse median / peer median (below 1: tilefuse is faster; in parentheses the same for the min, "
             "which a loaded machine disturbs least), and each engine's GB/s "
             f"(compulsory bytes / median; STREAM triad {fmt(stream, 1)} GB/s).", "",
             "| model | " + " | ".join(f"tilefuse / {p}" for p in peers) + " | GB/s: " +
             " / ".join([TILEFUSE] + peers) + " |",
             "| --- |" + " ---: |" * (len(peers) + 1)]
    for case_id, variant, label in tables.rows(run):
        ratios = [ratio_cell(run, case_id, variant, p, threads) for p in peers]
        rates = [significant(tables.gbps(run, case_id, variant, e, threads)) for e in [TILEFUSE] + peers]
        lines.append(f"| {label} | " + " | ".join(ratios) + " | " + " / ".join(rates) + " |")
    return "\n".join(lines)


def ratio_cell(run, case_id, variant, peer, threads):
    median = tables.ratio(run, case_id, variant, peer, threads)
    if median is None:
        return "-"
    return f"{significant(median)} ({significant(tables.ratio(run, case_id, variant, peer, threads, 'min_ms'))})"


def compile_table(run, threads):
    engines = [e for e in (TILEFUSE, "inductor", "inductor-max-autotune", "onnxruntime")
               if e in tables.engines_present(run)]
    startup = ", ".join(f"{tag} {', '.join(f'{s:.0f}' for s in seconds)} s"
                        for tag, seconds in run.get("inductor_startup_s", {}).items() if tag.endswith(f".t{threads}"))
    lines = ["Compile time in s. tilefuse: wall time of a cold `tilefuse run` (empty kernel cache, new process: "
             "load, plan, compile every kernel, tune, run once). Inductor: the model's first call (trace, codegen, "
             "C++ build) in a fresh cache, in a worker process that already paid Inductor's one-time start-up "
             f"({startup or 'not started'}). ONNX Runtime: session creation + first run.", "",
             "| model | " + " | ".join(engines) + " |", "| --- |" + " ---: |" * len(engines)]
    for case_id, variant, label in tables.rows(run):
        cells = []
        for e in engines:
            r = tables.result(run, case_id, variant, e, threads)
            cells.append(significant(r["compile_s"]) if r is not None and r["compile_s"] is not None else "-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def problems_section(run):
    """Rows that were not timed, one line per engine and reason, naming the cases it holds for."""
    groups = {}
    for r in tables.problems(run):
        label = r["case"] + (f" {r['variant']}" if r["variant"] else "") + f" (t{r['threads']})"
        groups.setdefault((r["engine"], r["status"], r["detail"].replace("|", "/")), []).append(label)
    if not groups:
        return "## Problems\n\nNone: every engine's outputs matched PyTorch eager and were timed."
    lines = ["## Problems", "", "Not timed (FAIL: outputs differ from PyTorch eager; SKIP: not attempted).", "",
             "| engine | status | why | cases |", "| --- | --- | --- | --- |"]
    for (engine, status, detail), labels in groups.items():
        lines.append(f"| {engine} | {status} | {detail} | {', '.join(labels)} |")
    return "\n".join(lines)


def significant(value):
    """Two significant digits: ratios and rates span 1000x, a fixed number of decimals would hide the small ones."""
    if value is None:
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:#.2g}".rstrip(".")


def fmt(value, digits=3):
    """Significant-looking numbers without noise: 3 decimals for ms below 10, fewer above."""
    if value is None:
        return "-"
    if digits == 3 and value >= 10:
        digits = 1 if value < 1000 else 0
    return f"{value:.{digits}f}"
