'use strict';
// The consumer workflow end to end (issue 43), through the installed package: a subscription made
// with the client (its secret revealed once), routed by the shared fake API (tests/fakeapi/server.py)
// to a receiver in inbox mode on PostgreSQL (ROYALTYKIT_PG_DSN, the cluster scripts/test-node.sh
// starts) served by royaltykit/express on 127.0.0.1, a worker running beside it whose handler does
// the canonical fetch and sleeps 2 s, a secret rotation on the live receiver (useSecrets), and
// delivery recovery replaying what was lost: every effect applied exactly once.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const path = require('node:path');
const readline = require('node:readline');
const util = require('node:util');
const { spawn } = require('node:child_process');
const { Pool } = require('pg');
const rk = require('royaltykit');
const { webhookMiddleware } = require('royaltykit/express');
const { createEnterpriseClient } = require('royaltykit/client');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const dsn = process.env.ROYALTYKIT_PG_DSN;
if (!dsn) throw new Error('ROYALTYKIT_PG_DSN is not set: run the suite with scripts/test-node.sh, which starts PostgreSQL');
const PUBLIC = 'https://hooks.example.com/e2e';
const NAMESPACE = 'org-1/e2e';
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('end to end: subscribe, receive into a PostgreSQL inbox while the worker sleeps, rotate the secret live, recover the lost deliveries: 8 effects, each once', async (t) => {
  const fake = spawn(process.env.PYTHON ?? 'python3', [path.join(ROOT, 'tests', 'fakeapi', 'server.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const pool = new Pool({ connectionString: dsn, idleTimeoutMillis: 0 });
  pool.on('error', () => {});
  const table = `inbox_e2e_${crypto.randomBytes(5).toString('hex')}`;
  const effects = `effects_${table}`;
  const controller = new AbortController();
  let server;
  try {
    const line = await new Promise((resolve) => readline.createInterface({ input: fake.stdout }).once('line', resolve));
    assert.match(line, /^listening \d+$/);
    const url = `http://127.0.0.1:${line.split(' ')[1]}`;
    const control = async (what, payload) => (await fetch(`${url}/_fake/${what}`, payload === undefined ? {} : { method: 'POST', body: JSON.stringify(payload) })).json();
    const deliver = (lose = false) => control('deliver', { reference: revealed.reference, event: 'ddex.delivery.failed', lose });

    // 1. The subscription; its secret shown once, held by the RevealedSecret, never printed.
    await control('reset', {});
    const org = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' } });
    const revealed = await org.createSubscription({ name: 'e2e', endpointUrl: PUBLIC, events: ['ddex.delivery.failed'] });
    const current = revealed.secret.secret;
    let s = await control('stats');
    assert.equal(s.webhooks_created, 1);
    assert.equal(s.webhooks[revealed.reference].secret, current);
    assert.match(current, /^whsec_/);
    for (const shown of [util.inspect(revealed), String(revealed), JSON.stringify(revealed), revealed.record]) assert.ok(!shown.includes(current), shown);

    // 2. The receiver in inbox mode on loopback (the public endpoint routed to it), and its worker.
    await pool.query(`CREATE TABLE ${effects} (resource TEXT NOT NULL UNIQUE, delivery_id TEXT NOT NULL)`);
    const inbox = new rk.PostgresInbox(pool, { table });
    await inbox.ready(); // the table, created before the first delivery rather than by its insert
    const outcomes = [];
    const receiver = new rk.WebhookReceiver({ secrets: revealed.secrets(), namespace: NAMESPACE, inbox, onEvent: (e) => outcomes.push(e.outcome) });
    server = http.createServer(webhookMiddleware(receiver));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const local = `http://127.0.0.1:${server.address().port}/webhooks`;
    await control('route', { from: PUBLIC, to: local });
    // Warmed up (the first request's compilation, the pool's connections) as the inbox tests do, but
    // with a test event: acknowledged, never queued, so the inbox holds only the subscription's.
    const ping = JSON.stringify({ event: 'enterprise.webhook.test', resource: { type: 'webhook', reference: revealed.reference, url: `/api/v1/webhooks/${revealed.reference}` } });
    const pinged = async (secret) => (await fetch(local, { method: 'POST', headers: rk.signWebhook(secret, ping, { deliveryId: 'dlv_ping' }), body: ping })).status;
    assert.equal(await pinged(current), 200);
    assert.equal(await inbox.state(rk.deliveryKey(NAMESPACE, 'dlv_ping')), 'new');
    await Promise.all([1, 2, 3, 4].map(() => pool.query('SELECT 1'))); // connections open, as in a running app
    let sleeping = 0;
    let asleep;
    const firstAsleep = new Promise((resolve) => { asleep = resolve; });
    const fetched = [];
    const failures = [];
    const handler = async (d, connection) => {
      const resource = await org.fetchResource(d.event); // the canonical fetch: the event is only a hint
      assert.equal(resource.data.uuid, d.event.resourceReference);
      fetched.push(d.event.resourceReference);
      sleeping += 1;
      asleep();
      await pause(2000);
      sleeping -= 1;
      await connection.query(`INSERT INTO ${effects} (resource, delivery_id) VALUES ($1, $2)`, [d.event.resourceReference, d.deliveryId]);
    };
    const worker = inbox.runWorker(handler, { signal: controller.signal, pollSeconds: 0.05,
      onError: (e) => failures.push(e), onStoreError: (e) => failures.push(e) });

    // 3. Six events, two lost; each live one answered at once while the handler sleeps 2 s.
    const lost = [2, 4];
    const sent = [];
    for (let i = 0; i < 6; i++) {
      const r = await deliver(lost.includes(i));
      assert.equal(r.status, lost.includes(i) ? 'failed' : 'delivered', JSON.stringify(r));
      sent.push(r);
      if (i === 0) await firstAsleep;
      else if (!lost.includes(i)) assert.equal(sleeping, 1, 'the handler was sleeping when this delivery was answered');
    }

    // 4. The rotation on the live receiver; the fake signs with both secrets during the overlap.
    const rotated = await org.rotateSecret(revealed.reference);
    s = await control('stats');
    assert.deepEqual([s.webhooks[revealed.reference].secret, s.webhooks[revealed.reference].previous], [rotated.secret.secret, current]);
    assert.equal(await pinged(rotated.secret.secret), 401, 'the new secret is not in use yet');
    receiver.useSecrets(rotated.secrets(current));
    // The fake signs with both during the overlap: signed with one of them, each is accepted now.
    assert.deepEqual([await pinged(rotated.secret.secret), await pinged(current)], [200, 200]);
    for (let i = 0; i < 2; i++) {
      const r = await deliver();
      assert.equal(r.status, 'delivered', JSON.stringify(r));
      sent.push(r);
    }
    const live = sent.filter((r) => r.answer_ms !== null);
    t.diagnostic(`answer_ms of the 6 live deliveries: ${live.map((r) => r.answer_ms).join(', ')}`);
    assert.equal(live.length, 6);
    // A reply that waited for the 2 s handler takes 2 s or more (its speed is not asserted: wall-clock).
    for (const r of live) assert.ok(r.answer_ms < 1000, `a delivery was answered in ${r.answer_ms} ms`);

    // 5. Recovery checks the inbox: the 2 lost ones are replayed (pending ones are in_progress, left alone).
    const since = new Date(Date.now() - 3600 * 1000);
    const report = await org.recoverDeliveries(revealed.reference, { store: inbox, namespace: NAMESPACE, since });
    assert.deepEqual(report.deliveries.map((d) => d.reference), sent.map((r) => r.delivery));
    report.deliveries.forEach((d, i) => assert.ok((lost.includes(i) ? ['replayed'] : ['processed', 'in_progress']).includes(d.action), JSON.stringify(report)));
    assert.equal(report.replayed, 2);
    for (let i = 0; i < 200; i++) {
      s = await control('stats');
      if (s.deliveries.filter((d) => d.replay_of && d.status === 'delivered').length === 2) break;
      await pause(50);
    }
    assert.deepEqual(s.deliveries.filter((d) => d.replay_of && d.status === 'delivered').map((d) => d.replay_of), lost.map((i) => sent[i].delivery));

    // 6. The worker drains the inbox (8 × 2 s, one at a time), then stops.
    for (let i = 0; i < 600; i++) {
      const counts = await inbox.counts();
      if (counts.done === 8 && sleeping === 0) break;
      await pause(100);
    }
    controller.abort();
    assert.deepEqual(await worker, { processed: 8, retried: 0, poisoned: 0 }, 'no handler failed: the UNIQUE effect was never violated');
    assert.deepEqual(failures, []);
    assert.deepEqual(outcomes.filter((o) => o !== 'acknowledged'), [...Array(4).fill('queued'), 'rejected', ...Array(4).fill('queued')], 'the only rejection: the new secret before useSecrets');
    assert.deepEqual(await inbox.counts(), { done: 8 });
    const { rows: [n] } = await pool.query(`SELECT count(*)::int AS total, count(DISTINCT resource)::int AS uniq FROM ${effects}`);
    assert.deepEqual(n, { total: 8, uniq: 8 });
    const { rows } = await pool.query(`SELECT resource FROM ${effects}`);
    assert.deepEqual(rows.map((r) => r.resource).sort(), [...fetched].sort());
    s = await control('stats');
    assert.ok(s.requests.fetchEnterpriseResource >= 8, JSON.stringify(s.requests));
    const again = await org.recoverDeliveries(revealed.reference, { store: inbox, namespace: NAMESPACE, since });
    assert.deepEqual(again.deliveries.map((d) => d.action), sent.map((_, i) => (lost.includes(i) ? 'processed_by_replay' : 'processed')), JSON.stringify(again));
    assert.equal(again.replayed, 0);
    assert.equal((await control('stats')).replays, 2);
  } finally {
    controller.abort();
    server?.closeAllConnections?.();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
    await pool.end();
    fake.stdin.end();
  }
});
