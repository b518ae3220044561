'use strict';
// node:crypto where the runtime has it (Node, Bun, Deno). process.getBuiltinModule first: it
// also works inside ESM bundles, where esbuild's require shim throws; null means wasm's HMAC.
let nodeCrypto = null;
try {
  nodeCrypto = globalThis.process?.getBuiltinModule?.('node:crypto') ?? require('node:crypto');
} catch {
  nodeCrypto = null;
}
module.exports = nodeCrypto;
