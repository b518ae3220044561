'use strict';
// The package for require() and bundlers: the wasm is instantiated synchronously from the bytes
// embedded in native/wasm.cjs (no file system, no fetch), so Node bundles, browsers, Bun and Deno
// load it the same way. Cloudflare Workers take index.workerd.mjs instead.
require('./native/init.cjs');
module.exports = require('./lib.cjs');
