'use strict';
// Hostile host input: each case gets a TypeError, a RoyaltyKitError with the given code, or the
// documented result; afterwards the module still answers a valid call.
const test = require('node:test');
const assert = require('node:assert/strict');
const rk = require('royaltykit');

const SECRET = 'whsec_hostile';
const NOW = 1_795_320_000;
const body = Buffer.from('{"event":"ddex.delivery.failed","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}');
const signed = rk.signWebhook(SECRET, body, { timestamp: NOW, deliveryId: 'dlv_h' });
const pairs = Object.entries(signed);
const big = 'x'.repeat(10 * 1024 * 1024);
const verify = (h, b = body, s = SECRET, o = { now: NOW }) => rk.verifyWebhook(h, b, s, o);

const CASES = [
  ['headers undefined', () => verify(undefined), TypeError],
  ['headers null', () => verify(null), TypeError],
  ['headers a number', () => verify(42), TypeError],
  ['headers a string', () => verify('Service-Webhook-Id: x'), TypeError],
  ['header pair of one element', () => verify([['Service-Webhook-Id']]), TypeError],
  ['header name a number', () => verify([[1, 'x'], ...pairs]), TypeError],
  ['header name a symbol in a Map', () => verify(new Map([[Symbol('s'), 'x']])), TypeError],
  ['header value a nested object', () => verify({ ...signed, 'Service-Webhook-Id': { a: 1 } }), TypeError],
  ['header value list with a number', () => verify({ ...signed, 'Service-Webhook-Signature': ['v1=00', 5] }), TypeError],
  ['duplicate id headers with conflicting values', () => verify([...pairs, ['service-webhook-id', 'other']]), 'invalid_header'],
  ['duplicate timestamps with conflicting values', () => verify([...pairs, ['service-webhook-timestamp', String(NOW + 1)]]), 'invalid_timestamp'],
  ['body undefined', () => rk.verifyWebhook(signed, undefined, SECRET, { now: NOW }), TypeError],
  ['body a number', () => verify(signed, 42), TypeError],
  ['body a plain object', () => verify(signed, { event: 'x' }), TypeError],
  ['body an Int16Array', () => verify(signed, new Int16Array(4)), TypeError],
  ['body a string with a lone surrogate', () => verify(signed, '\ud800'), 'no_matching_signature'],
  ['secret with a lone surrogate', () => verify(signed, body, '\udfff'), 'no_matching_signature'],
  ['secrets an empty list', () => verify(signed, body, []), 'invalid_secret'],
  ['secrets [""]', () => verify(signed, body, ['']), 'invalid_secret'],
  ['secrets nested', () => verify(signed, body, [[SECRET]]), TypeError],
  ['secrets null', () => verify(signed, body, null), TypeError],
  ['10 MB body', () => verify(signed, big), 'payload_too_large'],
  ['10 MB signature header', () => verify({ ...signed, 'Service-Webhook-Signature': big }), 'invalid_signature_header'],
  ['10 MB delivery id', () => verify({ ...signed, 'Service-Webhook-Id': big }), 'invalid_header'],
  ['10 MB timestamp', () => verify({ ...signed, 'Service-Webhook-Timestamp': big }), 'invalid_timestamp'],
  ['empty everything', () => rk.verifyWebhook({}, '', []), 'missing_header'],
  ['now -Infinity', () => verify(signed, body, SECRET, { now: -Infinity }), 'invalid_argument'],
  ['tolerance as a string', () => verify(signed, body, SECRET, { now: NOW, toleranceSeconds: '300' }), TypeError],
  ['options null', () => verify(signed, body, SECRET, null), TypeError],
  ['a lone surrogate in the delivery id is replaced, not fatal', () => verify({ ...signed, 'Service-Webhook-Id': 'a\ud800b' }).deliveryId, 'a\ufffdb'],
  ['DedupWindow negative capacity', () => new rk.DedupWindow(-1, 10), 'invalid_argument'],
  ['DedupWindow 10 MB key', () => new rk.DedupWindow(1, 10).checkAndInsert(big), 'invalid_argument'],
  ['deliveryKey with null', () => rk.deliveryKey(null, 'x'), TypeError],
  ['idempotencyKey with a 10 MB request id', () => rk.idempotencyKey('t', 'op', '['.repeat(10 * 1024 * 1024)), 'invalid_argument'],
  ['decideRetry with status NaN', () => rk.decideRetry({ retryClass: 'read', status: NaN, attempt: 1 }), 'invalid_argument'],
  ['decideRetry with a nested headers object', () => rk.decideRetry({ retryClass: 'read', status: 429, headers: { 'retry-after': { x: 1 } }, attempt: 1 }), TypeError],
  ['buildRequest with a lone surrogate in a path parameter', () => rk.buildRequest('getPlatformExport', { path: { export: '\ud800' }, token: rk.BearerToken.reports('t', '0f8fad5b-d9cb-469f-a165-70867728950e'), tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' }).path, '/api/platform/v1/exports/%EF%BF%BD'],
  ['parseApiError with a 10 MB body keeps 4 KiB', () => rk.parseApiError('reports', 500, {}, big).rawBody.length <= 4 * 1024 + 1, true],
  ['parseTokenResponse with an array body', () => rk.parseTokenResponse(200, {}, '[]', { tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' }), 'invalid_token_response'],
  ['exportPollDecision with attempt Infinity', () => rk.exportPollDecision('queued', Infinity), 'invalid_argument'],
  ['a Date as a count', () => rk.callFailedMessage('op', 'https://api.example.com', 'attempts_exhausted', new Date()), TypeError],
  ['a Date as a status', () => rk.checkExportDownload(new Date(200000)), TypeError],
  ['a Date as a time', () => rk.webhookGivesUpAt(new Date(1795320306000)) === rk.webhookGivesUpAt(1795320306), true],
  ['an inbox mark reported without whether it changed a row', () => new rk.InboxWorker({ seed: 1 }).marked(), TypeError],
  ['an inbox mark reported as the string "false"', () => new rk.InboxWorker({ seed: 1 }).marked('false'), TypeError],
  ['an enqueue reported as 1', () => new rk.WebhookVerifier(SECRET).receipt(signed, body, { namespace: 'h', now: NOW, inbox: true }).enqueued(1), TypeError],
  ['an inbox mark with no mark pending', () => new rk.InboxWorker({ seed: 1 }).marked(true), 'invalid_argument'],
];

test(`hostile host input: ${CASES.length} cases, then a valid call`, () => {
  assert.ok(CASES.length >= 30);
  for (const [name, fn, want] of CASES) {
    if (want === TypeError) {
      assert.throws(fn, TypeError, name);
    } else if (typeof want === 'string' && /^[a-z_]+$/.test(want) && !want.startsWith('/')) {
      assert.throws(fn, (e) => e instanceof rk.RoyaltyKitError && e.code === want, name);
    } else {
      assert.deepEqual(fn(), want, name);
    }
  }
  assert.equal(verify(signed).deliveryId, 'dlv_h');
});
