'use strict';
// The inbox (issue 43 point 1) through the installed package, against a real PostgreSQL (the
// throw-away cluster scripts/test-node.sh starts: ROYALTYKIT_PG_DSN) and SQLite files: a receiver
// in inbox mode persists each verified delivery and answers at once while the worker's handler is
// still running; the worker (`runWorker`, `drain`) marks each entry done in the transaction that
// holds the handler's effect, retries a failing handler after the core's backoff, sets it aside
// as poison after its last attempt, and a worker process SIGKILLed again and again still applies
// every effect exactly once. Which step comes next is the core's InboxWorker (its transcripts run
// in machines.test.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { Readable } = require('node:stream');
const Database = require('better-sqlite3');
const { Pool } = require('pg');
const rk = require('royaltykit');
const fetchApi = require('royaltykit/fetch');
const { webhookMiddleware } = require('royaltykit/express');
const { createEnterpriseClient } = require('royaltykit/client');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const CHILD = path.join(__dirname, 'inbox-child.cjs');
const SECRET = 'whsec_inbox_tests_0123456789abcdef';
const NAMESPACE = 'org-9/inbox';
const dsn = process.env.ROYALTYKIT_PG_DSN;
if (!dsn) throw new Error('ROYALTYKIT_PG_DSN is not set: run the suite with scripts/test-node.sh, which starts PostgreSQL');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'royaltykit-inbox-'));
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const hex = (n) => crypto.randomBytes(n).toString('hex');
const quiet = { onError: () => {}, onStoreError: () => {} };

/** A signed delivery of a new resource (its reference is the effect's UNIQUE key). */
function delivery(now = Math.floor(Date.now() / 1000), id = `dlv_${hex(6)}`) {
  const ref = `rel_${hex(6)}`;
  const body = JSON.stringify({ event: 'ddex.delivery.failed', occurred_at: '2026-11-27T04:05:06Z',
    resource: { type: 'ddex_delivery', reference: ref, url: `/api/v1/ddex/deliveries/${ref}` } });
  return { id, ref, body, now, headers: rk.signWebhook(SECRET, body, { timestamp: now, deliveryId: id }) };
}

/** An inbox and an effects table (resource UNIQUE) in PostgreSQL or a SQLite file. */
class Db {
  constructor(kind) {
    this.kind = kind;
    this.table = `inbox_${hex(5)}`;
    this.effects = `effects_${this.table}`;
  }
  open() {
    const ddl = `CREATE TABLE ${this.effects} (resource TEXT NOT NULL UNIQUE, delivery_id TEXT NOT NULL)`;
    if (this.kind === 'postgres') {
      this.pool = new Pool({ connectionString: dsn });
      this.pool.on('error', () => {});
      return this.pool.query(ddl).then(() => this);
    }
    this.file = path.join(tmp, `${this.table}.sqlite`);
    this.db = new Database(this.file, { timeout: 5000 });
    this.db.exec(ddl);
    return Promise.resolve(this);
  }
  inbox(o = {}) {
    return this.kind === 'postgres' ? new rk.PostgresInbox(this.pool, { table: this.table, ...o }) : new rk.SqliteInbox(this.db, { table: this.table, ...o });
  }
  async query(sql, args = []) {
    if (this.kind === 'postgres') return (await this.pool.query(sql.replace(/\?/g, (_, i) => `$${sql.slice(0, i).split('?').length}`), args)).rows;
    return this.db.prepare(sql).all(...args);
  }
  /** Writes the effect with the transaction's connection (the handler's only database work). */
  async effect(d, connection) {
    const sql = `INSERT INTO ${this.effects} (resource, delivery_id) VALUES (?, ?)`;
    if (this.kind === 'postgres') await connection.query(sql.replace('?', '$1').replace('?', '$2'), [d.event.resourceReference, d.deliveryId]);
    else connection.prepare(sql).run(d.event.resourceReference, d.deliveryId);
  }
  async applied() {
    return (await this.query(`SELECT resource FROM ${this.effects} ORDER BY resource`)).map((r) => r.resource);
  }
  async row(key) {
    const [r] = await this.query(`SELECT state, attempts, due_at, last_error FROM ${this.table} WHERE inbox_key = ?`, [key]);
    return r && { state: r.state, attempts: Number(r.attempts), dueAt: Number(r.due_at), lastError: r.last_error };
  }
  receiver(inbox, o = {}) {
    return new rk.WebhookReceiver({ secrets: SECRET, namespace: NAMESPACE, inbox, ...o });
  }
  async close() {
    if (this.pool) await this.pool.end();
    if (this.db) this.db.close();
  }
}

