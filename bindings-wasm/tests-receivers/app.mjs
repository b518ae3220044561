// A receiver app for the shared receiver tests (tests/receivers): one framework (FRAMEWORK:
// express, fastify or fetch) on 127.0.0.1:PORT, deduplicating on the Redis at REDIS_PORT
// (CLIENT: node-redis or ioredis), with the handler every language's app implements alike:
//   a resource reference starting with "slow" sleeps 0.6 s; one starting with "fail-once" fails
//   its first attempt (a marker file beside EFFECTS remembers it); then the reference is
//   appended to the EFFECTS file, one line per effect; after one starting with
//   "commit-fails-once", the next commit fails once (the store going away between the effect and
//   the commit). Secrets: the current, the previous (no end) and one rotated out long ago.
import { once } from 'node:events';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Readable } from 'node:stream';
import { RedisDedupStore, WebhookReceiver, webhookHandler } from 'royaltykit';

const { FRAMEWORK, PORT, REDIS_PORT, EFFECTS, CLIENT = 'node-redis' } = process.env;

async function redisClient() {
  if (CLIENT === 'ioredis') {
    const { default: Redis } = await import('ioredis');
    // Fail fast while Redis is away (the receiver answers 503) instead of queueing commands.
    const client = new Redis({ port: Number(REDIS_PORT), host: '127.0.0.1', enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on('error', () => {}); // reconnects by itself; commands fail meanwhile
    await once(client, 'ready'); // without an offline queue, commands before it would fail
    return client;
  }
  const { createClient } = await import('redis');
  const client = createClient({ socket: { host: '127.0.0.1', port: Number(REDIS_PORT), reconnectStrategy: () => 100 }, disableOfflineQueue: true });
  client.on('error', () => {}); // reconnects by itself; commands fail meanwhile
  await client.connect();
  return client;
}

// The Redis store, whose next commit fails once when failNextCommit is set.
let failNextCommit = false;
const redisStore = new RedisDedupStore(await redisClient());
const store = {
  claim: (key) => redisStore.claim(key),
  release: (key) => redisStore.release(key),
  commit: async (key) => {
    if (failNextCommit) {
      failNextCommit = false;
      throw new Error('Redis connection reset');
    }
    return redisStore.commit(key);
  },
};

const handler = async (delivery) => {
  const ref = delivery.event.resourceReference;
  if (ref.startsWith('slow')) await new Promise((ok) => setTimeout(ok, 600));
  if (ref.startsWith('commit-fails-once')) failNextCommit = true;
  const marker = `${EFFECTS}.failed.${ref}`;
  if (ref.startsWith('fail-once') && !existsSync(marker)) {
    writeFileSync(marker, '');
    throw new Error('the database is down (first attempt)');
  }
  appendFileSync(EFFECTS, `${ref}\n`);
};

const receiver = new WebhookReceiver({
  secrets: ['whsec_current', 'whsec_previous', { secret: 'whsec_rotated_out', validUntil: 1_700_000_000 }],
  namespace: 'org-test',
  store,
  handler,
  onError: () => {},
});

let server;
if (FRAMEWORK === 'express') {
  const { default: express } = await import('express');
  const { webhookMiddleware } = await import('royaltykit/express');
  const app = express();
  // Mounted before any body parser: the route reads the exact bytes itself; the rest of the
  // app keeps parsing JSON.
  app.post('/webhooks', webhookMiddleware(receiver));
  app.use(express.json());
  server = app.listen(Number(PORT), '127.0.0.1');
} else if (FRAMEWORK === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const { royaltykitWebhooks } = await import('royaltykit/fastify');
  const app = Fastify();
  await app.register(royaltykitWebhooks, { path: '/webhooks', receiver });
  await app.listen({ port: Number(PORT), host: '127.0.0.1' });
  server = app.server;
} else if (FRAMEWORK === 'fetch') {
  // A WHATWG Request handler, served by node:http through the standard Request/Response classes.
  const handle = webhookHandler(receiver);
  server = http.createServer(async (req, res) => {
    const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body: Readable.toWeb(req), duplex: 'half' });
    const response = await handle(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  server.listen(Number(PORT), '127.0.0.1');
} else {
  throw new Error(`unknown FRAMEWORK ${FRAMEWORK}`);
}
server.on('listening', () => console.log(`ready ${PORT}`));
if (server.listening) console.log(`ready ${PORT}`);
