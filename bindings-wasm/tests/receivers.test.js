'use strict';
// The receiver integrations over real HTTP on 127.0.0.1 (royaltykit/express as node:http
// middleware, royaltykit/fetch's handler behind node:http): deliveries are deduplicated by
// Service-Webhook-Id, as the spec says. Two genuine deliveries whose body and timestamp are
// byte-identical (two changes of one resource in the same second) both run the handler; with
// `claimContentKey` the second is acknowledged without it (the opt-in's trade-off).
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { Readable } = require('node:stream');
const rk = require('royaltykit');
const { webhookMiddleware } = require('royaltykit/express');
const { webhookHandler } = require('royaltykit/fetch');

const SECRET = 'whsec_receivers_twins';
const NOW = Math.floor(Date.now() / 1000);
const body = Buffer.from(JSON.stringify({
  event: 'enterprise.release.updated',
  resource: { type: 'release', reference: '7d3c1a52-0b4f-4a8e-9c61-2f5d8e4b9a10', url: '/api/v1/releases/7d3c1a52-0b4f-4a8e-9c61-2f5d8e4b9a10' },
  occurred_at: new Date(NOW * 1000).toISOString(),
}));
const twins = ['dlv_twin_1', 'dlv_twin_2'].map((deliveryId) => rk.signWebhook(SECRET, body, { timestamp: NOW, deliveryId }));

