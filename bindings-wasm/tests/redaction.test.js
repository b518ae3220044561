'use strict';
// No public object or error built from a secret prints it (inspect, String, JSON, stack).
const test = require('node:test');
const assert = require('node:assert/strict');
const util = require('node:util');
const rk = require('royaltykit');

const SECRET = 'whsec_REDACTION_SECRET_1';
const TOKEN = 'tok_REDACTION_TOKEN_2';
const CLIENT_SECRET = 'cs_REDACTION_CLIENT_SECRET_3';
const API_SECRET = 'as_REDACTION_API_SECRET_4';
const TENANT = '0f8fad5b-d9cb-469f-a165-70867728950e';

test('no secret in any printed object or error', () => {
  const out = [];
  const show = (v) => out.push(util.inspect(v, { depth: 5, showHidden: false }), JSON.stringify(v) ?? '', String(v));
  const body = '{"event":"x","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}';
  const h = rk.signWebhook(SECRET, body, { timestamp: 1000, deliveryId: 'd' });
  const v = new rk.WebhookVerifier([SECRET]);
  show(v);
  show(v.verify(h, body, 1000));
  for (const [b, now] of [[body, 9999], ['x', 1000], ['{}', 1000]]) {
    try { v.verify(h, b, now); } catch (e) { show(e); out.push(e.stack); }
  }
  try { new rk.WebhookVerifier([SECRET, '']); } catch (e) { show(e); out.push(e.stack); }
  show(rk.buildRequest('listPlatformExports', { token: rk.BearerToken.reports(TOKEN, TENANT), tenantId: TENANT }));
  show(rk.buildTokenRequest({ clientId: 'cli', clientSecret: CLIENT_SECRET, tenantId: TENANT }));
  show(rk.buildEnterpriseTokenRequest({ apiKey: 'key', apiSecret: API_SECRET }));
  show(rk.parseTokenResponse(200, { 'cache-control': 'no-store' }, JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 60 }), { tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' }));
  show(rk.parseEnterpriseTokenResponse(200, {}, JSON.stringify({ token: TOKEN, expires_at: null })));
  try { rk.buildRequest('listPlatformExports', { query: { access_token: TOKEN }, token: rk.BearerToken.reports(TOKEN, TENANT), tenantId: TENANT }); } catch (e) { show(e); out.push(e.stack); }
  show(new rk.DedupWindow(10, 60));
  const revealed = rk.revealedSecret(JSON.stringify({ data: { reference: 'wh_1', secret: SECRET, previous_secret_valid_until: 2000 } }));
  show(revealed);
  show(revealed.secret);
  show(revealed.secrets(SECRET));
  out.push(revealed.record, Object.keys(revealed).join());
  try { rk.revealedSecret(JSON.stringify({ data: { secret_value: SECRET } })); } catch (e) { show(e); out.push(e.stack); }
  for (const o of out) for (const s of [SECRET, TOKEN, CLIENT_SECRET, API_SECRET]) assert.ok(!o.includes(s), `${s} printed in: ${o}`);
  assert.ok(out.length >= 30);
});
