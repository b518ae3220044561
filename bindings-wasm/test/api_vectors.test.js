'use strict';
// api_error.json, requests.json and token.json against the installed package.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');
const rk = require('royaltykit');

const VECTORS = process.env.ROYALTYKIT_VECTORS || path.join(__dirname, '..', '..', 'tests', 'vectors');
const load = (n) => JSON.parse(fs.readFileSync(path.join(VECTORS, n), 'utf8'));
const bytes = (b) => (b === null ? null : 'utf8' in b ? Buffer.from(b.utf8, 'utf8') : Buffer.from(b.hex, 'hex'));
const text = (u8) => (u8 === null ? null : { utf8: Buffer.from(u8).toString('utf8') });

test('api_error vectors', () => {
  const cases = load('api_error.json').cases;
  assert.ok(cases.length >= 60);
  for (const c of cases) {
    const i = c.input;
    const run = () => rk.parseApiError(i.api, i.status, i.headers, bytes(i.body), { operationId: i.operation_id ?? undefined, now: i.now });
    if (c.error) {
      assert.throws(run, (e) => e instanceof rk.InvalidArgumentError && e.code === c.error, c.comment);
      continue;
    }
    const e = run();
    assert.ok(e instanceof rk.ApiError && e instanceof Error);
    const x = c.expected;
    assert.deepEqual(
      { kind: e.kind, reason: e.reason, message: e.message, body_code: e.bodyCode, field_errors: e.fieldErrors, retry_after_seconds: e.retryAfterSeconds, declared: e.declared },
      { kind: x.kind, reason: x.reason, message: x.message, body_code: x.body_code, field_errors: x.field_errors, retry_after_seconds: x.retry_after_seconds, declared: x.declared },
      `tcId ${c.tcId} ${c.comment}`,
    );
    if (x.raw_body_prefix) assert.ok(e.rawBody.startsWith(x.raw_body_prefix), c.comment);
  }
});

test('request vectors', () => {
  const cases = load('requests.json').cases;
  assert.ok(cases.length >= 40);
  for (const c of cases) {
    const p = c.params;
    const run = () =>
      rk.buildRequest(c.operation_id, {
        path: p.path, query: p.query, body: bytes(p.body), token: p.token, tenantId: p.tenant_id, userId: p.user_id,
        idempotencyKey: p.idempotency_key, idempotencyHeader: p.idempotency_header,
      });
    if (c.error) {
      assert.throws(run, (e) => e instanceof rk.RoyaltyKitError && e.code === c.error, `tcId ${c.tcId} ${c.comment}`);
      continue;
    }
    const d = run();
    const x = c.expected;
    assert.deepEqual(
      { method: d.method, path: d.path, query: d.query, headers: d.headers, body: text(d.body), idempotency_key: d.idempotencyKey },
      x,
      `tcId ${c.tcId} ${c.comment}`,
    );
    assert.ok(!util.inspect(d).includes('tok_ABC') && !JSON.stringify(d).includes('tok_ABC'), 'printing hides the token');
  }
});

test('token vectors', () => {
  const t = load('token.json');
  for (const c of t.build) {
    const i = c.input;
    const run = () => rk.buildTokenRequest({ clientId: i.client_id, clientSecret: i.client_secret, tenantId: i.tenant_id, scopes: i.scopes });
    if (c.error) {
      assert.throws(run, (e) => e.code === c.error, c.comment);
      continue;
    }
    const d = run();
    assert.deepEqual({ method: d.method, path: d.path, headers: d.headers, body: text(d.body) }, c.expected, c.comment);
    assert.ok(!util.inspect(d).includes(d.headers[1][1]));
  }
  for (const c of t.parse) {
    const i = c.input;
    const run = () => rk.parseTokenResponse(i.status, i.headers, bytes(i.body), { requestedScopes: i.requested_scopes, now: i.now });
    if (c.error) {
      assert.throws(run, (e) => {
        if (c.error === 'api_error') {
          assert.ok(e instanceof rk.ApiError, c.comment);
          assert.equal(e.kind, c.api_error.kind);
          assert.equal(e.reason, c.api_error.reason ?? null);
        } else {
          assert.ok(e instanceof rk.TokenResponseError && e.code === c.error, c.comment);
        }
        return true;
      });
      continue;
    }
    const tk = run();
    const x = c.expected;
    assert.deepEqual(
      { access_token: tk.accessToken, token_type: tk.tokenType, expires_in: tk.expiresIn, expires_at: tk.expiresAt, refresh_at: tk.refreshAt, scopes: tk.scopes, missing_scopes: tk.missingScopes, warnings: tk.warnings.length },
      x,
      c.comment,
    );
    assert.ok(!util.inspect(tk).includes(tk.accessToken) && !JSON.stringify(tk).includes(tk.accessToken));
  }
  for (const c of t.build_enterprise) {
    const run = () => rk.buildEnterpriseTokenRequest({ apiKey: c.input.api_key, apiSecret: c.input.api_secret });
    if (c.error) assert.throws(run, (e) => e.code === c.error, c.comment);
    else {
      const d = run();
      assert.deepEqual({ method: d.method, path: d.path, headers: d.headers, body: text(d.body) }, c.expected);
      assert.ok(!util.inspect(d).includes('sec_1'));
    }
  }
  for (const c of t.parse_enterprise) {
    const i = c.input;
    const run = () => rk.parseEnterpriseTokenResponse(i.status, i.headers, bytes(i.body), { now: i.now });
    if (c.error) {
      assert.throws(run, (e) => (c.error === 'api_error' ? e instanceof rk.ApiError && e.kind === c.api_error.kind && e.reason === c.api_error.reason : e.code === c.error), c.comment);
    } else {
      const tk = run();
      assert.deepEqual({ token: tk.token, expires_at: tk.expiresAt, refresh_at: tk.refreshAt }, c.expected, c.comment);
    }
  }
  for (const c of t.missing_scopes) {
    const run = () => rk.missingScopes(c.granted, c.operation_id);
    if (c.error) assert.throws(run, (e) => e.code === c.error);
    else assert.deepEqual(run(), c.expected, c.comment);
  }
  for (const c of t.notices) {
    const n = rk.responseNotices(c.headers);
    assert.deepEqual({ deprecated: n.deprecated, deprecated_at: n.deprecatedAt, sunset_at: n.sunsetAt, link: n.link }, c.expected, c.comment);
  }
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
  const d = rk.buildRequest('listPlatformExports', { query: { limit: 20, cursor: undefined }, token: 't', tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  assert.equal(d.query, 'limit=20');
  assert.equal(d.url('https://reports.example/'), 'https://reports.example/api/platform/v1/exports?limit=20');
  const c = rk.buildRequest('createPlatformExport', { body: { format: 'csv' }, token: 't', tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
  assert.equal(Buffer.from(c.body).toString(), '{"format":"csv"}');
  assert.match(c.idempotencyKey, /^idem_[0-9a-f]{64}$/);
  assert.throws(() => rk.buildRequest('listPlatformExports', { query: { limit: {} } }), TypeError);
  assert.throws(() => rk.buildRequest(5), TypeError);
});
