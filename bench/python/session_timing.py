"""Timing a session's run() for the scripts beside this file."""
import time


def best_ms(sess, inputs, runs=12, settle_s=0.0):
    """The fastest of `runs` runs, in milliseconds, after one untimed run and `settle_s` seconds
    of quiet (for another engine's spinning threads to stop)."""
    sess.run(None, inputs)
    time.sleep(settle_s)
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        sess.run(None, inputs)
        best = min(best, (time.perf_counter() - start) * 1e3)
    return best
