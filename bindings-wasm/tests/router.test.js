'use strict';
// EventRouter: a delivery's handlers chosen by its event name (issue 43 point 6), through the
// installed package as a user wires it: the plain WebhookReceiver, royaltykit/express (node:http
// middleware) and royaltykit/fetch's handler behind node:http with deliveries signed by
// signWebhook and posted over real HTTP on 127.0.0.1, the royaltykit/fastify plugin, and a
// transactional store (SQLite) passing its connection to every handler. Where a delivery goes is
// the core's (tests/vectors/webhook.json, route_event, in vectors.test.js); here: the handlers
// run, in order, and a throw fails the delivery exactly as a plain handler's does.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const Database = require('better-sqlite3');
const rk = require('royaltykit');
const { webhookMiddleware } = require('royaltykit/express');
const { royaltykitWebhooks } = require('royaltykit/fastify');
const fetchApi = require('royaltykit/fetch');

const SECRET = 'whsec_router_tests_0123456789';
let sequence = 0;

/** A delivery of the event `name` signed now, as the service sends it. */
function delivery(name) {
  const id = `dlv_router_${++sequence}`;
  const now = Math.floor(Date.now() / 1000);
  const body = Buffer.from(JSON.stringify({
    event: name,
    resource: { type: 'ddex_message', reference: id, url: `/api/v1/ddex/messages/${id}` },
    occurred_at: new Date(now * 1000).toISOString(),
  }));
  return { id, body, headers: rk.signWebhook(SECRET, body, { timestamp: now, deliveryId: id }) };
}

