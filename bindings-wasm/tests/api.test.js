'use strict';
// The JS surface: header shapes, body types, options, error classes, defaults.
const test = require('node:test');
const assert = require('node:assert/strict');
const util = require('node:util');
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

test('activeSecrets follows previous_secret_valid_until, and its secrets carry their expiry', () => {
  const plain = (list) => list.map((s) => [s.secret, s.validUntil]);
  assert.deepEqual(plain(rk.activeSecrets('new', 'old', NOW + 300, NOW)), [['new', null], ['old', NOW + 300]]);
  assert.deepEqual(plain(rk.activeSecrets('new', 'old', NOW + 300, NOW + 300)), [['new', null], ['old', NOW + 300]]);
  assert.deepEqual(plain(rk.activeSecrets('new', 'old', NOW + 300, NOW + 301)), [['new', null]]);
  assert.deepEqual(plain(rk.activeSecrets('new', undefined, undefined, NOW)), [['new', null]]);
  // previous_secret_valid_until as the service returns it (ISO 8601 text), or a Date.
  const until = new Date((NOW + 300) * 1000);
  assert.deepEqual(plain(rk.activeSecrets('new', 'old', until.toISOString(), NOW)), [['new', null], ['old', NOW + 300]]);
  assert.deepEqual(plain(rk.activeSecrets('new', 'old', until, NOW)), [['new', null], ['old', NOW + 300]]);
  assert.throws(() => rk.activeSecrets('new', 'old', undefined, NOW), (e) => e.code === 'invalid_argument');
  assert.throws(() => rk.activeSecrets('new', 'old', NaN, NOW), (e) => e instanceof rk.InvalidArgumentError && e.argument === 'previousValidUntil');
  // A verifier built at rotation time from them never accepts the old secret after its expiry.
  const verifier = new rk.WebhookVerifier(rk.activeSecrets(SECRET, 'whsec_old', NOW + 300, NOW));
  const old = rk.signWebhook('whsec_old', body, { timestamp: NOW + 300, deliveryId: 'dlv_old' });
  assert.equal(verifier.verify(old, body, NOW + 300).secretIndex, 1);
  const late = rk.signWebhook('whsec_old', body, { timestamp: NOW + 301, deliveryId: 'dlv_late' });
  assert.throws(() => verifier.verify(late, body, NOW + 301), { code: 'no_matching_signature' });
});

test('WebhookSecret: validUntil as seconds, a Date or ISO 8601 text; printing hides the secret', () => {
  const at = 1795320306; // 2026-11-22T04:05:06Z
  for (const form of [at, at + 0.9, new Date(at * 1000), '2026-11-22T04:05:06Z', '2026-11-22T04:05:06+0000', '20261122T040506Z', '2026-11-22T06:05:06+02:00']) {
    assert.equal(new rk.WebhookSecret('whsec_x', form).validUntil, at, String(form));
  }
  assert.equal(new rk.WebhookSecret('whsec_x').validUntil, null);
  assert.equal(new rk.WebhookSecret('whsec_x', null).validUntil, null);
  const s = new rk.WebhookSecret('whsec_PRINT_ME_NOT', at);
  assert.equal(s.secret, 'whsec_PRINT_ME_NOT');
  for (const o of [util.inspect(s), JSON.stringify(s), String(s)]) assert.ok(!o.includes('PRINT_ME_NOT'), o);
  assert.throws(() => new rk.WebhookSecret(5), TypeError);
  assert.throws(() => { 'use strict'; s.validUntil = NaN; }, TypeError, 'its checked expiry cannot be changed');
  assert.equal(s.validUntil, at);
});

