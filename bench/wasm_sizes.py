#!/usr/bin/env python3
"""Code bytes per crate in a wasm module that still has its name section (the cargo output,
before wasm-opt). Usage: wasm_sizes.py <module.wasm>  -> JSON {"code": n, "data": n, "crates": [[name, bytes], ...]}
Stdlib only; attributes each function body to the first path segment of its demangled name."""
import collections
import json
import re
import sys


def leb(b, i):
    result = shift = 0
    while True:
        x = b[i]
        i += 1
        result |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return result, i


def main():
    data = open(sys.argv[1], "rb").read()
    i, sections = 8, []
    while i < len(data):
        sid = data[i]
        size, j = leb(data, i + 1)
        sections.append((sid, data[j:j + size]))
        i = j + size
    imported, names, bodies, data_bytes = 0, {}, [], 0
    for sid, b in sections:
        if sid == 2:  # imports: count functions, they come first in the index space
            n, j = leb(b, 0)
            for _ in range(n):
                for _ in range(2):
                    l, j = leb(b, j)
                    j += l
                kind = b[j]
                j += 1
                if kind == 0:
                    _, j = leb(b, j)
                    imported += 1
                elif kind == 1:
                    j += 1
                    flags, j = leb(b, j)
                    _, j = leb(b, j)
                    if flags & 1:
                        _, j = leb(b, j)
                elif kind == 2:
                    flags, j = leb(b, j)
                    _, j = leb(b, j)
                    if flags & 1:
                        _, j = leb(b, j)
                elif kind == 3:
                    j += 2
        elif sid == 10:
            n, j = leb(b, 0)
            for _ in range(n):
                l, j = leb(b, j)
                bodies.append(l)
                j += l
        elif sid == 11:
            data_bytes = len(b)
        elif sid == 0:
            l, j = leb(b, 0)
            if b[j:j + l] == b"name":
                j += l
                while j < len(b):
                    sub = b[j]
                    size, j = leb(b, j + 1)
                    end = j + size
                    if sub == 1:
                        n, k = leb(b, j)
                        for _ in range(n):
                            idx, k = leb(b, k)
                            l, k = leb(b, k)
                            names[idx] = b[k:k + l].decode("utf-8", "replace")
                            k += l
                    j = end
    crates = collections.Counter()
    for idx, size in enumerate(bodies):
        name = names.get(idx + imported, "?")
        m = re.match(r"<?(?:&(?:mut )?)?([A-Za-z_][A-Za-z0-9_]*)", name)
        crates[m.group(1) if m else "?"] += size
    print(json.dumps({"code": sum(bodies), "data": data_bytes, "crates": crates.most_common(15)}))


if __name__ == "__main__":
    main()
