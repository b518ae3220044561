'use strict';
// The retry surface of the installed package beyond the shared vectors (run by vectors.test.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const rk = require('royaltykit');

test('defaults: random from Math.random stays in the band; now from the clock', () => {
  for (let i = 0; i < 50; i++) {
    const d = rk.backoffDelay(4);
    assert.ok(d >= 30 && d < 60);
  }
  const d = rk.decideRetry({ retryClass: 'read', status: 429, headers: { 'retry-after': new Date(Date.now() + 30_000).toUTCString() }, attempt: 1 });
  assert.equal(d.action, 'retry');
  assert.ok(d.delaySeconds >= 28 && d.delaySeconds <= 31, String(d.delaySeconds));
  assert.equal(rk.parseRetryAfter(undefined), null);
});

test('retry bad input: typed errors, TypeError for wrong host types', () => {
  assert.throws(() => rk.decideRetry({ retryClass: 'read', status: 503 }), (e) => e.code === 'invalid_argument'); // no attempt
  assert.throws(() => rk.decideRetry({ retryClass: 'read', attempt: 1 }), (e) => e.code === 'invalid_argument'); // no outcome
  assert.throws(() => rk.decideRetry({ retryClass: 'read', status: 500, transport: 'timeout', attempt: 1 }), (e) => e.code === 'invalid_argument');
  assert.throws(() => rk.decideRetry({ retryClass: 'read', status: 500, attempt: 1, random: NaN }), (e) => e.code === 'invalid_argument');
  assert.throws(() => rk.decideRetry({ retryClass: 'read', status: 500, attempt: 1.5 }), (e) => e.code === 'invalid_argument');
  assert.throws(() => rk.decideRetry(null), TypeError);
  assert.throws(() => rk.decideRetry({ retryClass: 5, status: 500, attempt: 1 }), TypeError);
  assert.throws(() => rk.backoffDelay('1'), TypeError);
  assert.throws(() => new rk.RateBudget(42), TypeError);
});
