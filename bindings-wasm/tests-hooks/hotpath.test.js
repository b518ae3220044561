'use strict';
// The verification hot path (WebhookVerifier.verify in the npm package: headers joined into one
// string, the record back as NUL-led fields rebuilt by `verifiedFrom`) against the core's JSON of
// the same record, from the one-shot `verifyWebhook` export of the test-hooks build of the same
// module: same members, same values, same types, same errors, for every shared vector and for
// the deliveries that take the fallbacks (a NUL in a header value, in an event string).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rk = require('royaltykit');

const native = require(process.env.ROYALTYKIT_HOOKS_NATIVE);
const VECTORS = process.env.ROYALTYKIT_VECTORS || path.join(__dirname, '..', '..', 'tests', 'vectors');
const SECRET = 'whsec_hotpath_0123456789abcdefABCDEF';
const NOW = 1763800000;

/** What a call gave: the record, or the error's class, code and message. */
function outcome(f) {
  try {
    return { value: f() };
  } catch (e) {
    return { error: [e.name, e.code, e.message] };
  }
}

/** One delivery both ways: the package's hot path, and the core's JSON through the hooks build. */
function bothWays(headers, body, secrets, opts = {}) {
  const now = opts.now ?? NOW;
  const hot = outcome(() => new rk.WebhookVerifier(secrets, opts).verify(headers, body, now));
  const flat = headers.flat();
  const list = secrets.map((s) => (typeof s === 'string' ? s : s.secret));
  const until = secrets.some((s) => typeof s !== 'string' && s.validUntil != null)
    ? Float64Array.from(secrets, (s) => (typeof s === 'string' || s.validUntil == null ? NaN : s.validUntil))
    : undefined;
  const reference = outcome(() => {
    try {
      return JSON.parse(native.verifyWebhook(flat, body, list, now, opts.toleranceSeconds, opts.maxBodyBytes, until));
    } catch (e) {
      if (typeof e !== 'string') throw e;
      const { family, code, message } = JSON.parse(e);
      const err = new Error(message);
      err.name = family === 'webhook' ? 'WebhookVerificationError' : family;
      err.code = code;
      throw err;
    }
  });
  return { hot, reference };
}

function signed(body, id = 'dlv_hot_1') {
  const h = rk.signWebhook(SECRET, body, { timestamp: NOW, deliveryId: id });
  return Object.entries(h);
}

const event = (members) => Buffer.from(JSON.stringify({
  event: 'ddex.delivery.status_changed',
  resource: { type: 'ddex_message', reference: '7d3c1a52-0b4f-4a8e-9c61-2f5d8e4b9a10', url: '/api/v1/ddex/messages/7d3c1a52' },
  occurred_at: '2026-11-22T04:05:06Z',
  ...members,
}));

test('every shared verify_webhook vector: the hot path gives the core record, member for member', () => {
  const data = JSON.parse(fs.readFileSync(path.join(VECTORS, 'webhook.json'), 'utf8'));
  let valid = 0;
  for (const group of data.testGroups.filter((g) => g.function === 'verify_webhook')) {
    for (const c of group.tests) {
      const i = c.input;
      const body = 'hex' in i.body ? Buffer.from(i.body.hex, 'hex') : Buffer.from(i.body.utf8, 'utf8');
      const secrets = i.secrets.map((s) => (typeof s === 'string' ? s : { secret: s.secret, validUntil: s.valid_until }));
      const opts = { toleranceSeconds: i.tolerance, maxBodyBytes: i.max_body_bytes, now: i.now };
      let made = true;
      try {
        new rk.WebhookVerifier(secrets, opts);
      } catch {
        made = false; // unusable secrets or options: not a verifier's case
      }
      if (!made) continue;
      const { hot, reference } = bothWays(i.headers, body, secrets, opts);
      if (reference.error) {
        assert.equal(hot.error?.[1], reference.error[1], `tcId ${c.tcId}: error code`);
        assert.equal(hot.error?.[2], reference.error[2], `tcId ${c.tcId}: error message`);
      } else {
        valid++;
        assert.deepStrictEqual(hot.value, reference.value, `tcId ${c.tcId} (${c.comment})`);
      }
    }
  }
  assert.ok(valid >= 50, `only ${valid} genuine vectors compared`);
});

