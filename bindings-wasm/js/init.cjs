'use strict';
// Instantiates the wasm core from the embedded bytes, once, before the API module runs.
require('./royaltykit_wasm.cjs').initSync({ module: require('./wasm.cjs') });
