'use strict';
// royaltykit/client against the shared fake API (tests/fakeapi/server.py) over real loopback HTTP
// with Node's fetch. The fake server's clock can be moved forward; the client gets a clock and a
// sleep that move it, so minutes of backoff and pacing pass in no time while the server checks
// every wait. One test uses the real clock and sleep (the defaults).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const readline = require('node:readline');
const { spawn, execFileSync } = require('node:child_process');
const rk = require('royaltykit');
const { docExample } = require('./docs.cjs');
const { createReportsClient, createEnterpriseClient, Session, ReconcileRequired, CallFailedError, PaginationError } = require('royaltykit/client');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const BODY = { export_class: 'statements', format: 'csv', period: '2026-10' };
// An empty page of the export list as the fake API serves it.
const EMPTY = { data: [], next_cursor: null };
// The scripted runs ("etl", "readme") live in the fake server, the same for every language.

let server;
let url;
let offset = 0;

test.before(async () => {
  server = spawn(process.env.PYTHON ?? 'python3', [path.join(ROOT, 'tests', 'fakeapi', 'server.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve) => readline.createInterface({ input: server.stdout }).once('line', resolve));
  assert.match(line, /^listening \d+$/);
  url = `http://127.0.0.1:${line.split(' ')[1]}`;
});
test.after(() => server.stdin.end());

async function control(what, payload) {
  const r = await fetch(`${url}/_fake/${what}`, payload === undefined ? {} : { method: 'POST', body: JSON.stringify(payload) });
  return r.json();
}
const reset = (script = {}) => control('reset', script);
const stats = () => control('stats');
const artifact = async () => Buffer.from(await (await fetch(`${url}/_fake/artifact`)).arrayBuffer());
const clock = () => Date.now() / 1000 + offset;
async function sleep(seconds) {
  offset += seconds;
  await control('advance', { seconds });
}

const reports = (extra = {}) => createReportsClient({
  baseUrl: url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT, timeoutMs: 1000, clock, sleep, ...extra,
});

test('the ETL job survives every fault the specs describe and creates one export', async () => {
  await reset({ scenario: 'etl' });
  const expected = await artifact();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-client-'));
  const seen = [];
  const result = await reports().runExport(BODY, { to: path.join(dir, 'out.csv'), onProgress: (got, total) => seen.push([got, total]) });
  const s = await stats();
  assert.equal(s.exports_created, 1, JSON.stringify(s)); // the dropped create was looked up, not sent again
  assert.deepEqual(fs.readFileSync(path.join(dir, 'out.csv')), expected);
  assert.equal(result.exportId, s.exports[0].id);
  assert.equal(result.size, expected.length);
  assert.equal(s.retry_after_violations, 0);
  assert.equal(s.tokens_issued, 2); // the first, and one refresh after the 401
  assert.equal(s.requests.exchangePlatformClientCredential, 3);
  assert.equal(s.downloads, 1);
  assert.equal(s.requests.downloadPlatformExport, 3); // 206, truncated, whole
  assert.deepEqual(seen.at(-1), [expected.length, expected.length]);
  // the artifact's mode is 0644 less the umask, as in every language
  assert.equal(fs.statSync(path.join(dir, 'out.csv')).mode & 0o777, 0o644 & ~process.umask());
  // the scripted 206 (half the artifact) never shows as a complete download
  assert.ok(seen.every(([got, total]) => got !== total || got === expected.length), JSON.stringify(seen));
  assert.deepEqual(fs.readdirSync(dir), ['out.csv']);
});

test('the events of a faulty ETL run say what happened and never a secret', async () => {
  await reset({ scenario: 'etl' });
  const events = [];
  await reports({ onEvent: (e) => events.push(e) }).runExport(BODY);
  const kinds = events.map((e) => e.kind);
  const s = await stats();
  assert.equal(kinds.filter((k) => k === 'send').length, Object.values(s.requests).reduce((a, b) => a + b, 0), kinds.join());
  const last = {};
  for (const e of events) if (e.kind === 'retry') last[e.operation] = e;
  assert.equal(last.exchangePlatformClientCredential.status, 503);
  assert.ok(last.exchangePlatformClientCredential.waitSeconds > 0);
  assert.equal(last.listPlatformExports.status, 429);
  assert.ok(last.listPlatformExports.waitSeconds >= 30, JSON.stringify(last.listPlatformExports));
  assert.ok(events.filter((e) => e.kind === 'retry').every((e) => e.rule && e.reason));
  assert.ok(kinds.includes('refresh_token') && kinds.includes('transport_failure') && kinds.at(-1) === 'done', kinds.join());
  assert.equal(events.filter((e) => e.kind === 'poll').at(-1).state, 'ready');
  const everything = JSON.stringify(events);
  assert.ok(!everything.includes('csecret') && !/rt_[0-9a-f]{8}/.test(everything) && !everything.includes('Bearer'), everything);
});

test('the clients publish their events on node:diagnostics_channel royaltykit:client when subscribed', async () => {
  await reset();
  const dc = require('node:diagnostics_channel');
  const seen = [];
  const listen = (e) => seen.push(e);
  dc.subscribe('royaltykit:client', listen);
  try {
    await reports().request('listPlatformExports');
  } finally {
    dc.unsubscribe('royaltykit:client', listen);
  }
  assert.deepEqual(seen.map((e) => `${e.kind} ${e.operation}`), [
    'refresh_token listPlatformExports', 'send exchangePlatformClientCredential', 'response exchangePlatformClientCredential',
    'done exchangePlatformClientCredential', 'send listPlatformExports', 'response listPlatformExports', 'done listPlatformExports',
  ]);
});

test('an export into memory or a WritableStream', async () => {
  await reset({ states: ['ready'], artifact: 'a,b\n1,2\n' });
  assert.equal(Buffer.from((await reports().runExport(BODY)).data).toString(), 'a,b\n1,2\n');
  const chunks = [];
  await reports().runExport(BODY, { to: new WritableStream({ write: (c) => { chunks.push(c); } }) });
  assert.equal(Buffer.concat(chunks).toString(), 'a,b\n1,2\n');
});

test('a dropped create without a key is not sent again: ReconcileRequired', async () => {
  await reset({ faults: [{ op: 'createPlatformExport', nth: 1, do: 'drop_after_apply' }] });
  await assert.rejects(reports().request('createPlatformExport', { body: BODY }), (e) => {
    assert.ok(e instanceof ReconcileRequired && e instanceof rk.RoyaltyKitError);
    assert.equal(e.code, 'reconcile_required');
    assert.equal(e.reconcile, 'lookup_by_sent_data');
    assert.equal(e.operationId, 'createPlatformExport');
    assert.deepEqual(e.candidates, []);
    assert.equal(e.stage, null);
    assert.ok(e.cause instanceof Error, `the dropped connection is the cause, as in Python and Kotlin: ${String(e.cause)}`);
    return true;
  });
  assert.equal((await stats()).requests.createPlatformExport, 1);
});

test('a create reset before it was applied is looked up, then created once', async () => {
  await reset({ faults: [{ op: 'createPlatformExport', nth: 1, do: 'reset' }], states: ['ready'] });
  await reports().runExport(BODY);
  const s = await stats();
  assert.equal(s.exports_created, 1);
  assert.equal(s.requests.createPlatformExport, 2);
  // the baseline, the lookup and its two looks after the grace (2 s, 5 s): nothing, so created again
  assert.equal(s.requests.listPlatformExports, 4);
});

test('errors that must stop are ApiErrors; reads return the parsed JSON', async () => {
  await reset();
  await assert.rejects(reports().request('getPlatformExport', { path: { export: 'exp_missing' } }), (e) => {
    assert.ok(e instanceof rk.ApiError);
    assert.equal(e.status, 404);
    assert.equal(e.kind, 'not_found');
    return true;
  });
  assert.deepEqual(await reports().request('listPlatformExports', { query: { limit: 10 }, requestId: 'ignored-on-reads' }), EMPTY);
});

test('requestRaw: the whole response, its data what request returns', async () => {
  await reset();
  const c = reports();
  const raw = await c.requestRaw('listPlatformExports', { query: { limit: 10 } });
  assert.equal(raw.status, 200);
  assert.deepEqual(raw.data, await c.request('listPlatformExports', { query: { limit: 10 } }));
  assert.ok(raw.headers.some(([k, v]) => k.toLowerCase() === 'content-type' && v === 'application/json'), JSON.stringify(raw.headers));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(raw.body)), raw.data);
});

test('a refused connection is connect_failed, retried, then CallFailedError', async () => {
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  await assert.rejects(reports({ baseUrl: `http://127.0.0.1:${port}` }).request('listPlatformExports'), (e) => {
    assert.ok(e instanceof CallFailedError);
    assert.equal(e.transport, 'connect_failed');
    assert.equal(e.rule, 'attempts_exhausted');
    assert.equal(e.operationId, 'token exchange');
    // The message names the operation, the host, the attempts and what fetch saw; fetch's own
    // rejection is chained.
    assert.ok(e.message.startsWith(`token exchange to 127.0.0.1:${port}: `), e.message);
    assert.equal(e.attempts, 5);
    assert.ok(e.message.includes('(5 attempts made)'), e.message);
    assert.ok(e.message.includes('connection refused'), e.message);
    assert.ok(e.cause instanceof Error, String(e.cause));
    assert.ok(!e.message.includes('csecret'), e.message);
    return true;
  });
});

test('a wrong base URL or an unknown option fails when the client is built, before any request', async () => {
  await reset();
  const enterprise = (extra) => createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, ...extra });
  const cases = {
    'htp://api.example.com': 'has the scheme `htp`',
    'api.example.com': 'has no scheme',
    'http://api.example.com': 'plain `http` to `api.example.com`',
    'https://api.example.com/api/v1': 'API prefix',
    'https://key:secret@api.example.com': 'user-info',
  };
  for (const make of [reports, enterprise]) {
    for (const [baseUrl, says] of Object.entries(cases)) {
      assert.throws(() => make({ baseUrl }), (e) => {
        assert.ok(e instanceof rk.InvalidArgumentError, String(e));
        assert.equal(e.code, 'invalid_argument');
        assert.equal(e.argument, 'base_url');
        assert.ok(e.message.includes(says), e.message);
        assert.ok(!e.message.includes('secret'), e.message);
        return true;
      });
    }
    // a misspelt option is refused by name, not ignored
    assert.throws(() => make({ timeoutMS: 5 }), /unknown option `timeoutMS`/);
    assert.throws(() => make({ allowInsecureHttp: 'yes' }), /allowInsecureHttp must be a boolean/);
    // loopback over plain http is accepted (the fake API here), and any host with the opt-in
    make({ baseUrl: `${url}/` });
    make({ baseUrl: 'http://api.example.com', allowInsecureHttp: true });
  }
  const s = await stats();
  assert.equal(Object.values(s.requests).reduce((a, b) => a + b, 0), 0);
  assert.equal(s.tokens_issued, 0);
});

