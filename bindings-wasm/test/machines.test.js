'use strict';
// The protocol machines' transcripts (tests/vectors/machines.json) against the installed npm
// package: each machine is driven the way a host drives it (switch on `step`, do it against the
// script, report the outcome) and the steps are compared with the transcript's.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rk = require('royaltykit');

const VECTORS = process.env.ROYALTYKIT_VECTORS || path.join(__dirname, '..', '..', 'tests', 'vectors');
const data = JSON.parse(fs.readFileSync(path.join(VECTORS, 'machines.json'), 'utf8'));
const bytes = (b) => ('hex' in b ? Buffer.from(b.hex, 'hex') : Buffer.from(b.utf8, 'utf8'));
// Waits are compared to a microsecond (the transcripts' own tolerance is 1e-9 s).
const rounded = (steps) => steps.map((s) => ('seconds' in s ? { ...s, seconds: Math.round(s.seconds * 1e6) / 1e6 } : s));

function receipt(i) {
  const secrets = i.secrets.map((s) => ({ secret: s.secret, validUntil: s.valid_until }));
  const verifier = new rk.WebhookVerifier(secrets);
  const r = verifier.receipt(i.headers, bytes(i.body), { namespace: i.namespace, now: i.now, transactional: i.transactional === true });
  const answers = [...i.answers];
  const steps = [];
  for (let s = r.next(); ; ) {
    switch (s.step) {
      case 'claim': {
        steps.push({ step: 'claim', key: s.key });
        const a = answers.shift();
        s = a === 'store_down' ? r.storeFailed() : r.claimed(a);
        break;
      }
      case 'release':
        steps.push({ step: 'release', key: s.key });
        answers.shift();
        s = r.released();
        break;
      case 'run_handler':
        steps.push({ step: 'run_handler' });
        assert.ok(r.delivery.deliveryId);
        s = answers.shift() === 'ok' ? r.handlerSucceeded() : r.handlerFailed();
        break;
      case 'commit':
        steps.push({ step: 'commit', key: s.key, attempt: s.attempt });
      {
        const a = answers.shift();
        s = a === 'ok' ? r.committed() : a === 'lost' ? r.claimLost() : r.storeFailed();
        break;
      }
      case 'begin':
        steps.push({ step: 'begin' });
        s = answers.shift() === 'ok' ? r.began() : r.storeFailed();
        break;
      case 'commit_transaction':
        steps.push({ step: 'commit_transaction' });
        s = answers.shift() === 'ok' ? r.transactionCommitted() : r.storeFailed();
        break;
      case 'rollback':
        steps.push({ step: 'rollback' });
        answers.shift();
        s = r.rolledBack();
        break;
      case 'wait':
        steps.push({ step: 'wait', seconds: s.seconds });
        s = r.waited();
        break;
      case 'reply': {
        const { message, ...reply } = JSON.parse(s.body);
        assert.ok(r.finished);
        steps.push({ step: 'reply', status: s.status, ...reply });
        return steps;
      }
      default:
        throw new Error(`unknown step ${s.step}`);
    }
  }
}

function drive(machine, i, api) {
  let now = i.start;
  const events = [...i.events];
  const budget = i.budget ? new rk.RateBudget(i.budget.map(([name, limit, windowSeconds]) => ({ name, limit, windowSeconds }))) : undefined;
  const steps = [];
  for (let n = 0; n < 200; n++) {
    const s = machine.next(now, budget);
    switch (s.step) {
      case 'send': {
        const auth = s.request.headers.find(([name]) => name === 'Authorization');
        steps.push({ step: 'send', method: s.request.method, target: s.request.pathAndQuery, token: auth ? auth[1].replace(/^Bearer /, '') : null,
          idempotency_key: s.request.idempotencyKeySent ? s.request.idempotencyKey : null });
        const e = events.shift();
        now += e.after ?? 0;
        if (e.transport) machine.transportFailure(e.transport, now);
        else {
          const r = e.response;
          if (e.streamed !== undefined) assert.equal(machine.streams(r.status), e.streamed, `streams(${r.status})`);
          if (e.streamed) machine.streamedResponse(r.status, r.headers, Buffer.byteLength(r.body), now);
          else machine.response(r.status, r.headers, r.body, now);
        }
        break;
      }
      case 'wait':
        steps.push({ step: 'wait', seconds: s.seconds });
        now += s.seconds;
        break;
      case 'refresh_token': {
        steps.push({ step: 'refresh_token' });
        const e = events.shift();
        machine.token(api === 'reports' ? rk.BearerToken.reports(e.token) : rk.BearerToken.enterprise(e.token), e.valid_for === null ? undefined : now + e.valid_for);
        break;
      }
      case 'reconcile':
        steps.push({ step: 'reconcile', reconcile: s.reconcile });
        return steps;
      case 'done':
        steps.push(s.exportId === undefined ? { step: 'done', status: s.status, body: Buffer.from(s.body).toString() }
          : { step: 'done', export_id: s.exportId, artifact: Buffer.from(s.body).toString() });
        return steps;
      case 'fail':
        assert.ok(s.error === null || s.error instanceof rk.RoyaltyKitError);
        steps.push({ step: 'fail', rule: s.rule, status: s.status, code: s.error ? s.error.code : null, transport: s.transport,
          retry_after_seconds: s.retryAfterSeconds, stage: s.stage, export_id: s.exportId });
        return steps;
      default:
        throw new Error(`unknown step ${s.step}`);
    }
  }
  throw new Error(`no end after 200 steps: ${JSON.stringify(steps)}`);
}

