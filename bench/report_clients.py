"""make bench, clients (issue 44, point 3): the RESULTS.md section from OUTDIR/clients.json
(written by bench/clients/run.sh).

section(out_dir) -> (markdown, target rows): a table of each client's request() against the same
GET made directly with its HTTP library (min and median µs per call, ratio of medians), and one
target row per client: royaltykit request() ≤ 1.1× the direct request.
"""
from __future__ import annotations

import json
from pathlib import Path

TARGET = 1.1


def section(out_dir: Path) -> tuple[str, list[tuple[str, str, str, str]]]:
    path = Path(out_dir) / "clients.json"
    if not path.exists():
        return "## Clients: cost per call\n\n(not measured: no clients.json)\n", [
            (f"client request() ≤ {TARGET}× the direct request", "not measured", "**missed**", "no clients.json")]
    rows = json.loads(path.read_text())
    pairs: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        pairs.setdefault((r["language"], r["client"]), {})[r["contender"]] = r
    out = [
        "## Clients: cost per call",
        "",
        "One GET (`getPlatformExport`, a ~200 B JSON answer) on loopback with a valid token: royaltykit's",
        "`request()` (token already cached, so the exchange is not timed; the body parsed as the client",
        "returns it) against the same request made directly with the same HTTP library (same headers,",
        "body read and parsed the same way). Server: `bench/clients/server.mjs`, a minimal Node HTTP/1.1",
        "keep-alive server, the same for both contenders. Contenders interleaved in rounds in one process",
        "per language; min and median over the rounds of µs per call; ratio of medians.",
        "",
        "| language | HTTP library | royaltykit min µs | median µs | direct min µs | median µs | royaltykit ÷ direct |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    targets = []
    for (language, client), c in pairs.items():
        rk, d = c.get("royaltykit"), c.get("direct")
        if rk is None or d is None:
            continue
        ratio = rk["median_us"] / d["median_us"]
        out.append(f"| {language} | {client} | {rk['min_us']:,.1f} | {rk['median_us']:,.1f} | {d['min_us']:,.1f} | "
                   f"{d['median_us']:,.1f} | {ratio:.2f}× |")
        met = ratio <= TARGET
        note = (f"{rk['median_us'] - d['median_us']:+,.1f} µs per call over the direct request "
                f"({rk['median_us']:,.0f} vs {d['median_us']:,.0f} µs)")
        if not met:
            note += "; where the time goes: bench/clients/PROFILE.md"
        targets.append((f"{language} {client} client request() ≤ {TARGET}× the direct request", f"{ratio:.2f}×",
                        "met" if met else "**missed**", note))
    return "\n".join(out) + "\n", targets


if __name__ == "__main__":
    import sys

    md, rows = section(Path(sys.argv[1]))
    print(md)
    for row in rows:
        print(" | ".join(row))