/** A node:http server on 127.0.0.1 for `listener`: its URL and `close()`. */
async function serve(listener) {
  const server = http.createServer(listener);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks`,
    close() {
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** POSTs a delivery to `url`; resolves to `[status, body, milliseconds]`. */
async function post(url, d) {
  const t = process.hrtime.bigint();
  const r = await fetch(url, { method: 'POST', headers: { ...d.headers, 'content-type': 'application/json' }, body: d.body });
  const body = await r.json();
  return [r.status, body, Number(process.hrtime.bigint() - t) / 1e6];
}

test('PostgreSQL: an HTTP receiver in inbox mode answers at once while the worker\'s handler sleeps 2 s; a redelivery is a duplicate; drain processes each once', async (t) => {
  const db = await new Db('postgres').open();
  const inbox = db.inbox();
  const events = [];
  const endpoint = await serve(webhookMiddleware({ secrets: SECRET, namespace: NAMESPACE, inbox, onEvent: (e) => events.push(e) }));
  const controller = new AbortController();
  try {
    // Warm the path up (connection, JIT, the table created by the first statement).
    const warm = delivery();
    assert.deepEqual((await post(endpoint.url, warm)).slice(0, 2), [200, { result: 'queued' }]);
    assert.deepEqual(await inbox.drain((d, c) => db.effect(d, c)), { processed: 1, retried: 0, poisoned: 0 });

    let started;
    const running = new Promise((resolve) => { started = resolve; });
    let finished = 0;
    const runs = [];
    const handler = async (d, c) => {
      runs.push(d.deliveryId);
      assert.equal(d.event.name, 'ddex.delivery.failed');
      assert.equal(d.attempts, 1);
      assert.match(d.key, /^dlv_/);
      await db.effect(d, c);
      if (runs.length === 1) {
        started(d.deliveryId);
        await pause(2000); // a slow handler: longer than any reply may take
      }
      finished += 1;
    };
    const worker = inbox.runWorker(handler, { signal: controller.signal, pollSeconds: 0.05 });
    const [d1, d2, d3] = [delivery(), delivery(), delivery()];
    const [s1, b1, ms1] = await post(endpoint.url, d1);
    assert.deepEqual([s1, b1], [200, { result: 'queued' }]);
    assert.equal(await running, d1.id, 'the worker runs the handler');
    const replies = [];
    for (const d of [d2, d3, d1, d2]) replies.push(await post(endpoint.url, d));
    assert.equal(finished, 0, 'every reply came while the handler was still sleeping');
    assert.deepEqual(replies.map(([s, b]) => [s, b.result]), [[200, 'queued'], [200, 'queued'], [200, 'duplicate'], [200, 'duplicate']]);
    const times = [ms1, ...replies.map(([, , ms]) => ms)];
    t.diagnostic(`replies while the handler slept, ms: ${times.map((ms) => ms.toFixed(1)).join(', ')}`);
    // A reply that waited for the 2 s handler takes 2 s or more (its speed is not asserted: wall-clock).
    for (const ms of times) assert.ok(ms < 1000, `a reply took ${ms.toFixed(1)} ms`);
    assert.deepEqual(events.slice(-5).map((e) => e.outcome), ['queued', 'queued', 'queued', 'duplicate', 'duplicate']);
    assert.equal(await inbox.state(rk.deliveryKey(NAMESPACE, d1.id)), 'in_progress', 'pending: received, not yet processed');
    // Stopped: the handler in flight finishes and commits; the worker returns its counters.
    controller.abort();
    const report = await worker;
    assert.equal(report.processed >= 1, true, JSON.stringify(report));
    assert.deepEqual(await inbox.drain(handler), { processed: 3 - report.processed, retried: 0, poisoned: 0 });
    assert.deepEqual(new Set(runs), new Set([d1.id, d2.id, d3.id]));
    assert.equal(runs.length, 3, 'each delivery processed once');
    assert.deepEqual(await db.applied(), [warm.ref, d1.ref, d2.ref, d3.ref].sort());
    assert.deepEqual(await inbox.counts(), { done: 4 });
    for (const d of [d1, d2, d3]) assert.equal(await inbox.state(rk.deliveryKey(NAMESPACE, d.id)), 'done');
    // Processed, then delivered again: still a duplicate, never run again.
    assert.deepEqual((await post(endpoint.url, d3)).slice(0, 2), [200, { result: 'duplicate' }]);
    assert.deepEqual(await inbox.drain(handler), { processed: 0, retried: 0, poisoned: 0 });
    assert.equal(runs.length, 3);
    // What is not verified never reaches the inbox; a test event is acknowledged without it.
    const forged = delivery();
    assert.equal((await post(endpoint.url, { ...forged, body: forged.body.replace('failed', 'blocked') }))[0], 401);
    const ping = JSON.stringify({ event: 'enterprise.webhook.test', resource: { type: 'webhook', reference: 'wh_1', url: '/api/v1/webhooks/wh_1' } });
    const [ps, pb] = await post(endpoint.url, { body: ping, headers: rk.signWebhook(SECRET, ping, { deliveryId: 'dlv_ping' }) });
    assert.deepEqual([ps, pb.result], [200, 'acknowledge']);
    assert.deepEqual(await inbox.counts(), { done: 4 });
  } finally {
    controller.abort();
    await endpoint.close();
    await db.close();
  }
});

for (const kind of ['sqlite', 'postgres']) {
  test.describe(`inbox on ${kind}`, () => {
    let db;
    test.beforeEach(async () => { db = await new Db(kind).open(); });
    test.afterEach(async () => { await db.close(); });

    test('a receiver in inbox mode (fetch handler): queued, duplicate; drain runs the handler once in its transaction', async () => {
      const inbox = db.inbox();
      const handle = fetchApi.webhookHandler({ secrets: SECRET, namespace: NAMESPACE, inbox });
      const ds = [delivery(), delivery(), delivery()];
      const send = async (d) => {
        const r = await handle(new Request('http://127.0.0.1/webhooks', { method: 'POST', headers: d.headers, body: d.body }));
        return [r.status, (await r.json()).result];
      };
      for (const d of ds) assert.deepEqual(await send(d), [200, 'queued']);
      assert.deepEqual(await send(ds[0]), [200, 'duplicate']);
      assert.deepEqual(await inbox.counts(), { pending: 3 });
      const seen = [];
      const report = await inbox.drain(async (d, c) => {
        seen.push(d);
        await db.effect(d, c);
      });
      assert.deepEqual(report, { processed: 3, retried: 0, poisoned: 0 });
      assert.deepEqual(seen.map((d) => d.deliveryId), ds.map((d) => d.id), 'oldest first');
      assert.equal(seen[0].body, ds[0].body, 'the body as received');
      assert.deepEqual(seen[0].event, rk.verifyWebhook(ds[0].headers, ds[0].body, SECRET, { now: ds[0].now }).event, 'the event, parsed by the core');
      assert.deepEqual(await db.applied(), ds.map((d) => d.ref).sort());
      // A handler that throws after writing: its effect rolls back with the attempt.
      const more = delivery();
      assert.deepEqual(await send(more), [200, 'queued']);
      const failing = await inbox.drain(async (d, c) => {
        await db.effect(d, c);
        throw new Error('after the write');
      }, quiet);
      assert.deepEqual(failing, { processed: 0, retried: 1, poisoned: 0 });
      assert.equal((await db.applied()).includes(more.ref), false);
      const row = await db.row(rk.deliveryKey(NAMESPACE, more.id));
      assert.deepEqual([row.state, row.attempts, row.lastError], ['pending', 1, 'Error: after the write']);
      // An onError that throws changes nothing: the attempt still rolls back and is settled.
      const last = delivery();
      assert.deepEqual(await send(last), [200, 'queued']);
      const printed = [];
      const original = console.error;
      console.error = (...args) => printed.push(args.map(String).join(' '));
      let thrown;
      try {
        thrown = await inbox.drain(async (d, c) => {
          await db.effect(d, c);
          if (d.deliveryId === last.id) throw new Error('after the write, again');
        }, { onError: () => { throw new Error('onError itself failed'); } });
      } finally {
        console.error = original;
      }
      assert.equal(thrown.retried, 1, JSON.stringify(thrown));
      assert.ok(printed.some((l) => l.includes('onError threw')), printed.join('\n'));
      assert.equal((await db.applied()).includes(last.ref), false);
      const settled = await db.row(rk.deliveryKey(NAMESPACE, last.id));
      assert.deepEqual([settled.state, settled.attempts], ['pending', 1]);
    });

    test('a handler failing twice then succeeding: retried after the core\'s backoff (retry_at moves forward), processed once', async () => {
      let now = 1_800_000_000;
      const inbox = db.inbox({ clock: () => now });
      const d = delivery(now);
      const key = rk.deliveryKey(NAMESPACE, d.id);
      assert.equal((await db.receiver(inbox).receive(d.headers, d.body, now)).status, 200);
      let calls = 0;
      const errors = [];
      const handler = async (dl, c) => {
        calls += 1;
        await db.effect(dl, c);
        if (calls <= 2) throw new Error(`upstream 503 (${calls})`);
      };
      const opts = { onError: (e, dl) => errors.push([e.message, dl.attempts]) };
      assert.deepEqual(await inbox.drain(handler, opts), { processed: 0, retried: 1, poisoned: 0 });
      const first = await db.row(key);
      assert.equal(first.state, 'pending');
      assert.ok(first.dueAt > now, `retry_at ${first.dueAt} is after now`);
      // Not due yet: nothing runs.
      assert.deepEqual(await inbox.drain(handler, opts), { processed: 0, retried: 0, poisoned: 0 });
      assert.equal(calls, 1);
      now = first.dueAt;
      assert.deepEqual(await inbox.drain(handler, opts), { processed: 0, retried: 1, poisoned: 0 });
      const second = await db.row(key);
      assert.ok(second.dueAt > first.dueAt, 'the backoff grows');
      assert.equal(second.lastError, 'Error: upstream 503 (2)');
      now = second.dueAt;
      assert.deepEqual(await inbox.drain(handler, opts), { processed: 1, retried: 0, poisoned: 0 });
      assert.equal(calls, 3);
      assert.deepEqual(errors, [['upstream 503 (1)', 1], ['upstream 503 (2)', 2]]);
      assert.deepEqual(await db.applied(), [d.ref]);
      assert.deepEqual(await db.row(key).then((r) => [r.state, r.attempts, r.lastError]), ['done', 3, null]);
      assert.equal(await inbox.state(key), 'done');
    });

    test('a handler always failing with maxAttempts 2: poison, listed, retried by hand, processed by the next drain', async () => {
      let now = 1_800_000_000;
      const inbox = db.inbox({ clock: () => now });
      const d = delivery(now);
      const key = rk.deliveryKey(NAMESPACE, d.id);
      assert.equal((await db.receiver(inbox).receive(d.headers, d.body, now)).status, 200);
      const broken = () => { throw new TypeError('cannot read the resource'); };
      assert.deepEqual(await inbox.drain(broken, { maxAttempts: 2, ...quiet }), { processed: 0, retried: 1, poisoned: 0 });
      now = (await db.row(key)).dueAt;
      assert.deepEqual(await inbox.drain(broken, { maxAttempts: 2, ...quiet }), { processed: 0, retried: 0, poisoned: 1 });
      assert.deepEqual(await inbox.poisoned(), [{ key, deliveryId: d.id, event: 'ddex.delivery.failed', attempts: 2,
        lastError: 'TypeError: cannot read the resource', receivedAt: 1_800_000_000 }]);
      assert.deepEqual(await inbox.counts(), { poison: 1 });
      assert.equal(await inbox.state(key), 'in_progress', 'received: a replay would not help');
      // Never claimed again until an operator retries it.
      now += 86400;
      assert.deepEqual(await inbox.drain(broken, quiet), { processed: 0, retried: 0, poisoned: 0 });
      assert.equal(await inbox.retry(key), true);
      assert.equal(await inbox.retry(key), false, 'no longer poison');
      assert.equal(await inbox.retry(rk.deliveryKey(NAMESPACE, 'dlv_unknown')), false);
      assert.deepEqual(await inbox.poisoned(10), []);
      assert.deepEqual(await inbox.drain((dl, c) => db.effect(dl, c)), { processed: 1, retried: 0, poisoned: 0 });
      assert.deepEqual(await db.applied(), [d.ref]);
      assert.deepEqual(await db.row(key).then((r) => [r.state, r.attempts]), ['done', 1]);
      await assert.rejects(inbox.poisoned(0), rk.InvalidArgumentError);
      await assert.rejects(inbox.poisoned(1001), rk.InvalidArgumentError);
    });

    test('state(key): unknown new, pending in_progress, done done; purge removes done entries past their time-to-live', async () => {
      let now = 1_800_000_000;
      const inbox = db.inbox({ clock: () => now, ttlSeconds: 3600 });
      const d = delivery(now);
      const key = rk.deliveryKey(NAMESPACE, d.id);
      assert.equal(await inbox.state(key), 'new');
      assert.equal(await inbox.enqueue(key, d.id, 'ddex.delivery.failed', d.body), true);
      assert.equal(await inbox.enqueue(key, d.id, 'ddex.delivery.failed', d.body), false, 'a duplicate');
      assert.equal(await inbox.state(key), 'in_progress');
      assert.deepEqual(await inbox.drain((dl, c) => db.effect(dl, c)), { processed: 1, retried: 0, poisoned: 0 });
      assert.equal(await inbox.state(key), 'done');
      assert.equal(await inbox.purge(), 0);
      now += 3601;
      assert.equal(await inbox.purge(), 1);
      assert.equal(await inbox.state(key), 'new');
      await assert.rejects(inbox.state(''), rk.InvalidArgumentError);
      await assert.rejects(inbox.enqueue(key, '', 'e', '{}'), rk.InvalidArgumentError);
    });

    test('stopping: an aborted signal ends runWorker at its next claim or wait; a handler throwing after the abort rolls back and is never settled', async () => {
      const inbox = db.inbox({ leaseSeconds: 30 });
      // Nothing due: the worker waits, and the abort ends the wait at once.
      const idle = new AbortController();
      const t = Date.now();
      const waiting = inbox.runWorker(() => {}, { signal: idle.signal, pollSeconds: 60 });
      await pause(50);
      idle.abort();
      assert.deepEqual(await waiting, { processed: 0, retried: 0, poisoned: 0 });
      assert.ok(Date.now() - t < 5000);
      assert.deepEqual(await inbox.runWorker(() => {}, { signal: AbortSignal.abort() }), { processed: 0, retried: 0, poisoned: 0 });
      // Cancelled inside the handler: what it threw propagates; the effect is rolled back, the
      // attempt counted, the entry left pending under its lease (no error recorded).
      const d = delivery();
      const key = rk.deliveryKey(NAMESPACE, d.id);
      assert.equal(await inbox.enqueue(key, d.id, 'ddex.delivery.failed', d.body), true);
      const stop = new AbortController();
      const run = inbox.runWorker(async (dl, c) => {
        await db.effect(dl, c);
        stop.abort(new Error('shutting down'));
        throw stop.signal.reason;
      }, { signal: stop.signal, ...quiet });
      await assert.rejects(run, /shutting down/);
      assert.deepEqual(await db.applied(), []);
      const row = await db.row(key);
      assert.deepEqual([row.state, row.attempts, row.lastError], ['pending', 1, null]);
      assert.ok(row.dueAt > Date.now() / 1000 + 20, 'held by the lease');
      // The connection was given back: the inbox goes on working.
      assert.equal(await inbox.state(key), 'in_progress');
      // Arguments are checked first.
      await assert.rejects(inbox.drain('nope'), TypeError);
      await assert.rejects(inbox.drain(() => {}, { max_attempts: 2 }), /unknown option `max_attempts` for drain/);
      await assert.rejects(inbox.drain(() => {}, { maxAttempts: 0 }), rk.InvalidArgumentError);
      await assert.rejects(inbox.runWorker(() => {}, { pollSeconds: 0 }), rk.InvalidArgumentError);
      await assert.rejects(inbox.runWorker(() => {}, { signal: 'stop' }), TypeError);
    });

    test('an EventRouter as the worker\'s handler; a body the core cannot parse fails its attempt', async () => {
      const inbox = db.inbox();
      const d = delivery();
      assert.equal((await db.receiver(inbox).receive(d.headers, d.body)).status, 200);
      const seen = [];
      const router = new rk.EventRouter()
        .on('ddex.delivery.failed', (dl, c) => db.effect(dl, c))
        .onAny((dl) => { seen.push(dl.event.name); });
      assert.deepEqual(await inbox.drain(router), { processed: 1, retried: 0, poisoned: 0 });
      assert.deepEqual(seen, ['ddex.delivery.failed']);
      assert.deepEqual(await db.applied(), [d.ref]);
      // An entry written by hand, not a delivery: the attempt fails with the core's message.
      const errors = [];
      assert.equal(await inbox.enqueue(rk.deliveryKey(NAMESPACE, 'dlv_bad'), 'dlv_bad', 'x', 'not json'), true);
      assert.deepEqual(await inbox.drain(router, { onError: (e) => errors.push(e) }), { processed: 0, retried: 1, poisoned: 0 });
      assert.ok(errors[0] instanceof rk.WebhookVerificationError, String(errors[0]));
      assert.match((await db.row(rk.deliveryKey(NAMESPACE, 'dlv_bad'))).lastError, /^WebhookVerificationError: /);
    });
  });
}

test('receiver options: inbox excludes store and handler; a failing insert answers 503 and is reported', async () => {
  const db = await new Db('postgres').open();
  try {
    const inbox = db.inbox();
    assert.throws(() => db.receiver(inbox, { store: new rk.DedupWindow(10) }), /store and inbox exclude each other/);
    assert.throws(() => db.receiver(inbox, { handler: () => {} }), /the handler runs in the worker/);
    assert.throws(() => db.receiver({}), /inbox must have enqueue/);
    assert.throws(() => new rk.WebhookVerifier(SECRET).receipt({}, '', { namespace: 'n', window: new rk.DedupWindow(1), inbox: true }), TypeError);
    const seen = [];
    const missing = new rk.PostgresInbox(db.pool, { table: `${db.table}_missing`, createTable: false });
    const d = delivery();
    const r = await db.receiver(missing, { onStoreError: (e, what) => seen.push([what, e.code]) }).receive(d.headers, d.body);
    assert.deepEqual([r.status, JSON.parse(r.body).error], [503, 'store_unavailable']);
    assert.deepEqual(seen, [['enqueue', '42P01']]); // PostgreSQL's undefined_table
    // An inbox of your own whose enqueue does not answer a boolean: a store failure, never a guess.
    const odd = db.receiver({ enqueue: async () => 1 }, { onStoreError: (e, what) => seen.push([what, e.name]) });
    assert.equal((await odd.receive(d.headers, d.body)).status, 503);
    assert.deepEqual(seen.at(-1), ['enqueue', 'TypeError']);
    assert.deepEqual(rk.SqlInboxProtocol.limits, { defaultTable: 'royaltykit_inbox', defaultMaxAttempts: 5, maxAttempts: 100,
      defaultPollSeconds: 1, maxBodyBytes: 262144, maxErrorBytes: 1024, maxPoisonListed: 1000, defaultPoisonListed: 100 });
    assert.equal(new rk.SqlInboxProtocol('sqlite', { paramStyle: 'qmark' }).table, rk.SqlInboxProtocol.limits.defaultTable);
    assert.throws(() => new rk.PostgresInbox({}), TypeError);
    assert.throws(() => new rk.SqliteInbox({}), TypeError);
    assert.throws(() => new rk.PostgresInbox(db.pool, { table: 'x;drop' }), rk.InvalidArgumentError);
    assert.throws(() => new rk.PostgresInbox(db.pool, { leaseSeconds: 0 }), rk.InvalidArgumentError);
  } finally {
    await db.close();
  }
});

// ---- delivery recovery with an inbox as the receiver's store -------------------------------------

test('recoverDeliveries checks an inbox: the lost delivery is replayed into it, the worker processes each once', async () => {
  const fake = spawn(process.env.PYTHON ?? 'python3', [path.join(ROOT, 'tests', 'fakeapi', 'server.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const db = await new Db('sqlite').open();
  let endpoint;
  try {
    const line = await new Promise((resolve) => readline.createInterface({ input: fake.stdout }).once('line', resolve));
    assert.match(line, /^listening \d+$/);
    const url = `http://127.0.0.1:${line.split(' ')[1]}`;
    const control = async (what, payload) => (await fetch(`${url}/_fake/${what}`, { method: 'POST', body: JSON.stringify(payload) })).json();
    const inbox = db.inbox();
    let receiver;
    endpoint = await serve((req, res) => receiver(req, res));
    // The subscription's public endpoint, routed by the fake API to this receiver on loopback.
    const PUBLIC = 'https://hooks.example.com/royaltykit-inbox';
    await control('reset', { routes: { [PUBLIC]: endpoint.url } });
    const org = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' } });
    const revealed = await org.createSubscription({ name: 'inbox', endpointUrl: PUBLIC, events: ['ddex.delivery.failed'] });
    const handle = fetchApi.webhookHandler({ secrets: revealed.secrets(), namespace: NAMESPACE, inbox });
    receiver = async (req, res) => {
      const response = await handle(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body: Readable.toWeb(req), duplex: 'half' }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    };
    const sent = [];
    for (const lose of [false, true, false]) {
      const r = await control('deliver', { reference: revealed.reference, event: 'ddex.delivery.failed', lose });
      assert.equal(r.status, lose ? 'failed' : 'delivered', JSON.stringify(r));
      sent.push(r.delivery);
    }
    const handler = (d, c) => db.effect(d, c);
    assert.deepEqual(await inbox.drain(handler), { processed: 2, retried: 0, poisoned: 0 });
    const since = new Date(Date.now() - 3600 * 1000);
    const report = await org.recoverDeliveries(revealed.reference, { store: inbox, namespace: NAMESPACE, since });
    assert.deepEqual(report.deliveries.map((d) => d.action), ['processed', 'replayed', 'processed'], JSON.stringify(report));
    assert.deepEqual(report.deliveries.map((d) => d.reference), sent);
    // The fake sends the replay in the background: into the inbox, then the worker.
    for (let i = 0; i < 200 && (await inbox.counts()).pending === undefined; i++) await pause(50);
    assert.deepEqual(await inbox.drain(handler), { processed: 1, retried: 0, poisoned: 0 });
    assert.equal((await db.applied()).length, 3);
    assert.equal(new Set(await db.applied()).size, 3);
    const again = await org.recoverDeliveries(revealed.reference, { store: inbox, namespace: NAMESPACE, since });
    assert.deepEqual(again.deliveries.map((d) => d.action), ['processed', 'processed_by_replay', 'processed'], JSON.stringify(again));
  } finally {
    await endpoint?.close();
    fake.stdin.end();
    await db.close();
  }
});

