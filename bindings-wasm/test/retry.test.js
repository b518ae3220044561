'use strict';
// tests/vectors/retry.json against the installed package, plus JS-surface checks.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rk = require('royaltykit');

const VECTORS = process.env.ROYALTYKIT_VECTORS || path.join(__dirname, '..', '..', 'tests', 'vectors');
const V = JSON.parse(fs.readFileSync(path.join(VECTORS, 'retry.json'), 'utf8'));

test('retry decision vectors', async (t) => {
  assert.ok(V.decisions.length >= 100);
  for (const c of V.decisions) {
    await t.test(`tcId ${c.tcId}: ${c.comment}`, () => {
      const i = c.input;
      const run = () =>
        rk.decideRetry({
          retryClass: i.retry_class, status: i.status, headers: i.headers, transport: i.transport, attempt: i.attempt,
          elapsedSeconds: i.elapsed_seconds, tokenRefreshed: i.token_refreshed, random: i.random, now: i.now,
          maxAttempts: i.max_attempts, maxElapsedSeconds: i.max_elapsed_seconds,
        });
      if (c.error) {
        assert.throws(run, (e) => e instanceof rk.InvalidArgumentError && e.code === c.error);
        return;
      }
      const d = run();
      assert.equal(d.action, c.expected.action);
      assert.equal(d.rule, c.expected.rule);
      assert.ok(Math.abs(d.delaySeconds - c.expected.delay_seconds) < 1e-9, `${d.delaySeconds}`);
      assert.equal(d.reconcile, c.expected.reconcile);
      assert.ok(d.reason.length > 10);
    });
  }
});

test('webhook schedule vectors', () => {
  const s = V.schedule;
  assert.deepEqual(rk.webhookRetrySchedule(), s.delays);
  assert.equal(rk.webhookGivesUpAt(s.first_attempt_at), s.gives_up_at);
  for (const c of s.next_attempt_at) assert.equal(rk.webhookNextAttemptAt(s.first_attempt_at, c.attempts_made), c.expected);
  for (const n of s.invalid_attempts_made) assert.throws(() => rk.webhookNextAttemptAt(s.first_attempt_at, n), (e) => e.code === 'invalid_argument');
});

test('backoff vectors', () => {
  for (const c of V.backoff) {
    const policy = c.policy && { steps: c.policy.steps, band: c.policy.band, jitter: c.policy.jitter, capSeconds: c.policy.cap_seconds };
    const run = () => rk.backoffDelay(c.attempt, { random: c.random, policy });
    if (c.error) assert.throws(run, (e) => e.code === c.error, c.comment);
    else assert.ok(Math.abs(run() - c.expected) < 1e-9, c.comment);
  }
});

test('Retry-After vectors', () => {
  for (const c of V.retry_after) {
    assert.deepEqual(rk.parseRetryAfter(c.value, c.now, { capSeconds: c.cap_seconds }), c.expected, c.comment);
  }
});

test('rate budget vectors', () => {
  for (const c of V.rate_budget) {
    const make = () => new rk.RateBudget(c.preset ?? c.windows.map(([name, limit, windowSeconds]) => ({ name, limit, windowSeconds })));
    if (c.error) {
      assert.throws(make, (e) => e.code === c.error, c.comment);
      continue;
    }
    const b = make();
    for (const op of c.ops) {
      for (let k = 0; k < (op.repeat ?? 1); k++) {
        assert.deepEqual(b.tryAcquire(op.now), { allowed: op.allowed, waitUntil: op.wait_until ?? null, limit: op.limit ?? null }, `${c.comment} ${JSON.stringify(op)}`);
      }
    }
  }
});

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
