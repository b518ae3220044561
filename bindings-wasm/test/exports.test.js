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