test('maxAttempts per client and per call (withOptions) bound the requests; the copy shares the session', async () => {
  await reset({ faults: Array.from({ length: 8 }, (_, i) => ({ op: 'listPlatformExports', nth: i + 1, do: 'reset' })) });
  const c = reports({ maxAttempts: 3 });
  const copy = c.withOptions({ maxAttempts: 2, timeoutMs: 5000 });
  assert.equal(copy.session, c.session);
  const failed = async (client) => {
    try {
      await client.request('listPlatformExports');
    } catch (e) {
      assert.ok(e instanceof CallFailedError, String(e));
      return e;
    }
    assert.fail('accepted');
  };
  const three = await failed(c);
  const two = await failed(copy);
  assert.deepEqual([three.attempts, two.attempts], [3, 2]);
  assert.ok(two.message.includes('(2 attempts made)'), two.message);
  assert.equal(three.transport, 'connection_lost');
  const s = await stats();
  assert.equal(s.requests.listPlatformExports, 5);
  assert.equal(s.tokens_issued, 1);
  assert.throws(() => c.withOptions({ maxAtempts: 2 }), /unknown option `maxAtempts`/);
});

test('a port fetch refuses (the Fetch standard\'s bad ports): connect_failed, nothing was sent', async () => {
  await assert.rejects(reports({ baseUrl: 'http://127.0.0.1:9' }).request('listPlatformExports'), (e) => {
    assert.ok(e instanceof CallFailedError, String(e));
    assert.equal(e.transport, 'connect_failed');
    assert.ok(e.message.includes('port blocked by fetch'), e.message);
    return true;
  });
});

test('a read that times out is sent again', async () => {
  await reset({ faults: [{ op: 'listPlatformExports', nth: 1, do: 'stall', seconds: 2.5 }] });
  assert.deepEqual(await reports().request('listPlatformExports'), EMPTY);
  assert.equal((await stats()).requests.listPlatformExports, 2);
});

test('an AbortSignal cancels a call waiting on Retry-After', async () => {
  await reset({ faults: [{ op: 'listPlatformExports', nth: 1, do: 'status', status: 429, retry_after: 60 }] });
  const controller = new AbortController();
  const client = reports({ clock: undefined, sleep: undefined });
  setTimeout(() => controller.abort(new Error('stopped by the test')), 300);
  await assert.rejects(client.request('listPlatformExports', {}, { signal: controller.signal }), /stopped by the test/);
});

test('the defaults sleep for real and honour Retry-After', async () => {
  await reset({ faults: [{ op: 'listPlatformExports', nth: 1, do: 'status', status: 429, retry_after: 1 }] });
  const client = createReportsClient({ baseUrl: url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT });
  assert.deepEqual(await client.request('listPlatformExports'), EMPTY);
  const s = await stats(); // the server checks the gap: no wall-clock assert here
  assert.equal(s.retry_after_violations, 0);
  assert.equal(s.requests.listPlatformExports, 2);
});

test('fetchResource: the canonical state of the resource an event names, and nothing outside the API', async () => {
  await reset();
  const client = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, clock, sleep });
  const rel = '/api/v1/releases/5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b';
  const user = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
  const viaEvent = await client.fetchResource({ event: { resourceUrl: rel } });
  assert.equal(viaEvent.data.uuid, '5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b');
  assert.equal(viaEvent.data.acting_for, null);
  const forUser = await client.fetchResource({ resourceUrl: rel }, { userId: user });
  assert.equal(forUser.data.acting_for, user);
  assert.equal((await client.fetchResource(rel)).data.status, 'live');
  for (const bad of [`http://127.0.0.1:1${rel}`, '//evil.example/api/v1/releases/1', '/api/v1/../v1/token', '/api/platform/v1/exports']) {
    await assert.rejects(client.fetchResource(bad), (e) => e instanceof rk.RequestBuildError && e.code === 'invalid_resource_url');
  }
  await assert.rejects(client.fetchResource(42), TypeError);
  assert.equal((await stats()).requests.fetchEnterpriseResource, 3);
});

test('a burst of enterprise requests stays inside the spec minute', async () => {
  await reset();
  const start = clock();
  const client = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, clock, sleep });
  for (let i = 0; i < 200; i++) assert.equal((await client.request('listEnterpriseReleases')).data[0].title, 'First');
  const s = await stats();
  assert.equal(s.requests.listEnterpriseReleases, 200);
  assert.equal(s.tokens_issued, 1);
  assert.ok(s.max_per_minute >= 170 && s.max_per_minute <= 180, JSON.stringify(s)); // 180 per source address
  assert.ok(clock() - start >= 60);
});

test('the documented ETL job runs as written', async () => {
  const code = docExample('node-client');
  assert.ok(code, 'the documentation has the node-client example');
  assert.ok(code.trim().split('\n').length <= 15);
  await reset({ scenario: 'readme' });
  const expected = await artifact();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-readme-'));
  fs.writeFileSync(path.join(dir, 'job.js'), code);
  const out = execFileSync(process.execPath, ['job.js'], {
    cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NODE_PATH: path.join(process.cwd(), 'node_modules'),
      REPORTS_URL: url, REPORTS_CLIENT_ID: 'cid', REPORTS_CLIENT_SECRET: 'csecret', REPORTS_TENANT_ID: TENANT },
  });
  const s = await stats();
  assert.equal(out, `export ${s.exports[0].id}: ${expected.length} bytes in statements.csv\n`);
  assert.deepEqual(fs.readFileSync(path.join(dir, 'statements.csv')), expected);
  assert.equal(s.exports_created, 1);
  assert.equal(s.retry_after_violations, 0);
});

