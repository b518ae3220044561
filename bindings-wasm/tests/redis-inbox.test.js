'use strict';
// The inbox on a Redis stream (issue 43 point 1) through the installed package, on a real
// redis-server (redis.cjs, as the RedisDedupStore and RedisFleet tests start it): the core's
// scripts run for real. Enqueue and duplicates, state, three concurrent workers, a failing handler
// retried on the core's backoff then poison, listed and retried by hand, a claim whose lease ran out
// taken again (the late mark refused), a worker process SIGKILLed mid-handler (nothing lost: the
// effect happens at least once), a receiver in inbox mode over HTTP (200 at once; Redis down: 503),
// and delivery recovery with the Redis inbox as the store. The worker is the same loop as the SQL
// inboxes' with the core's InboxWorker `transactional: false` (its transcripts run in
// machines.test.js; the commands and replies in vectors.test.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { Readable } = require('node:stream');
const rk = require('royaltykit');
const fetchApi = require('royaltykit/fetch');
const { webhookMiddleware } = require('royaltykit/express');
const { createEnterpriseClient } = require('royaltykit/client');
const { startRedis } = require('./redis.cjs');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const CHILD = path.join(__dirname, 'redis-inbox-child.cjs');
const SECRET = 'whsec_redis_inbox_tests_0123456789';
const NAMESPACE = 'org-9/redis-inbox';
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const hex = (n) => crypto.randomBytes(n).toString('hex');
const quiet = { onError: () => {}, onStoreError: () => {} };

let redis;
const clients = [];
test.before(async () => { redis = await startRedis(); });
test.after(async () => {
  for (const c of clients) c.close();
  await redis?.stop();
});

/** A connected RESP client (node-redis's `sendCommand`), closed after the suite. */
async function client() {
  const c = await redis.client();
  clients.push(c);
  return c;
}

/** A prefix of its own per test, with a hash tag as a Cluster needs. */
const prefix = () => `{rk-test-${hex(4)}}:`;

/** A signed delivery of a new resource. */
function delivery(now = Math.floor(Date.now() / 1000), id = `dlv_${hex(6)}`) {
  const ref = `rel_${hex(6)}`;
  const body = JSON.stringify({ event: 'ddex.delivery.failed', occurred_at: '2026-11-27T04:05:06Z',
    resource: { type: 'ddex_delivery', reference: ref, url: `/api/v1/ddex/deliveries/${ref}` } });
  return { id, ref, body, now, key: rk.deliveryKey(NAMESPACE, id), headers: rk.signWebhook(SECRET, body, { timestamp: now, deliveryId: id }) };
}

const receiver = (inbox, o = {}) => new rk.WebhookReceiver({ secrets: SECRET, namespace: NAMESPACE, inbox, ...o });

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

