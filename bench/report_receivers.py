#!/usr/bin/env python3
"""The end-to-end receiver rows of bench/RESULTS.md, from OUTDIR/receivers.json (bench/e2e/run.py).

section(out_dir) -> (markdown, targets): a table per language (integration, store, deliveries/s
royaltykit / hand, ratio, p99 royaltykit / hand, ratio) and the two target rows
(target, measured, "met" | "**missed**", note) of issue 44 point 2: throughput at least 0.9x the
hand-written endpoint's, and p99 at most 1.2x its, every integration and store.
`python3 bench/report_receivers.py OUTDIR` prints both.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

MIN_RPS_RATIO = 0.9  # royaltykit rps / hand rps
MAX_P99_RATIO = 1.2  # royaltykit p99 / hand p99
STORES = {"memory": 0, "redis": 1, "postgres": 2}


def pairs(rows: list[dict]) -> list[tuple[dict, dict]]:
    """(royaltykit, hand) rows of each language x integration x store, in a stable order."""
    by: dict[tuple, dict] = {}
    for r in rows:
        by.setdefault((r["language"], r["integration"], r["store"]), {})[r["impl"]] = r
    keys = sorted(by, key=lambda k: (k[0], k[1], STORES.get(k[2], 9), k[2]))
    return [(by[k]["royaltykit"], by[k]["hand"]) for k in keys if {"royaltykit", "hand"} <= by[k].keys()]


def ms(v: float) -> str:
    return f"{v:g}"


def section(out_dir: Path) -> tuple[str, list[tuple[str, str, str, str]]]:
    path = Path(out_dir) / "receivers.json"
    if not path.exists():
        return "", []
    ps = pairs(json.loads(path.read_text()))
    if not ps:
        return "", []
    first = ps[0][0]
    out = ["## Receivers end to end\n",
           f"Deliveries per second through each framework integration, one app process, autocannon on "
           f"loopback ({first.get('connections', '?')} connections, {ms(first['seconds']) if 'seconds' in first else '?'} s measured after a warm-up, "
           f"every request a fresh signed delivery with a unique id), against a hand-written endpoint in the "
           f"same framework doing the same work (bench/e2e). Best by throughput of {len(first.get('rps_runs', [0]))} "
           f"runs per implementation, alternated with the other's; p99 is that run's. \"rk ÷ hand\" > 1 for "
           f"throughput means royaltykit served more; < 1 for p99 means its tail was shorter.\n"]
    language = None
    worst_rps: tuple[float, str] | None = None
    worst_p99: tuple[float, str] | None = None
    missed_rps, missed_p99 = [], []
    for rk, hand in ps:
        if rk["language"] != language:
            language = rk["language"]
            out += [f"\n**{language}**\n",
                    "| integration | store | req/s royaltykit / hand | rk ÷ hand | p99 ms royaltykit / hand | rk ÷ hand |",
                    "|---|---|---:|---:|---:|---:|"]
        rps_ratio = rk["rps"] / hand["rps"]
        # a p99 of 0 ms (autocannon's resolution is 1 ms) counts as 1 ms
        p99_ratio = max(rk["p99_ms"], 1) / max(hand["p99_ms"], 1)
        out.append(f"| {rk['integration']} | {rk['store']} | {rk['rps']:,} / {hand['rps']:,} | {rps_ratio:.2f}× | "
                   f"{ms(rk['p99_ms'])} / {ms(hand['p99_ms'])} | {p99_ratio:.2f}× |")
        what = f"{language} {rk['integration']} {rk['store']}"
        if worst_rps is None or rps_ratio < worst_rps[0]:
            worst_rps = (rps_ratio, what)
        if worst_p99 is None or p99_ratio > worst_p99[0]:
            worst_p99 = (p99_ratio, what)
        if rps_ratio < MIN_RPS_RATIO:
            missed_rps.append(f"{what} {rps_ratio:.2f}×")
        if p99_ratio > MAX_P99_RATIO:
            missed_p99.append(f"{what} {p99_ratio:.2f}×")
    n = len(ps)
    targets = [
        ("Receivers end to end: throughput ≥ 0.9× hand-written, every integration and store",
         f"lowest {worst_rps[0]:.2f}× ({worst_rps[1]}); {n - len(missed_rps)} of {n} met",
         "met" if not missed_rps else "**missed**", "; ".join(missed_rps)),
        ("Receivers end to end: p99 ≤ 1.2× hand-written, every integration and store",
         f"highest {worst_p99[0]:.2f}× ({worst_p99[1]}); {n - len(missed_p99)} of {n} met",
         "met" if not missed_p99 else "**missed**", "; ".join(missed_p99)),
    ]
    return "\n".join(out) + "\n", targets


if __name__ == "__main__":
    md, rows = section(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
    print(md)
    print("| target | measured | | note |\n|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