function exchange(i) {
  const x = i.exchange;
  const request = x.api === 'reports'
    ? rk.buildTokenRequest({ clientId: x.client_id, clientSecret: x.client_secret, tenantId: x.tenant_id })
    : rk.buildEnterpriseTokenRequest({ apiKey: x.api_key, apiSecret: x.api_secret });
  return drive(rk.Call.exchange(request, { seed: i.options.seed }), i, x.api);
}

function call(i) {
  if (i.exchange) return exchange(i);
  const p = i.params;
  const c = new rk.Call(i.operation, { path: p.path, query: p.query, body: p.body, tenantId: p.tenant_id, idempotencyKey: p.idempotency_key,
    idempotencyHeader: p.idempotency_header, requestId: p.request_id, maxAttempts: i.options.max_attempts,
    maxElapsedSeconds: i.options.max_elapsed_seconds, seed: i.options.seed });
  return drive(c, i, rk.operation(i.operation).api);
}

function exportJob(i) {
  const o = i.options;
  const job = new rk.ExportJob({ tenantId: o.tenant_id, body: o.body, idempotencyHeader: o.idempotency_header, requestId: o.request_id,
    maxPolls: o.max_polls, seed: o.seed, idField: o.id_field, stateField: o.state_field });
  return drive(job, i, 'reports');
}

const ADAPTERS = { receipt, call, export_job: exportJob };


test('machines.json', async (t) => {
  for (const group of data.testGroups) {
    await t.test(`${group.function} (${group.tests.length} transcripts)`, () => {
      assert.ok(group.tests.length >= 40);
      for (const c of group.tests) {
        const got = ADAPTERS[group.function](c.input);
        const want = c.expected.steps;
        assert.equal(got.length, want.length, `tcId ${c.tcId} ${c.comment}: ${JSON.stringify(got)}`);
        for (let n = 0; n < want.length; n++) {
          for (const k of Object.keys(want[n])) assert.ok(k in got[n], `tcId ${c.tcId}: step ${n} has no ${k}`);
        }
        assert.deepEqual(rounded(got.map((g, n) => Object.fromEntries(Object.keys(want[n]).map((k) => [k, g[k]])))), rounded(want), `tcId ${c.tcId} ${c.comment}`);
      }
    });
  }
  assert.equal(data.testGroups.reduce((n, g) => n + g.tests.length, 0), data.numberOfTests);
});

test('a saved export job resumes without a second create', () => {
  const tenantId = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
  let job = new rk.ExportJob({ tenantId, body: { format: 'csv' }, token: rk.BearerToken.reports('secret-bearer-9'), seed: 1 });
  assert.equal(job.next(0).step, 'send');
  job.response(200, {}, '[]', 0);
  assert.equal(job.next(0).request.method, 'POST');
  const saved = job.save(); // the create is in flight when the process dies
  assert.ok(!saved.includes('secret-bearer-9'));
  job = rk.ExportJob.resume(saved);
  job.token(rk.BearerToken.reports('secret-bearer-10'));
  const s = job.next(5);
  assert.equal(s.step, 'send');
  assert.equal(s.request.method, 'GET', 'reconciled, never created twice');
});

test('an input out of turn is refused with a reason', () => {
  const c = new rk.Call('listEnterpriseCountries', { seed: 1 });
  assert.throws(() => c.response(200, {}, '{}'), (e) => e instanceof rk.InvalidArgumentError && /no request is in flight/.test(e.message));
});

const NOW = 1763784000;
function signedDelivery(deliveryId, ref = 'm1') {
  const body = Buffer.from(JSON.stringify({
    event: 'ddex.import.completed',
    resource: { type: 'ddex_message', reference: ref, url: `/api/v1/ddex/messages/${ref}` },
    occurred_at: '2026-11-22T04:00:00Z',
  }));
  return [rk.signWebhook('whsec_window', body, { timestamp: NOW, deliveryId }), body];
}

test('a receipt on a DedupWindow claims and commits inside the core: it asks only for the handler', () => {
  const verifier = new rk.WebhookVerifier('whsec_window');
  const window = new rk.DedupWindow(100);
  const [headers, body] = signedDelivery('dlv_w1');
  const first = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW, window });
  assert.deepEqual(first.next(), { step: 'run_handler' });
  const key = rk.deliveryKey('org_1', 'dlv_w1');
  assert.equal(window.claim(key, NOW), 'in_progress', 'the window holds the claim');
  const twin = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW, window });
  assert.equal(twin.next().status, 503, 'another receipt holds it');
  assert.equal(window.claim(key, NOW), 'in_progress', 'and its claim was not released');
  const reply = first.handlerSucceeded();
  assert.equal(reply.step, 'reply');
  assert.equal(reply.status, 200);
  assert.match(reply.body, /processed/);
  assert.equal(window.claim(key, NOW), 'done');
  const again = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW + 60, window });
  assert.equal(again.next().status, 200);
  assert.doesNotMatch(again.next().body, /processed/, 'a duplicate is acknowledged without the handler');
  // A failed handler releases its claims, so the redelivery is processed (other content: the
  // same content under another delivery id is a duplicate by its content key).
  const [h2, b2] = signedDelivery('dlv_w2', 'm2');
  const failing = verifier.receipt(h2, b2, { namespace: 'org_1', now: NOW, window });
  assert.equal(failing.handlerFailed().status, 500);
  assert.deepEqual(verifier.receipt(h2, b2, { namespace: 'org_1', now: NOW + 30, window }).next(), { step: 'run_handler' });
  assert.throws(() => verifier.receipt(h2, b2, { namespace: 'org_1', window: {} }), TypeError);
});