test('the documented consumer workflow runs as written: one subscription, every page, the canonical fetch', async () => {
  const code = docExample('node-consumer');
  assert.ok(code, 'the documentation has the node-consumer example');
  assert.ok(code.trim().split('\n').length <= 20);
  await reset({ subscriptions: 23, faults: [{ op: 'createEnterpriseWebhook', nth: 1, do: 'drop_after_apply' }] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-readme-'));
  fs.writeFileSync(path.join(dir, 'consumer.js'), code);
  const out = execFileSync(process.execPath, ['consumer.js'], {
    cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NODE_PATH: path.join(process.cwd(), 'node_modules'),
      ENTERPRISE_URL: url, ENTERPRISE_API_KEY: 'key-1', ENTERPRISE_API_SECRET: 'secret-1' },
  });
  assert.equal(out, 'subscription wh_001: store its secret now, it is shown once\n23 subscriptions\nrelease live\n');
  const s = await stats();
  assert.equal(s.webhooks_created, 1); // the create's answer was lost: sent again with its key, not created twice
  assert.equal(s.idempotent_replays, 1);
  assert.equal(s.requests.listEnterpriseSubscriptions, 3);
  assert.ok(!out.includes(s.webhooks.wh_001.secret));
});

test('the documented inbox workflow runs as written: queued at once, the worker\'s canonical fetch and effect, the lost deliveries replayed', async () => {
  const code = docExample('node-inbox');
  assert.ok(code, 'the documentation has the node-inbox example');
  assert.ok(code.trim().split('\n').length <= 20);
  // The subscription's endpoint routed to a closed port (nothing listens: the replays fail), and two
  // of its deliveries lost before the example runs: its create (the same requestId) gets this one back.
  const PUBLIC = 'https://hooks.example.com/royaltykit';
  await reset({ routes: { [PUBLIC]: 'http://127.0.0.1:9/webhooks' } });
  const org = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' } });
  const hook = await org.createSubscription({ name: 'ops', endpointUrl: PUBLIC, events: ['ddex.delivery.failed'] }, { requestId: 'ops-hook-1' });
  for (let i = 0; i < 2; i++) assert.equal((await control('deliver', { reference: hook.reference, lose: true })).status, 'failed');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-readme-'));
  fs.writeFileSync(path.join(dir, 'inbox.js'), code);
  const out = execFileSync(process.execPath, ['inbox.js'], {
    cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NODE_PATH: path.join(process.cwd(), 'node_modules'),
      ENTERPRISE_URL: url, ENTERPRISE_API_KEY: 'key-1', ENTERPRISE_API_SECRET: 'secret-1' },
  });
  assert.equal(out, `${hook.reference}: queued, processed 1, replayed 2 of 2\n`);
  const s = await stats();
  assert.deepEqual([s.webhooks_created, s.idempotent_replays, s.replays, s.requests.fetchEnterpriseResource], [1, 1, 2, 1]);
  const Database = require('better-sqlite3');
  const db = new Database(path.join(dir, 'app.sqlite'), { readonly: true });
  try {
    assert.deepEqual(db.prepare('SELECT uuid, status FROM releases').all(), [{ uuid: '5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b', status: 'live' }]);
    assert.deepEqual(db.prepare('SELECT state, count(*) AS n FROM royaltykit_inbox GROUP BY state').all(), [{ state: 'done', n: 1 }]);
  } finally {
    db.close();
  }
});

test('a large artifact is streamed to disk as it arrives; a cut attempt starts the file afresh', async () => {
  // 4 MiB (as UTF-8 text, more), the first attempt cut short: the temporary file grows while the body
  // arrives, and only the whole artifact is renamed into place.
  const big = Array.from({ length: 4 * 4096 }, () => String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i))).join('');
  await reset({ states: ['ready'], artifact: big, faults: [{ op: 'downloadPlatformExport', nth: 1, do: 'truncate' }] });
  const expected = await artifact();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-client-'));
  const target = path.join(dir, 'big.bin');
  const onDisk = [];
  const result = await reports().runExport(BODY, {
    to: target,
    onProgress: (got) => {
      const temp = fs.readdirSync(dir).filter((n) => n.startsWith('.royaltykit-'));
      assert.equal(temp.length, 1);
      assert.ok(!fs.existsSync(target));
      onDisk.push([got, fs.statSync(path.join(dir, temp[0])).size]);
    },
  });
  assert.deepEqual(fs.readFileSync(target), expected);
  assert.equal(result.size, expected.length);
  assert.equal((await stats()).requests.downloadPlatformExport, 2);
  assert.ok(onDisk.some(([got, size]) => got < expected.length && size === got && size > 1 << 20), JSON.stringify(onDisk.slice(-3)));
  assert.deepEqual(fs.readdirSync(dir), ['big.bin']);
});

