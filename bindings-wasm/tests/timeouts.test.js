'use strict';
// Connect and read timeouts and poll-interval bounds (issue 42, point 5), from the installed
// package, per client and per call (withOptions, runExport's options). fetch does not report when
// its connection is made, so the wait for the response headers is bounded by connect + read
// together when connectTimeoutMs is given (by read alone when not), then read bounds each wait
// for the next piece of the body.
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const net = require('node:net');
const rk = require('royaltykit');
const { createReportsClient, createEnterpriseClient, CallFailedError } = require('royaltykit/client');
const { fakeReports } = require('./fake-reports.cjs');

const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const BODY = { export_class: 'statements', format: 'csv', period: '2026-10' };
const credentials = { clientId: 'cid', clientSecret: 'csecret' };

/** A loopback server that accepts connections and never answers. */
async function silent() {
  const sockets = new Set();
  const server = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(resolve); }),
  };
}

test('bad timeouts fail when the client is built, naming connect_timeout or read_timeout; timeoutMs with readTimeoutMs is a TypeError', async () => {
  const api = await fakeReports({ tenant: TENANT });
  try {
    const reports = (extra) => createReportsClient({ baseUrl: api.url, credentials, tenantId: TENANT, ...extra });
    const enterprise = (extra) => createEnterpriseClient({ baseUrl: api.url, credentials: { apiKey: 'k', apiSecret: 's' }, ...extra });
    for (const make of [reports, enterprise]) {
      for (const [extra, argument] of [
        [{ connectTimeoutMs: -1 }, 'connect_timeout'], [{ connectTimeoutMs: 0 }, 'connect_timeout'],
        [{ readTimeoutMs: 0 }, 'read_timeout'], [{ timeoutMs: 86_400_001 }, 'read_timeout'], [{ readTimeoutMs: NaN }, 'read_timeout'],
      ]) {
        assert.throws(() => make(extra), (e) => {
          assert.ok(e instanceof rk.InvalidArgumentError, `${JSON.stringify(extra)}: ${e}`);
          assert.equal(e.argument, argument);
          return true;
        });
      }
      assert.throws(() => make({ timeoutMs: 1000, readTimeoutMs: 2000 }), (e) => e instanceof TypeError && /alias of readTimeoutMs/.test(e.message));
      assert.throws(() => make({ connectTimeoutMs: '5000' }), /connectTimeoutMs must be a number/);
      assert.throws(() => make({ connectTimeoutMS: 5000 }), /unknown option `connectTimeoutMS`/);
      const c = make({ connectTimeoutMs: 2000, readTimeoutMs: 4000 });
      assert.throws(() => c.withOptions({ readTimeoutMs: -5 }), (e) => e instanceof rk.InvalidArgumentError && e.argument === 'read_timeout');
      assert.throws(() => c.withOptions({ connectTimeoutMs: 90_000_000 }), (e) => e instanceof rk.InvalidArgumentError && e.argument === 'connect_timeout');
      assert.throws(() => c.withOptions({ timeoutMs: 1, readTimeoutMs: 1 }), TypeError);
      c.withOptions({ connectTimeoutMs: null, readTimeoutMs: null, timeoutMs: undefined });
    }
    // Poll bounds are reporting options, checked by the core when the client is built.
    assert.throws(() => reports({ minPollIntervalSeconds: 10, maxPollIntervalSeconds: 5 }), rk.InvalidArgumentError);
    assert.throws(() => reports({ maxPollIntervalSeconds: -1 }), rk.InvalidArgumentError);
    assert.throws(() => enterprise({ minPollIntervalSeconds: 1 }), /unknown option `minPollIntervalSeconds`/);
    assert.equal(api.requests.length, 0, 'no request was made');
  } finally {
    await api.close();
  }
});