test('a validUntil that is not an instant is refused where the secret is given, never taken for "no expiry"', () => {
  const bad = [NaN, Number(undefined), Infinity, -Infinity, new Date('not a date'), 'tomorrow', Number('2026-11-22T03:05:06Z'), '1795320306', '', true, {}, [1]];
  const refused = (what) => (e) => e instanceof rk.InvalidArgumentError && e.code === 'invalid_argument' && e.argument === 'validUntil'
    && /Unix seconds .*Date.*ISO 8601/.test(e.message) || assert.fail(`${what}: ${e}`);
  for (const v of bad) {
    const secrets = [SECRET, { secret: 'whsec_previous', validUntil: v }];
    const what = util.inspect(v);
    assert.throws(() => new rk.WebhookVerifier(secrets), refused(what), what);
    assert.throws(() => rk.verifyWebhook(signed, body, secrets, { now: NOW }), refused(what), what);
    assert.throws(() => new rk.WebhookReceiver({ secrets, namespace: 'org-1', handler: () => {} }), refused(what), what);
    assert.throws(() => new rk.WebhookSecret('whsec_previous', v), refused(what), what);
  }
  // The README's `Number(process.env.X)` with X unset fails at startup instead of verifying forever.
  delete process.env.ROYALTYKIT_TEST_UNSET;
  assert.throws(() => new rk.WebhookReceiver({ secrets: [SECRET, { secret: 'whsec_previous', validUntil: Number(process.env.ROYALTYKIT_TEST_UNSET) }],
    namespace: 'org-1', handler: () => {} }), rk.InvalidArgumentError);
  // ISO text is enforced: the previous secret verifies up to that second, never after.
  const old = (t) => rk.signWebhook('whsec_previous', body, { timestamp: t, deliveryId: 'dlv_prev' });
  const v = new rk.WebhookVerifier([SECRET, { secret: 'whsec_previous', validUntil: new Date((NOW + 60) * 1000).toISOString() }]);
  assert.equal(v.verify(old(NOW + 60), body, NOW + 60).secretIndex, 1);
  assert.throws(() => v.verify(old(NOW + 61), body, NOW + 61), { code: 'no_matching_signature' });
});

test('parseTimestamp: the core\'s one parser for every time the services send', () => {
  for (const t of ['2026-11-22T04:05:06Z', '2026-11-22T04:05:06+0000', '20261122T040506Z', 'Sun, 22 Nov 2026 04:05:06 GMT']) {
    assert.equal(rk.parseTimestamp(t), 1795320306, t);
  }
  for (const t of ['', 'tomorrow', '1795320306']) assert.equal(rk.parseTimestamp(t), null, t);
  assert.throws(() => rk.parseTimestamp(1795320306), TypeError);
});

test('resourcePath: only a path under the enterprise API, from the URL or the verified event', () => {
  const v = rk.verifyWebhook(signed, body, SECRET, { now: NOW });
  assert.equal(rk.resourcePath(v.event), '/api/v1/ddex/messages/3f2b8c1e-4d5a-4b6c-8e7f-9a0b1c2d3e4f');
  assert.equal(rk.resourcePath('/api/v1/releases/a%20b'), '/api/v1/releases/a%20b');
  for (const url of ['https://evil.example/steal', '//evil.example/x', '/api/v1/../admin', '/api/v1/a%2Fb', '/api/v1/a\\b', '/api/v1/x?token=1', '/other/x', '']) {
    assert.throws(() => rk.resourcePath(url), (e) => e instanceof rk.WebhookVerificationError && e.code === 'invalid_resource_url' && e.httpStatus === 400, url);
  }
  // A delivery whose resource.url points elsewhere still verifies: the check is where it is fetched.
  const evil = Buffer.from(JSON.stringify({ ...JSON.parse(body), resource: { type: 't', reference: 'r', url: 'https://evil.example/steal' } }));
  const e = rk.verifyWebhook(rk.signWebhook(SECRET, evil, { timestamp: NOW }), evil, SECRET, { now: NOW }).event;
  assert.throws(() => rk.resourcePath(e), { code: 'invalid_resource_url' });
  assert.throws(() => rk.resourcePath(5), TypeError);
});

