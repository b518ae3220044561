'use strict';
// Delivery recovery (issue 43 point 3) through the installed package: a subscription created with
// the client whose endpoint is a receiver of this package on 127.0.0.1 (royaltykit/fetch's
// handler and royaltykit/express's middleware behind node:http), deliveries sent and lost by the
// shared fake API (tests/fakeapi/server.py, `/_fake/deliver`), and `recoverDeliveries` replaying
// what the receiver never processed, with the in-memory window and SQLite. Then `state(key)` of
// every built-in store (DedupWindow, RedisDedupStore on a real redis-server, SqliteDedupStore,
// PostgresDedupStore on the cluster scripts/test-node.sh starts): read without claiming. Which
// delivery gets what is the core's Recovery (its transcripts run in machines.test.js).
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
const { startRedis } = require('./redis.cjs');
const fetchApi = require('royaltykit/fetch');
const { webhookMiddleware } = require('royaltykit/express');
const { createEnterpriseClient } = require('royaltykit/client');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const ORG = { apiKey: 'key-1', apiSecret: 'secret-1' };
const NAMESPACE = 'org-1/recovery';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'royaltykit-recovery-'));

let fake;
let url;

test.before(async () => {
  fake = spawn(process.env.PYTHON ?? 'python3', [path.join(ROOT, 'tests', 'fakeapi', 'server.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve) => readline.createInterface({ input: fake.stdout }).once('line', resolve));
  assert.match(line, /^listening \d+$/);
  url = `http://127.0.0.1:${line.split(' ')[1]}`;
});
test.after(() => fake.stdin.end());

async function control(what, payload) {
  const r = await fetch(`${url}/_fake/${what}`, payload === undefined ? {} : { method: 'POST', body: JSON.stringify(payload) });
  return r.json();
}
const reset = (script = {}) => control('reset', script);
const stats = () => control('stats');
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const client = () => createEnterpriseClient({ baseUrl: url, credentials: ORG });
const anHourAgo = () => new Date(Date.now() - 3600 * 1000);

/** Polls the fake API's stats until `ready(stats)` holds (at most 10 s). */
async function until(ready, what) {
  for (let i = 0; i < 200; i++) {
    const s = await stats();
    if (ready(s)) return s;
    await pause(50);
  }
  assert.fail(`timed out waiting for ${what}: ${JSON.stringify((await stats()).deliveries)}`);
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

/** The endpoint a subscription is created with: public and https, as the core requires (it refuses
 * a loopback or plain-http endpoint before any request). */
const PUBLIC = 'https://hooks.example.com/royaltykit';

/**
 * A fetch that routes the subscription's endpoint to `local` (the receiver on 127.0.0.1) as DNS
 * and a TLS front would: the create's body names `local` when it reaches the fake API.
 */
function routed(local) {
  return (u, init) => {
    if (init?.method === 'POST' && String(u).endsWith('/api/v1/webhooks')) {
      const body = Buffer.from(init.body).toString('utf8').replace(JSON.stringify(PUBLIC), JSON.stringify(local));
      return fetch(u, { ...init, body });
    }
    return fetch(u, init);
  };
}

/**
 * A subscription whose endpoint is a receiver of this package on loopback, and its store: the
 * in-memory window (the fetch handler) or SQLite (the express middleware, the handler's effect
 * written in the transaction that marks the delivery done). `handled()` lists the resource each
 * handler run applied, `close()` stops it all.
 */
async function subscribed(kind) {
  const runs = [];
  let store;
  let receiver;
  let db;
  // The endpoint starts first (its URL goes into the subscription), its receiver once the secret is revealed.
  const endpoint = await serve((req, res) => receiver(req, res));
  const org = createEnterpriseClient({ baseUrl: url, credentials: ORG, fetch: routed(endpoint.url) });
  const revealed = await org.createSubscription({ name: `recovery-${kind}`, endpointUrl: PUBLIC, events: ['ddex.delivery.failed'] });
  assert.equal((await stats()).webhooks[revealed.reference].endpoint_url, endpoint.url);
  if (kind === 'memory') {
    store = new rk.DedupWindow(1000);
    const handle = fetchApi.webhookHandler({ secrets: revealed.secrets(), namespace: NAMESPACE, store,
      handler: (d) => { runs.push(d.event.resourceReference); } });
    receiver = async (req, res) => {
      const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body: Readable.toWeb(req), duplex: 'half' });
      const response = await handle(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    };
  } else {
    db = new Database(path.join(tmp, `${kind}-${crypto.randomBytes(4).toString('hex')}.sqlite`));
    db.exec('CREATE TABLE effects (resource TEXT NOT NULL)');
    store = new rk.SqliteDedupStore(db);
    receiver = webhookMiddleware({ secrets: revealed.secrets(), namespace: NAMESPACE, store,
      handler: (d, tx) => { tx.prepare('INSERT INTO effects (resource) VALUES (?)').run(d.event.resourceReference); } });
  }
  const handled = () => (db ? db.prepare('SELECT resource FROM effects ORDER BY rowid').all().map((r) => r.resource) : [...runs]);
  return {
    org, store, reference: revealed.reference, handled,
    async close() {
      await endpoint.close();
      db?.close();
    },
  };
}

/** Sends `count` events to the subscription; those whose index is in `lost` are never sent (failed). */
async function deliver(reference, count, lost) {
  const sent = [];
  for (let i = 0; i < count; i++) {
    const r = await control('deliver', { reference, event: 'ddex.delivery.failed', lose: lost.includes(i) });
    assert.equal(r.status, lost.includes(i) ? 'failed' : 'delivered', JSON.stringify(r));
    sent.push(r.delivery);
  }
  return sent;
}

const actions = (report) => report.deliveries.map((d) => d.action);
const replaysDelivered = (s) => s.deliveries.filter((d) => d.replay_of && d.status === 'delivered').length;

for (const kind of ['memory', 'sqlite']) {
  test(`${kind}: 5 events, 2 lost; recovery replays the 2, every handler runs once; a second run replays nothing`, async () => {
    await reset();
    const sub = await subscribed(kind);
    try {
      const sent = await deliver(sub.reference, 5, [1, 3]);
      assert.equal(sub.handled().length, 3);
      const report = await sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
      assert.deepEqual(actions(report), ['processed', 'replayed', 'processed', 'replayed', 'processed'], JSON.stringify(report));
      assert.deepEqual(report.deliveries.map((d) => d.reference), sent);
      assert.equal(report.replayed, 2);
      assert.equal(report.considered, 5);
      assert.equal(report.entries, 5);
      assert.equal(report.end, 'last');
      assert.deepEqual([report.beforeSince, report.skipped], [0, 0]);
      for (const i of [1, 3]) {
        const d = report.deliveries[i];
        assert.match(d.replay, /^dlv_/);
        assert.deepEqual([d.status, d.event, d.error, d.replays], ['failed', 'ddex.delivery.failed', null, []]);
        assert.equal(typeof d.createdAt, 'number');
      }
      // the fake sends the replays in the background: wait until both are delivered
      let s = await until((x) => replaysDelivered(x) === 2, 'the two replays');
      assert.equal(s.replays, 2);
      const resources = sub.handled();
      assert.equal(resources.length, 5, JSON.stringify(resources));
      assert.equal(new Set(resources).size, 5, 'every event\'s handler ran exactly once');
      // the replays stand for the lost originals (replay_of), each processed once
      assert.deepEqual(s.deliveries.filter((d) => d.replay_of).map((d) => d.replay_of), [sent[1], sent[3]]);

      // a second run: the two are processed by their replays; nothing is replayed
      const again = await sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
      assert.deepEqual(actions(again), ['processed', 'processed_by_replay', 'processed', 'processed_by_replay', 'processed'], JSON.stringify(again));
      assert.equal(again.replayed, 0);
      assert.equal(again.entries, 7);
      assert.equal(again.considered, 5);
      assert.deepEqual(again.deliveries[1].replays, [report.deliveries[1].replay]);
      s = await stats();
      assert.equal(s.replays, 2);
      assert.equal(s.requests.replayEnterpriseWebhookDelivery, 2);
      assert.equal(sub.handled().length, 5);
    } finally {
      await sub.close();
    }
  });
}

test('now decides when a delivery in an unknown state has ended: left alone today, replayed thirty days on', async () => {
  await reset();
  const sub = await subscribed('memory');
  try {
    const lost = await control('deliver', { reference: sub.reference, event: 'ddex.delivery.failed', lose: true, status: 'abandoned' });
    assert.equal(lost.status, 'abandoned', JSON.stringify(lost));
    const today = await sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
    assert.deepEqual(actions(today), ['in_flight'], JSON.stringify(today));
    assert.equal(today.deliveries[0].status, 'abandoned', 'an unknown status is kept as sent');
    const later = new Date(Date.now() + 30 * 86_400_000);
    const run = await sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo(), now: later });
    assert.deepEqual(actions(run), ['replayed'], JSON.stringify(run));
    await until((x) => replaysDelivered(x) === 1, 'the replay');
    assert.deepEqual(sub.handled().length, 1);
    await assert.rejects(sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo(), now: 'tomorrow' }),
      /now must be a Date or Unix seconds/);
    await assert.rejects(sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo(), now: Number.NaN }),
      rk.InvalidArgumentError);
  } finally {
    await sub.close();
  }
});