test('a failing onProgress is thrown as it is, never retried, and leaves no file', async () => {
  await reset({ states: ['ready'] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-client-'));
  const stop = new Error('stop here');
  await assert.rejects(reports().runExport(BODY, { to: path.join(dir, 'out.csv'), onProgress: () => { throw stop; } }), (e) => e === stop);
  assert.deepEqual(fs.readdirSync(dir), []);
  assert.equal((await stats()).requests.downloadPlatformExport, 1);
});

test('a path in a folder that does not exist fails before any export is created', async () => {
  await reset({ states: ['ready'] });
  const target = path.join(os.tmpdir(), 'rk-no-such-dir', 'x', 'out.csv');
  await assert.rejects(reports().runExport(BODY, { to: target }), (e) => {
    assert.equal(e.code, 'ENOENT');
    // the error names the user's path, never the temporary file beside it
    assert.equal(e.path, target);
    assert.ok(e.message.includes(target) && !e.message.includes('.royaltykit-'), e.message);
    return true;
  });
  assert.equal((await stats()).exports_created, 0);
});

test('a download slower than timeoutMs in all, never idle that long, is not cut off', async () => {
  // 2.5 s for the body in 10 pieces against a 1 s timeout: the timeout bounds each wait, not the whole.
  await reset({ states: ['ready'], faults: [{ op: 'downloadPlatformExport', nth: 1, do: 'trickle', seconds: 2.5 }] });
  const expected = await artifact();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-client-'));
  await reports().runExport(BODY, { to: path.join(dir, 'slow.csv') });
  assert.deepEqual(fs.readFileSync(path.join(dir, 'slow.csv')), expected);
  assert.equal((await stats()).requests.downloadPlatformExport, 1);
});

// ---- issue 39: reconciliation that never guesses, one token exchange per session, calls that
// end, the enterprise expires_at forms, no redirect followed.

const DROPPED = [{ op: 'createPlatformExport', nth: 1, do: 'drop_after_apply' }];

test('a dropped create whose export the list shows without the body\'s members is adopted: one export', async () => {
  await reset({ faults: DROPPED, list: { echo: false } });
  const r = await reports().runExport(BODY);
  const s = await stats();
  assert.equal(s.exports_created, 1, JSON.stringify(s));
  assert.equal(s.requests.createPlatformExport, 1);
  assert.equal(r.exportId, s.exports[0].id);
  assert.equal(s.downloads, 1);
});

test('150 exports with the same body before the job, pages of 40: the new one is found on a later page', async () => {
  await reset({ faults: DROPPED, existing: { count: 150, body: BODY }, list: { page_size: 40 } });
  const r = await reports().runExport(BODY);
  const s = await stats();
  assert.equal(s.exports_created, 1, JSON.stringify({ ...s, exports: s.exports.length }));
  assert.equal(s.requests.createPlatformExport, 1);
  assert.ok(s.requests.listPlatformExports >= 8, 'every page, before and after the create'); // 4 pages each
  assert.ok(s.exports.some((e) => e.id === r.exportId));
});

test('an export that shows up in the list one read late is found by the look after the grace', async () => {
  await reset({ faults: DROPPED, list: { lag_reads: 1 } });
  const r = await reports().runExport(BODY);
  const s = await stats();
  assert.equal(s.exports_created, 1, JSON.stringify(s));
  assert.equal(s.requests.createPlatformExport, 1);
  assert.equal(r.exportId, s.exports[0].id);
});

test('two new exports that may be the job\'s own: ReconcileRequired with both candidates, no second create', async () => {
  // The job's create is applied and its connection drops; at the same moment another process of
  // the tenant creates an export of the same data. The lookup finds two and cannot tell which is the job's.
  await reset({ faults: [{ ...DROPPED[0], also_created_by_another: 1 }] });
  let candidates;
  await assert.rejects(reports().runExport(BODY), (e) => {
    assert.ok(e instanceof ReconcileRequired && e instanceof rk.RoyaltyKitError, String(e));
    assert.equal(e.code, 'reconcile_required');
    assert.equal(e.reconcile, 'lookup_by_sent_data');
    assert.equal(e.stage, 'reconcile');
    assert.equal(e.operationId, 'export job');
    candidates = e.candidates;
    return true;
  });
  const s = await stats();
  assert.equal(s.exports_created, 1); // the job's one create; never a second
  assert.equal(s.requests.createPlatformExport, 1);
  assert.deepEqual([...candidates].sort(), s.exports.map((x) => x.id).sort());
});

test('20 concurrent first calls on one client make one token exchange', async () => {
  await reset({ token_delay: 0.3 });
  const client = reports();
  const results = await Promise.all(Array.from({ length: 20 }, () => client.request('listPlatformExports')));
  assert.deepEqual(results, Array(20).fill(EMPTY));
  const s = await stats();
  assert.equal(s.tokens_issued, 1, JSON.stringify(s));
  assert.equal(s.max_concurrent_exchanges, 1);
  assert.equal(s.requests.exchangePlatformClientCredential, 1);
  assert.equal(client.session.exchanges, 1);
  assert.equal(client.session.hasToken, true);
});

test('clients given one Session share its token; an export job runs on it too', async () => {
  await reset({ token_delay: 0.2, states: ['ready'] });
  const a = reports();
  const b = reports({ session: a.session });
  assert.equal(b.session, a.session);
  await Promise.all([a.request('listPlatformExports'), b.request('listPlatformExports'), b.runExport(BODY)]);
  const s = await stats();
  assert.equal(s.tokens_issued, 1, JSON.stringify(s));
  assert.throws(() => reports({ session: {} }), TypeError);
  assert.throws(() => reports({ session: a.session, budget: new rk.RateBudget('enterprise') }), TypeError);
});

test('an exchange that fails fails the calls waiting for it (token_exchange_failed), and the next call tries again', async () => {
  await reset({ token_delay: 0.2 });
  const client = reports({ credentials: { clientId: 'cid', clientSecret: 'wrong' } });
  const results = await Promise.allSettled(Array.from({ length: 5 }, () => client.request('listPlatformExports')));
  const rules = results.map((r) => (r.reason instanceof CallFailedError ? r.reason.rule : r.reason?.code));
  assert.equal(rules.filter((r) => r === 'api_error').length, 1, JSON.stringify(rules)); // the leader: the exchange's own 401
  assert.equal(rules.filter((r) => r === 'token_exchange_failed').length, 4, JSON.stringify(rules));
  assert.equal((await stats()).requests.exchangePlatformClientCredential, 1);
  await assert.rejects(client.request('listPlatformExports'), rk.ApiError);
  assert.equal((await stats()).requests.exchangePlatformClientCredential, 2);
});

test('a call cancelled while it waits for another call\'s exchange rejects at once; a cancelled leader lets the next call lead', async () => {
  await reset({ token_delay: 0.5 });
  const client = reports();
  const leader = new AbortController();
  const waiter = new AbortController();
  const first = client.request('listPlatformExports', {}, { signal: leader.signal });
  const second = client.request('listPlatformExports', {}, { signal: waiter.signal });
  const third = client.request('listPlatformExports');
  setTimeout(() => waiter.abort(new Error('waiter cancelled')), 50);
  setTimeout(() => leader.abort(new Error('leader cancelled')), 100);
  await assert.rejects(second, /waiter cancelled/);
  await assert.rejects(first, /leader cancelled/);
  assert.deepEqual(await third, EMPTY); // it led the next exchange once the first was abandoned
  assert.equal(client.session.exchanges, 2);
});

test('a token that expires in 1 s is used once: the call returns', async () => {
  await reset({ token_expires_in: 1 });
  const client = reports();
  assert.deepEqual(await client.request('listPlatformExports'), EMPTY);
  assert.deepEqual(await client.request('listPlatformExports'), EMPTY);
  const s = await stats();
  assert.equal(s.requests.listPlatformExports, 2);
  assert.ok(s.tokens_issued <= 2, JSON.stringify(s));
});

for (const form of ['past', 'offset', 'basic', 'null']) {
  test(`an enterprise token whose expires_at is ${form}: calls succeed`, async () => {
    await reset({ enterprise_expires_at: form });
    const client = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, clock, sleep });
    for (let i = 0; i < 3; i++) assert.equal((await client.request('listEnterpriseReleases')).data[0].title, 'First');
    const s = await stats();
    assert.equal(s.requests.listEnterpriseReleases, 3);
    assert.equal(s.unauthorized, 0);
    assert.ok(s.tokens_issued >= 1 && s.tokens_issued <= 3, JSON.stringify(s));
  });
}

/** The origin a redirect's error names: the fake server's other listener, never this one. */
function namesTheOtherOrigin(e) {
  assert.ok(e instanceof CallFailedError, String(e));
  assert.equal(e.rule, 'redirect');
  const m = e.message.match(/http:\/\/127\.0\.0\.1:(\d+)/);
  assert.ok(m, e.message);
  assert.notEqual(m[1], new URL(url).port);
  return true;
}

test('a redirect on the token exchange or on a call is never followed: the call fails (rule redirect)', async () => {
  const enterprise = () => createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, clock, sleep });
  await reset({ faults: [{ op: 'exchangeEnterpriseToken', nth: 1, do: 'redirect' }] });
  await assert.rejects(enterprise().request('listEnterpriseReleases'), namesTheOtherOrigin);
  await reset({ faults: [{ op: 'exchangePlatformClientCredential', nth: 1, do: 'redirect' }] });
  await assert.rejects(reports().request('listPlatformExports'), namesTheOtherOrigin);
  await reset({ faults: [{ op: 'listEnterpriseReleases', nth: 1, do: 'redirect' }] });
  await assert.rejects(enterprise().request('listEnterpriseReleases'), namesTheOtherOrigin);
  await reset({ faults: [{ op: 'getPlatformExport', nth: 1, do: 'redirect' }] });
  await assert.rejects(reports().runExport(BODY), namesTheOtherOrigin);
  const s = await stats();
  assert.equal(s.evil_requests, 0, JSON.stringify(s));
  assert.deepEqual(s.evil_credentials, []);
});

test('a fetch of the user\'s that follows redirects anyway: the call still fails, nothing from the other origin is used', async () => {
  // `redirect: 'manual'` is on every request; this fetch drops it (so it follows). The request
  // reaches the other origin (that is this fetch's doing), but its answer is reported as the
  // redirect it was: no token it issued is stored, no data it served is returned.
  const following = (input, init) => fetch(input, { ...init, redirect: 'follow' });
  await reset({ faults: [{ op: 'exchangeEnterpriseToken', nth: 1, do: 'redirect' }] });
  const client = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, clock, sleep, fetch: following });
  await assert.rejects(client.request('listEnterpriseReleases'), namesTheOtherOrigin);
  assert.equal(client.session.hasToken, false);
  await reset({ faults: [{ op: 'listEnterpriseReleases', nth: 1, do: 'redirect' }] });
  await assert.rejects(client.request('listEnterpriseReleases'), namesTheOtherOrigin);
  const s = await stats();
  assert.equal(s.requests.listEnterpriseReleases, 1);
  assert.equal(s.unauthorized, 0, 'the other origin\'s token never reached the API');
});

