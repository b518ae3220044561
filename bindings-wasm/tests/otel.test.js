'use strict';
// royaltykit/otel (issue 42, point 4) with the OpenTelemetry SDK's in-memory exporter, from the
// installed package: a faulty call (503, then a 401 that refreshes the token, then a reset) is
// one INTERNAL span with a CLIENT span per send and their resend counts; failures carry
// error.type; an interrupted export is `export_interrupted`; receivers make one SERVER span per
// delivery with its outcome. No secret, token or credential appears in any span. The package's
// other entries never load royaltykit/otel or @opentelemetry/api.
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const readline = require('node:readline');
const { Readable } = require('node:stream');
const { spawn } = require('node:child_process');

const rk = require('royaltykit');
const { createReportsClient, ExportInterruptedError, CallFailedError } = require('royaltykit/client');
const { webhookMiddleware } = require('royaltykit/express');
const { webhookHandler } = require('royaltykit/fetch');

// What the package's entries loaded, before this file requires royaltykit/otel.
const LOADED = Object.keys(require.cache);

test('the package\'s entries load neither royaltykit/otel nor @opentelemetry/api', () => {
  const loaded = LOADED;
  assert.ok(loaded.some((p) => p.endsWith(`${path.sep}client.lib.cjs`)));
  assert.ok(!loaded.some((p) => p.endsWith(`${path.sep}otel.cjs`) || p.includes(`${path.sep}@opentelemetry${path.sep}`)), loaded.join('\n'));
});

const { openTelemetry } = require('royaltykit/otel');
const { SpanKind, SpanStatusCode } = require('@opentelemetry/api');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const BODY = { export_class: 'statements', format: 'csv', period: '2026-10' };
const WEBHOOK_SECRET = 'whsec_otel_spans_secret';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const telemetry = openTelemetry({ tracerProvider: provider });

let server;
let url;
let offset = 0;
test.before(async () => {
  server = spawn(process.env.PYTHON ?? 'python3', [path.join(ROOT, 'tests', 'fakeapi', 'server.py')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve) => readline.createInterface({ input: server.stdout }).once('line', resolve));
  url = `http://127.0.0.1:${line.split(' ')[1]}`;
});
test.after(() => server.stdin.end());

async function control(what, payload) {
  const r = await fetch(`${url}/_fake/${what}`, payload === undefined ? {} : { method: 'POST', body: JSON.stringify(payload) });
  return r.json();
}
const clock = () => Date.now() / 1000 + offset;
async function sleep(seconds, signal) {
  signal?.throwIfAborted();
  offset += seconds;
  await control('advance', { seconds });
}
const reports = (extra = {}) => createReportsClient({ baseUrl: url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT,
  idempotencyHeader: 'Idempotency-Key', readTimeoutMs: 2000, clock, sleep, telemetry, ...extra });