test('replays held pending: the first run replays 2, the second reports replay_pending and sends no replay', async () => {
  await reset({ replays: 'hold' });
  const sub = await subscribed('memory');
  try {
    await deliver(sub.reference, 4, [0, 2]);
    const first = await sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
    assert.deepEqual(actions(first), ['replayed', 'processed', 'replayed', 'processed']);
    assert.equal(first.replayed, 2);
    const second = await sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
    assert.deepEqual(actions(second), ['replay_pending', 'processed', 'replay_pending', 'processed'], JSON.stringify(second));
    assert.equal(second.replayed, 0);
    const s = await stats();
    assert.equal(s.replays, 2);
    assert.equal(s.requests.replayEnterpriseWebhookDelivery, 2);
    assert.equal(sub.handled().length, 2);
  } finally {
    await sub.close();
  }
});

test('a replay refused (404) is replay_failed with its code and the run goes on; the next run replays it', async () => {
  await reset({ faults: [{ op: 'replayEnterpriseWebhookDelivery', nth: 1, do: 'status', status: 404 }] });
  const sub = await subscribed('memory');
  try {
    await deliver(sub.reference, 3, [0, 1]);
    const events = [];
    const org = createEnterpriseClient({ baseUrl: url, credentials: ORG, onEvent: (e) => events.push(e) });
    const report = await org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
    assert.deepEqual(actions(report), ['replay_failed', 'replayed', 'processed'], JSON.stringify(report));
    assert.equal(report.deliveries[0].error, 'api_error');
    assert.equal(report.deliveries[0].replay, null);
    assert.equal(report.replayed, 1);
    // each request went through the client's own path: its events say so
    assert.ok(events.some((e) => e.kind === 'response' && e.operation === 'replayEnterpriseWebhookDelivery' && e.status === 404));
    assert.ok(events.some((e) => e.kind === 'done' && e.operation === 'listEnterpriseWebhookDeliveries'));
    await until((x) => replaysDelivered(x) === 1, 'the replay');
    // the next run replays the one whose replay failed, and leaves the delivered replay alone
    const next = await org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
    assert.deepEqual(actions(next), ['replayed', 'processed_by_replay', 'processed'], JSON.stringify(next));
    await until((x) => replaysDelivered(x) === 2, 'both replays');
    assert.equal(new Set(sub.handled()).size, 3);
    assert.equal(sub.handled().length, 3);
  } finally {
    await sub.close();
  }
});

