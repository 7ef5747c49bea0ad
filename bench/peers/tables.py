"""A run's results (the JSON of run_peers.py) looked up as table rows: the one place the Markdown
report and the pictures get their numbers from, so both always show the same thing.

A row is one ONNX file: a case and an export variant (LayerNorm has two). Engines that run the
PyTorch module (eager, Inductor) have one result per case, shared by its variants' rows.
"""
import statistics

TILEFUSE = "tilefuse"
PEERS = ("onnxruntime", "eager", "inductor", "inductor-max-autotune")


def rows(run):
    """[(case id, variant, label)] in run order."""
    out = []
    for case_id, case in run["cases"].items():
        for variant in case["variants"]:
            label = case_id if len(case["variants"]) == 1 else f"{case_id} {variant}"
            out.append((case_id, variant, label))
    return out


def result(run, case_id, variant, engine, threads):
    """The result dict of engine on that row at `threads`, or None when it did not run."""
    for r in run["results"]:
        if (r["case"], r["engine"], r["threads"]) == (case_id, engine, threads) and r["variant"] in (None, variant):
            return r
    return None


def ok(r):
    return r is not None and r["status"] == "ok"


def median_ms(run, case_id, variant, engine, threads, key="median_ms"):
    r = result(run, case_id, variant, engine, threads)
    return r[key] if ok(r) else None


def ratio(run, case_id, variant, peer, threads, key="median_ms"):
    """tilefuse median / peer median (or another statistic, key) on the same row and thread count
    (< 1: tilefuse is faster)."""
    ours, theirs = (median_ms(run, case_id, variant, e, threads, key) for e in (TILEFUSE, peer))
    return ours / theirs if ours and theirs else None


def gbps(run, case_id, variant, engine, threads):
    """Compulsory bytes of the model (inputs, parameters, outputs once each) / median: the same bytes for
    every engine, so the engines compare by time and the STREAM line shows how far each is from the bound."""
    ms = median_ms(run, case_id, variant, engine, threads)
    return run["cases"][case_id]["compulsory_bytes"] / (ms * 1e-3) / 1e9 if ms else None


def stream(run, threads, key="stream_triad_gbps"):
    """Median over this thread count's tilefuse bench probes (one per tilefuse row) of key, or None."""
    values = [r["extra"][key] for r in run["results"]
              if r["engine"] == TILEFUSE and r["threads"] == threads and key in r["extra"]]
    return statistics.median(values) if values else None


def engines_present(run):
    present = {r["engine"] for r in run["results"]}
    return [e for e in (TILEFUSE,) + PEERS if e in present]


def problems(run):
    """Every result that was not measured, with its reason."""
    return [r for r in run["results"] if r["status"] != "ok"]