test('enqueue, then a duplicate; state new, in_progress, done; the handler gets the client; counts and purge', async () => {
  const conn = await client();
  let now = 1_800_000_000;
  const inbox = new rk.RedisInbox(conn, { prefix: prefix(), ttlSeconds: 3600, clock: () => now });
  assert.equal(inbox.transactional, false);
  assert.equal(inbox.client, conn);
  const d = delivery(now);
  assert.equal(await inbox.state(d.key), 'new');
  assert.equal(await inbox.enqueue(d.key, d.id, 'ddex.delivery.failed', d.body), true);
  assert.equal(await inbox.enqueue(d.key, d.id, 'ddex.delivery.failed', d.body), false, 'a duplicate');
  assert.equal(await inbox.state(d.key), 'in_progress');
  assert.deepEqual(await inbox.counts(), { pending: 1 });
  const seen = [];
  assert.deepEqual(await inbox.drain((dl, c) => { seen.push([dl, c]); }), { processed: 1, retried: 0, poisoned: 0 });
  const [[dl, c]] = seen;
  assert.equal(c, conn, 'the handler\'s second argument is the inbox\'s client');
  assert.deepEqual([dl.key, dl.deliveryId, dl.attempts, dl.body], [d.key, d.id, 1, d.body]);
  assert.deepEqual(dl.event, rk.verifyWebhook(d.headers, d.body, SECRET, { now }).event, 'the event, parsed by the core');
  assert.equal(await inbox.state(d.key), 'done');
  assert.equal(await inbox.enqueue(d.key, d.id, 'ddex.delivery.failed', d.body), false, 'processed: still a duplicate');
  assert.deepEqual(await inbox.counts(), { done: 1 });
  assert.deepEqual(await inbox.drain(() => assert.fail('never run again')), { processed: 0, retried: 0, poisoned: 0 });
  assert.equal(await inbox.purge(), 0);
  now += 3601;
  assert.equal(await inbox.purge(), 1);
  assert.deepEqual(await inbox.counts(), {});
  await assert.rejects(inbox.state(''), rk.InvalidArgumentError);
  await assert.rejects(inbox.enqueue(d.key, '', 'e', '{}'), rk.InvalidArgumentError);
  await assert.rejects(inbox.enqueue(d.key, 'd', 'e', 'x'.repeat(256 * 1024 + 1)), rk.InvalidArgumentError);
  assert.throws(() => new rk.RedisInbox(conn, { prefix: '' }), rk.InvalidArgumentError);
  assert.throws(() => new rk.RedisInbox(conn, { ttlSeconds: 60, leaseSeconds: 61 }), rk.InvalidArgumentError);
  assert.throws(() => new rk.RedisInbox({}), /RedisInbox: client must be an ioredis client \(call\) or a node-redis client \(sendCommand\)/);
  assert.throws(() => new rk.RedisInbox(conn, { clock: 5 }), TypeError);
  assert.equal(new rk.RedisInbox(conn).protocol.prefix, '{royaltykit:inbox}:');
  assert.equal(new rk.RedisInbox(conn, { leaseSeconds: 7 }).protocol.leaseSeconds, 7);
  // An ioredis-style client (`call(...args)`) takes the same path.
  const viaCall = new rk.RedisInbox({ call: (...args) => conn.sendCommand(args) }, { prefix: prefix() });
  assert.equal(await viaCall.enqueue(d.key, d.id, 'ddex.delivery.failed', d.body), true);
  assert.equal(await viaCall.state(d.key), 'in_progress');
});

test('50 entries, 3 concurrent workers: every handler effect exactly once, counts { done: 50 }', async () => {
  const p = prefix();
  const inboxes = await Promise.all([0, 1, 2].map(async () => new rk.RedisInbox(await client(), { prefix: p })));
  const r = receiver(inboxes[0]);
  const ds = Array.from({ length: 50 }, () => delivery());
  for (const d of ds) assert.equal(JSON.parse((await r.receive(d.headers, d.body)).body).result, 'queued');
  assert.deepEqual(await inboxes[1].counts(), { pending: 50 });
  const effects = new Map();
  const stop = new AbortController();
  const workers = inboxes.map((inbox, w) => inbox.runWorker(async (dl) => {
    effects.set(dl.deliveryId, [...(effects.get(dl.deliveryId) ?? []), w]);
    await pause(crypto.randomInt(6));
    if ([...effects.values()].flat().length >= 50) stop.abort();
  }, { signal: stop.signal, pollSeconds: 0.02 }));
  const reports = await Promise.all(workers);
  assert.deepEqual(reports.map((x) => x.retried + x.poisoned), [0, 0, 0]);
  assert.equal(reports.reduce((n, x) => n + x.processed, 0), 50, JSON.stringify(reports));
  for (const x of reports) assert.ok(x.processed > 0, `each worker took some: ${JSON.stringify(reports)}`);
  assert.deepEqual([...effects.keys()].sort(), ds.map((d) => d.id).sort());
  for (const [id, runs] of effects) assert.equal(runs.length, 1, `${id} ran ${runs.length} times`);
  assert.deepEqual(await inboxes[2].counts(), { done: 50 });
  for (const d of ds.slice(0, 5)) assert.equal(await inboxes[0].state(d.key), 'done');
});

