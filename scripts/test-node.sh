#!/usr/bin/env bash
# Installs dist/royaltykit-<version>.tgz into an empty temporary project (as a user would) and
# runs the node --test suite there.
source "$(dirname "$0")/common.sh"
install_npm_package
cp "$ROOT"/bindings-wasm/test/*.test.js .
node --test --test-reporter=spec *.test.js > report.txt 2>&1 || { cat report.txt; exit 1; }
grep -E '^ℹ (tests|pass|fail|skipped)' report.txt
