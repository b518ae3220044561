# Sourced by the scripts in this folder: repo root, version, and a temporary work directory
# removed on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export ROYALTYKIT_VECTORS="${ROYALTYKIT_VECTORS:-$ROOT/tests/vectors}" ROYALTYKIT_ROOT="$ROOT"

# Creates an empty npm project in $WORK and installs the packed npm package into it.
install_npm_package() {
  cd "$WORK"
  printf '{"name":"royaltykit-consumer","private":true}\n' > package.json
  npm install --no-audit --no-fund --loglevel=error "$ROOT/dist/royaltykit-$VERSION.tgz" >/dev/null
}

# two_lanes NAME LANE_A LANE_B: runs the functions LANE_A and LANE_B side by side, each in a
# subshell with set -euo pipefail, logging to target/NAME-a.log and target/NAME-b.log, both
# printed when both end; fails when either failed. A release build ends in fat LTO with one
# codegen unit, which uses one core, so two lanes keep both cores busy; each lane builds in a cargo
# target directory of its own (cargo locks one per build).
two_lanes() {
  local name=$1 status=0 a b
  ( set -euo pipefail; "$2" ) > "$ROOT/target/$name-a.log" 2>&1 & a=$!
  ( set -euo pipefail; "$3" ) > "$ROOT/target/$name-b.log" 2>&1 & b=$!
  wait "$a" || { status=1; echo "$name: lane a ($2) failed" >&2; }
  wait "$b" || { status=1; echo "$name: lane b ($3) failed" >&2; }
  cat "$ROOT/target/$name-a.log" "$ROOT/target/$name-b.log" >&2
  return "$status"
}