const parentOf = (s) => (s.parentSpanContext ?? null)?.spanId ?? s.parentSpanId ?? null;
const childrenOf = (spans, op) => spans.filter((s) => parentOf(s) === op.spanContext().spanId);
const one = (spans, name) => {
  const found = spans.filter((s) => s.name === name);
  assert.equal(found.length, 1, `${name}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0];
};

/** Every string of every span: names, attribute values, events and statuses. */
function texts(spans) {
  const out = [];
  const add = (attrs) => { for (const [k, v] of Object.entries(attrs ?? {})) out.push(k, String(v)); };
  for (const s of spans) {
    out.push(s.name, s.status.message ?? '');
    add(s.attributes);
    for (const e of s.events) { out.push(e.name); add(e.attributes); }
  }
  return out.join('\n');
}

function assertNoSecret(spans, extra = []) {
  const all = texts(spans);
  const basic = Buffer.from('cid:csecret').toString('base64');
  for (const secret of ['csecret', basic, 'Bearer', 'Basic ', 'Authorization', WEBHOOK_SECRET, ...extra]) {
    assert.ok(!all.includes(secret), `a span shows ${secret}`);
  }
  // the fake API's tokens: rt_ and 32 hex digits
  assert.doesNotMatch(all, /rt_[0-9a-f]{32}/);
}

test('a faulty call is one INTERNAL span with a CLIENT span per send: 503, a 401 that refreshes the token, a reset, then 200', async () => {
  await control('reset', { faults: [
    { op: 'listPlatformExports', nth: 1, do: 'status', status: 503 },
    { op: 'listPlatformExports', nth: 2, do: 'expire_token' },
    { op: 'listPlatformExports', nth: 3, do: 'reset' },
  ] });
  exporter.reset();
  await reports().request('listPlatformExports', { query: { limit: 10 } });
  const spans = exporter.getFinishedSpans();
  const op = one(spans, 'listPlatformExports');
  assert.equal(op.kind, SpanKind.INTERNAL);
  assert.equal(op.attributes['royaltykit.operation'], 'listPlatformExports');
  assert.equal(op.status.code, SpanStatusCode.UNSET);
  const sends = childrenOf(spans, op);
  assert.equal(op.attributes['royaltykit.attempts'], sends.length);
  assert.equal(spans.length, sends.length + 1);
  const host = new URL(url);
  const rows = sends.map((s) => [s.name, s.attributes['http.response.status_code'] ?? null, s.attributes['error.type'] ?? null,
    s.attributes['http.request.resend_count'] ?? 0, s.status.code]);
  const E = SpanStatusCode.ERROR;
  const U = SpanStatusCode.UNSET;
  const list = rows.filter(([name]) => name === 'GET');
  assert.deepEqual(list.map((r) => r.slice(1)), [
    [503, '503', 0, E], [401, '401', 1, U], [null, 'connection_lost', 2, E], [200, null, 3, U],
  ], JSON.stringify(rows));
  // the first exchange and the refresh after the 401: POSTs to the token endpoint, first sends of their own
  assert.deepEqual(rows.filter(([name]) => name === 'POST'), [['POST', 200, null, 0, U], ['POST', 200, null, 0, U]]);
  for (const s of sends) {
    assert.equal(s.kind, SpanKind.CLIENT);
    assert.equal(s.attributes['http.request.method'], s.name);
    assert.equal(s.attributes['server.address'], '127.0.0.1');
    assert.equal(s.attributes['server.port'], Number(host.port));
    assert.ok(s.attributes['url.full'].startsWith(`${url}/api/`), s.attributes['url.full']);
    assert.ok(!s.attributes['url.full'].includes('?'), 'never the query');
  }
  const events = op.events.map((e) => e.name);
  assert.ok(events.includes('retry') && events.includes('refresh_token'), events.join());
  const retry = op.events.find((e) => e.name === 'retry');
  assert.equal(typeof retry.attributes['royaltykit.rule'], 'string');
  assert.equal(typeof retry.attributes['royaltykit.wait_seconds'], 'number');
  assertNoSecret(spans);
});

test('failures: an API error\'s kind, call_failed with connect_failed sends, export_interrupted', async () => {
  await control('reset', {});
  exporter.reset();
  await assert.rejects(reports().request('getPlatformExport', { path: { export: '7c9e6679-7425-40de-944b-e07072fc6b14' } }), (e) => {
    assert.ok(e instanceof rk.ApiError, String(e));
    const op = one(exporter.getFinishedSpans(), 'getPlatformExport');
    assert.equal(op.status.code, SpanStatusCode.ERROR);
    assert.equal(op.attributes['error.type'], e.kind);
    const get = childrenOf(exporter.getFinishedSpans(), op).find((s) => s.name === 'GET');
    assert.equal(get.attributes['http.response.status_code'], 404);
    assert.equal(get.attributes['error.type'], '404');
    assert.equal(get.status.code, SpanStatusCode.UNSET);
    return true;
  });

  exporter.reset();
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  await assert.rejects(reports({ baseUrl: `http://127.0.0.1:${port}`, maxAttempts: 2 }).request('listPlatformExports'), CallFailedError);
  let spans = exporter.getFinishedSpans();
  const failed = one(spans, 'listPlatformExports');
  assert.equal(failed.attributes['error.type'], 'call_failed');
  assert.equal(failed.attributes['royaltykit.attempts'], 2);
  const sends = childrenOf(spans, failed);
  assert.deepEqual(sends.map((s) => [s.name, s.attributes['error.type'], s.status.code]),
    [['POST', 'connect_failed', SpanStatusCode.ERROR], ['POST', 'connect_failed', SpanStatusCode.ERROR]]);
  assert.equal(sends[1].attributes['http.request.resend_count'], 1);

  await control('reset', { states: ['queued'] });
  exporter.reset();
  const ac = new AbortController();
  let polls = 0;
  const client = reports({ sleep: async (seconds, signal) => { if (++polls === 2) ac.abort(new Error('stop')); await sleep(seconds, signal); } });
  await assert.rejects(client.runExport(BODY, { signal: ac.signal }), ExportInterruptedError);
  spans = exporter.getFinishedSpans();
  const job = one(spans, 'runExport');
  assert.equal(job.attributes['error.type'], 'export_interrupted');
  assert.equal(job.status.code, SpanStatusCode.ERROR);
  assert.ok(childrenOf(spans, job).some((s) => s.name === 'POST' && s.attributes['url.full'].endsWith('/exports')));
  assert.ok(job.events.some((e) => e.name === 'poll' && typeof e.attributes['royaltykit.state'] === 'string'));
  assertNoSecret(spans);
});