test('a replay whose answer was lost is never sent again: replay_failed reconcile_required, then processed_by_replay', async () => {
  await reset({ faults: [{ op: 'replayEnterpriseWebhookDelivery', nth: 1, do: 'drop_after_apply' }] });
  const sub = await subscribed('memory');
  try {
    await deliver(sub.reference, 2, [0]);
    const report = await sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
    assert.deepEqual(actions(report), ['replay_failed', 'processed']);
    assert.equal(report.deliveries[0].error, 'reconcile_required');
    let s = await until((x) => replaysDelivered(x) === 1, 'the applied replay');
    assert.equal(s.requests.replayEnterpriseWebhookDelivery, 1, 'an unsafe create is never sent twice');
    const next = await sub.org.recoverDeliveries(sub.reference, { store: sub.store, namespace: NAMESPACE, since: anHourAgo() });
    assert.deepEqual(actions(next), ['processed_by_replay', 'processed']);
    s = await stats();
    assert.equal(s.replays, 1);
    assert.equal(sub.handled().length, 2);
  } finally {
    await sub.close();
  }
});

test('recoverDeliveries: arguments checked before any request; errors of the log, the store and the signal propagate', async () => {
  await reset();
  const sub = await subscribed('memory');
  try {
    await deliver(sub.reference, 1, [0]);
    const org = client();
    const base = { store: sub.store, namespace: NAMESPACE, since: anHourAgo() };
    await assert.rejects(org.recoverDeliveries(sub.reference), TypeError);
    await assert.rejects(org.recoverDeliveries(42, base), TypeError);
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, store: { claim() {} } }), /store must have state\(key\)/);
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, since: '2026-01-01' }), /since must be a Date or Unix seconds/);
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, max_replays: 1 }), /unknown option `max_replays` for recoverDeliveries/);
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, maxReplays: 0 }), (e) => e instanceof rk.InvalidArgumentError);
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, maxEntries: -1 }), rk.InvalidArgumentError);
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, namespace: '' }), rk.InvalidArgumentError);
    await assert.rejects(org.recoverDeliveries('', base), rk.InvalidArgumentError);
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, since: Number.NaN }), rk.InvalidArgumentError);
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, signal: AbortSignal.abort(new Error('stopped first')) }), /stopped first/);
    assert.equal((await stats()).requests.listEnterpriseWebhookDeliveries ?? 0, 0);
    // an unknown subscription: the log request's ApiError
    await assert.rejects(org.recoverDeliveries('wh_404', base), (e) => e instanceof rk.ApiError && e.status === 404);
    // a store that fails: its error, nothing replayed
    const broken = { state() { throw new Error('store down'); } };
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, store: broken }), /store down/);
    // a store answering with promises, and one answering nonsense
    const later = { state: async (key) => sub.store.state(key) };
    await assert.rejects(org.recoverDeliveries(sub.reference, { ...base, store: { state: () => 'maybe' } }), rk.InvalidArgumentError);
    assert.equal((await stats()).replays, 0);
    // aborted while the replay is in flight: the signal's reason, never replay_failed
    const controller = new AbortController();
    const slow = createEnterpriseClient({ baseUrl: url, credentials: ORG, fetch: (u, init) => {
      if (!String(u).endsWith('/replay')) return fetch(u, init);
      return new Promise((_, reject) => {
        init.signal.addEventListener('abort', () => reject(init.signal.reason));
        setTimeout(() => controller.abort(new Error('stopped in flight')), 20);
      });
    } });
    await assert.rejects(slow.recoverDeliveries(sub.reference, { ...base, store: later, signal: controller.signal }), /stopped in flight/);
    // an error that is not the library's (here the caller's onEvent throwing before the replay is
    // sent) propagates too: it is not a failed replay
    const odd = createEnterpriseClient({ baseUrl: url, credentials: ORG, onEvent: (e) => {
      if (e.kind === 'send' && e.operation === 'replayEnterpriseWebhookDelivery') throw new RangeError('not a library error');
    } });
    await assert.rejects(odd.recoverDeliveries(sub.reference, base), RangeError);
    assert.equal((await stats()).replays, 0);
    // with a promise-answering store and nothing in the way: replayed
    const report = await org.recoverDeliveries(sub.reference, { ...base, store: later, maxReplays: 1, maxEntries: 10, maxReplaysPerDelivery: 2 });
    assert.deepEqual(actions(report), ['replayed']);
  } finally {
    await sub.close();
  }
});