test('an occurred_at that is a number, null, empty or absent is kept as unknown', () => {
  for (const occurred of [1795320306, null, '', undefined]) {
    const b = Buffer.from(JSON.stringify({ ...JSON.parse(body), occurred_at: occurred }));
    const v = rk.verifyWebhook(rk.signWebhook(SECRET, b, { timestamp: NOW }), b, SECRET, { now: NOW });
    assert.equal(v.event.occurredAt, null, String(occurred));
  }
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
  assert.equal(ops.filter((o) => o.api === 'enterprise').length, 15);
  assert.equal(rk.operation('getPlatformExport').scope, 'exports:write');
  assert.equal(rk.operation('downloadPlatformExportAsHuman').stepUp, 'recent_non_recovery');
  assert.throws(() => { ops[0].id = 'x'; }, TypeError);
  assert.throws(() => rk.operation('nope'), (e) => e.code === 'invalid_argument');
});

test('buildRequest host conversions: numbers in query, object bodies, URL helper', () => {
  const d = rk.buildRequest('listPlatformExports', { query: { limit: 20, cursor: undefined }, token: rk.BearerToken.reports('t', '0f8fad5b-d9cb-469f-a165-70867728950e'), tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  assert.equal(d.query, 'limit=20');
  assert.equal(d.url('https://reports.example/'), 'https://reports.example/api/platform/v1/exports?limit=20');
  const c = rk.buildRequest('createPlatformExport', { body: { format: 'csv' }, token: rk.BearerToken.reports('t', '0f8fad5b-d9cb-469f-a165-70867728950e'), tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  assert.equal(Buffer.from(c.body).toString(), '{"format":"csv"}');
  // One random key per logical request (OS RNG): an identical second create is not a replay.
  assert.match(c.idempotencyKey, /^idem_[0-9a-f]{32}$/);
  const again = rk.buildRequest('createPlatformExport', { body: { format: 'csv' }, token: rk.BearerToken.reports('t', '0f8fad5b-d9cb-469f-a165-70867728950e'), tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
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
  assert.equal(JSON.stringify(rk.BearerToken.reports('tok_s', tenantId)), `{"api":"reports","tenantId":"${tenantId}"}`);
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
  // A reporting token restored from a cache must name its tenant: one without could go with any X-Tenant-ID.
  assert.throws(() => rk.BearerToken.reports('tok_c'), (e) => e instanceof TypeError && /tenantId/.test(e.message) && !e.message.includes('tok_c'));
  assert.throws(() => rk.parseTokenResponse(200, {}, '{}'), TypeError, 'the tenant the exchange was made for is required');
});

test('a receiver reports each delivery: the receipt outcome, status, id and event name', async () => {
  const events = [];
  const receiver = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-events', handler: () => {}, onEvent: (e) => events.push(e) });
  const first = await receiver.receive(signed, body, NOW);
  const again = await receiver.receive(signed, body, NOW);
  const forged = await receiver.receive(rk.signWebhook('whsec_other', body, { timestamp: NOW, deliveryId: 'dlv_js_2' }), body, NOW);
  const down = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-events', handler: () => {}, onEvent: (e) => events.push(e),
    store: { claim: async () => { throw new Error('the store is down'); }, commit: async () => {}, release: async () => {} },
    onStoreError: () => {} });
  const unavailable = await down.receive(signed, body, NOW);
  assert.deepEqual([first.status, again.status, forged.status, unavailable.status], [200, 200, 401, 503]);
  assert.deepEqual(events.map((e) => e.outcome), ['processed', 'duplicate', 'rejected', 'store_unavailable']);
  assert.deepEqual(events[0], { kind: 'receipt', outcome: 'processed', status: 200, deliveryId: 'dlv_js_1', event: JSON.parse(body).event });
  assert.equal(events[2].deliveryId, null);
  assert.throws(() => new rk.WebhookReceiver({ secrets: SECRET, namespace: 'n', handler: () => {}, onEvent: 'yes' }), /onEvent must be a function/);
  // and on node:diagnostics_channel royaltykit:receiver, for a subscriber
  const dc = require('node:diagnostics_channel');
  const published = [];
  const listen = (e) => published.push(e);
  dc.subscribe('royaltykit:receiver', listen);
  try {
    await new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-events-2', handler: () => {} }).receive(signed, body, NOW);
  } finally {
    dc.unsubscribe('royaltykit:receiver', listen);
  }
  assert.deepEqual(published.map((e) => e.outcome), ['processed']);
});
