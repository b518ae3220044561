#!/usr/bin/env bash
# timed.sh STEP COMMAND...: runs COMMAND and records how long it took, as "STEP<TAB>seconds<TAB>status"
# in target/timings.tsv, which `make test` prints as a table at its end (scripts/timings.py).
# The command's exit status is the script's.
set -uo pipefail
step=$1; shift
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$root/target"
start=$EPOCHREALTIME
"$@"
status=$?
end=$EPOCHREALTIME
awk -v s="$step" -v a="$start" -v b="$end" -v c="$status" 'BEGIN { printf "%s\t%.1f\t%s\n", s, b - a, c }' \
  >> "$root/target/timings.tsv"
exit $status
