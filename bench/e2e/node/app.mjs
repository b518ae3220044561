// The Node apps of the end-to-end receiver bench (bench/e2e/run.py, whose docstring has the apps'
// contract, summed up here). One process serving POST /webhook on
// 127.0.0.1:$PORT with FRAMEWORK = express | fastify | fetch (a WHATWG Request handler served
// by node:http, as bindings-wasm/tests-receivers/app.mjs does), and:
//   BENCH_IMPL=royaltykit: the package's integration for that framework wired as its README
//     shows (royaltykit/express webhookMiddleware, royaltykit/fastify royaltykitWebhooks,
//     webhookHandler), with the store for BENCH_STORE (memory: the default DedupWindow; redis:
//     RedisDedupStore; postgres: PostgresDedupStore over a pg.Pool, table created at start) and a
//     handler that does nothing.
//   BENCH_IMPL=hand: the same framework, hand-written: raw body, timestamp within 300 s,
//     `v1=<hex>` HMAC-SHA256 over `<timestamp>.<body>` compared in constant time, JSON.parse,
//     then dedup by Service-Webhook-Id (memory: a Set; redis: SET key 1 NX EX 86400; postgres:
//     INSERT … ON CONFLICT DO NOTHING inside BEGIN/COMMIT on a client of the same kind of
//     pg.Pool), and the same status and body royaltykit answers (new: processed, duplicate:
//     acknowledge).
// Redis client per framework as in the receiver tests (both implementations use the same one):
// Express and fetch node-redis, Fastify ioredis. Prints `ready <port>` once listening.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';

const { FRAMEWORK, PORT, BENCH_IMPL, BENCH_STORE, REDIS_URL, PG_DSN, BENCH_SECRET } = process.env;
if (!['royaltykit', 'hand'].includes(BENCH_IMPL)) throw new Error(`BENCH_IMPL must be royaltykit or hand, not ${BENCH_IMPL}`);
if (!['memory', 'redis', 'postgres'].includes(BENCH_STORE)) throw new Error(`unknown BENCH_STORE ${BENCH_STORE}`);
const PATH = '/webhook';
const JSON_TYPE = 'application/json';

// ---- clients: one per process, the same library for both implementations
async function redisClient() {
  if (FRAMEWORK === 'fastify') {
    const { default: Redis } = await import('ioredis');
    const client = new Redis(REDIS_URL);
    await client.ping();
    return client;
  }
  const { createClient } = await import('redis');
  const client = createClient({ url: REDIS_URL });
  client.on('error', (e) => console.error('redis:', e.message));
  await client.connect();
  return client;
}

async function pgPool() {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: PG_DSN }); // pg's defaults (10 connections) for both
  pool.on('error', (e) => console.error('pg:', e.message));
  return pool;
}

// ---- royaltykit: the library's receiver options, as the README shows them
async function royaltykitOptions() {
  const rk = await import('royaltykit');
  const opts = { secrets: [BENCH_SECRET], namespace: 'bench', handler: async () => {} };
  if (BENCH_STORE === 'redis') opts.store = new rk.RedisDedupStore(await redisClient());
  if (BENCH_STORE === 'postgres') {
    opts.store = new rk.PostgresDedupStore(await pgPool());
    await opts.store.createTable();
  }
  return opts; // memory: no store, the receiver's default in-memory DedupWindow
}

// ---- hand: the same work written directly; resolves to [status, JSON body]
const PROCESSED = [200, '{"result":"processed"}'];
const DUPLICATE = [200, '{"result":"acknowledge"}'];
const refuse = (status, code) => [status, JSON.stringify({ error: code })];

async function handDedup() {
  if (BENCH_STORE === 'memory') {
    const seen = new Set();
    return async (id) => (seen.has(id) ? false : (seen.add(id), true));
  }
  if (BENCH_STORE === 'redis') {
    const client = await redisClient();
    // Raw commands, as RedisDedupStore sends them: ioredis `call`, node-redis `sendCommand`.
    const send = FRAMEWORK === 'fastify' ? (args) => client.call(...args) : (args) => client.sendCommand(args);
    return async (id) => (await send(['SET', `bench:${id}`, '1', 'NX', 'EX', '86400'])) === 'OK';
  }
  const pool = await pgPool();
  await pool.query('CREATE TABLE IF NOT EXISTS bench_dedup (id text PRIMARY KEY)');
  return async (id) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const r = await client.query('INSERT INTO bench_dedup(id) VALUES($1) ON CONFLICT DO NOTHING', [id]);
      await client.query('COMMIT');
      client.release();
      return r.rowCount === 1;
    } catch (e) {
      client.release(e); // a broken connection is not given back
      throw e;
    }
  };
}

