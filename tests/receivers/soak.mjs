// make soak: SOAK_DELIVERIES deliveries (default 100,000) over real HTTP to four receiver
// processes sharing one redis-server on 127.0.0.1 — two Node (royaltykit/express with node-redis,
// royaltykit/fastify with ioredis) and two Python (royaltykit.asgi on Starlette with
// redis.asyncio, royaltykit.flask with redis-py) — each attempt sent to a random one, as a load
// balancer would. Like the service: every 500 or 503 is redelivered (same delivery id and body,
// signed anew); 10% of the deliveries are sent twice at once (a redelivery racing the first
// attempt, often to another process); 1%
// fail their first attempt in the handler. Then it checks the effects every receiver appended
// to one file: every delivery applied exactly once (zero lost, zero doubled), every extra
// redelivery acknowledged. Signatures come from node:crypto, independently of royaltykit.
// Usage: node soak.mjs <redis port> (RECEIVER_APPS from scripts/receivers-env.sh).
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';

const N = Number(process.env.SOAK_DELIVERIES || 100_000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY || 64);
const DEADLINE = Date.now() + Number(process.env.SOAK_MAX_SECONDS || 900) * 1000;
const RECEIVERS = ['node-express', 'node-fastify', 'python-starlette', 'python-flask'];
const APPS = JSON.parse(process.env.RECEIVER_APPS);
const [redisPort, effects] = process.argv.slice(2);

const freePort = () => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

const children = [];
process.on('exit', () => children.forEach((c) => c.kill()));

async function start(name) {
  const [argv, env] = APPS[name];
  const port = await freePort();
  const child = spawn(argv[0], argv.slice(1), {
    env: { ...process.env, ...env, PORT: String(port), REDIS_PORT: redisPort, EFFECTS: effects },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => (String(d).startsWith('ready') ? resolve() : reject(new Error(`${name}: ${d}`))));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  return { name, port, child, agent: new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }) };
}

function delivery(i) {
  const ref = `${i % 100 === 50 ? 'fail-once' : 'soak'}-${i}`;
  const body = Buffer.from(JSON.stringify({ event: 'ddex.delivery.acknowledged', resource: { type: 'ddex_message', reference: ref, url: `/api/v1/ddex/messages/${ref}` }, occurred_at: '2026-11-22T04:00:00Z' }));
  return { i, id: `dlv-soak-${i}`, ref, body, extra: i % 10 === 3 };
}

function post(receiver, d) {
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', 'whsec_current').update(`${ts}.`).update(d.body).digest('hex');
  const headers = { 'content-type': 'application/json', 'content-length': d.body.length, 'service-webhook-id': d.id, 'service-webhook-timestamp': ts, 'service-webhook-signature': `v1=${sig}` };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: receiver.port, path: '/webhooks', method: 'POST', agent: receiver.agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, reply: JSON.parse(Buffer.concat(chunks)) }));
    });
    req.on('error', reject);
    req.end(d.body);
  });
}

async function main() {
  const receivers = await Promise.all(RECEIVERS.map(start));
  const t0 = Date.now();
  const all = Array.from({ length: N }, (_, i) => delivery(i));
  const queue = all.flatMap((d) => (d.extra ? [d, d] : [d]));
  const tally = { requests: 0, processed: 0, acknowledged: 0, handlerFailed: 0, retryLater: 0, storeUnavailable: 0, unexpected: 0, transport: 0 };
  const perReceiver = Object.fromEntries(RECEIVERS.map((n) => [n, 0]));
  const worker = async () => {
    while (queue.length && Date.now() < DEADLINE) {
      // an attempt answered 500 or 503 goes back in the queue: the service's redelivery
      const d = queue.shift();
      const r = receivers[Math.floor(Math.random() * receivers.length)];
      tally.requests++;
      perReceiver[r.name]++;
      let answer;
      try {
        answer = await post(r, d);
      } catch {
        // a keep-alive connection the server closed as it was reused: no answer, so the
        // service redelivers (the delivery may have been applied: the dedup store knows)
        tally.transport++;
        queue.push(d);
        continue;
      }
      const { status, reply } = answer;
      if (status === 200 && reply.result === 'processed') {
        tally.processed++;
      } else if (status === 200 && reply.result === 'acknowledge') {
        tally.acknowledged++;
      } else if (status === 500 && reply.error === 'handler_failed') {
        tally.handlerFailed++;
        queue.push(d); // the service redelivers
      } else if (status === 503) {
        tally[reply.error === 'store_unavailable' ? 'storeUnavailable' : 'retryLater']++;
        queue.push(d);
      } else {
        tally.unexpected++;
        console.error(`unexpected answer from ${r.name}: ${status} ${JSON.stringify(reply)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (Date.now() - t0) / 1000;
  for (const r of receivers) { r.child.kill(); r.agent.destroy(); }

  const counts = new Map();
  for (const ref of readFileSync(effects, 'utf8').split('\n')) if (ref) counts.set(ref, (counts.get(ref) || 0) + 1);
  const lost = all.filter((d) => !counts.has(d.ref)).length;
  const doubled = [...counts.values()].filter((c) => c > 1).length;
  const failures = all.filter((d) => d.ref.startsWith('fail-once')).length;
  const extras = all.filter((d) => d.i % 10 === 3).length;
  console.log(`soak: ${N} deliveries, ${tally.requests} requests in ${seconds.toFixed(1)} s (${Math.round(tally.requests / seconds)} req/s) to ${RECEIVERS.join(', ')} (${Object.values(perReceiver).join(' / ')} requests)`);
  console.log(`soak: processed ${tally.processed}, acknowledged ${tally.acknowledged} (deliveries sent twice: ${extras}), handler failures ${tally.handlerFailed} (deliveries failing once: ${failures}), in progress ${tally.retryLater}, store unavailable ${tally.storeUnavailable}, unexpected ${tally.unexpected}, no answer (connection reset, redelivered) ${tally.transport}`);
  console.log(`soak: effects ${[...counts.values()].reduce((a, b) => a + b, 0)} for ${counts.size} deliveries: lost ${lost}, doubled ${doubled}`);
  // Exact whenever every request got an answer; a lost answer turns one processed (or failed)
  // attempt into an acknowledged (or processed) redelivery, never into a second effect.
  const exact = tally.transport === 0 ? tally.processed === N && tally.handlerFailed === failures && tally.acknowledged === extras
    : tally.processed <= N && tally.processed + tally.transport >= N && tally.transport < tally.requests / 1000;
  const ok = queue.length === 0 && lost === 0 && doubled === 0 && counts.size === N && tally.unexpected === 0 && exact;
  console.log(ok ? 'soak: passed' : 'soak: FAILED');
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