const INTEGRATIONS = {
  express: (options) => http.createServer(webhookMiddleware(options)),
  fetch: (options) => {
    const handle = webhookHandler(options);
    return http.createServer(async (req, res) => {
      const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body: Readable.toWeb(req), duplex: 'half' });
      const response = await handle(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  },
};

/** Posts the twins (and the first one again) to a receiver built with `extra`; the handler's
 * runs and the answers. */
async function deliverTwins(integration, extra) {
  const handled = [];
  const server = INTEGRATIONS[integration]({ secrets: SECRET, namespace: 'org-twins', handler: (d) => { handled.push(d.deliveryId); }, ...extra });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const post = async (headers) => {
    const r = await fetch(`http://127.0.0.1:${server.address().port}/webhooks`, { method: 'POST', headers, body });
    return [r.status, (await r.json()).result];
  };
  try {
    const answers = [await post(twins[0]), await post(twins[1]), await post(twins[0])];
    return { handled, answers };
  } finally {
    server.close();
  }
}

for (const integration of Object.keys(INTEGRATIONS)) {
  test(`${integration}: two deliveries with the same body and timestamp but different ids both run the handler`, async () => {
    const { handled, answers } = await deliverTwins(integration, {});
    assert.deepEqual(handled, ['dlv_twin_1', 'dlv_twin_2']);
    assert.deepEqual(answers.map(([status]) => status), [200, 200, 200]);
    assert.equal(answers[0][1], 'processed');
    assert.equal(answers[1][1], 'processed');
    assert.notEqual(answers[2][1], 'processed', 'a redelivery of the same id is a duplicate');
  });

  test(`${integration}: with claimContentKey the second twin is acknowledged without the handler`, async () => {
    const { handled, answers } = await deliverTwins(integration, { claimContentKey: true });
    assert.deepEqual(handled, ['dlv_twin_1']);
    assert.deepEqual(answers.map(([status]) => status), [200, 200, 200]);
    assert.equal(answers[0][1], 'processed');
    assert.notEqual(answers[1][1], 'processed');
  });
}

test('WebhookReceiver and planReceipt: the delivery key by default, the content key only when asked', async () => {
  const v = rk.verifyWebhook(twins[0], body, SECRET, { now: NOW });
  assert.deepEqual(rk.planReceipt('org-twins', v).keys, [rk.deliveryKey('org-twins', 'dlv_twin_1')]);
  assert.deepEqual(rk.planReceipt('org-twins', v, { claimContentKey: true }).keys, [rk.deliveryKey('org-twins', 'dlv_twin_1'), v.contentKey]);
  assert.throws(() => rk.planReceipt('org-twins', v, { claimContentKey: 'yes' }), TypeError);
  assert.throws(() => new rk.WebhookReceiver({ secrets: SECRET, namespace: 'n', handler: () => {}, claimContentKey: 1 }), TypeError);
  // On a shared store: one key per delivery by default.
  const store = new rk.DedupWindow(10);
  const receiver = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-twins', store, handler: () => {} });
  for (const h of twins) assert.equal((await receiver.receive(h, body, NOW)).status, 200);
  assert.equal(store.size, 2);
});

test('the reply to a rejected delivery says nothing of the receiver\'s secrets', async () => {
  const receiver = new rk.WebhookReceiver({ secrets: [SECRET, 'whsec_second', 'whsec_third'], namespace: 'org-twins', handler: () => {} });
  const forged = rk.signWebhook('whsec_attacker', body, { timestamp: NOW, deliveryId: 'dlv_forged' });
  const r = await receiver.receive(forged, body, NOW);
  assert.equal(r.status, 401);
  assert.equal(JSON.parse(r.body).error, 'no_matching_signature');
  assert.doesNotMatch(r.body, /3|three|secrets? (configured|given)/i);
});

test('useSecrets: a rotation on a live receiver — A and B verify until previous_secret_valid_until, then only B', async () => {
  const [A, B] = ['whsec_rotation_A_0123456789', 'whsec_rotation_B_0123456789'];
  const handled = [];
  const receiver = new rk.WebhookReceiver({ secrets: A, namespace: 'org-rotation', toleranceSeconds: 600,
    handler: (d) => { handled.push([d.deliveryId, d.secretIndex]); } });
  let n = 0;
  const send = async (secret, at, signedAt = at) => {
    const r = await receiver.receive(rk.signWebhook(secret, body, { timestamp: signedAt, deliveryId: `dlv_rot_${++n}` }), body, at);
    return r.status === 200 ? [200, r.delivery.secretIndex] : [r.status, JSON.parse(r.body).error];
  };
  assert.deepEqual(await send(A, NOW), [200, 0]);
  assert.deepEqual(await send(B, NOW), [401, 'no_matching_signature']);
  // The rotation's answer (as rotateSecret resolves to it): B, and A valid for 300 s more.
  const rotated = rk.revealedSecret(JSON.stringify({ data: { reference: 'wh_rot', secret: B,
    previous_secret_valid_until: new Date((NOW + 300) * 1000).toISOString() } }));
  assert.equal(receiver.useSecrets(rotated.secrets(A)), undefined);
  assert.deepEqual(await send(A, NOW + 10), [200, 1]);
  assert.deepEqual(await send(B, NOW + 10), [200, 0]);
  assert.deepEqual(await send(A, NOW + 300), [200, 1], 'A verifies up to its last second');
  assert.deepEqual(await send(B, NOW + 550, NOW), [200, 0], 'the receiver\'s options (toleranceSeconds) are kept');
  assert.deepEqual(await send(A, NOW + 301), [401, 'no_matching_signature']);
  assert.deepEqual(await send(B, NOW + 301), [200, 0]);
  // Refused as the constructor refuses them; the secrets in use stay.
  const refused = [['', 'invalid_secret'], [[], 'invalid_secret'], [[B, { secret: A, validUntil: NaN }], 'invalid_argument']];
  for (const [secrets, code] of refused) assert.throws(() => receiver.useSecrets(secrets), (e) => e instanceof rk.RoyaltyKitError && e.code === code);
  assert.throws(() => receiver.useSecrets(5), TypeError);
  assert.throws(() => receiver.useSecrets(rotated), TypeError, 'a RevealedSecret is not a secret list: pass rotated.secrets(previous)');
  assert.deepEqual(await send(A, NOW + 10), [200, 1]);
  assert.deepEqual(await send(B, NOW + 301), [200, 0]);
  assert.equal(handled.length, 8);
});

test('useSecrets: a delivery being received keeps the verifier it started with; the next one gets the new secrets', async () => {
  const [A, B] = ['whsec_inflight_A_0123456789', 'whsec_inflight_B_0123456789'];
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const receiver = new rk.WebhookReceiver({ secrets: A, namespace: 'org-inflight', handler: () => gate });
  const signed = (id) => rk.signWebhook(A, body, { timestamp: NOW, deliveryId: id });
  const inFlight = receiver.receive(signed('dlv_inflight_1'), body, NOW);
  receiver.useSecrets(B); // A is no longer accepted from now on
  const next = await receiver.receive(signed('dlv_inflight_2'), body, NOW);
  assert.deepEqual([next.status, JSON.parse(next.body).error], [401, 'no_matching_signature']);
  release();
  const first = await inFlight;
  assert.deepEqual([first.status, first.delivery.deliveryId, JSON.parse(first.body).result], [200, 'dlv_inflight_1', 'processed']);
});

/** A transactional store that records what it is asked (claims held, transactions open). */
function recordingStore() {
  const calls = [];
  const held = new Set();
  const done = new Set();
  let open = 0;
  return {
    calls, held, done, get open() { return open; },
    transactional: true,
    async claim(key) { calls.push('claim'); if (done.has(key)) return 'done'; if (held.has(key)) return 'in_progress'; held.add(key); return 'new'; },
    async release(key) { calls.push('release'); held.delete(key); },
    async begin() { calls.push('begin'); open += 1; return { marks: [] }; },
    async markDone(tx, key) { calls.push('markDone'); tx.marks.push(key); return true; },
    async commitTransaction(tx) { calls.push('commitTransaction'); open -= 1; for (const k of tx.marks) { held.delete(k); done.add(k); } },
    async rollback() { calls.push('rollback'); open -= 1; },
  };
}

test('receive with an AbortSignal: aborted while the handler runs, the transaction is rolled back, the claim released, and receive rejects with the reason', async () => {
  const store = recordingStore();
  const controller = new AbortController();
  const effects = [];
  const receiver = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-cancel', store, handler: async (d) => {
    effects.push(d.deliveryId);
    controller.abort(new Error('shutting down'));
  } });
  await assert.rejects(receiver.receive(twins[0], body, NOW, { signal: controller.signal }), /shutting down/);
  assert.deepEqual(store.calls, ['claim', 'begin', 'rollback', 'release']);
  assert.equal(store.open, 0);
  assert.equal(store.held.size, 0); // the redelivery need not wait for the lease
  const again = await receiver.receive(twins[0], body, NOW);
  assert.equal(again.status, 200);
  assert.deepEqual(effects, ['dlv_twin_1', 'dlv_twin_1']); // the first effect was rolled back with its transaction
  assert.equal(store.done.size, 1);
});

test('receive with a signal aborted before it starts: nothing is claimed, and receive rejects with the reason', async () => {
  const store = recordingStore();
  let ran = 0;
  const receiver = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-cancel', store, handler: () => { ran += 1; } });
  await assert.rejects(receiver.receive(twins[0], body, NOW, { signal: AbortSignal.abort(new Error('gone')) }), /gone/);
  assert.deepEqual(store.calls, []);
  assert.equal(ran, 0);
});
