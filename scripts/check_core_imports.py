#!/usr/bin/env python3
"""The modules of the core depend on each other without a circle: every `crate::` path in a
module's code (comments and doc links aside; a name the crate root re-exports counts as the
module that defines it) is an edge, and the graph of top-level modules must have no cycle.
Prints the graph's order, or the cycle found and exits 1. `--self-test` proves it finds one.

Usage: check_core_imports.py core/src | check_core_imports.py --self-test
"""
import os
import re
import sys
import tempfile


def code_of(path):
    """The file without comments (line comments, doc comments, block comments) and strings."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def graph(src):
    lib = code_of(os.path.join(src, "lib.rs"))
    modules = set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", lib, re.M))
    owner = {m: m for m in modules}
    for module, names in re.findall(r"pub\s+use\s+(\w+)::\{([^}]*)\}", lib):
        for name in re.findall(r"\w+", names):
            owner.setdefault(name, module)
    for module, name in re.findall(r"pub\s+use\s+(\w+)::(\w+)\s*;", lib):
        owner.setdefault(name, module)
    edges = {m: {} for m in modules}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            top = os.path.relpath(path, src).split(os.sep)[0].removesuffix(".rs")
            if top not in modules:
                continue
            code = code_of(path)
            names = re.findall(r"\bcrate::(\w+)", code)
            for group in re.findall(r"\bcrate::\{([^}]*)\}", code, re.S):
                names += re.findall(r"(?:^|,)\s*(\w+)", group)
            for name in names:
                target = owner.get(name)
                if target and target != top:
                    edges[top].setdefault(target, os.path.relpath(path, src))
    return edges


def find_cycle(edges):
    """A cycle as a list of modules, or None; otherwise every module in dependency order."""
    state, order, stack = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(edges[m]):
            if state.get(d) == "open":
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[m] = "done"
        order.append(m)
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found, None
    return None, order


def check(src):
    edges = graph(src)
    cycle, order = find_cycle(edges)
    if cycle:
        steps = [f"{a} -> {b} ({edges[a][b]})" for a, b in zip(cycle, cycle[1:])]
        print("core modules import each other in a circle:\n  " + "\n  ".join(steps), file=sys.stderr)
        return 1
    print(f"core imports: {len(edges)} modules, {sum(len(e) for e in edges.values())} edges, no circle "
          f"(leaves first: {' '.join(order)})")
    return 0


def self_test():
    import contextlib
    import io

    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
    with tempfile.TemporaryDirectory() as d, quiet[0], quiet[1]:
        def write(name, text):
            open(os.path.join(d, name), "w").write(text)
        write("lib.rs", "mod a;\npub mod b;\npub use b::{Thing, other};\n")
        write("a.rs", "// crate::b in a comment is no edge\nuse crate::Thing;\n")
        write("b.rs", "/// [`crate::a`] in a doc link is no edge\npub struct Thing;\n")
        assert check(d) == 0, "no circle yet"
        write("b.rs", "pub struct Thing;\nfn f() { crate::a::g() }\n")
        assert check(d) == 1, "a -> b (through the root re-export) -> a must be found"
    print("check_core_imports self-test: a circle through a root re-export is found, comments are not edges")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        sys.exit(check(sys.argv[1]))