test('an opaque redirect (a browser\'s or a Worker\'s answer to redirect: manual) is reported as a 3xx', async () => {
  await reset();
  const opaque = async () => ({ type: 'opaqueredirect', status: 0, redirected: false, url: '', headers: new Headers(), body: null });
  const client = createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, clock, sleep, fetch: opaque });
  await assert.rejects(client.request('listEnterpriseReleases'), (e) => e instanceof CallFailedError && e.rule === 'redirect' && /no Location/.test(e.message));
});

test('runExport takes maxPollSeconds: polling stops within it', async () => {
  await reset({ states: ['queued'] });
  await assert.rejects(reports().runExport(BODY, { maxPollSeconds: 30 }), (e) => e instanceof CallFailedError && e.stage === 'poll');
  const s = await stats();
  assert.equal(s.exports_created, 1);
  assert.ok(s.requests.getPlatformExport < 20, JSON.stringify(s.requests));
});

// ---- issue 42: a download's progress as events; a deprecated operation's notice once per session.

test('a large download gives progress events as it arrives: at most 11, in order, the last one whole', async () => {
  const big = 'statement_id,amount\n' + '1234567,10.00\n'.repeat(150_000); // about 2 MB: many pieces
  await reset({ states: ['ready'], artifact: big });
  const expected = await artifact();
  const pieces = [];
  const events = [];
  const result = await reports({
    onEvent: (e) => {
      // delivered at once: while the body arrives, at the piece that crossed the tenth
      if (e.kind === 'progress') assert.equal(e.receivedBytes, pieces.at(-1)?.[0], JSON.stringify(e));
      events.push(e);
    },
  }).runExport(BODY, { onProgress: (got, total) => pieces.push([got, total]) });
  assert.equal(result.size, expected.length);
  assert.ok(pieces.length > 11, `${pieces.length} pieces`);
  const progress = events.filter((e) => e.kind === 'progress');
  assert.ok(progress.length >= 2 && progress.length <= 11, progress.map((e) => e.message).join('\n'));
  for (const e of progress) {
    assert.equal(e.level, 'info');
    assert.equal(e.operation, 'downloadPlatformExport');
    assert.equal(e.totalBytes, expected.length);
    assert.equal(e.message, `progress downloadPlatformExport #1: ${e.receivedBytes} of ${expected.length} bytes`);
  }
  const received = progress.map((e) => e.receivedBytes);
  assert.deepEqual(received, [...received].sort((a, b) => a - b));
  assert.equal(new Set(received).size, received.length);
  assert.equal(received.at(-1), expected.length);
  // each tenth at most once: no two events in the same tenth
  const tenths = received.map((r) => Math.floor((r * 10) / expected.length));
  assert.equal(new Set(tenths).size, tenths.length, tenths.join());
  // all of them before the download's response, which comes when the body is whole
  const kinds = events.map((e) => `${e.kind} ${e.operation}`);
  assert.ok(kinds.lastIndexOf('progress downloadPlatformExport') < kinds.lastIndexOf('response downloadPlatformExport'), kinds.join());
});

test('a download cut short and read again: its progress starts from 0 again, only the second attempt is whole', async () => {
  const big = 'x'.repeat(2_000_000);
  await reset({ states: ['ready'], artifact: big, faults: [{ op: 'downloadPlatformExport', nth: 1, do: 'truncate' }] });
  const events = [];
  const dc = require('node:diagnostics_channel');
  const published = [];
  const listen = (e) => { if (e.kind === 'progress') published.push(e); };
  dc.subscribe('royaltykit:client', listen);
  try {
    await reports({ onEvent: (e) => events.push(e) }).runExport(BODY);
  } finally {
    dc.unsubscribe('royaltykit:client', listen);
  }
  const progress = events.filter((e) => e.kind === 'progress');
  const first = progress.filter((e) => e.attempt === 1);
  const second = progress.filter((e) => e.attempt === 2);
  assert.equal(first.length + second.length, progress.length, progress.map((e) => e.message).join('\n'));
  assert.ok(first.length >= 1 && first.every((e) => e.receivedBytes < big.length), first.map((e) => e.message).join('\n'));
  assert.ok(second.length >= 2 && second.length <= 11, second.map((e) => e.message).join('\n'));
  assert.ok(second[0].receivedBytes < first.at(-1).receivedBytes, 'the second attempt starts from 0 again');
  assert.equal(second.at(-1).receivedBytes, big.length);
  assert.equal(second.at(-1).totalBytes, big.length);
  // the same events on the diagnostics channel
  assert.deepEqual(published.map((e) => e.message), progress.map((e) => e.message));
});

test('a deprecated operation: one notice (warning, naming the sunset) per client session, not per call', async () => {
  await reset({ deprecated: ['listPlatformExports'] });
  const seen = [];
  const a = reports({ onEvent: (e) => seen.push(['a', e]) });
  for (let i = 0; i < 3; i++) await a.request('listPlatformExports');
  const notices = (who) => seen.filter(([w, e]) => w === who && e.kind === 'notice').map(([, e]) => e);
  assert.equal(notices('a').length, 1, JSON.stringify(notices('a')));
  const [n] = notices('a');
  assert.equal(n.level, 'warning');
  assert.equal(n.operation, 'listPlatformExports');
  assert.match(n.reason, /01 Sep 2027/);
  assert.ok(n.message.startsWith('notice listPlatformExports #1: ') && n.message.includes('01 Sep 2027'), n.message);
  assert.equal((await stats()).requests.listPlatformExports, 3);
  // a second client, its own session: its own one notice
  const b = reports({ onEvent: (e) => seen.push(['b', e]) });
  for (let i = 0; i < 3; i++) await b.request('listPlatformExports');
  assert.equal(notices('b').length, 1);
  assert.match(notices('b')[0].reason, /01 Sep 2027/);
  // a client on a's session: a's notice was given already
  const c = reports({ session: a.session, onEvent: (e) => seen.push(['c', e]) });
  await c.request('listPlatformExports');
  assert.equal(notices('c').length, 0);
  // an operation not deprecated: no notice
  await a.request('getPlatformExport', { path: { export: '7c9e6679-7425-40de-944b-e07072fc6b14' } }).catch(() => {});
  assert.equal(notices('a').length, 1);
});

test('a deprecated operation nobody listens for is still shown: one process warning per session', async () => {
  await reset({ deprecated: ['listPlatformExports'] });
  const warnings = [];
  const listen = (w) => warnings.push(w);
  process.on('warning', listen);
  try {
    const quiet = reports({});
    for (let i = 0; i < 3; i++) await quiet.request('listPlatformExports');
    await quiet.request('getPlatformExport', { path: { export: '7c9e6679-7425-40de-944b-e07072fc6b14' } }).catch(() => {});
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off('warning', listen);
  }
  const notices = warnings.filter((w) => w.name === 'RoyaltyKitNotice');
  assert.equal(notices.length, 1, notices.map((w) => w.message).join('\n'));
  assert.ok(notices[0].message.startsWith('notice listPlatformExports #1: ') && notices[0].message.includes('01 Sep 2027'), notices[0].message);
});

// ---- paginate: every item of a list, page after page (the core's Pages) ----------------------------

const enterpriseClient = (extra = {}) => createEnterpriseClient({ baseUrl: url, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, clock, sleep, ...extra });
/** Every item of an async iterator. */
async function all(iterator) {
  const items = [];
  for await (const item of iterator) items.push(item);
  return items;
}
/** The ids of the exports the fake API holds, oldest first. */
const exportIds = async () => (await stats()).exports.map((e) => e.id);

for (const cursor of ['next_cursor', 'meta', 'links', 'none']) {
  test(`paginate: 25 exports in pages of 10 (cursor ${cursor}): every id once, in order, 3 list requests`, async () => {
    await reset({ existing: { count: 25 }, list: { page_size: 10, cursor } });
    const expected = await exportIds();
    // A list that names no cursor is followed by its last id only after a full page: the size asked for must be the page's.
    const items = await all(reports().paginate('listPlatformExports', {}, cursor === 'none' ? { pageSize: 10 } : {}));
    assert.deepEqual(items.map((e) => e.id), expected);
    assert.equal(new Set(items.map((e) => e.id)).size, 25);
    assert.equal((await stats()).requests.listPlatformExports, 3);
  });
}

