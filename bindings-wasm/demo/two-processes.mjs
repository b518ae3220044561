// make demo, second part: two receiver processes (royaltykit/express with a RedisDedupStore,
// bindings-wasm/tests-receivers/app.mjs) sharing one redis-server on 127.0.0.1, as a receiver
// behind a load balancer runs. Prints what each process answered and how often each delivery
// was applied. Usage: node two-processes.mjs <redis port> <effects file>
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as rk from 'royaltykit';

const [redisPort, effects] = process.argv.slice(2);
const SECRET = 'whsec_current';
const freePort = () => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

async function start(name) {
  const port = await freePort();
  const child = spawn(process.execPath, ['app.mjs'], {
    env: { ...process.env, FRAMEWORK: 'express', PORT: String(port), REDIS_PORT: redisPort, EFFECTS: effects },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  return { name, child, url: `http://127.0.0.1:${port}/webhooks` };
}

const body = (ref) => JSON.stringify({ event: 'ddex.delivery.acknowledged', resource: { type: 'ddex_message', reference: ref, url: `/api/v1/ddex/messages/${ref}` }, occurred_at: '2026-11-22T04:00:00Z' });
const post = async (p, headers, b) => {
  const r = await fetch(p.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: b });
  return `${r.status} ${Object.values(await r.json())[0]}`;
};
const applied = (ref) => (existsSync(effects) ? readFileSync(effects, 'utf8').split('\n').filter((l) => l === ref).length : 0);

const [a, b] = await Promise.all([start('A'), start('B')]);
const rows = [];
const row = (what, answers, ref, want) => rows.push([what, answers, String(applied(ref)), applied(ref) === want ? 'ok' : `EXPECTED ${want}`]);

const first = body('dlv-a'); const h1 = rk.signWebhook(SECRET, first, { deliveryId: 'dlv-redis-1' });
row('delivery to A, its redelivery to B', `A: ${await post(a, h1, first)}, B: ${await post(b, rk.signWebhook(SECRET, first, { deliveryId: 'dlv-redis-1' }), first)}`, 'dlv-a', 1);

const slow = body('slow-b'); const h2 = rk.signWebhook(SECRET, slow, { deliveryId: 'dlv-redis-2' });
const both = await Promise.all([post(a, h2, slow), post(b, h2, slow)]);
row('the same delivery to A and B at once', `A: ${both[0]}, B: ${both[1]}`, 'slow-b', 1);

const failing = body('fail-once-c'); const h3 = rk.signWebhook(SECRET, failing, { deliveryId: 'dlv-redis-3' });
row("A's handler fails, the service redelivers to B", `A: ${await post(a, h3, failing)}, B: ${await post(b, rk.signWebhook(SECRET, failing, { deliveryId: 'dlv-redis-3' }), failing)}`, 'fail-once-c', 1);

a.child.kill(); b.child.kill();
const head = ['two processes, one Redis', 'answers', 'applied', 'check'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (r) => '| ' + r.map((c, i) => c.padEnd(widths[i])).join(' | ') + ' |';
console.log(`\n${line(head)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n${rows.map(line).join('\n')}`);
const ok = rows.every((r) => r[3] === 'ok');
console.log(ok ? 'Every delivery applied exactly once across both processes.' : 'SOME DELIVERIES WERE NOT APPLIED EXACTLY ONCE');
process.exit(ok ? 0 : 1);