/** A node:http server on 127.0.0.1 for `listener`; `post(delivery)` resolves to `[status, result]`. */
async function serve(listener) {
  const server = http.createServer(listener);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/webhooks`;
  return {
    async post(d) {
      const r = await fetch(url, { method: 'POST', headers: d.headers, body: d.body });
      const answer = await r.json();
      return [r.status, answer.result ?? answer.error];
    },
    close() {
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Each way a user receives deliveries, built from receiver options. */
const INTEGRATIONS = {
  receiver: async (options) => {
    const receiver = new rk.WebhookReceiver(options);
    return {
      async post(d) {
        const r = await receiver.receive(d.headers, d.body);
        const answer = JSON.parse(r.body);
        return [r.status, answer.result ?? answer.error];
      },
      close() {},
    };
  },
  express: (options) => serve(webhookMiddleware(options)),
  fetch: (options) => {
    const handle = fetchApi.webhookHandler(options);
    return serve(async (req, res) => {
      const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body: Readable.toWeb(req), duplex: 'half' });
      const response = await handle(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  },
  // The plugin registered on an object shaped like a Fastify instance (its route called as Fastify
  // calls it; real Fastify over HTTP runs in scripts/test-receivers.sh).
  fastify: async (options) => {
    let route;
    const fastify = { removeAllContentTypeParsers() {}, addContentTypeParser() {}, post(_path, handle) { route = handle; } };
    await royaltykitWebhooks(fastify, { path: '/webhooks', ...options });
    return {
      async post(d) {
        const sent = {};
        const reply = { code(s) { sent.status = s; return reply; }, type() { return reply; }, send(b) { sent.body = b; return reply; } };
        await route({ headers: d.headers, body: d.body }, reply);
        const answer = JSON.parse(sent.body);
        return [sent.status, answer.result ?? answer.error];
      },
      close() {},
    };
  },
};

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

for (const [integration, make] of Object.entries(INTEGRATIONS)) {
  test(`${integration}: an EventRouter runs a delivery's handlers by its event name, in order`, async () => {
    const runs = [];
    const errors = [];
    let importFails = true;
    const router = new rk.EventRouter()
      .on('ddex.delivery.failed', (d) => { runs.push(`failed#1 ${d.deliveryId}`); })
      .onAny(async (d) => { runs.push(`any ${d.event.name}`); })
      // async and slower than the first: it still runs second, awaited before the on_any handler
      .on('ddex.delivery.failed', async (d) => { await pause(20); runs.push(`failed#2 ${d.deliveryId}`); })
      .on('ddex.import.failed', (d) => {
        runs.push(`import.failed ${d.deliveryId}`);
        if (importFails) {
          importFails = false;
          throw new Error('downstream unavailable');
        }
      })
      .otherwise((d) => { runs.push(`otherwise ${d.event.name} known=${d.event.isKnown}`); });
    // The router itself, or its handler function: both are a handler.
    const handler = integration === 'fetch' || integration === 'fastify' ? router.handler : router;
    const endpoint = await make({ secrets: SECRET, namespace: `org-router-${integration}`, handler, onError: (e) => errors.push(e.message) });
    try {
      // Two handlers for one name: both run, in registration order, then the on_any handler.
      const failed = delivery('ddex.delivery.failed');
      assert.deepEqual(await endpoint.post(failed), [200, 'processed']);
      assert.deepEqual(runs.splice(0), [`failed#1 ${failed.id}`, `failed#2 ${failed.id}`, 'any ddex.delivery.failed']);

      // A known name no `on` handler names: the on_any handler sees it, then the fallback.
      const completed = delivery('ddex.import.completed');
      assert.deepEqual(await endpoint.post(completed), [200, 'processed']);
      assert.deepEqual(runs.splice(0), ['any ddex.import.completed', 'otherwise ddex.import.completed known=true']);

      // A name the spec does not list: kept as sent, and the fallback gets it.
      const retried = delivery('ddex.delivery.retried');
      assert.deepEqual(await endpoint.post(retried), [200, 'processed']);
      assert.deepEqual(runs.splice(0), ['any ddex.delivery.retried', 'otherwise ddex.delivery.retried known=false']);

      // A handler that throws: 500, the handlers after it do not run; the claim is released, so
      // the redelivery runs it again (and then the rest).
      const importFailed = delivery('ddex.import.failed');
      assert.deepEqual(await endpoint.post(importFailed), [500, 'handler_failed']);
      assert.deepEqual(runs.splice(0), [`import.failed ${importFailed.id}`]);
      assert.deepEqual(errors, ['downstream unavailable']);
      assert.deepEqual(await endpoint.post(importFailed), [200, 'processed']);
      assert.deepEqual(runs.splice(0), [`import.failed ${importFailed.id}`, 'any ddex.import.failed']);

      // A delivery already processed is acknowledged without running anything.
      assert.deepEqual(await endpoint.post(failed), [200, 'acknowledge']);
      assert.deepEqual(runs, []);
    } finally {
      await endpoint.close();
    }
  });

  test(`${integration}: a delivery no handler takes is acknowledged (200) and nothing runs`, async () => {
    const runs = [];
    const router = new rk.EventRouter().on('ddex.delivery.failed', (d) => { runs.push(d.deliveryId); });
    const endpoint = await make({ secrets: SECRET, namespace: `org-router-unrouted-${integration}`, handler: router });
    try {
      for (const name of ['ddex.import.failed', 'ddex.delivery.retried']) {
        const d = delivery(name);
        assert.deepEqual(await endpoint.post(d), [200, 'processed']);
        assert.deepEqual(await endpoint.post(d), [200, 'acknowledge'], 'acknowledged: not sent again');
      }
      assert.deepEqual(runs, []);
      assert.deepEqual(router.route('ddex.import.failed'), { named: [], any: false, fallback: false });
    } finally {
      await endpoint.close();
    }
  });
}

