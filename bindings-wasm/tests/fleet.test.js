'use strict';
// Fleets (the spec's limits hold per API client): processes of one API client sharing one token
// and one rate budget through one real redis-server (RedisFleet), against the shared fake API
// (tests/fakeapi/server.py: `tokens_issued`, `max_per_minute`, `token_delay`). The processes are
// child processes (fleet-child.cjs) running the installed package. Every decision (adopt or
// exchange, reserve or wait) is the core's Fleet and FleetToken; their transcripts run in
// machines.test.js.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const rk = require('royaltykit');
const { createEnterpriseClient, createReportsClient, RedisFleet } = require('royaltykit/client');
const { freePort, respClient, startRedis } = require('./redis.cjs');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const ORG = { apiKey: 'key-1', apiSecret: 'secret-1' };
const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let fake;
let url;
let redis;

test.before(async () => {
  fake = spawn(process.env.PYTHON ?? 'python3', [path.join(ROOT, 'tests', 'fakeapi', 'server.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve) => readline.createInterface({ input: fake.stdout }).once('line', resolve));
  assert.match(line, /^listening \d+$/);
  url = `http://127.0.0.1:${line.split(' ')[1]}`;
  redis = await startRedis();
});
test.after(async () => {
  fake.stdin.end();
  await redis?.stop();
});

async function control(what, payload) {
  const r = await fetch(`${url}/_fake/${what}`, payload === undefined ? {} : { method: 'POST', body: JSON.stringify(payload) });
  return r.json();
}
const reset = (script = {}) => control('reset', script);
const stats = () => control('stats');
const prefix = () => `rk-test:${crypto.randomBytes(4).toString('hex')}:`;

/**
 * Runs `count` fleet-child.cjs processes on one fleet (`env`: N, LIMIT, PREFIX), started
 * together once each has loaded the package; resolves to their reports.
 */
async function fleetOf(count, env) {
  const children = Array.from({ length: count }, () => spawn(process.execPath, [path.join(__dirname, 'fleet-child.cjs')], {
    env: { ...process.env, URL: url, REDIS_PORT: String(redis.port), ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  }));
  const lines = children.map((c) => {
    const queue = [];
    const waiting = [];
    readline.createInterface({ input: c.stdout }).on('line', (l) => (waiting.length ? waiting.shift()(l) : queue.push(l)));
    return () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiting.push(resolve)));
  });
  try {
    for (const next of lines) assert.equal(await next(), 'ready');
    for (const c of children) c.stdin.write('go\n');
    return await Promise.all(lines.map(async (next) => JSON.parse(await next())));
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
}

test('four processes on one fleet: one token exchange for all of them, every request done', async () => {
  await reset({ token_delay: 0.5 });
  const reports = await fleetOf(4, { N: '10', PREFIX: prefix() });
  for (const r of reports) assert.deepEqual(r.errors, []);
  assert.equal(reports.reduce((n, r) => n + r.done, 0), 40);
  const s = await stats();
  assert.equal(s.tokens_issued, 1, 'one exchange for the fleet');
  assert.equal(s.requests.listEnterpriseCountries, 40);
  assert.equal(s.unauthorized, 0);
  // Each request was reserved in the fleet's budget before it went out.
  assert.ok(reports.every((r) => r.kinds.send >= 10));
});

test('after a 401, a fleet refresh does not adopt the refused token again', () => {
  const session = new rk.Fleet({ prefix: 'rk-test:refused:' }).session();
  session.storeToken(rk.BearerToken.enterprise('et_refused'));
  const c = new rk.Call('listEnterpriseCountries', { seed: 1 });
  assert.equal(c.next(1000, session).step, 'send');
  c.response(401, {}, '{"message":"token expired"}', 1000);
  assert.equal(c.next(1000, session).step, 'refresh_token');
  const refresh = new rk.FleetToken(session, 'enterprise', { seed: 1, now: 1000 });
  const published = JSON.stringify({ a: 'enterprise', r: 5000, t: null, v: 'et_refused' });
  assert.equal(refresh.replied(published, session, 1000).step, 'command', 'the refused token is not adopted: take the lock');
});

test('a 401 in one process: the fleet exchanges once more, not once per process', async () => {
  // The 15th request presents a token the service then calls dead (every process holds it).
  await reset({ token_delay: 0.3, faults: [{ op: 'listEnterpriseCountries', nth: 15, do: 'expire_token' }] });
  const reports = await fleetOf(4, { N: '10', PREFIX: prefix() });
  for (const r of reports) assert.deepEqual(r.errors, []);
  assert.equal(reports.reduce((n, r) => n + r.done, 0), 40);
  const s = await stats();
  assert.ok(s.unauthorized >= 1);
  assert.equal(s.tokens_issued, 2, 'the first token and one replacement for the whole fleet');
});

test('a call aborted while its process holds the fleet\'s exchange lock releases the lock: the fleet need not wait out the lease', async () => {
  await reset({ token_delay: 2 }); // the exchange runs long enough to be cancelled
  const conn = await redis.client();
  try {
    const fleetPrefix = prefix();
    const lock = `${fleetPrefix}exchange`;
    const client = createEnterpriseClient({ baseUrl: url, credentials: ORG, fleet: new RedisFleet(conn, { prefix: fleetPrefix }) });
    const controller = new AbortController();
    const call = client.request('listEnterpriseCountries', {}, { signal: controller.signal });
    // This process took the lock and is exchanging.
    for (let i = 0; (await conn.sendCommand(['EXISTS', lock])) !== 1; i++) {
      assert.ok(i < 100, 'the lock is taken');
      await pause(20);
    }
    assert.ok((await conn.sendCommand(['PTTL', lock])) > 300_000, 'held for the lease');
    assert.equal(client.session.exchanging, true);
    controller.abort(new Error('stopped by the test'));
    await assert.rejects(call, /stopped by the test/);
    assert.equal(await conn.sendCommand(['EXISTS', lock]), 0, 'the lock is released right after the abort');
    assert.equal(client.session.exchanging, false, 'the exchange is abandoned');
    assert.equal(await conn.sendCommand(['EXISTS', `${fleetPrefix}token`]), 0, 'no token published');
    // Another process of the fleet takes the lock at once and exchanges: its call ends after one
    // exchange (2 s), not after the lease (330 s).
    const other = createEnterpriseClient({ baseUrl: url, credentials: ORG, fleet: new RedisFleet(conn, { prefix: fleetPrefix }) });
    const started = Date.now();
    assert.deepEqual((await other.request('listEnterpriseCountries')).data.map((c) => c.code), ['NL', 'DE']);
    assert.ok(Date.now() - started < 15_000, `${Date.now() - started} ms`);
    assert.equal(other.session.exchanges, 1, 'the other process exchanged (it took the lock)');
    assert.equal(await conn.sendCommand(['EXISTS', lock]), 0, 'and released it');
  } finally {
    conn.close();
  }
});

test('abandonCommand: the lock\'s release only while this refresh\'s exchange runs', () => {
  const session = new rk.Fleet({ prefix: 'rk-test:abandon:' }).session();
  const refresh = new rk.FleetToken(session, 'enterprise', { seed: 0x2a, now: 1000 });
  assert.equal(refresh.abandonCommand(), null, 'no lock before it is taken');
  assert.equal(refresh.replied(null, session, 1000).command[0], 'SET');
  assert.equal(refresh.abandonCommand(), null, 'not while the lock is being taken');
  assert.equal(refresh.replied('OK', session, 1000).command[0], 'GET', 'the lock is ours: it looks once more');
  assert.deepEqual(refresh.abandonCommand(), ['EVAL', rk.UNLOCK_SCRIPT, '1', 'rk-test:abandon:exchange', '000000000000002a']);
  assert.deepEqual(refresh.replied(null, session, 1000), { step: 'exchange' });
  assert.deepEqual(refresh.abandonCommand(), ['EVAL', rk.UNLOCK_SCRIPT, '1', 'rk-test:abandon:exchange', '000000000000002a']);
  assert.equal(refresh.next().step, 'exchange', 'asking changes nothing');
  refresh.exchanged(rk.BearerToken.enterprise('et_1'), 4600, 1000);
  assert.equal(refresh.abandonCommand(), null, 'the publish releases it');
  refresh.free();
  const waiting = new rk.FleetToken(session, 'enterprise', { seed: 1, now: 1000 });
  waiting.replied(null, session, 1000);
  assert.equal(waiting.replied(null, session, 1000).step, 'wait');
  assert.equal(waiting.abandonCommand(), null, 'another process holds the lock');
  waiting.free();
});

test('Redis unreachable: a reservation that fails waits (rate_limited) and nothing is sent uncounted; Redis back, the call ends', async () => {
  await reset();
  const port = await freePort(); // nothing listens there yet
  const events = [];
  const conn = respClient(port);
  const fleetPrefix = prefix();
  const client = createEnterpriseClient({ baseUrl: url, credentials: ORG, fleet: new RedisFleet(conn, { prefix: fleetPrefix }), onEvent: (e) => events.push(e) });
  let later = null;
  try {
    const call = client.request('listEnterpriseCountries');
    await pause(2200);
    const down = events.filter((e) => e.kind === 'rate_limited');
    assert.ok(down.length >= 2, `a reservation each second: ${JSON.stringify(events.map((e) => e.kind))}`);
    assert.ok(down.every((e) => e.waitSeconds === 1 && /fleet's Redis could not be reached/.test(e.reason)));
    assert.equal(events.filter((e) => e.kind === 'send').length, 0, 'nothing sent uncounted (not even the exchange)');
    const s = await stats();
    assert.equal(s.tokens_issued, 0);
    assert.equal(s.requests.listEnterpriseCountries ?? 0, 0);
    // Redis comes back: the exchange and the request are reserved, then sent.
    later = await startRedis(port);
    assert.deepEqual((await call).data.map((c) => c.code), ['NL', 'DE']);
    const sends = events.filter((e) => e.kind === 'send').length;
    assert.equal(sends, 2, 'the exchange and the request');
    const check = await later.client();
    for (const window of ['api_client', 'organization', 'source_address']) {
      assert.ok(await check.sendCommand(['ZCARD', `${fleetPrefix}rate:${window}`]) >= sends, `every send counted in ${window}`);
    }
    check.close();
  } finally {
    conn.close();
    await later?.stop();
  }
});

test('the fleet\'s budget holds across processes: 4 × 5 requests on 12 a minute, the rest wait for the window', { timeout: 180_000 }, async () => {
  await reset();
  const started = Date.now();
  const reports = await fleetOf(4, { N: '5', LIMIT: '12', PREFIX: prefix() });
  for (const r of reports) assert.deepEqual(r.errors, []);
  assert.equal(reports.reduce((n, r) => n + r.done, 0), 20);
  const s = await stats();
  assert.ok(s.max_per_minute <= 12, `at most 12 in any minute at the service: ${s.max_per_minute}`);
  assert.equal(s.requests.listEnterpriseCountries, 20);
  assert.ok((Date.now() - started) / 1000 >= 59, 'the requests past the limit waited for the window');
  assert.ok(reports.some((r) => (r.kinds.rate_limited ?? 0) > 0), 'a process was told to wait');
});

test('the reporting client on a fleet: two clients (two sessions) of one client id and tenant share one token', async () => {
  await reset({ token_delay: 0.3 });
  const conn = await redis.client();
  try {
    const fleetPrefix = prefix();
    const reportsClient = () => createReportsClient({ baseUrl: url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT,
      fleet: new RedisFleet(conn, { prefix: fleetPrefix }) });
    const [a, b] = [reportsClient(), reportsClient()];
    assert.notEqual(a.session, b.session);
    await Promise.all([a, b, a, b].map((c) => c.request('listPlatformExports')));
    const s = await stats();
    assert.equal(s.tokens_issued, 1);
    assert.equal(s.requests.listPlatformExports, 4);
    // The token published for the fleet is the reporting API's, for this tenant.
    const record = JSON.parse(await conn.sendCommand(['GET', `${fleetPrefix}token`]));
    assert.equal(record.a, 'reports');
    assert.equal(record.t, TENANT);
  } finally {
    conn.close();
  }
});

test('RedisFleet and Fleet: arguments, the fleet session, and what a client refuses', async () => {
  const conn = await redis.client();
  try {
    assert.throws(() => new RedisFleet({}), TypeError);
    assert.throws(() => new rk.Fleet({ prefix: 'has space' }), rk.InvalidArgumentError);
    assert.throws(() => new rk.Fleet({ prefix: '' }), rk.InvalidArgumentError);
    assert.equal(new rk.Fleet().prefix, rk.DEFAULT_FLEET_PREFIX);
    const fleet = new RedisFleet(conn, { prefix: 'rk-test:args:' });
    assert.equal(fleet.prefix, 'rk-test:args:');
    assert.equal(await fleet.command(['SET', 'rk-test:args:x', '1']), 'OK');
    assert.equal(await fleet.command(['GET', 'rk-test:args:x']), '1');
    assert.equal(await fleet.command(['GET', 'rk-test:args:none']), null);
    assert.equal(await fleet.command(['DEL', 'rk-test:args:x']), '1', 'an integer reply as its digits');
    await assert.rejects(fleet.command(['NOSUCHCOMMAND']));
    const session = fleet.session('enterprise');
    assert.equal(session.fleet, fleet);
    assert.equal(new rk.Session().fleet, null);
    // A call on it reserves before it sends; a session of no fleet never does.
    const c = new rk.Call('listEnterpriseCountries', { seed: 1 });
    session.storeToken(rk.BearerToken.enterprise('tok'));
    const s = c.next(1_800_000_000, session);
    assert.equal(s.step, 'reserve');
    assert.deepEqual(s.command.slice(0, 3), ['EVAL', rk.RESERVE_SCRIPT, '3']);
    assert.equal(await fleet.command(s.command), 'ok');
    c.reserved('ok', 1_800_000_000);
    assert.equal(c.next(1_800_000_000, session).step, 'send');
    assert.throws(() => c.reserved('ok', 1_800_000_000), rk.InvalidArgumentError, 'no reservation pending');
    c.free();
    assert.throws(() => new rk.FleetToken(new rk.Session(), 'enterprise'), rk.InvalidArgumentError, 'not a fleet\'s session');
    // The clients take a RedisFleet, or a session of one; never a bare Fleet, nor both.
    assert.throws(() => createEnterpriseClient({ baseUrl: url, credentials: ORG, fleet: new rk.Fleet() }), TypeError);
    assert.throws(() => createEnterpriseClient({ baseUrl: url, credentials: ORG, session: new rk.Fleet().session() }), TypeError);
    assert.throws(() => createEnterpriseClient({ baseUrl: url, credentials: ORG, session, fleet }), TypeError);
    assert.equal(createEnterpriseClient({ baseUrl: url, credentials: ORG, session }).session, session);
    assert.equal(createEnterpriseClient({ baseUrl: url, credentials: ORG, fleet }).session.fleet, fleet);
  } finally {
    conn.close();
  }
});

test('a fleet refresh wakes the calls waiting on the session, and its failure fails them', async () => {
  const conn = await redis.client();
  try {
    const fleet = new RedisFleet(conn, { prefix: prefix() });
    const session = fleet.session();
    const [a, b] = [new rk.Call('listEnterpriseCountries', { seed: 1 }), new rk.Call('listEnterpriseCountries', { seed: 2 })];
    const now = Date.now() / 1000;
    assert.equal(a.next(now, session).step, 'refresh_token');
    const version = session.version;
    const wait = b.next(now, session);
    assert.equal(wait.step, 'await_token');
    const woken = session.waitForChange(version, 30);
    const refresh = new rk.FleetToken(session, 'enterprise', { seed: 7, now });
    let s = refresh.next();
    assert.deepEqual(s.command, ['GET', `${fleet.prefix}token`]);
    s = refresh.replied(await fleet.command(s.command), session, now);
    assert.equal(s.command[0], 'SET');
    s = refresh.replied(await fleet.command(s.command), session, now);
    assert.deepEqual(s.command, ['GET', `${fleet.prefix}token`], 'the lock is ours: one more look');
    s = refresh.replied(await fleet.command(s.command), session, now);
    assert.deepEqual(s, { step: 'exchange' });
    s = refresh.exchangeFailed('401 invalid key');
    assert.equal(s.command[1], rk.UNLOCK_SCRIPT);
    s = refresh.replied(await fleet.command(s.command), session, now);
    assert.deepEqual(s, { step: 'failed', reason: '401 invalid key' });
    assert.equal(await woken, true, 'the waiting call was woken');
    const failed = b.next(now, session);
    assert.equal(failed.step, 'fail');
    assert.equal(failed.rule, 'token_exchange_failed');
    refresh.free();
  } finally {
    conn.close();
  }
});

test('a fleet refresh publishes the token it exchanged; printing the step never shows it', () => {
  const session = new rk.Fleet({ prefix: 'rk-test:print:' }).session();
  const refresh = new rk.FleetToken(session, 'enterprise', { seed: 42, now: 1000 });
  assert.equal(refresh.replied(null, session, 1000).command[0], 'SET');
  assert.equal(refresh.replied('OK', session, 1000).command[0], 'GET');
  assert.deepEqual(refresh.replied(null, session, 1000), { step: 'exchange' });
  const publish = refresh.exchanged(rk.BearerToken.enterprise('et_secret_9'), 4600, 1000);
  assert.deepEqual(publish.command.slice(0, 5), ['EVAL', rk.PUBLISH_SCRIPT, '2', 'rk-test:print:token', 'rk-test:print:exchange']);
  assert.equal(JSON.parse(publish.command[5]).v, 'et_secret_9');
  const printed = require('node:util').inspect(publish);
  assert.ok(!printed.includes('et_secret_9'), printed);
  assert.match(printed, /rk-test:print:token/);
  assert.equal(session.hasToken, false);
  assert.deepEqual(refresh.replied('1', session, 1000), { step: 'done' });
  assert.equal(session.hasToken, true);
  refresh.free();
});
