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
