"""The timing harness of make bench's Python parts (bench/python/bench.py, bench/clients/bench.py).

time_interleaved(contenders, rounds, batch_ns) runs each contender `warmup` times, sizes one batch
per contender to take about batch_ns, then times `rounds` rounds of one batch per contender in
turn, and returns per contender (name, sorted ns per call of each round).
"""
import time


def calibrate(fn, batch_ns, max_n=10_000_000, growth=4):
    """How many calls of fn take about batch_ns (found by growing a trial batch)."""
    n = 1
    while True:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        dt = time.perf_counter_ns() - t0
        if dt > batch_ns / 4 or n > max_n:
            return max(1, round(n * batch_ns / max(dt, 1)))
        n *= growth


def time_interleaved(contenders, rounds, batch_ns, warmup=50, max_n=10_000_000, growth=4):
    """[(name, sorted ns per call of each round)] for contenders [(name, fn)], interleaved."""
    batches = []
    for _, fn in contenders:
        for _ in range(warmup):
            fn()
        batches.append(calibrate(fn, batch_ns, max_n, growth))
    samples = [[] for _ in contenders]
    for _ in range(rounds):
        for k, (_, fn) in enumerate(contenders):
            n = batches[k]
            t0 = time.perf_counter_ns()
            for _ in range(n):
                fn()
            samples[k].append((time.perf_counter_ns() - t0) / n)
    return [(name, sorted(s)) for (name, _), s in zip(contenders, samples)]