test('the Recovery machine by hand over requestRaw: the same steps a client takes', async () => {
  await reset({ replays: 'hold' });
  const sub = await subscribed('memory');
  try {
    const [lost] = await deliver(sub.reference, 2, [0]);
    const run = new rk.Recovery(sub.reference, NAMESPACE, anHourAgo(), null, { maxReplays: 5 });
    const seen = [];
    try {
      for (let s = run.next(); s.step !== 'done'; s = run.next()) {
        seen.push(s.step);
        if (s.step === 'fetch') {
          run.page((await sub.org.requestRaw(s.operationId, { path: { reference: sub.reference }, query: s.query })).body);
        } else if (s.step === 'check') {
          assert.deepEqual(s.keys.map((k) => k.startsWith('dlv_')), [true, true]);
          run.checked(await Promise.all(s.keys.map((k) => sub.store.state(k))));
        } else if (s.step === 'replay') {
          assert.equal(s.delivery, lost);
          run.replayed((await sub.org.requestRaw(s.operationId, { path: { reference: sub.reference, deliveryReference: s.delivery } })).body);
        } else {
          assert.fail(JSON.stringify(s));
        }
      }
      const done = run.next();
      assert.deepEqual(seen, ['fetch', 'check', 'replay']);
      assert.deepEqual(actions(done.report), ['replayed', 'processed']);
      assert.throws(() => run.replayFailed('call_failed'), rk.InvalidArgumentError);
      assert.throws(() => run.checked(['new']), rk.InvalidArgumentError);
    } finally {
      run.free();
    }
    // the keys it checks are the receiver's delivery keys
    assert.equal(sub.store.state(rk.deliveryKey(NAMESPACE, lost)), 'new');
    assert.throws(() => new rk.Recovery('wh_1', NAMESPACE, undefined), TypeError);
    assert.throws(() => new rk.Recovery('wh_1', NAMESPACE, 0, 0, { maxReplaysPerDelivery: 0 }), rk.InvalidArgumentError);
  } finally {
    await sub.close();
  }
});

