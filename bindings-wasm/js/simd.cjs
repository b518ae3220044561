'use strict';
// The wasm core is built with WebAssembly SIMD (.cargo/config.toml). An engine without it would
// refuse the module with a bare CompileError; this says what is needed instead.

// A module with one function using SIMD instructions, as wasm-feature-detect probes it:
// (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt).
const PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

/** Null when `wasm` (the WebAssembly namespace) runs SIMD modules, else what to tell the user. */
function simdMissing(wasm) {
  if (wasm !== undefined && wasm !== null && typeof wasm.validate === 'function' && wasm.validate(PROBE)) return null;
  return 'royaltykit needs WebAssembly with SIMD (Node >= 16.4, Bun, Deno, Cloudflare Workers, '
    + 'Chrome/Edge >= 91, Firefox >= 89, Safari >= 16.4); this JavaScript engine does not run it';
}

module.exports = { simdMissing, PROBE };
