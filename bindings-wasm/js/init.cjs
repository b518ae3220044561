'use strict';
// Instantiates the wasm core, once, before the API module runs: from the package's .wasm file
// on Node, Bun and Deno, else from the embedded bytes (package.json `imports`, #wasm).
const { simdMissing } = require('./simd.cjs');

const missing = simdMissing(WebAssembly);
if (missing) throw new Error(missing);
require('./royaltykit_wasm.cjs').initSync({ module: require('#wasm') });
