'use strict';
// Instantiates the wasm core from the embedded bytes, once, before the API module runs.
const { simdMissing } = require('./simd.cjs');

const missing = simdMissing(WebAssembly);
if (missing) throw new Error(missing);
require('./royaltykit_wasm.cjs').initSync({ module: require('./wasm.cjs') });
