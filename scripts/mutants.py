#!/usr/bin/env python3
"""Reintroduces the failures the simulator exists to catch (issue 39: 1, 2, 3 and 7; 8, the
rate margin a CI run found; 9, the service's clock; 10, `report`'s refusals of an outcome the
pending step cannot have), one at a time, in a scratch copy of the workspace, and runs the
simulator against each: every mutant must make it fail. Prints the seed and invariant that caught each; exits 1 if one was not caught.

Usage: scripts/mutants.py [--seeds N] [--only TEXT]   (make mutants)

Each mutant is exact replacements in the core's source: when the code they name changes, the
script stops with "mutant no longer applies" rather than passing unnoticed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EJ = "core/src/machine/export_job.rs"
SESSION = "core/src/machine/session.rs"
RECEIPT = "core/src/machine/receipt.rs"
RATE = "core/src/retry/rate.rs"
INBOX = "core/src/machine/inbox.rs"

MUTANTS = {
    "1a: adopt only an item that repeats every member of the body sent": [
        (EJ, "if reconciling && !sent.iter().all(|(k, v)| item.get(k).is_none_or(|x| x == v)) {",
         "if reconciling && !sent.iter().all(|(k, v)| item.get(k) == Some(v)) {"),
    ],
    "1b: read one page of the list (no cursor)": [
        (EJ, "            Next::End => Ok(Ok(true)),\n", "            Next::End | Next::Cursor(_) => Ok(Ok(true)),\n"),
    ],
    "1c: conclude at once that nothing was created (no second look)": [
        (EJ, "pub const DEFAULT_RECONCILE_GRACE_SECONDS: f64 = 7.0;",
         "pub const DEFAULT_RECONCILE_GRACE_SECONDS: f64 = 0.0;"),
    ],
    "2: every call that needs a token exchanges it (no single flight)": [
        (SESSION, "            if left > 0.0 {", "            if left > 0.0 && false {"),
    ],
    "3: a token due at once is never used, and refreshes are not bounded (loops)": [
        (SESSION, "if !refused && (fresh || !due) {", "if !refused && !due {"),
        (SESSION, "if use_.refreshes >= limit {", "if use_.refreshes >= limit && false {"),
    ],
    "8: a place in a rate window covers the truncation to the second only, not latency": [
        (RATE, "pub const RATE_MARGIN_SECONDS: i64 = 2;", "pub const RATE_MARGIN_SECONDS: i64 = 1;"),
    ],
    "9: a Retry-After date counted from the host's clock alone (a clock ahead of the service's retries early)": [
        ("core/src/retry/retry_after.rs", "ra.seconds = ra.seconds.max(from_date.seconds);", "let _ = from_date;"),
    ],
    "10a: a plain receipt takes a mark (`marked`) as its commit": [
        (RECEIPT, "(O::Marked(true), Phase::Committing { .. }) if self.transactional => self.committed(),",
         "(O::Marked(true), Phase::Committing { .. }) => self.committed(),"),
    ],
    "10b: a transactional receipt takes `done` as its mark (a mark that changed no row counted as one)": [
        (RECEIPT, "(O::Done, Phase::Committing { .. }) if !self.transactional => self.committed(),",
         "(O::Done, Phase::Committing { .. }) => self.committed(),"),
    ],
    "10c: an inbox worker takes a mark reported twice (at its transaction's commit)": [
        (INBOX, 'self.expect(self.phase == Phase::Marking, "a mark")?;',
         'self.expect(matches!(self.phase, Phase::Marking | Phase::Committing), "a mark")?;'),
    ],
    "10d: an inbox worker's refused claim still resets its count of store failures": [
        (INBOX, '        self.expect(self.phase == Phase::Claiming, "a claim")?;\n        let (_, now) = super::check_now(now)?;\n        self.store_failures = 0;\n',
         '        self.store_failures = 0;\n        self.expect(self.phase == Phase::Claiming, "a claim")?;\n        let (_, now) = super::check_now(now)?;\n'),
    ],
    "7: the content key claimed by default (same-second twins merged)": [
        (RECEIPT, "            claim_content_key: false,\n", "            claim_content_key: true,\n"),
    ],
}


def copy_workspace(dst):
    for name in ("Cargo.toml", "Cargo.lock", ".cargo"):
        src = os.path.join(ROOT, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dst, name))
        elif os.path.exists(src):
            shutil.copy2(src, dst)
    for member in ("core", "bindings-wasm", "bindings-python", "bindings-kotlin", "host", "tests"):
        shutil.copytree(os.path.join(ROOT, member), os.path.join(dst, member),
                        ignore=shutil.ignore_patterns("node_modules", "target", "*.whl", "*.jar"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20000)
    ap.add_argument("--only", default="", help="run the mutants whose name contains this text")
    args = ap.parse_args()
    target = os.path.join(ROOT, "target", "mutants")
    missed = []
    ran = 0
    for name, edits in MUTANTS.items():
        if args.only not in name:
            continue
        ran += 1
        with tempfile.TemporaryDirectory(prefix="royaltykit-mutant-") as tmp:
            copy_workspace(tmp)
            for path, old, new in edits:
                p = os.path.join(tmp, path)
                text = open(p, encoding="utf-8").read()
                if text.count(old) != 1:
                    sys.exit(f"mutant {name!r} no longer applies: {old!r} is not in {path} exactly once")
                open(p, "w", encoding="utf-8").write(text.replace(old, new))
            env = dict(os.environ, CARGO_TARGET_DIR=target, ROYALTYKIT_SIM_SEEDS=str(args.seeds),
                       ROYALTYKIT_VECTORS=os.path.join(ROOT, "tests", "vectors"))
            began = time.time()
            r = subprocess.run(["cargo", "test", "--release", "--quiet", "-p", "royaltykit", "--test", "simulation",
                                "--", "--nocapture"], cwd=tmp, env=env, capture_output=True, text=True)
            out = r.stdout + r.stderr
            m = re.search(r"seed (\d+) \((\w+) run\) broke `([^`]+)`", out)
            summary = re.search(r"simulation: (\d+) seeds", out)
            if r.returncode != 0 and m:
                print(f"caught  {name}\n        by seed {m.group(1)} ({m.group(2)} run): `{m.group(3)}` "
                      f"({time.time() - began:.0f} s)")
            else:
                print(f"MISSED  {name}: the simulator passed"
                      + (f" {summary.group(1)} seeds" if summary else "")
                      + ("" if r.returncode == 0 else f" (exit {r.returncode}: {out[-2000:]})"))
                missed.append(name)
    if missed:
        sys.exit(f"{len(missed)} mutant(s) not caught")
    print(f"all {ran} mutants caught")


if __name__ == "__main__":
    main()