test('a whole export run: one runExport span, its sends as children', async () => {
  await control('reset', { scenario: 'etl' });
  exporter.reset();
  const result = await reports().runExport(BODY);
  const spans = exporter.getFinishedSpans();
  const job = one(spans, 'runExport');
  assert.equal(job.status.code, SpanStatusCode.UNSET);
  const sends = childrenOf(spans, job);
  assert.equal(job.attributes['royaltykit.attempts'], sends.length);
  assert.equal(spans.length, sends.length + 1);
  assert.ok(sends.some((s) => s.attributes['url.full'].endsWith(`/exports/${result.exportId}/download`)));
  assertNoSecret(spans);
});

test('a large download\'s progress: span events on the runExport span, with received and total bytes', async () => {
  const big = 'y'.repeat(2_000_000);
  await control('reset', { states: ['ready'], artifact: big });
  exporter.reset();
  await reports().runExport(BODY);
  const job = one(exporter.getFinishedSpans(), 'runExport');
  const progress = job.events.filter((e) => e.name === 'progress');
  assert.ok(progress.length >= 2 && progress.length <= 11, job.events.map((e) => e.name).join());
  const received = progress.map((e) => e.attributes['royaltykit.received_bytes']);
  assert.deepEqual(received, [...received].sort((a, b) => a - b));
  assert.equal(received.at(-1), big.length);
  assert.ok(progress.every((e) => e.attributes['royaltykit.total_bytes'] === big.length));
  // the poll before it, the progress as the body arrived: in the order they happened
  const names = job.events.map((e) => e.name);
  assert.ok(names.lastIndexOf('poll') < names.indexOf('progress'), names.join());
});