test('paginate is lazy: maxItems 12 makes 2 list requests, maxPages 1 one, a break after 3 items one', async () => {
  await reset({ existing: { count: 25 }, list: { page_size: 10 } });
  const expected = await exportIds();
  const twelve = await all(reports().paginate('listPlatformExports', {}, { maxItems: 12 }));
  assert.deepEqual(twelve.map((e) => e.id), expected.slice(0, 12));
  assert.equal((await stats()).requests.listPlatformExports, 2);
  const ten = await all(reports().paginate('listPlatformExports', null, { maxPages: 1 }));
  assert.deepEqual(ten.map((e) => e.id), expected.slice(0, 10));
  assert.equal((await stats()).requests.listPlatformExports, 3);
  const walk = reports().paginate('listPlatformExports');
  assert.equal((await stats()).requests.listPlatformExports, 3, 'nothing is requested before the first item is asked for');
  const three = [];
  for await (const e of walk) {
    three.push(e.id);
    if (three.length === 3) break;
  }
  assert.deepEqual(three, expected.slice(0, 3));
  assert.equal((await stats()).requests.listPlatformExports, 4);
  assert.deepEqual(await walk.next(), { value: undefined, done: true }, 'a walk left by break is over');
});

test('paginate keeps the caller\'s query on every page and passes it through', async () => {
  await reset({ existing: { count: 25 }, list: { page_size: 10, cursor: 'none' } });
  const expected = await exportIds();
  const ready = await all(reports().paginate('listPlatformExports', { query: { status: 'ready', limit: 10 } }));
  assert.deepEqual(ready.map((e) => e.id), expected);
  assert.equal((await stats()).requests.listPlatformExports, 3);
  assert.deepEqual(await all(reports().paginate('listPlatformExports', { query: [['status', 'queued']] })), []);
  assert.equal((await stats()).requests.listPlatformExports, 4);
  // the caller's cursor is where the walk starts
  const after = await all(reports().paginate('listPlatformExports', { query: { cursor: expected[19] } }, { pageSize: 10 }));
  assert.deepEqual(after.map((e) => e.id), expected.slice(20));
});

test('paginate: 23 subscriptions in numbered pages, with and without a page size', async () => {
  await reset({ subscriptions: 23 });
  const refs = Array.from({ length: 23 }, (_, i) => `sub_${String(i + 1).padStart(3, '0')}`);
  const client = enterpriseClient();
  const sized = await all(client.paginate('listEnterpriseSubscriptions', {}, { pageSize: 10 }));
  assert.deepEqual(sized.map((s) => s.reference), refs);
  assert.equal((await stats()).requests.listEnterpriseSubscriptions, 3);
  const unsized = await all(client.paginate('listEnterpriseSubscriptions'));
  assert.deepEqual(unsized.map((s) => s.reference), refs);
  assert.equal((await stats()).requests.listEnterpriseSubscriptions, 6); // 3 more: the service's default 10
  const five = await all(client.paginate('listEnterpriseSubscriptions', {}, { pageSize: 5, maxPages: 2 }));
  assert.deepEqual(five.map((s) => s.reference), refs.slice(0, 10));
  assert.equal((await stats()).requests.listEnterpriseSubscriptions, 8);
  // a list without paging parameters: one page
  assert.deepEqual((await all(client.paginate('listEnterpriseReleases'))).map((r) => r.title), ['First', 'Second']);
  assert.equal((await stats()).requests.listEnterpriseReleases, 1);
});

test('paginate: a 503 on page 2 is retried by its call; every item still once', async () => {
  await reset({ existing: { count: 25 }, list: { page_size: 10 }, faults: [{ op: 'listPlatformExports', nth: 2, do: 'status', status: 503 }] });
  const expected = await exportIds();
  const events = [];
  const items = await all(reports({ onEvent: (e) => events.push(e) }).paginate('listPlatformExports'));
  assert.deepEqual(items.map((e) => e.id), expected);
  assert.equal((await stats()).requests.listPlatformExports, 4);
  // each page is a call of the client's own: its events (the retry included) reach onEvent
  assert.equal(events.filter((e) => e.kind === 'retry' && e.operation === 'listPlatformExports' && e.status === 503).length, 1);
  assert.equal(events.filter((e) => e.kind === 'done' && e.operation === 'listPlatformExports').length, 3);
});

