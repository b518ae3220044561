'use strict';
// Runs against the test-hooks build of the wasm module (`panicForTests` is not in the npm
// package): a Rust panic traps, the call throws a JS exception, and the module keeps answering.
const test = require('node:test');
const assert = require('node:assert/strict');

const native = require(process.env.ROYALTYKIT_HOOKS_NATIVE);

test('a Rust panic surfaces as a JS exception and the module keeps answering', () => {
  for (let i = 0; i < 3; i++) assert.throws(() => native.panicForTests(), (e) => e instanceof Error);
  assert.match(native.deliveryKey('org', 'dlv_1'), /^dlv_[0-9a-f]{64}$/);
  const w = new native.DedupWindow(10, 60, undefined, new Uint8Array(16));
  assert.equal(w.checkAndInsert('k', 1000), true);
  assert.equal(w.checkAndInsert('k', 1000), false);
});
