#!/usr/bin/env python3
"""Prints target/timings.tsv (written by scripts/timed.sh, one line a step of `make test`) as a
table: each step's wall time, its share of the whole, and the total since `make test` began.

Usage: timings.py target/timings.tsv [started-at-unix-seconds]
"""
import sys
import time


def main() -> None:
    rows = []
    for line in open(sys.argv[1], encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 3:
            rows.append((parts[0], float(parts[1]), parts[2]))
    measured = sum(s for _, s, _ in rows)
    total = time.time() - float(sys.argv[2]) if len(sys.argv) > 2 else measured
    width = max([len(n) for n, _, _ in rows] + [len("make test in all")])
    print(f"\nmake test: time per step (wall clock; {len(rows)} steps)")
    print(f"  {'step':<{width}}  {'min:s':>7}  {'share':>5}")
    for name, seconds, status in rows:
        mark = "" if status == "0" else f"  (exit {status})"
        print(f"  {name:<{width}}  {int(seconds // 60):>3}:{int(seconds % 60):02d}  {100 * seconds / max(total, 1):4.0f}%{mark}")
    print(f"  {'steps measured':<{width}}  {int(measured // 60):>3}:{int(measured % 60):02d}")
    print(f"  {'make test in all':<{width}}  {int(total // 60):>3}:{int(total % 60):02d}")


if __name__ == "__main__":
    main()
