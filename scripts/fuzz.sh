#!/usr/bin/env bash
# make fuzz: every cargo-fuzz target for FUZZ_SECONDS (default 60) each, on the nightly
# toolchain present on the machine. Seeds: fuzz/seeds/<target> (committed); the growing corpus
# and any crash artifacts live under .build/fuzz (ignored). Prints executions per target.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${FUZZ_SECONDS:-60}
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "make fuzz needs a nightly toolchain (rustup toolchain install nightly)" >&2
  exit 1
fi
if ! "$ROOT/.build/tools/bin/cargo-fuzz" --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --root "$ROOT/.build/tools" --quiet
fi
export PATH="$ROOT/.build/tools/bin:$PATH"
cd fuzz
status=0
for target in $(cargo +nightly fuzz list); do
  corpus="$ROOT/.build/fuzz/corpus/$target"
  mkdir -p "$corpus" "$ROOT/.build/fuzz/artifacts/$target"
  [ -d "seeds/$target" ] && cp -n seeds/"$target"/* "$corpus"/ 2>/dev/null || true
  log="$ROOT/.build/fuzz/$target.log"
  if cargo +nightly fuzz run "$target" "$corpus" -- -max_total_time="$SECONDS_EACH" \
       -artifact_prefix="$ROOT/.build/fuzz/artifacts/$target/" > "$log" 2>&1; then
    result=ok
  else
    result="CRASH (see $log and .build/fuzz/artifacts/$target)"
    status=1
  fi
  execs=$(grep -oE 'Done [0-9]+ runs' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
  printf '%-16s %12s executions in %ss  %s\n' "$target" "$execs" "$SECONDS_EACH" "$result"
done
exit $status
