'use strict';
// The JS surface: header shapes, body types, options, error classes, defaults.
const test = require('node:test');
const assert = require('node:assert/strict');
const rk = require('royaltykit');

const SECRET = 'whsec_js_test_secret';
const body = Buffer.from(JSON.stringify({
  event: 'ddex.delivery.acknowledged',
  resource: { type: 'ddex_message', reference: '3f2b8c1e-4d5a-4b6c-8e7f-9a0b1c2d3e4f', url: '/api/v1/ddex/messages/3f2b8c1e-4d5a-4b6c-8e7f-9a0b1c2d3e4f' },
  occurred_at: '2026-11-22T04:00:00Z',
}));
const NOW = 1763784000;
const signed = rk.signWebhook(SECRET, body, { timestamp: NOW, deliveryId: 'dlv_js_1' });

test('signWebhook returns the three headers, verifiable with the same secret', () => {
  assert.deepEqual(Object.keys(signed), ['Service-Webhook-Id', 'Service-Webhook-Timestamp', 'Service-Webhook-Signature']);
  assert.equal(signed['Service-Webhook-Timestamp'], String(NOW));
  assert.match(signed['Service-Webhook-Signature'], /^v1=[0-9a-f]{64}$/);
  assert.equal(rk.verifyWebhook(signed, body, SECRET, { now: NOW }).deliveryId, 'dlv_js_1');
});

test('signWebhook defaults: timestamp now, random UUID delivery id', () => {
  const h = rk.signWebhook(SECRET, body);
  assert.match(h['Service-Webhook-Id'], /^[0-9a-f-]{36}$/);
  assert.ok(Math.abs(Number(h['Service-Webhook-Timestamp']) - Date.now() / 1000) < 5);
  assert.notEqual(rk.signWebhook(SECRET, body)['Service-Webhook-Id'], h['Service-Webhook-Id']);
  // now defaults to the system clock too
  assert.equal(rk.verifyWebhook(h, body, SECRET).timestamp, Number(h['Service-Webhook-Timestamp']));
});

test('headers accepted as object (IncomingHttpHeaders), Headers, Map, pairs, arrays of values', () => {
  const lower = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toLowerCase(), v]));
  const shapes = [
    signed,
    lower,
    new Headers(signed),
    new Map(Object.entries(signed)),
    Object.entries(signed),
    { ...lower, 'service-webhook-signature': ['v2=abc', signed['Service-Webhook-Signature']], host: 'x', 'content-length': '10' },
  ];
  for (const h of shapes) assert.equal(rk.verifyWebhook(h, body, SECRET, { now: NOW }).deliveryId, 'dlv_js_1');
});

test('body accepted as Buffer, Uint8Array, ArrayBuffer and UTF-8 string', () => {
  const u8 = new Uint8Array(body);
  for (const b of [body, u8, u8.buffer.slice(0), body.toString('utf8')]) {
    assert.equal(rk.verifyWebhook(signed, b, SECRET, { now: NOW }).event.name, 'ddex.delivery.acknowledged');
  }
});

test('result shape: camelCase members, event fields', () => {
  const v = rk.verifyWebhook(signed, body, [SECRET, 'old-secret'], { now: new Date(NOW * 1000) });
  assert.deepEqual(Object.keys(v).sort(), ['contentKey', 'deliveryId', 'event', 'secretIndex', 'timestamp']);
  assert.equal(v.secretIndex, 0);
  assert.match(v.contentKey, /^cnt_[0-9a-f]{64}$/);
  assert.equal(v.event.resourceUrl, '/api/v1/ddex/messages/3f2b8c1e-4d5a-4b6c-8e7f-9a0b1c2d3e4f');
  assert.equal(v.event.occurredAt, Date.parse('2026-11-22T04:00:00Z') / 1000);
  assert.equal(v.event.replayOf, null);
  assert.equal(v.event.isTest, false);
  assert.equal(v.event.isKnown, true);
});