test('a failing handler: retried on the core\'s backoff, poison after maxAttempts, listed with handlerErrorText, put back by retry, then processed', async () => {
  const conn = await client();
  const p = prefix();
  let now = 1_800_000_000;
  const inbox = new rk.RedisInbox(conn, { prefix: p, clock: () => now });
  const d = delivery(now);
  assert.equal((await receiver(inbox).receive(d.headers, d.body, now)).status, 200);
  const dueAt = async () => Number(await conn.sendCommand(['ZSCORE', `${p}delayed`, d.key]));
  const errors = [];
  const broken = (dl) => {
    errors.push(dl.attempts);
    throw new TypeError('cannot read the resource');
  };
  const opts = { maxAttempts: 3, onError: () => {} };
  assert.deepEqual(await inbox.drain(broken, opts), { processed: 0, retried: 1, poisoned: 0 });
  const first = await dueAt();
  assert.ok(first > now, `retry at ${first}, after ${now}`);
  // Not due yet: nothing runs.
  assert.deepEqual(await inbox.drain(broken, opts), { processed: 0, retried: 0, poisoned: 0 });
  now = first;
  assert.deepEqual(await inbox.drain(broken, opts), { processed: 0, retried: 1, poisoned: 0 });
  const second = await dueAt();
  assert.ok(second - now > first - 1_800_000_000, `the backoff grows: ${first - 1_800_000_000} s, then ${second - now} s`);
  now = second;
  assert.deepEqual(await inbox.drain(broken, opts), { processed: 0, retried: 0, poisoned: 1 });
  assert.deepEqual(errors, [1, 2, 3]);
  const lastError = rk.handlerErrorText('TypeError', 'cannot read the resource');
  assert.equal(lastError, 'TypeError: cannot read the resource');
  assert.deepEqual(await inbox.poisoned(), [{ key: d.key, deliveryId: d.id, event: 'ddex.delivery.failed', attempts: 3, lastError, receivedAt: 1_800_000_000 }]);
  assert.deepEqual(await inbox.counts(), { poison: 1 });
  assert.equal(await inbox.state(d.key), 'in_progress', 'received: a replay would not help');
  // Never claimed again until an operator retries it.
  now += 86400;
  assert.deepEqual(await inbox.drain(broken, opts), { processed: 0, retried: 0, poisoned: 0 });
  assert.equal(await inbox.retry(d.key), true);
  assert.equal(await inbox.retry(d.key), false, 'no longer poison');
  assert.equal(await inbox.retry(rk.deliveryKey(NAMESPACE, 'dlv_unknown')), false);
  assert.deepEqual(await inbox.poisoned(10), []);
  assert.deepEqual(await inbox.counts(), { pending: 1 });
  const done = [];
  assert.deepEqual(await inbox.drain((dl) => { done.push(dl.attempts); }), { processed: 1, retried: 0, poisoned: 0 });
  assert.deepEqual(done, [1], 'put back with no attempts counted');
  assert.equal(await inbox.state(d.key), 'done');
  await assert.rejects(inbox.poisoned(0), rk.InvalidArgumentError);
  await assert.rejects(inbox.poisoned(1001), rk.InvalidArgumentError);
  // The core's default listing size and error text, the same for the SQL inboxes.
  assert.equal(rk.DEFAULT_POISON_LISTED, 100);
  assert.equal(rk.SqlInboxProtocol.limits.defaultPoisonListed, rk.DEFAULT_POISON_LISTED);
  assert.equal(rk.handlerErrorText('TimeoutError', ' '), 'TimeoutError');
  assert.equal(rk.handlerErrorText('', 'boom'), 'boom');
  assert.equal(Buffer.byteLength(rk.handlerErrorText('E', 'é'.repeat(1024))), 1023);
  // A value thrown that is not an Error, and an Error with no message: the same rule.
  const odd = delivery(now);
  const empty = delivery(now);
  for (const x of [odd, empty]) assert.equal(await inbox.enqueue(x.key, x.id, 'ddex.delivery.failed', x.body), true);
  assert.deepEqual(await inbox.drain((dl) => { throw dl.deliveryId === odd.id ? 'plain text' : new RangeError(); }, { maxAttempts: 1, ...quiet }),
    { processed: 0, retried: 0, poisoned: 2 });
  assert.deepEqual((await inbox.poisoned()).map((e) => [e.deliveryId, e.lastError]).sort(), [[odd.id, 'plain text'], [empty.id, 'RangeError']].sort());
});

