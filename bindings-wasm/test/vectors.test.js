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

// Every vector runs twice: with the HMAC in wasm and with node:crypto's (the two primitives the
// package picks between by body size); the results must be identical.
for (const [path, threshold] of [['wasm HMAC', Infinity], ['node:crypto HMAC', 0]]) {
test(`webhook vectors (${path})`, async (t) => {
  for (const c of webhook.cases) {
    await t.test(`tcId ${c.tcId}: ${c.comment}`, () => {
      const i = c.input;
      const opts = { now: i.now, hostMacThreshold: threshold };
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
          assert.equal(err.httpStatus, c.http_status, err.message);
          return true;
        });
      }
    });
  }
});

test(`the reusable WebhookVerifier agrees with verifyWebhook on every vector with usable secrets (${path})`, (t) => {
  let compared = 0;
  for (const c of webhook.cases) {
    const i = c.input;
    let verifier;
    try {
      verifier = new rk.WebhookVerifier(i.secrets, { toleranceSeconds: i.tolerance, maxBodyBytes: i.max_body_bytes, hostMacThreshold: threshold });
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
    const b = outcome(() => rk.verifyWebhook(i.headers, bytes(i.body), i.secrets, { now: i.now, toleranceSeconds: i.tolerance, maxBodyBytes: i.max_body_bytes, hostMacThreshold: threshold }));
    assert.equal(a, b, `tcId ${c.tcId}`);
    compared++;
  }
  assert.ok(compared > 50);
});
}

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

test('the node:crypto path: a throwing or lying primitive fails closed', () => {
  const body = Buffer.from('{"event":"ddex.import.failed","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T00:00:00Z"}');
  const headers = rk.signWebhook('s3cret', body, { timestamp: 1000, deliveryId: 'd1' });
  {
    const v = new rk.WebhookVerifier('s3cret', { hostMacThreshold: 0 });
    assert.equal(v.verify(headers, body, 1000).deliveryId, 'd1');
    // A different secret through node:crypto never matches.
    assert.throws(() => new rk.WebhookVerifier('other', { hostMacThreshold: 0 }).verify(headers, body, 1000), { code: 'no_matching_signature' });
    // A primitive that throws: the error reaches the caller; one that answers wrong bytes: no match.
    const native = require('royaltykit/native/royaltykit_wasm.js');
    const inner = new native.WebhookVerifier(['s3cret'], 300, 262144);
    const flat = Object.entries(headers).flat();
    assert.throws(() => inner.verifyWithMac(flat, body, 1000, () => { throw new Error('primitive failed'); }), /primitive failed/);
    for (const answer of [new Uint8Array(32), new Uint8Array(31), 'not bytes', undefined]) {
      assert.throws(() => inner.verifyWithMac(flat, body, 1000, () => answer), (e) => JSON.parse(e).code === 'no_matching_signature');
    }
  }
});