test('errors are RoyaltyKitError subclasses with name, code and details', () => {
  try {
    rk.verifyWebhook(signed, body, SECRET, { now: NOW + 1000 });
    assert.fail('accepted a late delivery');
  } catch (e) {
    assert.ok(e instanceof rk.WebhookVerificationError && e instanceof rk.RoyaltyKitError && e instanceof Error);
    assert.equal(e.name, 'WebhookVerificationError');
    assert.equal(e.code, 'timestamp_too_old');
    assert.equal(e.skewSeconds, 1000);
    assert.equal(e.limit, 300);
    assert.match(e.message, /1000 s/);
  }
  assert.throws(
    () => rk.verifyWebhook({ 'Service-Webhook-Id': 'x' }, body, SECRET, { now: NOW }),
    (e) => e.code === 'missing_header' && e.header === 'Service-Webhook-Timestamp',
  );
});

test('out-of-range options give InvalidArgumentError, wrong types TypeError', () => {
  for (const opts of [{ toleranceSeconds: -1 }, { toleranceSeconds: 1.5 }, { maxBodyBytes: 1e12 }, { now: NaN }, { now: Infinity }]) {
    assert.throws(() => rk.verifyWebhook(signed, body, SECRET, opts), (e) => e instanceof rk.InvalidArgumentError && e.code === 'invalid_argument', JSON.stringify(opts));
  }
  const wrong = [
    () => rk.verifyWebhook(null, body, SECRET),
    () => rk.verifyWebhook('headers', body, SECRET),
    () => rk.verifyWebhook(signed, 42, SECRET),
    () => rk.verifyWebhook(signed, null, SECRET),
    () => rk.verifyWebhook(signed, body, 42),
    () => rk.verifyWebhook(signed, body, [SECRET, 7]),
    () => rk.verifyWebhook(signed, body, SECRET, { now: '123' }),
    () => rk.verifyWebhook(signed, body, SECRET, 5),
    () => rk.verifyWebhook([['Service-Webhook-Id']], body, SECRET),
    () => rk.verifyWebhook({ 'Service-Webhook-Id': 5 }, body, SECRET),
    () => rk.verifyWebhook(new Map([[1, 'x']]), body, SECRET),
  ];
  for (const f of wrong) assert.throws(f, TypeError);
});

test('secrets are never in error messages or results', () => {
  const secret = 'whsec_DO_NOT_LEAK_4242';
  const outputs = [];
  for (const f of [
    () => rk.verifyWebhook(signed, body, secret, { now: NOW }),
    () => rk.verifyWebhook(rk.signWebhook(secret, body, { timestamp: NOW }), body, [secret], { now: NOW + 999 }),
    () => rk.verifyWebhook(rk.signWebhook(secret, body, { timestamp: NOW }), body, [secret], { now: NOW }),
    () => new rk.WebhookVerifier([secret, '']),
  ]) {
    try {
      outputs.push(JSON.stringify(f()));
    } catch (e) {
      outputs.push(String(e), e.stack, JSON.stringify(e));
    }
  }
  for (const o of outputs) assert.ok(!o.includes(secret), o);
});

test('activeSecrets follows previous_secret_valid_until', () => {
  assert.deepEqual(rk.activeSecrets('new', 'old', NOW + 300, NOW), ['new', 'old']);
  assert.deepEqual(rk.activeSecrets('new', 'old', NOW + 300, NOW + 300), ['new', 'old']);
  assert.deepEqual(rk.activeSecrets('new', 'old', NOW + 300, NOW + 301), ['new']);
  assert.deepEqual(rk.activeSecrets('new', undefined, undefined, NOW), ['new']);
  assert.throws(() => rk.activeSecrets('new', 'old', undefined, NOW), (e) => e.code === 'invalid_argument');
});

