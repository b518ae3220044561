'use strict';
// Runs the shared vectors (tests/vectors/*.json) against the installed npm package.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rk = require('royaltykit');

const VECTORS = process.env.ROYALTYKIT_VECTORS || path.join(__dirname, '..', '..', 'tests', 'vectors');
const load = (name) => JSON.parse(fs.readFileSync(path.join(VECTORS, name), 'utf8'));
const bytes = (b) => ('utf8' in b ? Buffer.from(b.utf8, 'utf8') : Buffer.from(b.hex, 'hex'));

const webhook = load('webhook.json');
assert.ok(webhook.cases.length >= 60);

test('webhook vectors', async (t) => {
  for (const c of webhook.cases) {
    await t.test(`tcId ${c.tcId}: ${c.comment}`, () => {
      const i = c.input;
      const opts = { now: i.now };
      if (i.tolerance !== undefined) opts.toleranceSeconds = i.tolerance;
      if (i.max_body_bytes !== undefined) opts.maxBodyBytes = i.max_body_bytes;
      const run = () => rk.verifyWebhook(i.headers, bytes(i.body), i.secrets, opts);
      if (c.result === 'valid') {
        const v = run();
        const e = c.expected;
        assert.equal(v.deliveryId, e.delivery_id);
        assert.equal(v.timestamp, e.timestamp);
        assert.equal(v.secretIndex, e.secret_index);
        assert.equal(v.contentKey, e.content_key);
        assert.equal(v.event.name, e.event.name);
        assert.equal(v.event.resourceType, e.event.resource_type);
        assert.equal(v.event.resourceReference, e.event.resource_reference);
        assert.equal(v.event.resourceUrl, e.event.resource_url);
        assert.equal(v.event.occurredAt, e.event.occurred_at);
        assert.equal(v.event.replayOf, e.event.replay_of);
        assert.equal(v.event.isTest, e.event.is_test);
      } else {
        assert.throws(run, (err) => {
          assert.ok(err instanceof rk.RoyaltyKitError, `not a RoyaltyKitError: ${err}`);
          assert.equal(err.code, c.error, err.message);
          return true;
        });
      }
    });
  }
});

test('the reusable WebhookVerifier agrees with verifyWebhook on every vector with usable secrets', () => {
  let compared = 0;
  for (const c of webhook.cases) {
    const i = c.input;
    let verifier;
    try {
      verifier = new rk.WebhookVerifier(i.secrets, { toleranceSeconds: i.tolerance, maxBodyBytes: i.max_body_bytes });
    } catch (e) {
      assert.equal(e.code, 'invalid_secret');
      continue;
    }
    const outcome = (f) => {
      try {
        return f().contentKey;
      } catch (e) {
        return e.code;
      }
    };
    const a = outcome(() => verifier.verify(i.headers, bytes(i.body), i.now));
    const b = outcome(() => rk.verifyWebhook(i.headers, bytes(i.body), i.secrets, { now: i.now, toleranceSeconds: i.tolerance, maxBodyBytes: i.max_body_bytes }));
    assert.equal(a, b, `tcId ${c.tcId}`);
    compared++;
  }
  assert.ok(compared > 50);
});

const dedup = load('dedup.json');
const outcome = (f) => {
  try {
    return { value: f() };
  } catch (e) {
    return { error: e.code };
  }
};
const expectCase = (c, got) => {
  if ('expected' in c) assert.deepEqual(got, { value: c.expected }, c.comment);
  else assert.deepEqual(got, { error: c.error }, c.comment);
};

test('dedup vectors: delivery, event, content and idempotency keys', () => {
  for (const c of dedup.delivery_key) expectCase(c, outcome(() => rk.deliveryKey(c.input.namespace, c.input.delivery_id)));
  for (const c of dedup.event_key) {
    const i = c.input;
    const ev = { name: i.name, resourceType: i.resource_type, resourceReference: i.resource_reference, occurredAtText: i.occurred_at };
    expectCase(c, outcome(() => rk.eventKey(i.namespace, ev)));
  }
  for (const c of dedup.content_key) expectCase(c, outcome(() => rk.contentKey(c.input.secret, c.input.timestamp, bytes(c.input.body))));
  for (const c of dedup.idempotency_key) expectCase(c, outcome(() => rk.idempotencyKey(c.input.tenant, c.input.operation_id, bytes(c.input.body))));
});

test('dedup vectors: DedupWindow sequences', () => {
  for (const c of dedup.window) {
    if (c.error) {
      assert.throws(() => new rk.DedupWindow(c.capacity, c.ttl_seconds), (e) => e.code === c.error);
      continue;
    }
    const w = new rk.DedupWindow(c.capacity, c.ttl_seconds);
    for (const op of c.ops) assert.equal(w.checkAndInsert(op.key, op.now), op.expected, `${c.comment}: ${JSON.stringify(op)}`);
  }
});
