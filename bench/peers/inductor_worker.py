"""TorchInductor runs in a worker process per (mode, thread count): the parent side and the worker side.

Why a separate process: Inductor bakes the thread count into its OpenMP kernels, so each thread count
needs its own compiles and cache; a compile that runs past its time limit is killed together with its
compile workers (the worker's own process group) instead of hanging the suite; a crash costs one row.
Why one process for all cases: the first torch.compile of a process pays a one-time start-up (about
half a minute on 2 cores: Inductor's imports, its compile-worker pool, its C++ prefix) that every
later compile skips. The worker pays it on a trivial function first and reports it as `startup_s`,
so each case's compile_s is that model's own compile, in a fresh cache (each worker has its own).
The parent sends one case at a time, so Inductor is measured back to back with the other engines.

Protocol: one JSON object per line. Worker -> parent: {"startup_s": S}, then one Result per request.
Parent -> worker: {"case": id, "prepared": PREPARED.json, "timing": {...}}.
"""
import dataclasses
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

from measure import Result, Timing, inductor_engine

DEFAULT_MODE = "default"  # on the command line; torch.compile's mode=None
STARTUP_TIMEOUT_S = 600


class InductorWorker:
    """Parent side: starts the worker lazily, sends cases, kills and restarts it after a timeout."""

    def __init__(self, mode, threads, work_dir):
        self.mode, self.threads = mode, threads
        self.tag = f"{mode or DEFAULT_MODE}.t{threads}"
        self.work_dir = work_dir
        self.proc = self.log = None
        self.startup_s = []  # one per start: a restart after a timeout pays it again

    def measure(self, case, prepared_json, timing, timeout_s):
        """Result of torch.compile(mode) on case, or a TIMEOUT/ERROR Result saying why not."""
        if self.proc is None:
            failure = self.start(case)
            if failure:
                return failure
        request = {"case": case.id, "prepared": prepared_json, "timing": dataclasses.asdict(timing)}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = self.read_line(timeout_s)
        if reply is None:
            return self.fail(case, "TIMEOUT", f"compile + measurement did not finish in {timeout_s} s; worker killed (a new one starts for the next case)")
        if not reply:
            return self.fail(case, "ERROR", f"worker died: {self.log_tail()}")
        return Result(**json.loads(reply))

    def start(self, case):
        cache_dir = os.path.join(self.work_dir, f"inductor-cache.{self.tag}")
        shutil.rmtree(cache_dir, ignore_errors=True)  # cold: every compile of this worker is a real one
        self.log_path = os.path.join(self.work_dir, f"inductor.{self.tag}.log")
        self.log = open(self.log_path, "a")
        command = [sys.executable, "-B", os.path.abspath(__file__), str(self.threads), self.mode or DEFAULT_MODE]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     stderr=self.log, start_new_session=True,
                                     env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache_dir))
        hello = self.read_line(STARTUP_TIMEOUT_S)
        if not hello:
            return self.fail(case, "ERROR", f"worker did not start: {self.log_tail()}")
        self.startup_s.append(json.loads(hello)["startup_s"])
        return None

    def read_line(self, timeout_s):
        """The worker's next line; None after timeout_s; "" when it exited."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        return self.proc.stdout.readline() if ready else None

    def fail(self, case, status, detail):
        self.close()
        return Result(case.id, inductor_engine(self.mode), self.threads, status=status, detail=detail)

    def close(self):
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and the compile workers it started
            self.proc.wait()
            self.log.close()
            self.proc = self.log = None

    def log_tail(self):
        with open(self.log_path) as f:
            lines = [line.strip() for line in f if line.strip()]
        return lines[-1][:300] if lines else "(no output)"


# ---------------------------------------------------------------- worker side

def serve(threads, mode):
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # everything else torch prints (also from C++) goes to the log, not into the protocol
    import torch  # imported only now, after the redirection
    from engines import measure_inductor
    from models import all_cases
    from prepare import Prepared

    mode = None if mode == DEFAULT_MODE else mode
    reply(protocol, {"startup_s": warm_up(torch, int(threads), mode)})
    cases = {c.id: c for c in all_cases(quick=False)}
    for line in sys.stdin:
        request = json.loads(line)
        with open(request["prepared"]) as f:
            prepared = Prepared(**json.load(f))
        torch._dynamo.reset()  # a fresh compile per case, no recompile limits carried over
        try:
            result = measure_inductor(cases[request["case"]], prepared, int(threads), Timing(**request["timing"]), mode)
        except Exception as error:  # Inductor could not compile or run it: the row says why
            message = str(error).strip().splitlines()
            result = Result(request["case"], inductor_engine(mode), int(threads), status="ERROR",
                            detail=f"{type(error).__name__}: {message[0][:300] if message else ''}")
        reply(protocol, dataclasses.asdict(result))


def warm_up(torch, threads, mode):
    """Seconds of the process's first torch.compile, on a trivial function: the one-time start-up."""
    started = time.perf_counter()
    torch.set_num_threads(threads)
    with torch.inference_mode():
        torch.compile(lambda x: torch.tanh(x) + 1, mode=mode)(torch.ones(64))
    return time.perf_counter() - started


def reply(protocol, obj):
    protocol.write(json.dumps(obj) + "\n")
    protocol.flush()


if __name__ == "__main__":
    serve(*sys.argv[1:])