// ---- state(key) of every built-in store: new → claim → in_progress → commit → done ----------------

test('DedupWindow.state: read without claiming; a lease or time-to-live run out is new again', () => {
  const w = new rk.DedupWindow(10, 600, { leaseSeconds: 60 });
  try {
    assert.equal(w.state('k', 1000), 'new');
    assert.equal(w.claim('k', 1000), 'new', 'state claimed nothing');
    assert.equal(w.state('k', 1001), 'in_progress');
    assert.equal(w.state('k', 1060), 'new', 'a lease that ran out');
    w.commit('k', 1001);
    assert.equal(w.state('k', 1500), 'done');
    assert.equal(w.state('k', 1601), 'new', 'past its time-to-live');
    assert.equal(w.state('k'), 'new', 'the clock by default');
    assert.throws(() => w.state(''), rk.InvalidArgumentError);
    assert.throws(() => w.state(1), TypeError);
  } finally {
    w.free();
  }
});

test('RedisDedupStore.state on a real redis-server: new, in_progress, done; an expired claim is new', async () => {
  const redis = await startRedis();
  const conn = await redis.client();
  try {
    const store = new rk.RedisDedupStore(conn, { prefix: `recovery-${crypto.randomBytes(3).toString('hex')}:`, leaseSeconds: 1 });
    assert.equal(await store.state('k'), 'new');
    assert.equal(await store.claim('k'), 'new', 'state claimed nothing');
    assert.equal(await store.state('k'), 'in_progress');
    assert.equal(await store.commit('k'), true);
    assert.equal(await store.state('k'), 'done');
    assert.equal(await store.claim('k'), 'done');
    // a claim whose lease ran out: Redis expired the key
    assert.equal(await store.claim('short'), 'new');
    await pause(1200);
    assert.equal(await store.state('short'), 'new');
    // released: new again
    assert.equal(await store.claim('gone'), 'new');
    assert.equal(await store.release('gone'), true);
    assert.equal(await store.state('gone'), 'new');
  } finally {
    conn.close();
    await redis.stop();
  }
});

