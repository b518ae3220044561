#!/usr/bin/env python3
"""Lists every host loop of the bindings with its length: each function of the Python, Node and
Kotlin packages holding a `while True` / `for (;;)` / `while (true)` loop, or one whose condition
reads a step, that asks a machine for its step (I/O loops, reading a body, are left out), counted in physical
lines from its signature to its end, blank lines left out (docs/ARCHITECTURE.md, "Protocol machines":
issue 41's bound is 30). `--max N` exits 1 when one is longer, except the functions named by
`--known NAME,...` (the loops not yet brought within it, a list that only shrinks: one of them
within the bound again is an error too, so the list is kept exact); the default only lists.

Python functions end where the indentation returns to the `def`'s; Node and Kotlin ones at the
brace that closes the one opening the body (braces inside strings and comments are not told apart,
which none of these functions has).
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    ("py", "bindings-python/python/royaltykit/*.py"),
    ("js", "bindings-wasm/js/*.cjs"),
    ("kt", "bindings-kotlin/kotlin/dev/royaltykit/**/*.kt"),
]
# an endless loop, or one whose condition reads a step (`while (step !is ...)`, `while not isinstance(step, ...)`)
LOOP = re.compile(r"^\s*(while True:|for \(.*;\s*;\s*\)\s*\{|while \(true\) \{|(while|for)\b.*\b[Ss]tep\b)")
# a loop drives a machine when its function asks one for its step
DRIVES = re.compile(r"\b[Ss]teps?\b|\.next\(|\.advance\(")
START = {
    "py": re.compile(r"^(\s*)(async )?def (\w+)\("),
    "js": re.compile(r"^(\s*)(?:static )?(?:async )?(?:function\s*)?\*?\s*#?(\w+)\s*(?:=\s*(?:async )?)?\([^;]*$"),
    "kt": re.compile(r"^(\s*)(?:(?:private|internal|public|override|inline|suspend|protected) )*fun (?:<[^>]+> )?(?:\w+\.)?(\w+)\("),
}


def functions(lang, lines):
    """(name, first line, last line) of each function, outermost loops' functions included."""
    start = START[lang]
    for i, line in enumerate(lines):
        m = start.match(line)
        if not m:
            continue
        name = m.group(3) if lang == "py" else m.group(2)
        if lang == "js" and name in {"if", "for", "while", "switch", "catch", "return"}:
            continue
        indent = len(m.group(1))
        if lang == "py":
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent
                                      or lines[j].lstrip().startswith(")")):
                j += 1
            yield name, i, j - 1
            continue
        if "{" not in line and line.count("(") == line.count(")") and not line.rstrip().endswith("="):
            yield name, i, i  # one expression on one line
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if opened and depth <= 0:
                yield name, i, j
                break
            if not opened and j > i + 6:
                break  # a signature without a body (an abstract member, a declaration)


QUOTES = chr(34) * 3


def code_lines(lang, body):
    """The lines of `body` (a function) that are code."""
    skip = set()
    if lang == "py":
        # the signature ends at the first line ending with ':'; a docstring is the statement after it
        end = next((k for k, line in enumerate(body) if line.rstrip().endswith(":")), 0)
        first = end + 1
        if first < len(body) and body[first].strip().startswith(QUOTES):
            last = first
            while last < len(body) and (body[last].count(QUOTES) < 2 if last == first else QUOTES not in body[last]):
                last += 1
            skip = set(range(first, last + 1))
    return sum(1 for k, line in enumerate(body) if k not in skip and line.strip()
               and not line.strip().startswith(("#", "//", "/*", "* ", "*/")) and line.strip() != "*")


def loops():
    for lang, pattern in SOURCES:
        for path in sorted(ROOT.glob(pattern)):
            lines = path.read_text(encoding="utf-8").split("\n")
            spans = list(functions(lang, lines))
            for k, line in enumerate(lines):
                if not LOOP.match(line):
                    continue
                # the innermost function around the loop
                around = [s for s in spans if s[1] < k <= s[2]]
                if not around:
                    continue
                name, a, b = max(around, key=lambda s: s[1])
                if not DRIVES.search("\n".join(lines[a:b + 1])):
                    continue  # an I/O loop (reading a body, a file), not a machine's
                yield path.relative_to(ROOT), name, a + 1, code_lines(lang, lines[a:b + 1])


def main():
    args = sys.argv[1:]
    limit = int(args[args.index("--max") + 1]) if "--max" in args else None
    known = set(args[args.index("--known") + 1].split(",")) if "--known" in args else set()
    seen, over = set(), set()
    for path, name, line, n in loops():
        if (path, line) in seen:
            continue
        seen.add((path, line))
        print(f"{n:4d}  {path}:{line}  {name}")
        if limit is not None and n > limit:
            over.add(f"{path}:{name}")
    if limit is None:
        return
    errors = [f"{f} is longer than {limit} lines" for f in sorted(over - known)]
    errors += [f"{f} is within {limit} lines now: take it out of --known" for f in sorted(known - over)]
    if errors:
        sys.exit("host_loops: " + "; ".join(errors))


if __name__ == "__main__":
    main()