test('a claim whose lease ran out is claimed again with attempts + 1; the first worker\'s mark is refused', async () => {
  const p = prefix();
  const [a, b] = [new rk.RedisInbox(await client(), { prefix: p, leaseSeconds: 1 }), new rk.RedisInbox(await client(), { prefix: p, leaseSeconds: 1 })];
  // The worker steps by hand: claim, the lease runs out, another claim, the two marks.
  const d = delivery();
  assert.equal(await a.enqueue(d.key, d.id, 'ddex.delivery.failed', d.body), true);
  const first = await a.claim();
  assert.deepEqual([first.key, first.deliveryId, first.event, first.body, first.attempts], [d.key, d.id, 'ddex.delivery.failed', d.body, 1]);
  assert.equal(await b.claim(), null, 'held by the lease');
  await pause(1100);
  const second = await b.claim();
  assert.deepEqual([second.key, second.attempts], [d.key, 2]);
  assert.equal(await a.markDone(undefined, d.key, first.attempts), false, 'the first claim\'s mark is refused');
  assert.equal(await b.markDone(undefined, d.key, second.attempts), true);
  assert.equal(await a.state(d.key), 'done');
  assert.equal(await a.claim(), null);
  // The same through two workers: the first one's handler outlives the lease.
  const e = delivery();
  assert.equal(await a.enqueue(e.key, e.id, 'ddex.delivery.failed', e.body), true);
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  let started;
  const running = new Promise((resolve) => { started = resolve; });
  const runs = [];
  const slow = a.drain(async (dl) => {
    runs.push(['a', dl.attempts]);
    started();
    await gate;
  });
  await running;
  assert.deepEqual(await b.drain(() => assert.fail('held by the lease')), { processed: 0, retried: 0, poisoned: 0 });
  await pause(1100);
  assert.deepEqual(await b.drain((dl) => { runs.push(['b', dl.attempts]); }), { processed: 1, retried: 0, poisoned: 0 });
  release();
  assert.deepEqual(await slow, { processed: 0, retried: 0, poisoned: 0 }, 'its mark was refused: not counted as processed');
  assert.deepEqual(runs, [['a', 1], ['b', 2]], 'at least once: the handler ran twice');
  assert.equal(await a.state(e.key), 'done');
  assert.deepEqual(await a.counts(), { done: 2 });
});

/** Runs redis-inbox-child.cjs over the prefix; `killAt(line, child)` may SIGKILL it on a line. */
function worker(p, killAt) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD], { env: { ...process.env, REDIS_PORT: String(redis.port), INBOX_PREFIX: p, INBOX_LEASE: '2' } });
    const lines = [];
    let err = '';
    readline.createInterface({ input: child.stdout }).on('line', (l) => {
      lines.push(l);
      killAt?.(l, child);
    });
    child.stderr.on('data', (b) => { err += b; });
    child.on('close', (code, signal) => resolve({ code, signal, lines, err }));
  });
}

test('a worker process SIGKILLed mid-handler: after the lease a new worker processes the entry, nothing is lost (the effect at least once)', async () => {
  const conn = await client();
  const p = prefix();
  const inbox = new rk.RedisInbox(conn, { prefix: p, leaseSeconds: 2 });
  const r = receiver(inbox);
  const ds = Array.from({ length: 6 }, () => delivery());
  for (const d of ds) assert.equal(JSON.parse((await r.receive(d.headers, d.body)).body).result, 'queued');
  let killed = null;
  let effectLines = 0;
  const first = await worker(p, (line, child) => {
    if (line.startsWith('effect ') && ++effectLines === 3) {
      killed = line.split(' ')[1];
      child.kill('SIGKILL'); // the third entry: after its effect, before its mark
    }
  });
  assert.equal(first.signal, 'SIGKILL', `${first.code} ${first.err}${first.lines.join('\n')}`);
  assert.ok(killed !== null);
  assert.ok((await inbox.counts()).pending > 0, 'the kill left work to do');
  assert.equal(await inbox.state(rk.deliveryKey(NAMESPACE, killed)), 'in_progress');
  const last = await worker(p);
  assert.equal(last.code, 0, `${last.err}${last.lines.join('\n')}`);
  assert.deepEqual(await inbox.counts(), { done: 6 });
  assert.deepEqual(await inbox.poisoned(), []);
  // The suite's RESP client reads no array replies: the effects one by one.
  const n = Number(await conn.sendCommand(['LLEN', `${p}effects`]));
  const all = [];
  for (let i = 0; i < n; i++) all.push(await conn.sendCommand(['LINDEX', `${p}effects`, String(i)]));
  assert.deepEqual([...new Set(all)].sort(), ds.map((d) => d.id).sort(), 'every entry\'s effect happened');
  assert.equal(all.filter((id) => id === killed).length, 2, 'the killed run\'s effect, then the run after the lease');
  assert.equal(all.length, 7);
  assert.equal(await conn.sendCommand(['HGET', `${p}e:${rk.deliveryKey(NAMESPACE, killed)}`, 'attempts']), '2');
});