test('paginate: a page that is not a list is PaginationError page_unreadable; the items before it stand', async () => {
  await reset();
  // The token from the fake API, the list's pages from a script.
  const pages = [
    { data: [{ id: 'a' }, { id: 'b' }], next_cursor: '7c9e6679-7425-40de-944b-e07072fc6b14' },
    { total: 3 },
  ];
  const served = [];
  const scripted = async (input, init) => {
    if (!String(input).includes('/exports')) return fetch(input, init);
    served.push(String(input));
    return new Response(JSON.stringify(pages[served.length - 1]), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const items = [];
  await assert.rejects(async () => {
    for await (const item of reports({ fetch: scripted }).paginate('listPlatformExports')) items.push(item.id);
  }, (e) => {
    assert.ok(e instanceof PaginationError && e instanceof rk.PaginationError && e instanceof rk.RoyaltyKitError);
    assert.equal(e.name, 'PaginationError');
    assert.equal(e.code, 'page_unreadable');
    assert.equal(e.httpStatus, 500);
    assert.match(e.message, /listPlatformExports/);
    return true;
  });
  assert.deepEqual(items, ['a', 'b']);
  assert.equal(served.length, 2);
  assert.match(served[1], /[?&]cursor=7c9e6679-7425-40de-944b-e07072fc6b14(&|$)/);
  // a page that is not JSON at all, and one that says more follow without saying how to ask
  for (const [body, code] of [['<html>oops</html>', 'page_unreadable'], [JSON.stringify({ data: [{ id: 'x' }], has_more: true }), 'next_page_unknown']]) {
    const once = async (input, init) => (String(input).includes('/exports') ? new Response(body, { status: 200 }) : fetch(input, init));
    await assert.rejects(all(reports({ fetch: once }).paginate('listPlatformExports')), (e) => e instanceof PaginationError && e.code === code);
  }
});

test('paginate: an AbortSignal stops the walk between items and aborts a page in flight', async () => {
  await reset({ existing: { count: 25 }, list: { page_size: 10 } });
  const expected = await exportIds();
  const controller = new AbortController();
  const seen = [];
  await assert.rejects(async () => {
    for await (const e of reports().paginate('listPlatformExports', {}, { signal: controller.signal })) {
      seen.push(e.id);
      if (seen.length === 5) controller.abort(new Error('stopped by the test'));
    }
  }, /stopped by the test/);
  assert.deepEqual(seen, expected.slice(0, 5));
  assert.equal((await stats()).requests.listPlatformExports, 1);
  // page 2 never answers: the abort reaches the fetch in flight
  let lists = 0;
  let cut = null;
  const hanging = (input, init) => {
    if (!String(input).includes('/exports') || ++lists === 1) return fetch(input, init);
    return new Promise((_, reject) => init.signal.addEventListener('abort', () => {
      cut = init.signal.reason;
      reject(init.signal.reason);
    }));
  };
  const stalled = new AbortController();
  const got = [];
  await assert.rejects(async () => {
    for await (const e of reports({ fetch: hanging }).paginate('listPlatformExports', {}, { signal: stalled.signal })) {
      got.push(e);
      if (got.length === 10) setTimeout(() => stalled.abort(new Error('aborted in flight')), 100);
    }
  }, /aborted in flight/);
  assert.equal(got.length, 10);
  assert.equal(lists, 2);
  assert.match(String(cut?.message), /aborted in flight/);
  // aborted before it starts: no request
  await assert.rejects(all(reports().paginate('listPlatformExports', {}, { signal: AbortSignal.abort(new Error('never')) })), /never/);
  assert.equal((await stats()).requests.listPlatformExports, 2); // the first walk's page and the second's first
});

test('paginate checks its arguments when called, before any request', async () => {
  await reset();
  const client = reports();
  assert.throws(() => client.paginate('createPlatformExport'), (e) => e instanceof rk.InvalidArgumentError && e.code === 'invalid_argument');
  assert.throws(() => client.paginate('noSuchOperation'), rk.RoyaltyKitError);
  assert.throws(() => client.paginate('listPlatformExports', {}, { pageSize: 101 }), rk.InvalidArgumentError);
  assert.throws(() => client.paginate('listPlatformExports', { query: { limit: 5 } }, { pageSize: 10 }), rk.InvalidArgumentError);
  assert.throws(() => client.paginate('listPlatformExports', {}, { maxItems: 0 }), rk.InvalidArgumentError);
  assert.throws(() => client.paginate('listPlatformExports', {}, { maxPages: -1 }), rk.InvalidArgumentError);
  assert.throws(() => client.paginate('listPlatformExports', {}, { maxItems: 1.5 }), rk.InvalidArgumentError);
  assert.throws(() => client.paginate('listPlatformExports', {}, { maxItems: '3' }), TypeError);
  assert.throws(() => client.paginate('listPlatformExports', {}, { limit: 3 }), /unknown option `limit` for paginate/);
  assert.deepEqual((await stats()).requests, {});
  // withOptions' copy paginates with its own bounds
  await reset({ existing: { count: 3 } });
  assert.equal((await all(client.withOptions({ maxAttempts: 2 }).paginate('listPlatformExports'))).length, 3);
});

test('the machine a client drives: Pages by hand over request()', async () => {
  await reset({ subscriptions: 7 });
  const client = enterpriseClient();
  const walk = new rk.Pages('listEnterpriseSubscriptions', {}, { pageSize: 3 });
  const refs = [];
  try {
    for (let s = walk.next(); s.step !== 'done'; s = walk.next()) {
      assert.equal(s.step, 'fetch');
      const raw = await client.requestRaw('listEnterpriseSubscriptions', { query: s.query });
      const at = walk.page(raw.body);
      const list = at.member === null ? raw.data : raw.data[at.member];
      refs.push(...list.slice(0, at.take).map((x) => x.reference));
    }
    assert.deepEqual(walk.next(), { step: 'done', end: 'last', pages: 3, items: 7 });
    assert.equal(walk.pages, 3);
    assert.equal(walk.items, 7);
  } finally {
    walk.free();
  }
  assert.deepEqual(refs, ['sub_001', 'sub_002', 'sub_003', 'sub_004', 'sub_005', 'sub_006', 'sub_007']);
});

// ---- issue 43 point 5: subscriptions and their reveal-once secrets.

const util = require('node:util');
const ORG = { apiKey: 'key-1', apiSecret: 'secret-1' };
const SUBSCRIPTION = { name: 'ops', endpointUrl: 'https://hooks.example/royaltykit', events: ['ddex.delivery.failed', 'release.updated'] };

/**
 * An enterprise client whose every observer is recorded: onEvent, the diagnostics channel, a
 * telemetry scope per operation (its events and how it ended), and what each request sent.
 * `printed()` is all of it as text, with whatever else was given to it.
 */
function observedOrg(extra = {}) {
  const seen = { events: [], published: [], scopes: [], sent: [] };
  const dc = require('node:diagnostics_channel');
  const listen = (e) => seen.published.push(e);
  dc.subscribe('royaltykit:client', listen);
  const telemetry = {
    operation(name, attrs) {
      const scope = { name, attrs, events: [], ended: undefined };
      seen.scopes.push(scope);
      return { event: (e) => scope.events.push(e), end: (r) => { scope.ended = r; } };
    },
  };
  const client = createEnterpriseClient({
    baseUrl: url, credentials: ORG, clock, sleep, onEvent: (e) => seen.events.push(e), telemetry,
    fetch: (u, init) => {
      seen.sent.push({ url: u, method: init.method, headers: init.headers, body: init.body && Buffer.from(init.body).toString() });
      return (extra.fetch ?? fetch)(u, init);
    },
  });
  const printed = (...more) => {
    dc.unsubscribe('royaltykit:client', listen);
    const errors = seen.scopes.map((s) => s.ended).filter(Boolean);
    return [seen.events, seen.published, seen.scopes, ...errors, ...more]
      .flatMap((v) => [util.inspect(v, { depth: 8, showHidden: true }), JSON.stringify(v) ?? '', String(v), v?.stack ?? '', v?.message ?? ''])
      .join('\n');
  };
  return { client, seen, printed };
}

const header = (sent, name) => (sent.headers.find(([n]) => n.toLowerCase() === name.toLowerCase()) ?? [])[1];

test('createSubscription: the reveal-once secret read from the raw body, never printed, in an event or in telemetry', async () => {
  await reset();
  const { client, seen, printed } = observedOrg();
  const r = await client.createSubscription(SUBSCRIPTION);
  const s = await stats();
  assert.ok(r instanceof rk.RevealedSecret);
  assert.equal(r.reference, 'wh_001');
  assert.equal(r.secret.secret, s.webhooks.wh_001.secret);
  assert.ok(r.secret instanceof rk.WebhookSecret && r.secret.validUntil === null);
  assert.equal(r.previousValidUntil, null);
  // the record: the response without the secret, safe to log
  assert.deepEqual(JSON.parse(r.record), { data: { reference: 'wh_001', name: 'ops', endpoint_url: SUBSCRIPTION.endpointUrl, events: SUBSCRIPTION.events, active: true } });
  assert.deepEqual(r.secrets().map((x) => [x.secret, x.validUntil]), [[s.webhooks.wh_001.secret, null]]);
  assert.equal(r.secrets('whsec_before').length, 1, 'a create has no previous secret to keep');
  // one request, the subscription as JSON, with an Idempotency-Key
  assert.equal(s.webhooks_created, 1);
  assert.equal(s.requests.createEnterpriseWebhook, 1);
  const create = seen.sent.find((x) => x.url.endsWith('/api/v1/webhooks'));
  assert.equal(create.method, 'POST');
  assert.deepEqual(JSON.parse(create.body), { name: 'ops', endpoint_url: SUBSCRIPTION.endpointUrl, events: SUBSCRIPTION.events });
  assert.match(header(create, 'Idempotency-Key'), /^idem_[0-9a-f]{32}$/);
  // its events and telemetry say what happened, without the secret
  assert.deepEqual(seen.events.filter((e) => e.operation === 'createEnterpriseWebhook').map((e) => e.kind), ['refresh_token', 'send', 'response', 'done']);
  assert.equal(seen.scopes.at(-1).name, 'createEnterpriseWebhook');
  assert.equal(seen.scopes.at(-1).ended, null);
  assert.ok(seen.published.length >= seen.events.length);
  const text = printed(r, r.secret, r.secrets(), `${r}`, r.toString(), JSON.stringify({ r }));
  assert.ok(text.includes('done createEnterpriseWebhook') && text.includes('wh_001'), 'the observers saw the call');
  assert.ok(!text.includes(r.secret.secret), text);
  assert.ok(util.inspect(r).startsWith('RevealedSecret ') && util.inspect(r).includes('wh_001'), util.inspect(r));
  assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(r))), ['previousValidUntil', 'reference', 'record']);
  // frozen: the secret cannot be swapped or replaced afterwards
  assert.ok(Object.isFrozen(r));
  assert.throws(() => { 'use strict'; r.reference = 'other'; }, TypeError);
});

test('createSubscription: a create dropped after it was applied is sent again under the same Idempotency-Key and answered once', async () => {
  await reset({ faults: [{ op: 'createEnterpriseWebhook', nth: 1, do: 'drop_after_apply' }] });
  const { client, seen, printed } = observedOrg();
  const r = await client.createSubscription(SUBSCRIPTION);
  const s = await stats();
  assert.equal(s.webhooks_created, 1, JSON.stringify(s));
  assert.equal(s.idempotent_replays, 1);
  assert.equal(s.requests.createEnterpriseWebhook, 2);
  assert.equal(r.reference, 'wh_001');
  assert.equal(r.secret.secret, s.webhooks.wh_001.secret);
  const keys = seen.sent.filter((x) => x.url.endsWith('/api/v1/webhooks')).map((x) => header(x, 'Idempotency-Key'));
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
  assert.ok(seen.events.some((e) => e.kind === 'transport_failure' && e.operation === 'createEnterpriseWebhook'));
  assert.ok(!printed(r).includes(r.secret.secret));
});

