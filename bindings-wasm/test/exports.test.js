'use strict';
// What the installed package exports: no test hook (a leading underscore, a panic, an FFI
// floor), and every error carries the status a webhook receiver should answer.
const test = require('node:test');
const assert = require('node:assert/strict');
const rk = require('royaltykit');
const native = require(require('node:path').join(require('node:path').dirname(require.resolve('royaltykit')), 'native/royaltykit_wasm.cjs'));

test('no test-only name is exported by the package or its wasm module', () => {
  const names = [...Object.keys(rk), ...Object.keys(native)];
  assert.ok(names.length > 40);
  assert.deepEqual(names.filter((n) => /^_|panic|floor|memory/i.test(n)), []);
});

test('errors carry the status a receiver should answer', () => {
  const body = Buffer.from('{"event":"x"}');
  const signed = rk.signWebhook('whsec_a', body, { timestamp: 1000 });
  const cases = [
    [() => rk.verifyWebhook(signed, body, 'whsec_other', { now: 1000 }), 'no_matching_signature', 401],
    [() => rk.verifyWebhook(signed, body, 'whsec_a', { now: 1000, maxBodyBytes: 4 }), 'payload_too_large', 413],
    [() => rk.verifyWebhook({}, body, 'whsec_a', { now: 1000 }), 'missing_header', 400],
    [() => rk.verifyWebhook(signed, body, '', { now: 1000 }), 'invalid_secret', 500],
    [() => rk.verifyWebhook(signed, body, 'whsec_a', { now: 1000, toleranceSeconds: -1 }), 'invalid_argument', 500],
  ];
  for (const [run, code, status] of cases) {
    assert.throws(run, (e) => e instanceof rk.RoyaltyKitError && e.code === code && e.httpStatus === status, code);
  }
});

test('the wasm core needs SIMD: an engine without it gets an error saying so, not a bare CompileError', () => {
  const { execFileSync } = require('node:child_process');
  const dir = require('node:path').dirname(require.resolve('royaltykit'));
  const { simdMissing, PROBE } = require(require('node:path').join(dir, 'native/simd.cjs'));
  // The probe really uses SIMD: the same bytes with its SIMD instruction prefix broken do not validate.
  assert.equal(WebAssembly.validate(PROBE), true);
  const broken = Uint8Array.from(PROBE, (b) => (b === 0xfd ? 0xff : b));
  assert.equal(WebAssembly.validate(broken), false);
  assert.equal(simdMissing(WebAssembly), null);
  assert.match(simdMissing({ validate: () => false }), /needs WebAssembly with SIMD .*Safari >= 16\.4/);
  assert.match(simdMissing(undefined), /needs WebAssembly with SIMD/);
  // The package in a child process whose engine refuses SIMD modules.
  const script = `WebAssembly.validate = () => false; try { require(${JSON.stringify(dir)}); console.log('loaded'); } catch (e) { console.log(e.message); }`;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.match(out, /^royaltykit needs WebAssembly with SIMD/);
});
