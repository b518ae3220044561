#!/usr/bin/env bash
# make demo: installs the packed npm package into an empty directory and runs the receiver demo.
source "$(dirname "$0")/common.sh"
install_npm_package
cp "$ROOT"/bindings-wasm/demo/*.js .
node demo.js