test('createSubscription with a requestId: the key is derived (organization = API key), so another process gets the same answer', async () => {
  await reset();
  const first = observedOrg();
  const a = await first.client.createSubscription(SUBSCRIPTION, { requestId: 'subscribe-ops-1' });
  first.printed();
  const second = observedOrg();
  const b = await second.client.createSubscription(SUBSCRIPTION, { requestId: 'subscribe-ops-1' });
  second.printed();
  const s = await stats();
  assert.equal(s.webhooks_created, 1);
  assert.equal(s.idempotent_replays, 1);
  assert.equal(a.secret.secret, b.secret.secret);
  const key = header(first.seen.sent.find((x) => x.url.endsWith('/api/v1/webhooks')), 'Idempotency-Key');
  assert.equal(key, rk.idempotencyKey(ORG.apiKey, 'createEnterpriseWebhook', 'subscribe-ops-1'));
  assert.ok(!key.includes(ORG.apiKey));
  // another request id is another subscription
  const c = await first.client.createSubscription(SUBSCRIPTION, { requestId: 'subscribe-ops-2' });
  assert.equal(c.reference, 'wh_002');
  assert.equal((await stats()).webhooks_created, 2);
});

test('rotateSecret: the new secret, and both secrets verify until previous_secret_valid_until, then the new one alone', async () => {
  await reset();
  const { client, seen, printed } = observedOrg();
  const created = await client.createSubscription(SUBSCRIPTION);
  const old = created.secret.secret;
  const r = await client.rotateSecret(created.reference);
  const s = await stats();
  const hook = s.webhooks[created.reference];
  assert.equal(s.rotations, 1);
  assert.equal(r.secret.secret, hook.secret);
  assert.notEqual(r.secret.secret, old);
  assert.equal(hook.previous, old);
  assert.equal(r.reference, created.reference);
  assert.equal(r.previousValidUntil, rk.parseTimestamp(hook.previous_valid_until));
  assert.ok(!JSON.parse(r.record).data.secret && JSON.parse(r.record).data.previous_secret_valid_until === hook.previous_valid_until);
  const list = r.secrets(old);
  assert.deepEqual(list.map((x) => [x.secret, x.validUntil]), [[hook.secret, null], [old, r.previousValidUntil]]);
  assert.deepEqual(r.secrets().map((x) => x.secret), [hook.secret]);
  // deliveries signed with the old and the new secret, received with that list
  const body = '{"event":"release.updated","resource":{"type":"release","reference":"r1","url":"/api/v1/releases/r1"},"occurred_at":"2026-11-27T10:00:00Z"}';
  const verifier = new rk.WebhookVerifier(list);
  const before = r.previousValidUntil - 60;
  const after = r.previousValidUntil + 1;
  for (const [secret, index] of [[old, 1], [r.secret.secret, 0]]) {
    const h = rk.signWebhook(secret, body, { timestamp: before, deliveryId: `d-${index}` });
    assert.equal(verifier.verify(h, body, before).secretIndex, index);
  }
  assert.equal(verifier.verify(rk.signWebhook(r.secret.secret, body, { timestamp: after }), body, after).secretIndex, 0);
  assert.throws(() => verifier.verify(rk.signWebhook(old, body, { timestamp: after }), body, after), rk.WebhookVerificationError);
  // a receiver built from the list too
  const receiver = new rk.WebhookReceiver({ secrets: list, namespace: 'org-1', handler: () => undefined });
  assert.equal((await receiver.receive(rk.signWebhook(old, body, { timestamp: before, deliveryId: 'd-r' }), body, before)).status, 200);
  assert.notEqual((await receiver.receive(rk.signWebhook(old, body, { timestamp: after, deliveryId: 'd-s' }), body, after)).status, 200);
  verifier.free();
  // nothing observed or printed holds either secret
  const rotate = seen.sent.find((x) => x.url.endsWith(`/api/v1/webhooks/${created.reference}/rotate-secret`));
  assert.equal(rotate.method, 'POST');
  const text = printed(r, list, created);
  assert.ok(!text.includes(old) && !text.includes(r.secret.secret), text);
});

test('rotateSecret: a rotation whose answer was lost is never sent again: ReconcileRequired rotate_again', async () => {
  await reset({ faults: [{ op: 'rotateEnterpriseWebhookSecret', nth: 1, do: 'drop_after_apply' }] });
  const { client, seen, printed } = observedOrg();
  const created = await client.createSubscription(SUBSCRIPTION);
  const e = await client.rotateSecret(created.reference).then(() => null, (x) => x);
  assert.ok(e instanceof ReconcileRequired, util.inspect(e));
  assert.equal(e.code, 'reconcile_required');
  assert.equal(e.reconcile, 'rotate_again');
  assert.equal(e.operationId, 'rotateEnterpriseWebhookSecret');
  assert.match(e.message, /shown only once/);
  assert.match(e.message, /rotate again/);
  const s = await stats();
  assert.equal(s.rotations, 1);
  assert.equal(s.requests.rotateEnterpriseWebhookSecret, 1);
  assert.equal(seen.scopes.at(-1).ended, e);
  const text = printed(e);
  const secret = s.webhooks[created.reference].secret; // applied, its answer lost
  assert.ok(!text.includes(secret) && !text.includes(created.secret.secret), text);
  // rotating again at once gives a secret that is used from now on
  const again = await client.rotateSecret(created.reference);
  assert.equal(again.secret.secret, (await stats()).webhooks[created.reference].secret);
});

test('createSubscription and rotateSecret: a 2xx without a secret, bad arguments, an unknown reference', async () => {
  await reset();
  // a 2xx that names no secret: secret_not_revealed, which echoes nothing of the body, and ends the telemetry scope
  const { client, seen, printed } = observedOrg({
    fetch: async (u, init) => (u.endsWith('/api/v1/webhooks')
      ? new Response('{"data":{"reference":"wh_9","signing_key":"whsec_HIDDEN_9"}}', { status: 201, headers: { 'content-type': 'application/json' } })
      : fetch(u, init)),
  });
  const e = await client.createSubscription(SUBSCRIPTION).then(() => null, (x) => x);
  assert.ok(e instanceof rk.WebhookVerificationError, util.inspect(e));
  assert.equal(e.code, 'secret_not_revealed');
  assert.equal(seen.scopes.at(-1).ended, e);
  assert.ok(!printed(e).includes('whsec_HIDDEN_9'));
  const org = createEnterpriseClient({ baseUrl: url, credentials: ORG, clock, sleep });
  for (const bad of [null, 'ops', { ...SUBSCRIPTION, name: 1 }, { ...SUBSCRIPTION, events: 'release.updated' }, { ...SUBSCRIPTION, events: [1] },
    { name: 'ops', endpoint_url: 'https://hooks.example', events: [] }, { ...SUBSCRIPTION, secret: 'mine' }]) {
    await assert.rejects(org.createSubscription(bad), TypeError, util.inspect(bad));
  }
  await assert.rejects(org.createSubscription(SUBSCRIPTION, { request_id: 'x' }), /unknown option `request_id`/);
  await assert.rejects(org.rotateSecret(42), TypeError);
  await assert.rejects(org.rotateSecret('wh_001', { userId: 'u' }), /unknown option `userId`/);
  assert.equal((await stats()).requests.createEnterpriseWebhook ?? 0, 0);
  await assert.rejects(org.rotateSecret('wh_404'), (x) => x instanceof rk.ApiError && x.status === 404);
  // an aborted signal: nothing sent
  await assert.rejects(org.createSubscription(SUBSCRIPTION, { signal: AbortSignal.abort(new Error('stop')) }), /stop/);
  assert.equal((await stats()).webhooks_created, 0);
});