test('eventKey: an original and its replay share it (a hint: receivers never claim it); a replay is a new delivery', () => {
  const original = rk.verifyWebhook(signed, body, SECRET, { now: NOW });
  const replayBody = Buffer.from(JSON.stringify({ ...JSON.parse(body), replay_of: 'dlv_js_1' }));
  const replay = rk.verifyWebhook(rk.signWebhook(SECRET, replayBody, { timestamp: NOW + 60, deliveryId: 'dlv_js_2' }), replayBody, SECRET, { now: NOW + 60 });
  assert.equal(replay.event.replayOf, 'dlv_js_1');
  assert.equal(rk.eventKey('org-1', original.event), rk.eventKey('org-1', replay.event));
  assert.notEqual(rk.deliveryKey('org-1', original.deliveryId), rk.deliveryKey('org-1', replay.deliveryId));
  assert.notEqual(original.contentKey, replay.contentKey);
});

test('content key: the same signed content under a new delivery id keeps its key', () => {
  const a = rk.verifyWebhook(signed, body, SECRET, { now: NOW });
  const b = rk.verifyWebhook({ ...signed, 'Service-Webhook-Id': 'attacker-fresh-id' }, body, SECRET, { now: NOW });
  assert.equal(a.contentKey, b.contentKey);
  assert.equal(a.contentKey, rk.contentKey(SECRET, NOW, body));
});

test('DedupWindow: default clock, size and has()', () => {
  const w = new rk.DedupWindow(2, 60);
  assert.equal(w.checkAndInsert('a'), true);
  assert.equal(w.checkAndInsert('a'), false);
  assert.equal(w.has('a'), true);
  assert.equal(w.size, 1);
  assert.equal(w.capacity, 2);
  assert.throws(() => w.checkAndInsert(''), (e) => e.code === 'invalid_argument');
  assert.throws(() => w.checkAndInsert(5), TypeError);
  assert.throws(() => new rk.DedupWindow(1.5, 60), (e) => e.code === 'invalid_argument');
  w.free();
});

test('the module keeps working after hostile calls', () => {
  const hostile = [
    () => rk.verifyWebhook({ 'Service-Webhook-Signature': 'v1='.repeat(100000) }, body, SECRET),
    () => rk.verifyWebhook(signed, Buffer.alloc(10 * 1024 * 1024), SECRET),
    () => rk.verifyWebhook(signed, '\ud800', SECRET),
    () => rk.verifyWebhook({ ...signed, 'Service-Webhook-Id': '\udc00' }, body, SECRET, { now: NOW }),
    () => rk.idempotencyKey('t', 'op', '['.repeat(100000)),
  ];
  for (const f of hostile) {
    try {
      f();
    } catch (e) {
      assert.ok(e instanceof rk.RoyaltyKitError, String(e));
    }
  }
  assert.equal(rk.verifyWebhook(signed, body, SECRET, { now: NOW }).deliveryId, 'dlv_js_1');
});

test('catalog: read-only data, both APIs', () => {
  const ops = rk.operations();
  assert.equal(ops.filter((o) => o.api === 'reports').length, 44);
  assert.equal(ops.filter((o) => o.api === 'enterprise').length, 14);
  assert.equal(rk.operation('getPlatformExport').scope, 'exports:write');
  assert.equal(rk.operation('downloadPlatformExportAsHuman').stepUp, 'recent_non_recovery');
  assert.throws(() => { ops[0].id = 'x'; }, TypeError);
  assert.throws(() => rk.operation('nope'), (e) => e.code === 'invalid_argument');
});