test('the core\'s read-only lookups behind state(key): no row or nil is new, done is done, a live claim in_progress', () => {
  const sql = new rk.SqlDedupProtocol('postgres', { paramStyle: 'dollar', table: 'dedup' });
  const st = sql.lookup('k', 1_800_000_000);
  assert.match(st.sql, /^SELECT state FROM dedup WHERE dedup_key = \$1 AND expires_at > 1800000000$/);
  assert.deepEqual(st.args, ['k']);
  assert.deepEqual([null, 'done', 'claimed'].map((v) => rk.SqlDedupProtocol.lookupReply(v)), ['new', 'done', 'in_progress']);
  assert.deepEqual(new rk.RedisDedupProtocol({ prefix: 'p:' }).lookupCommand('k'), new rk.RedisDedupProtocol({ prefix: 'p:' }).stateCommand('k'));
  assert.deepEqual([null, undefined, 'done'].map((v) => rk.RedisDedupProtocol.lookupReply(v)), ['new', 'new', 'done']);
  assert.throws(() => sql.lookup('', 0), rk.InvalidArgumentError);
});

test('SqliteDedupStore.state: new, in_progress, done, read without claiming (autocommit)', async () => {
  const db = new Database(path.join(tmp, 'state.sqlite'));
  try {
    let now = 1_800_000_000;
    const store = new rk.SqliteDedupStore(db, { table: 'dedup_state', leaseSeconds: 5, clock: () => now });
    assert.equal(await store.state('k'), 'new');
    assert.equal(await store.claim('k'), 'new', 'state claimed nothing');
    assert.equal(await store.state('k'), 'in_progress');
    const tx = await store.begin();
    assert.equal(await store.markDone(tx, 'k'), true);
    await store.commitTransaction(tx);
    assert.equal(await store.state('k'), 'done');
    // rolled back and released: new again
    assert.equal(await store.claim('r'), 'new');
    await store.rollback(await store.begin());
    await store.release('r');
    assert.equal(await store.state('r'), 'new');
    // a claim whose lease ran out is new (the core's lookup reads live rows only), purged or not
    assert.equal(await store.claim('late'), 'new');
    now += 4;
    assert.equal(await store.state('late'), 'in_progress', 'within its lease');
    now += 6;
    assert.equal(await store.state('late'), 'new', 'its lease ran out');
    assert.equal(db.prepare('SELECT count(*) AS n FROM dedup_state').get().n, 2, 'the row is still there');
    await store.purge();
    assert.equal(await store.state('late'), 'new');
    assert.equal(db.prepare('SELECT count(*) AS n FROM dedup_state').get().n, 1);
  } finally {
    db.close();
  }
});

test('PostgresDedupStore.state: the table is created when missing; new, in_progress, done', async () => {
  const dsn = process.env.ROYALTYKIT_PG_DSN;
  if (!dsn) throw new Error('ROYALTYKIT_PG_DSN is not set: run the suite with scripts/test-node.sh, which starts PostgreSQL');
  const pool = new Pool({ connectionString: dsn });
  pool.on('error', () => {});
  const table = `dedup_state_${crypto.randomBytes(5).toString('hex')}`;
  try {
    const store = new rk.PostgresDedupStore(pool, { table });
    assert.equal(await store.state('k'), 'new', 'the first lookup creates the table');
    assert.equal(await store.claim('k'), 'new');
    assert.equal(await store.state('k'), 'in_progress');
    const client = await store.begin();
    assert.equal(await store.markDone(client, 'k'), true);
    await store.commitTransaction(client);
    assert.equal(await store.state('k'), 'done');
    assert.equal((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n, 1);
    // a claim past its lease reads new; done past its time-to-live too
    let now = Date.now() / 1000;
    const clocked = new rk.PostgresDedupStore(pool, { table, leaseSeconds: 5, ttlSeconds: 60, clock: () => now });
    assert.equal(await clocked.claim('late'), 'new');
    assert.equal(await clocked.state('late'), 'in_progress');
    now += 6;
    assert.equal(await clocked.state('late'), 'new', 'its lease ran out');
    now += 40 * 86400;
    assert.equal(await clocked.state('k'), 'new', 'past its time-to-live');
  } finally {
    await pool.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    await pool.end();
  }
});
