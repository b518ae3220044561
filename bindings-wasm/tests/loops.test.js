'use strict';
// The retry loop and the receiver as users write them, over real HTTP on 127.0.0.1 (issue: no
// blind second create; a failed delivery is processed on redelivery, exactly once).
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const rk = require('royaltykit');

const TENANT = '0f8fad5b-d9cb-469f-a165-70867728950e';

/** A reporting API stand-in: POST /api/platform/v1/exports creates an export; the first request
 * is applied but answered too late (the client times out); a known Idempotency-Key is a replay. */
async function exportServer() {
  const exports = [];
  const byKey = new Map();
  let calls = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      const key = req.headers['idempotency-key'];
      if (!(key && byKey.has(key))) {
        exports.push(`exp_${exports.length + 1}`);
        if (key) byKey.set(key, exports.at(-1));
      }
      const reply = () => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: key ? byKey.get(key) : exports.at(-1), status: 'queued' }));
      };
      if (calls === 1) setTimeout(reply, 1500); // applied, but the answer comes after the client gave up
      else reply();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, exports, calls: () => calls, base: `http://127.0.0.1:${server.address().port}` };
}

/** The documented retry loop for a create: send, and on failure do what decideRetry says. */
async function createExport(base, params) {
  const op = rk.operation('createPlatformExport');
  const d = rk.buildRequest('createPlatformExport', { body: { export_class: 'statements', format: 'csv' }, token: rk.BearerToken.reports('t', TENANT), tenantId: TENANT, ...params });
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(d.url(base), { method: d.method, headers: d.headers, body: d.body, signal: AbortSignal.timeout(500) });
      return { outcome: `created ${res.status}`, attempts: attempt };
    } catch (e) {
      if (e.name !== 'TimeoutError') throw e;
      const decision = rk.decideRetry({ retryClass: op.retryClass, transport: 'timeout', attempt, random: 0, idempotencyKeySent: d.idempotencyKeySent });
      if (decision.action !== 'retry') return { outcome: decision.action, reconcile: decision.reconcile, attempts: attempt };
    }
  }
}

test('a timed-out create without its key on the wire is reconciled, never sent twice', async () => {
  const s = await exportServer();
  try {
    const r = await createExport(s.base, {});
    assert.deepEqual(r, { outcome: 'reconcile', reconcile: 'lookup_by_sent_data', attempts: 1 });
    await new Promise((res) => setTimeout(res, 1600));
    assert.equal(s.calls(), 1);
    assert.deepEqual(s.exports, ['exp_1'], 'one export: the one the timed-out request created');
  } finally {
    s.server.close();
  }
});

test('with the key sent, the retry is safe and the server keeps exactly one export', async () => {
  const s = await exportServer();
  try {
    const r = await createExport(s.base, { idempotencyHeader: 'Idempotency-Key' });
    assert.equal(r.outcome, 'created 201');
    assert.equal(r.attempts, 2);
    await new Promise((res) => setTimeout(res, 1600));
    assert.equal(s.calls(), 2);
    assert.deepEqual(s.exports, ['exp_1']);
  } finally {
    s.server.close();
  }
});

test('a receiver over HTTP: processing fails once, the redelivery is processed, once; 6 h later still a duplicate', async () => {
  const secret = 'whsec_loop';
  let clock = 1_795_320_000; // injected clock (Unix seconds)
  let dbUp = false;
  const stored = [];
  const seen = new rk.DedupWindow(1000); // default TTL: the whole redelivery schedule
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const answer = (status) => res.writeHead(status).end();
      let v;
      try {
        v = rk.verifyWebhook(req.headers, Buffer.concat(chunks), secret, { now: clock });
      } catch (e) {
        return answer(e.httpStatus);
      }
      const key = rk.deliveryKey('org-1', v.deliveryId);
      const claim = seen.claim(key, clock);
      if (claim !== 'new') return answer(claim === 'done' ? 200 : 503);
      try {
        if (!dbUp) throw new Error('DB down');
        stored.push(v.deliveryId);
      } catch {
        seen.release(key, clock);
        return answer(500);
      }
      seen.commit(key, clock);
      return answer(200);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/webhooks`;
  const body = Buffer.from('{"event":"ddex.delivery.failed","resource":{"type":"ddex_message","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}');
  const deliver = async () => (await fetch(url, { method: 'POST', headers: rk.signWebhook(secret, body, { timestamp: clock, deliveryId: 'dlv_1' }), body })).status;
  try {
    assert.equal(await deliver(), 500, 'DB down: released');
    dbUp = true;
    clock += 30; // the service's first redelivery delay
    assert.equal(await deliver(), 200);
    clock += 6 * 3600; // a late redelivery, re-signed at its own time
    assert.equal(await deliver(), 200);
    assert.deepEqual(stored, ['dlv_1'], 'exactly one effect');
  } finally {
    server.close();
  }
});