async function handReceiver() {
  const dedup = await handDedup();
  const secret = Buffer.from(BENCH_SECRET, 'utf8');
  // header(name) returns the value of a lower-case header name; body is the raw bytes.
  return async (header, body) => {
    const id = header('service-webhook-id');
    const ts = header('service-webhook-timestamp');
    const sig = header('service-webhook-signature');
    if (!id || !ts || !sig || !/^\d{1,12}$/.test(ts)) return refuse(400, 'missing_or_invalid_headers');
    if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return refuse(400, 'timestamp_too_old');
    const mac = createHmac('sha256', secret).update(`${ts}.`).update(body).digest();
    let match = false;
    for (const v of sig.split(',')) {
      const s = v.trim();
      if (s.length === 67 && s.startsWith('v1=')) {
        const given = Buffer.from(s.slice(3), 'hex');
        if (given.length === 32 && timingSafeEqual(given, mac)) match = true;
      }
    }
    if (!match) return refuse(401, 'no_matching_signature');
    try {
      JSON.parse(body);
    } catch {
      return refuse(400, 'invalid_json');
    }
    return (await dedup(id)) ? PROCESSED : DUPLICATE;
  };
}

// ---- the frameworks
const hand = BENCH_IMPL === 'hand';
let server;
if (FRAMEWORK === 'express') {
  const { default: express } = await import('express');
  const app = express();
  if (hand) {
    const receive = await handReceiver();
    // The raw body the Express way (express.raw), answered as the middleware answers (res.end).
    app.post(PATH, express.raw({ type: () => true }), async (req, res) => {
      const [status, body] = await receive((n) => req.headers[n], req.body);
      res.statusCode = status;
      res.setHeader('content-type', JSON_TYPE);
      res.end(body);
    });
  } else {
    const { webhookMiddleware } = await import('royaltykit/express');
    app.post(PATH, webhookMiddleware(await royaltykitOptions()));
  }
  server = app.listen(Number(PORT), '127.0.0.1');
} else if (FRAMEWORK === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  if (hand) {
    const receive = await handReceiver();
    // The raw bytes of a JSON body kept as a Buffer, as the plugin's own content-type parser does.
    app.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    app.post(PATH, async (request, reply) => {
      const [status, body] = await receive((n) => request.headers[n], request.body ?? Buffer.alloc(0));
      return reply.code(status).type(JSON_TYPE).send(body);
    });
  } else {
    const { royaltykitWebhooks } = await import('royaltykit/fastify');
    await app.register(royaltykitWebhooks, { path: PATH, ...(await royaltykitOptions()) });
  }
  await app.listen({ port: Number(PORT), host: '127.0.0.1' });
  server = app.server;
} else if (FRAMEWORK === 'fetch') {
  let handle;
  if (hand) {
    const receive = await handReceiver();
    handle = async (request) => {
      const body = Buffer.from(await request.arrayBuffer());
      const [status, reply] = await receive((n) => request.headers.get(n), body);
      return new Response(reply, { status, headers: { 'content-type': JSON_TYPE } });
    };
  } else {
    const { webhookHandler } = await import('royaltykit/fetch');
    handle = webhookHandler(await royaltykitOptions());
  }
  // node:http to WHATWG Request/Response and back, the same adapter for both implementations.
  server = http.createServer(async (req, res) => {
    try {
      const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body: Readable.toWeb(req), duplex: 'half' });
      const response = await handle(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (e) {
      console.error(e);
      res.statusCode = 500;
      res.end();
    }
  });
  server.listen(Number(PORT), '127.0.0.1');
} else {
  throw new Error(`unknown FRAMEWORK ${FRAMEWORK}`);
}
if (server.listening) console.log(`ready ${PORT}`);
else server.on('listening', () => console.log(`ready ${PORT}`));
