'use strict';
// Node, Bun and Deno: the wasm core read from the package's own .wasm file, which loads several
// times faster than decoding the embedded base64 copy (bench/RESULTS.md, cold start). A bundle
// that left the file behind (esbuild, ncc) falls back to the embedded copy; a file of another
// build in its place is refused by the digest the build step writes below.
const DIGEST = '@WASM_SHA256@';
let bytes = null;
try {
  const fs = require('node:fs');
  const file = fs.readFileSync(require('node:path').join(__dirname, 'royaltykit_wasm_bg.wasm'));
  if (require('node:crypto').createHash('sha256').update(file).digest('hex') === DIGEST) bytes = file;
} catch {
  // no file system, or no file beside this module: the embedded copy below
}
module.exports = bytes ?? require('./wasm.cjs');
