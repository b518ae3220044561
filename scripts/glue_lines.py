#!/usr/bin/env python3
"""Counts the hand-written binding glue (issue 25): non-test `bindings-*/src/**/*.rs` and `host/src/**/*.rs`, `bindings-wasm/js/*`
without `.d.ts`/`.json`, `bindings-python/python/**` without `.pyi`, `bindings-kotlin/kotlin/**`; physical lines and
code lines (neither blank nor a comment). `scripts/glue_lines.py [--exclude-machines] [REV]` counts a commit instead
of the work tree; `--exclude-machines` leaves out the protocol machines' glue and the clients' adapters, as
issue 25's target does (`bindings-*/src/machine.rs`, the "protocol machines" section of lib.cjs, and the
client modules: `bindings-python/python/royaltykit/client.py`, `bindings-wasm/js/client.*` and `files.*`,
`bindings-kotlin/kotlin/dev/royaltykit/client/`)."""
import subprocess, sys, re
args = [a for a in sys.argv[1:] if a != "--exclude-machines"]
exclude_machines = len(args) < len(sys.argv) - 1
rev = args[0] if args else None
def files():
    if rev:
        out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev], capture_output=True, text=True).stdout.split()
    else:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True, text=True).stdout.split()
    for f in out:
        if exclude_machines and re.match(r"bindings-[^/]+/src/machine\.rs$|bindings-python/python/royaltykit/client\.py$|bindings-wasm/js/(client|files)\.|bindings-kotlin/kotlin/dev/royaltykit/client/", f):
            continue
        if re.match(r"(bindings-[^/]+|host)/src/.*\.rs$", f) and not f.endswith("tests.rs") and "/tests/" not in f: yield f
        elif re.match(r"bindings-wasm/js/[^/]+$", f) and not f.endswith(".d.ts") and not f.endswith(".json"): yield f
        elif f.startswith("bindings-python/python/") and not f.endswith(".pyi") and not f.endswith("py.typed"): yield f
        elif f.startswith("bindings-kotlin/kotlin/"): yield f
def text(f):
    if rev: return subprocess.run(["git", "show", f"{rev}:{f}"], capture_output=True, text=True).stdout
    return open(f, encoding="utf-8").read()
phys = code = 0
for f in files():
    t = text(f)
    lines = t.splitlines()
    if exclude_machines and f.endswith("lib.cjs"):
        # the section from its "// ---- protocol machines" header to the next section header
        start = next((i for i, l in enumerate(lines) if l.startswith("// ---- protocol machines")), None)
        if start is not None:
            end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("// ---- ")), len(lines))
            lines = lines[:start] + lines[end:]
    phys += len(lines)
    for l in lines:
        s = l.strip()
        if not s or s.startswith(("//", "#", "*", "/*", '"""', "///", "//!")): continue
        code += 1
print(f"physical {phys}, code {code}")