test('a receiver in inbox mode over HTTP (express middleware): 200 at once while the worker\'s handler sleeps; the worker processes it; Redis down: 503', async () => {
  const conn = await client();
  const inbox = new rk.RedisInbox(conn, { prefix: prefix() });
  const events = [];
  const endpoint = await serve(webhookMiddleware({ secrets: SECRET, namespace: NAMESPACE, inbox, onEvent: (e) => events.push(e) }));
  const controller = new AbortController();
  const down = await startRedis();
  let downEndpoint;
  try {
    let started;
    const running = new Promise((resolve) => { started = resolve; });
    let finished = 0;
    const runs = [];
    const worker = inbox.runWorker(async (dl) => {
      runs.push(dl.deliveryId);
      if (runs.length === 1) {
        started(dl.deliveryId);
        await pause(1500); // a slow handler: longer than any reply may take
      }
      finished += 1;
    }, { signal: controller.signal, pollSeconds: 0.05 });
    const [d1, d2, d3] = [delivery(), delivery(), delivery()];
    const [s1, b1] = await post(endpoint.url, d1);
    assert.deepEqual([s1, b1], [200, { result: 'queued' }]);
    assert.equal(await running, d1.id, 'the worker runs the handler');
    const replies = [];
    for (const d of [d2, d3, d1]) replies.push(await post(endpoint.url, d));
    assert.equal(finished, 0, 'every reply came while the handler was still sleeping');
    assert.deepEqual(replies.map(([s, b]) => [s, b.result]), [[200, 'queued'], [200, 'queued'], [200, 'duplicate']]);
    assert.deepEqual(events.map((e) => e.outcome), ['queued', 'queued', 'queued', 'duplicate']);
    for (let i = 0; i < 200 && runs.length < 3; i++) await pause(25);
    controller.abort();
    const report = await worker;
    assert.equal(report.processed, 3, JSON.stringify(report));
    assert.deepEqual(runs.sort(), [d1.id, d2.id, d3.id].sort());
    assert.deepEqual(await inbox.counts(), { done: 3 });
    // Redis out of reach: the enqueue fails, the receiver answers 503 (the service redelivers).
    const seen = [];
    const downClient = await down.client();
    clients.push(downClient);
    const gone = new rk.RedisInbox(downClient, { prefix: prefix() });
    downEndpoint = await serve(webhookMiddleware({ secrets: SECRET, namespace: NAMESPACE, inbox: gone, onStoreError: (e, what) => seen.push(what) }));
    assert.deepEqual((await post(downEndpoint.url, delivery())).slice(0, 2), [200, { result: 'queued' }]);
    await down.stop();
    const [status, body] = await post(downEndpoint.url, delivery());
    assert.deepEqual([status, body.error], [503, 'store_unavailable']);
    assert.deepEqual(seen, ['enqueue']);
  } finally {
    controller.abort();
    await endpoint.close();
    await downEndpoint?.close();
    await down.stop();
  }
});