test('a server that accepts and never answers: the wait for the headers is connect + read, then a timeout failure', async () => {
  const s = await silent();
  try {
    const client = createReportsClient({ baseUrl: s.url, credentials, tenantId: TENANT, connectTimeoutMs: 100, readTimeoutMs: 150, maxAttempts: 1 });
    const failed = async (c) => {
      try {
        await c.request('listPlatformExports');
      } catch (e) {
        assert.ok(e instanceof CallFailedError, String(e));
        assert.equal(e.transport, 'timeout');
        assert.equal(e.attempts, 1);
        return e.message;
      }
      assert.fail('answered');
    };
    assert.match(await failed(client), /no response within 250 ms \(connect 100 ms \+ read 150 ms\)/);
    // per call: the copy's own bounds (timeoutMs is the read timeout's alias); the client keeps its own
    assert.match(await failed(client.withOptions({ readTimeoutMs: 120 })), /no response within 220 ms \(connect 100 ms \+ read 120 ms\)/);
    assert.match(await failed(client.withOptions({ timeoutMs: 130, connectTimeoutMs: 50 })), /no response within 180 ms \(connect 50 ms \+ read 130 ms\)/);
    assert.match(await failed(client), /connect 100 ms \+ read 150 ms/);
    // unset: the core's defaults, through clientTimeouts
    const { connectSeconds } = rk.clientTimeouts();
    assert.match(await failed(createReportsClient({ baseUrl: s.url, credentials, tenantId: TENANT, readTimeoutMs: 100, maxAttempts: 1 })
      .withOptions({ connectTimeoutMs: 20 })), /connect 20 ms \+ read 100 ms/);
    assert.equal(connectSeconds, 10);
    // connectTimeoutMs not given: the headers wait for read alone (the runtime's own connect
    // timeout bounds the connection), so a read timeout of 100 ms fails in 100 ms, not 10.1 s
    assert.match(await failed(createReportsClient({ baseUrl: s.url, credentials, tenantId: TENANT, readTimeoutMs: 100, maxAttempts: 1 })),
      /no response within 100 ms \(read timeout\)/);
  } finally {
    await s.close();
  }
});

test('read bounds each wait between two pieces of the body: a body that stops is a timeout, one that trickles is not', async () => {
  let mode = 'stall';
  const server = http.createServer((req, res) => {
    if (req.url.endsWith('/oauth/token')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'rt_body_test', token_type: 'Bearer', expires_in: 3600, scope: 'exports:read' }));
      return;
    }
    const payload = Buffer.from(JSON.stringify({ data: [], next_cursor: null }));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    res.write(payload.subarray(0, 5));
    if (mode === 'stall') return; // the rest never comes
    // the rest a byte at a time, each gap well inside the read timeout, the whole well past it
    let at = 5;
    const t = setInterval(() => {
      res.write(payload.subarray(at, at + 1));
      at += 1;
      if (at >= payload.length) { clearInterval(t); res.end(); }
    }, 20);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const client = createReportsClient({ baseUrl: `http://127.0.0.1:${server.address().port}`, credentials, tenantId: TENANT,
      connectTimeoutMs: 1000, readTimeoutMs: 300, maxAttempts: 1 });
    await assert.rejects(client.request('listPlatformExports'), (e) => {
      assert.ok(e instanceof CallFailedError, String(e));
      assert.equal(e.transport, 'timeout');
      assert.match(e.message, /no data for 300 ms while reading the body/);
      return true;
    });
    mode = 'trickle';
    assert.deepEqual(await client.request('listPlatformExports'), { data: [], next_cursor: null });
  } finally {
    server.closeAllConnections?.();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('poll-interval bounds: the client\'s, then runExport\'s (which win), then withOptions\'; every wait between two reads is clamped', async () => {
  const api = await fakeReports({ tenant: TENANT, readsUntilReady: 4 });
  try {
    const events = [];
    const waits = [];
    // the test's time: each wait the job asks for passes at once
    let now = Date.now() / 1000;
    const client = createReportsClient({ baseUrl: api.url, credentials, tenantId: TENANT, idempotencyHeader: 'Idempotency-Key',
      minPollIntervalSeconds: 7, maxPollIntervalSeconds: 9, clock: () => now, sleep: async (s) => { waits.push(s); now += s; },
      onEvent: (e) => events.push(e) });
    const run = async (c, opts) => {
      waits.length = 0;
      api.reads.clear();
      await c.runExport(BODY, opts);
      assert.ok(waits.length >= 3, JSON.stringify(waits));
      return [...waits];
    };
    for (const w of await run(client)) assert.ok(w >= 7 && w <= 9, `client bounds: ${w}`);
    for (const w of await run(client, { minPollIntervalSeconds: 12, maxPollIntervalSeconds: 12 })) assert.equal(w, 12);
    for (const w of await run(client.withOptions({ minPollIntervalSeconds: 2, maxPollIntervalSeconds: 3 }))) assert.ok(w >= 2 && w <= 3, `withOptions: ${w}`);
    await assert.rejects(client.runExport(BODY, { minPollIntervalSeconds: 30, maxPollIntervalSeconds: 20 }), rk.InvalidArgumentError);
    assert.ok(events.some((e) => e.kind === 'poll'));
  } finally {
    await api.close();
  }
});