test('a transactional store: every handler gets the connection, and a throw rolls back the ones before it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'royaltykit-router-'));
  const db = new Database(path.join(dir, 'router.sqlite'));
  try {
    db.exec('CREATE TABLE effects (handler TEXT NOT NULL, delivery_id TEXT NOT NULL)');
    const effects = () => db.prepare('SELECT handler, delivery_id AS id FROM effects ORDER BY rowid').all().map((r) => `${r.handler} ${r.id}`);
    let secondFails = true;
    const router = new rk.EventRouter()
      .on('ddex.delivery.failed', (d, connection) => { connection.prepare('INSERT INTO effects VALUES (?, ?)').run('first', d.deliveryId); })
      .on('ddex.delivery.failed', async (d, connection) => {
        connection.prepare('INSERT INTO effects VALUES (?, ?)').run('second', d.deliveryId);
        if (secondFails) {
          secondFails = false;
          throw new Error('second failed');
        }
      })
      .onAny((d, connection) => { connection.prepare('INSERT INTO effects VALUES (?, ?)').run('any', d.deliveryId); });
    const receiver = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-router-sqlite', store: new rk.SqliteDedupStore(db, { table: 'dedup_router' }),
      handler: router, onError: () => {} });
    const d = delivery('ddex.delivery.failed');
    assert.equal((await receiver.receive(d.headers, d.body)).status, 500);
    assert.deepEqual(effects(), [], 'the first handler\'s effect was rolled back with the delivery');
    assert.equal((await receiver.receive(d.headers, d.body)).status, 200);
    assert.deepEqual(effects(), [`first ${d.id}`, `second ${d.id}`, `any ${d.id}`]);
    assert.equal((await receiver.receive(d.headers, d.body)).status, 200);
    assert.equal(effects().length, 3, 'exactly once');
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('registration: an invalid event name throws InvalidArgumentError at once; a name the spec does not list is accepted', () => {
  const router = new rk.EventRouter();
  for (const bad of ['', 'ddex delivery.failed', 'ddex.delivery.failed\n', '\t', 'x'.repeat(257), 'é'.repeat(129)]) {
    assert.throws(() => router.on(bad, () => {}), (e) => e instanceof rk.InvalidArgumentError && e.code === 'invalid_argument' && e.argument === 'event'
      && e.httpStatus === 500 && /is not an event name/.test(e.message), JSON.stringify(bad));
  }
  assert.throws(() => router.on(42, () => {}), TypeError);
  assert.throws(() => router.on('ddex.delivery.failed'), TypeError);
  assert.throws(() => router.on('ddex.delivery.failed', 'handler'), TypeError);
  assert.throws(() => router.onAny(null), TypeError);
  assert.throws(() => router.otherwise({}), TypeError);
  // Nothing was registered by the refusals: the first accepted `on` has index 0.
  assert.deepEqual(router.route('ddex.delivery.failed'), { named: [], any: false, fallback: false });
  assert.equal(router.on('ddex.delivery.retried', () => {}), router, 'chainable');
  assert.equal(router.on('x'.repeat(256), () => {}), router, '256 bytes is a name');
  assert.deepEqual(router.route('ddex.delivery.retried'), { named: [0], any: false, fallback: false });
  assert.deepEqual(router.onAny(() => {}).otherwise(() => {}).route('ddex.import.failed'), { named: [], any: true, fallback: true });
});

test('the router is a handler: WebhookReceiver takes it or router.handler, and refuses anything else', async () => {
  const router = new rk.EventRouter();
  const receiver = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'n', handler: router });
  assert.equal(receiver.handler, router.handler);
  assert.equal(router.handler, router.handler, 'one function');
  assert.throws(() => new rk.WebhookReceiver({ secrets: SECRET, namespace: 'n', handler: { handler: 1 } }), /handler must be a function .*or an EventRouter/);
  assert.equal(fetchApi.EventRouter, rk.EventRouter);
  await assert.rejects(router.handler({ deliveryId: 'x' }), TypeError, 'a delivery without event.name');
  // A later `otherwise` replaces the fallback.
  const seen = [];
  router.otherwise(() => seen.push('first')).otherwise(() => seen.push('second'));
  await router.handler({ deliveryId: 'x', event: { name: 'ddex.import.failed' } });
  assert.deepEqual(seen, ['second']);
});

test('knownEventNames is the core\'s list, and KnownEventName in index.d.ts names the same', () => {
  const names = rk.knownEventNames();
  assert.ok(names.includes('ddex.delivery.failed') && names.includes('enterprise.webhook.test'), names.join());
  assert.notEqual(rk.knownEventNames(), names, 'a new array each call');
  const root = path.dirname(require.resolve('royaltykit'));
  for (const file of ['index.d.ts', 'index.d.mts']) {
    const declared = fs.readFileSync(path.join(root, file), 'utf8').match(/export type KnownEventName =([^;]*);/);
    assert.ok(declared, `${file} declares KnownEventName`);
    assert.deepEqual([...declared[1].matchAll(/'([^']+)'/g)].map((m) => m[1]), names, file);
  }
  // Each known name verifies as known, and routes like any other.
  for (const name of names) {
    const d = delivery(name);
    assert.equal(rk.verifyWebhook(d.headers, d.body, SECRET).event.isKnown, true, name);
  }
});