test('a replay, an unreadable occurred_at and an unknown event name cross intact', () => {
  for (const body of [
    event({ replay_of: 'dlv_original_7' }),
    event({ replay_of: '' }),
    event({ occurred_at: 'sometime on Tuesday' }),
    event({ event: 'enterprise.webhook.test' }),
    event({ event: 'brand.new.event', data: { a: [1, 2, 3] } }),
    event({ resource: { type: 'ü\u2028x', reference: '😀', url: '/a\tb' } }),
  ]) {
    const { hot, reference } = bothWays(signed(body), body, [SECRET]);
    assert.ok(reference.value, `the core accepts ${body}`);
    assert.deepStrictEqual(hot.value, reference.value);
  }
});

test('a NUL inside an event string: the record crosses as JSON and is still equal', () => {
  const body = event({ resource: { type: 'ddex\u0000message', reference: 'r\u0000', url: '/x' }, replay_of: 'a\u0000b' });
  const { hot, reference } = bothWays(signed(body), body, [SECRET]);
  assert.equal(reference.value.event.resourceType, 'ddex\u0000message');
  assert.deepStrictEqual(hot.value, reference.value);
});

test('a NUL inside a header value: the pairs cross as an array, with the core answer unchanged', () => {
  const body = event({});
  const headers = signed(body);
  for (const [k, v] of [
    [0, (v) => `${v}\u0000service-webhook-id\u0000forged`],
    [1, (v) => `${v}\u0000`],
    [2, (v) => `\u0000${v}`],
  ]) {
    const changed = headers.map(([n, x], j) => [n, j === k ? v(x) : x]);
    const { hot, reference } = bothWays(changed, body, [SECRET]);
    assert.deepStrictEqual(hot, reference, `header ${headers[k][0]}`);
  }
  // The same delivery without the NUL is genuine on both paths.
  const { hot, reference } = bothWays(headers, body, [SECRET]);
  assert.ok(hot.value);
  assert.deepStrictEqual(hot, reference);
});

test('repeated headers, up to and past what the wasm layer splits up front: the core answer on both paths', () => {
  const body = event({});
  const headers = signed(body);
  const [id, ts, sig] = headers;
  // 3 pairs (6 items), 6 (12: all split up front), 7 (14: split per lookup), 20 (over the 16
  // values a header may have), and a signature list whose genuine value comes last.
  for (const extra of [0, 3, 4, 17]) {
    for (const repeated of [id, ts, [sig[0], 'v1,' + Buffer.alloc(32).toString('base64')]]) {
      const changed = [...headers.slice(0, 2), ...Array(extra).fill(repeated), sig];
      const { hot, reference } = bothWays(changed, body, [SECRET]);
      assert.deepStrictEqual(hot, reference, `${extra} more ${repeated[0]}`);
      if (extra === 17) assert.ok(hot.error, `${extra} more ${repeated[0]} are refused`);
      else assert.ok(hot.value, `${extra} more ${repeated[0]} verify`);
    }
  }
});

test('verifyWebhook with one string secret reuses its verifier, and a changed option is not the same verifier', () => {
  const body = event({});
  const headers = signed(body);
  const first = rk.verifyWebhook(headers, body, SECRET, { now: NOW });
  assert.deepStrictEqual(rk.verifyWebhook(headers, body, SECRET, { now: NOW }), first);
  // A tolerance the first call did not have must apply: 10 s late is refused with 5 s.
  assert.throws(() => rk.verifyWebhook(headers, body, SECRET, { now: NOW + 10, toleranceSeconds: 5 }), (e) => e.code === 'timestamp_too_old');
  assert.deepStrictEqual(rk.verifyWebhook(headers, body, SECRET, { now: NOW + 10 }).deliveryId, first.deliveryId);
  assert.throws(() => rk.verifyWebhook(headers, body, SECRET, { now: NOW, maxBodyBytes: 10 }), (e) => e.code === 'payload_too_large');
  assert.deepStrictEqual(rk.verifyWebhook(headers, body, SECRET, { now: NOW }), first);
  // Another secret must not verify with the cached one.
  assert.throws(() => rk.verifyWebhook(headers, body, `${SECRET}x`, { now: NOW }), (e) => e.code === 'no_matching_signature');
  // Verifiers are evicted oldest first: eight other secret lists (arrays, which are never the
  // remembered last one) evict this secret's verifier while it is still the last one used; the
  // next call must build it again, not use the freed one.
  rk.verifyWebhook(headers, body, SECRET, { now: NOW, toleranceSeconds: 77 });
  for (let k = 0; k < 8; k++) {
    assert.throws(() => rk.verifyWebhook(headers, body, [`${SECRET}${k}`], { now: NOW }), (e) => e.code === 'no_matching_signature');
  }
  assert.deepStrictEqual(rk.verifyWebhook(headers, body, SECRET, { now: NOW, toleranceSeconds: 77 }), first);
});