test('receivers: one SERVER span per delivery with its outcome (express with its route, the fetch handler without)', async () => {
  const now = Math.floor(Date.now() / 1000);
  const body = Buffer.from(JSON.stringify({
    event: 'enterprise.release.updated',
    resource: { type: 'release', reference: '7d3c1a52-0b4f-4a8e-9c61-2f5d8e4b9a10', url: '/api/v1/releases/7d3c1a52-0b4f-4a8e-9c61-2f5d8e4b9a10' },
    occurred_at: new Date(now * 1000).toISOString(),
  }));
  const signed = (deliveryId) => rk.signWebhook(WEBHOOK_SECRET, body, { timestamp: now, deliveryId });
  let storeDown = false;
  const memory = new Map();
  const store = {
    claim: (key) => { if (storeDown) throw new Error('store down'); if (memory.has(key)) return memory.get(key); memory.set(key, 'in_progress'); return 'new'; },
    commit: (key) => { memory.set(key, 'done'); },
    release: (key) => { memory.delete(key); },
  };
  const options = {
    secrets: [WEBHOOK_SECRET], namespace: 'otel', store, telemetry, onError: () => {}, onStoreError: () => {},
    handler: (d) => { if (d.deliveryId === 'dlv_fails') throw new Error('handler failed'); },
  };
  const middleware = webhookMiddleware(options);
  const handle = webhookHandler(options);
  const servers = {
    // Express sets req.route on a matched route (`app.post('/webhooks', ...)`)
    express: http.createServer((req, res) => { req.route = { path: '/webhooks' }; middleware(req, res); }),
    fetch: http.createServer(async (req, res) => {
      const response = await handle(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body: Readable.toWeb(req), duplex: 'half' }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    }),
  };
  for (const [name, srv] of Object.entries(servers)) {
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const post = async (headers) => (await fetch(`http://127.0.0.1:${srv.address().port}/webhooks`, { method: 'POST', headers, body })).status;
    memory.clear();
    storeDown = false;
    exporter.reset();
    const statuses = [
      await post(signed('dlv_1')), await post(signed('dlv_1')), await post({ ...signed('dlv_2'), 'Service-Webhook-Signature': 'v1=00' }),
      await post(signed('dlv_fails')),
    ];
    storeDown = true;
    statuses.push(await post(signed('dlv_3')));
    srv.close();
    const spans = exporter.getFinishedSpans();
    assert.equal(spans.length, 5);
    const route = name === 'express' ? 'POST /webhooks' : 'POST';
    const rows = spans.map((s) => [s.name, s.kind, s.attributes['http.request.method'], s.attributes['http.response.status_code'],
      s.attributes['royaltykit.outcome'], s.attributes['royaltykit.delivery_id'] ?? null, s.status.code]);
    const S = SpanKind.SERVER;
    const E = SpanStatusCode.ERROR;
    const U = SpanStatusCode.UNSET;
    assert.deepEqual(rows, [
      [route, S, 'POST', statuses[0], 'processed', 'dlv_1', U],
      [route, S, 'POST', statuses[1], 'duplicate', 'dlv_1', U],
      [route, S, 'POST', statuses[2], 'rejected', null, U],
      [route, S, 'POST', statuses[3], 'handler_failed', 'dlv_fails', E],
      [route, S, 'POST', statuses[4], 'store_unavailable', 'dlv_3', E],
    ], `${name}: ${JSON.stringify(rows)}`);
    assert.deepEqual(statuses.slice(3), [500, 503]);
    if (name === 'express') assert.equal(spans[0].attributes['http.route'], '/webhooks');
    assertNoSecret(spans, ['v1=']);
  }
});

test('a telemetry that throws never changes what a call does (reported once on console.error)', async () => {
  await control('reset', {});
  let opened = 0;
  const broken = {
    operation() {
      opened += 1;
      return { event() { throw new Error('event exporter down'); }, end() { throw new Error('end exporter down'); } };
    },
  };
  const errors = [];
  const original = console.error;
  console.error = (...args) => errors.push(args.map(String).join(' '));
  try {
    const client = createReportsClient({ baseUrl: url, tenantId: TENANT, credentials: { clientId: 'cid', clientSecret: 'csecret' },
      telemetry: broken, clock, sleep });
    const page = await client.request('listPlatformExports');
    assert.ok(Array.isArray(page.data), JSON.stringify(page));
    await client.request('listPlatformExports');
  } finally {
    console.error = original;
  }
  assert.equal(opened, 2);
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(errors[0], /royaltykit: telemetry failed \(event\)/);
});
