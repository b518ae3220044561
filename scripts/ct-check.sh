#!/usr/bin/env bash
# make ct-check: dudect statistical test of signature comparison (matching prefix of 31 bytes
# versus 0), CT_ITERATIONS runs of 100,000 measurements each (default 30: 3 million).
# Prints the t statistic; fails when |t| reaches 4.5.
set -euo pipefail
cd "$(dirname "$0")/../tools/ct-check"
ITER=${CT_ITERATIONS:-30}
CARGO_TARGET_DIR=../../target/ct-check cargo build --quiet --release
# --continuous never ends by itself: keep the first ITER reports; the runner then stops on the
# closed pipe, which is expected.
set +o pipefail
out=$(../../target/ct-check/release/royaltykit-ct-check --continuous compare 2>&1 | head -n "$ITER" | tee /dev/stderr | tail -1)
set -o pipefail
t=$(sed -nE 's/.*max t = ([+-]?[0-9.]+).*/\1/p' <<<"$out")
n=$(sed -nE 's/.*n == ([+-]?[0-9.]+M?).*/\1/p' <<<"$out")
echo "ct-check: $((ITER * 100000)) measurements ($n in the tested percentile), max |t| = ${t#[-+]} (threshold 4.5)"
awk -v t="$t" 'BEGIN { if (t < 0) t = -t; exit !(t < 4.5) }'