// ---- a worker process SIGKILLed again and again -------------------------------------------------

/** Runs inbox-child.cjs; `killAt(line, child)` may SIGKILL it on a line it prints. */
function worker(db, killAt) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CHILD], { env: { ...process.env, INBOX_TABLE: db.table, INBOX_EFFECTS: db.effects, INBOX_LEASE: '2' } });
    const lines = [];
    let err = '';
    readline.createInterface({ input: p.stdout }).on('line', (l) => {
      lines.push(l);
      killAt?.(l, p, lines);
    });
    p.stderr.on('data', (b) => { err += b; });
    p.on('close', (code, signal) => resolve({ code, signal, lines, err }));
  });
}

test('PostgreSQL: a worker SIGKILLed at random moments, restarted each time: every entry done, each effect applied exactly once', async (t) => {
  const db = await new Db('postgres').open();
  try {
    const inbox = db.inbox({ leaseSeconds: 2 });
    const receiver = db.receiver(inbox);
    const ds = Array.from({ length: 30 }, () => delivery());
    for (const d of ds) assert.equal(JSON.parse((await receiver.receive(d.headers, d.body)).body).result, 'queued');
    // Kill points, round after round: right after a claim (before the transaction), after the
    // effect's insert (inside it), after the mark (before the commit), after the commit (between
    // entries), and at a random time; each after 1 or 2 occurrences, at once in the first five
    // rounds and a random 0-30 ms later in the next five.
    const points = ['claimed', 'inserted', 'marked', 'committed', 'time'];
    const kills = [];
    for (let round = 0; round < 10; round++) {
      const point = points[round % points.length];
      const nth = 1 + crypto.randomInt(2);
      let count = 0;
      let armed = true;
      const kill = (p, lines) => {
        if (!armed) return;
        armed = false;
        const signal = () => { kills.push([point, lines.at(-1).split(' ')[0]]); p.kill('SIGKILL'); };
        if (round < points.length) signal(); // at once: lands in the step right after the line
        else setTimeout(signal, crypto.randomInt(31));
      };
      const r = await worker(db, (line, p, lines) => {
        if (point === 'time' && line === 'started') setTimeout(() => kill(p, lines), 100 + crypto.randomInt(600));
        else if (line.startsWith(`${point} `) && ++count === nth) kill(p, lines);
      });
      assert.ok(!r.lines.some((l) => l.startsWith('DUPLICATE')), r.lines.join('\n'));
      assert.equal(r.signal, 'SIGKILL', `round ${round} (${point}) was not killed: ${r.code} ${r.err}${r.lines.join('\n')}`);
    }
    assert.ok(kills.length >= 8);
    t.diagnostic(`kills (point → the child's last line when the signal was sent): ${kills.map(([p, l]) => `${p} → ${l}`).join(', ')}`);
    const pending = (await inbox.counts()).pending ?? 0;
    assert.ok(pending > 0, 'the kills left work to do');
    // The last worker drains what is left (waiting out the leases of the entries the dead held).
    const last = await worker(db);
    assert.equal(last.code, 0, `${last.err}${last.lines.join('\n')}`);
    assert.ok(!last.lines.some((l) => l.startsWith('DUPLICATE')), last.lines.join('\n'));
    assert.deepEqual(await inbox.counts(), { done: 30 });
    assert.deepEqual(await inbox.poisoned(), []);
    const effects = await db.applied();
    assert.equal(effects.length, 30);
    assert.deepEqual(effects, ds.map((d) => d.ref).sort(), 'exactly one effect row per entry');
    const attempts = Number((await db.query(`SELECT sum(attempts) AS n FROM ${db.table}`))[0].n);
    assert.ok(attempts > 30, `attempts ${attempts} count the runs the kills cut short`);
  } finally {
    await db.close();
  }
});