test('buildRequest host conversions: numbers in query, object bodies, URL helper', () => {
  const d = rk.buildRequest('listPlatformExports', { query: { limit: 20, cursor: undefined }, token: rk.BearerToken.reports('t'), tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  assert.equal(d.query, 'limit=20');
  assert.equal(d.url('https://reports.example/'), 'https://reports.example/api/platform/v1/exports?limit=20');
  const c = rk.buildRequest('createPlatformExport', { body: { format: 'csv' }, token: rk.BearerToken.reports('t'), tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  assert.equal(Buffer.from(c.body).toString(), '{"format":"csv"}');
  // One random key per logical request (OS RNG): an identical second create is not a replay.
  assert.match(c.idempotencyKey, /^idem_[0-9a-f]{32}$/);
  const again = rk.buildRequest('createPlatformExport', { body: { format: 'csv' }, token: rk.BearerToken.reports('t'), tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  assert.notEqual(again.idempotencyKey, c.idempotencyKey);
  assert.equal(c.idempotencyKeySent, false, 'the reporting key header is not shown: not sent unless named');
  assert.throws(() => rk.buildRequest('listPlatformExports', { query: { limit: {} } }), TypeError);
  assert.throws(() => rk.buildRequest(5), TypeError);
});

test('buildRequest takes typed tokens: the parsed Token or EnterpriseToken, or a BearerToken; never a string', () => {
  const tenantId = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const reporting = rk.parseTokenResponse(200, { 'cache-control': 'no-store' }, JSON.stringify({ access_token: 'tok_r', token_type: 'Bearer', expires_in: 60 }), { tenantId });
  const enterprise = rk.parseEnterpriseTokenResponse(200, {}, JSON.stringify({ token: 'tok_e', expires_at: null }));
  const auth = (d) => d.headers.find(([n]) => n === 'Authorization')[1];
  assert.equal(auth(rk.buildRequest('listPlatformExports', { token: reporting, tenantId })), 'Bearer tok_r');
  assert.equal(auth(rk.buildRequest('listEnterpriseSubscriptions', { token: enterprise })), 'Bearer tok_e');
  assert.equal(auth(rk.buildRequest('listEnterpriseSubscriptions', { token: rk.BearerToken.enterprise('tok_c') })), 'Bearer tok_c');
  const wrongApi = (e) => e instanceof rk.RequestBuildError && e.code === 'invalid_parameter' && e.parameter === 'token' && !e.message.includes('tok_');
  assert.throws(() => rk.buildRequest('listEnterpriseSubscriptions', { token: reporting }), wrongApi);
  assert.throws(() => rk.buildRequest('listPlatformExports', { token: enterprise, tenantId }), wrongApi);
  assert.throws(() => rk.buildRequest('listPlatformExports', { token: 'tok_r', tenantId }), TypeError);
  assert.throws(() => rk.buildRequest('listPlatformExports', { token: { accessToken: 'tok_r' }, tenantId }), TypeError);
  assert.equal(JSON.stringify(rk.BearerToken.reports('tok_s')), '{"api":"reports"}');
});

test('a reporting token remembers its tenant: sent when none is given, another one refused', () => {
  const tenantA = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const tenantB = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const token = rk.parseTokenResponse(200, { 'cache-control': 'no-store' }, JSON.stringify({ access_token: 'tok_r', token_type: 'Bearer', expires_in: 60 }), { tenantId: tenantA });
  assert.equal(token.tenantId, tenantA);
  const tenant = (d) => d.headers.find(([n]) => n === 'X-Tenant-ID')[1];
  assert.equal(tenant(rk.buildRequest('listPlatformExports', { token })), tenantA);
  const crossTenant = (e) => e instanceof rk.RequestBuildError && e.code === 'invalid_parameter' && e.parameter === 'tenant_id' && !e.message.includes('tok_');
  assert.throws(() => rk.buildRequest('listPlatformExports', { token, tenantId: tenantB }), crossTenant);
  const cached = rk.BearerToken.reports('tok_c', tenantA);
  assert.equal(cached.tenantId, tenantA);
  assert.throws(() => rk.buildRequest('listPlatformExports', { token: cached, tenantId: tenantB }), crossTenant);
  assert.throws(() => rk.parseTokenResponse(200, {}, '{}'), TypeError, 'the tenant the exchange was made for is required');
});