test('recoverDeliveries with the Redis inbox as the store: the lost delivery is replayed into it, the worker processes each once', async () => {
  const fake = spawn(process.env.PYTHON ?? 'python3', [path.join(ROOT, 'tests', 'fakeapi', 'server.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const inbox = new rk.RedisInbox(await client(), { prefix: prefix() });
  let endpoint;
  try {
    const line = await new Promise((resolve) => readline.createInterface({ input: fake.stdout }).once('line', resolve));
    assert.match(line, /^listening \d+$/);
    const url = `http://127.0.0.1:${line.split(' ')[1]}`;
    const control = async (what, payload) => (await fetch(`${url}/_fake/${what}`, { method: 'POST', body: JSON.stringify(payload) })).json();
    let listener;
    endpoint = await serve((req, res) => listener(req, res));
    const PUBLIC = 'https://hooks.example.com/royaltykit-redis-inbox';
    await control('reset', { routes: { [PUBLIC]: endpoint.url } });
    const org = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' } });
    const revealed = await org.createSubscription({ name: 'redis-inbox', endpointUrl: PUBLIC, events: ['ddex.delivery.failed'] });
    const handle = fetchApi.webhookHandler({ secrets: revealed.secrets(), namespace: NAMESPACE, inbox });
    listener = async (req, res) => {
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
    const effects = [];
    const handler = (d) => { effects.push(d.event.resourceReference); };
    assert.deepEqual(await inbox.drain(handler), { processed: 2, retried: 0, poisoned: 0 });
    const since = new Date(Date.now() - 3600 * 1000);
    const report = await org.recoverDeliveries(revealed.reference, { store: inbox, namespace: NAMESPACE, since });
    assert.deepEqual(report.deliveries.map((d) => d.action), ['processed', 'replayed', 'processed'], JSON.stringify(report));
    assert.deepEqual(report.deliveries.map((d) => d.reference), sent);
    // The fake sends the replay in the background: into the inbox, then the worker.
    for (let i = 0; i < 200 && (await inbox.counts()).pending === undefined; i++) await pause(50);
    assert.deepEqual(await inbox.drain(handler), { processed: 1, retried: 0, poisoned: 0 });
    assert.equal(effects.length, 3);
    assert.equal(new Set(effects).size, 3);
    const again = await org.recoverDeliveries(revealed.reference, { store: inbox, namespace: NAMESPACE, since });
    assert.deepEqual(again.deliveries.map((d) => d.action), ['processed', 'processed_by_replay', 'processed'], JSON.stringify(again));
  } finally {
    await endpoint?.close();
    fake.stdin.end();
  }
});

test('RedisInboxProtocol: the commands as argument lists, the replies as the core reads them', () => {
  const p = new rk.RedisInboxProtocol({ prefix: '{t}:', ttlSeconds: 100, leaseSeconds: 30 });
  assert.deepEqual([p.prefix, p.leaseSeconds], ['{t}:', 30]);
  assert.deepEqual(p.enqueueCommand('k', 'd', 'e', '{}', 7).slice(2), ['3', '{t}:e:k', '{t}:stream', '{t}:pending', 'd', 'e', '{}', '7', 'workers', 'k']);
  assert.deepEqual(p.lookupCommand('k'), ['HGET', '{t}:e:k', 'state']);
  assert.deepEqual(p.claimCommand(1000).slice(5), ['{t}:', '1000', '30000', 'workers', '100']);
  assert.deepEqual(rk.RedisInboxProtocol.claimReply('["k","d","e","{}",3]'), { key: 'k', deliveryId: 'd', event: 'e', body: '{}', attempts: 3 });
  assert.equal(rk.RedisInboxProtocol.claimReply(null), null);
  assert.throws(() => rk.RedisInboxProtocol.claimReply('OK'), rk.InvalidArgumentError);
  assert.deepEqual(rk.RedisInboxProtocol.countsReply('[1,2,3]'), { pending: 1, done: 2, poison: 3 });
  assert.deepEqual(rk.RedisInboxProtocol.poisonedReply('{}'), []);
  assert.deepEqual([1, '1', 0, null].map((r) => rk.RedisInboxProtocol.addedReply(r)), [true, true, false, false]);
  assert.equal(rk.RedisInboxProtocol.lookupReply('poison'), 'in_progress');
  assert.throws(() => p.markDoneCommand('k', -1, 1), rk.InvalidArgumentError);
  assert.throws(() => p.settleCommand('k', 1, 'yes', 1, 'e'), TypeError);
  assert.throws(() => new rk.RedisInboxProtocol({ leaseSeconds: 0 }), rk.InvalidArgumentError);
});
