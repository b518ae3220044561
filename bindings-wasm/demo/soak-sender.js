'use strict';
// make soak: sends SOAK_DELIVERIES real HTTP deliveries (default 100,000) to a receiver process on
// 127.0.0.1 with SOAK_CONCURRENCY requests in flight: 10% exact duplicates, 5% replays of signed
// content under a new delivery id, 5% tampered bodies, 2% stale timestamps, the rest new. It
// checks that the receiver's accepted/duplicate/rejected counts equal the mix exactly, and
// reports the receiver's RSS (at 40% of the run, when its bounded dedup windows are full, and at
// the end: within 10%) and latencies.
const http = require('node:http');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const rk = require('royaltykit');

const [label, ...command] = process.argv.slice(2);
const N = Number(process.env.SOAK_DELIVERIES || 100_000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY || 32);
const BATCH = 500;
const SECRET = 'whsec_soak_secret_0123456789';
const CAPACITY = 20_000; // keys per window: both windows are full well before 40% of the run
const DEADLINE = Date.now() + Number(process.env.SOAK_MAX_SECONDS || 600) * 1000;

const rss = (pid) => Number((fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/) || [0, 0])[1]);

function eventBody(i) {
  const ref = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  return Buffer.from(JSON.stringify({ event: 'ddex.delivery.acknowledged', resource: { type: 'ddex_message', reference: ref, url: `/api/v1/ddex/messages/${ref}` }, occurred_at: '2026-11-22T04:00:00Z' }));
}

/** The plan for delivery i: what to send and which answer it must get. */
function plan(i, previous) {
  const kind = i % 100;
  if (previous.length > 0 && kind < 10) {
    const p = previous[i % previous.length];
    return { headers: p.headers, body: p.body, expect: 'duplicate' }; // exact duplicate
  }
  if (previous.length > 0 && kind < 15) {
    const p = previous[(i * 7) % previous.length];
    return { headers: { ...p.headers, 'Service-Webhook-Id': `replay-${i}` }, body: p.body, expect: 'duplicate' };
  }
  const body = eventBody(i);
  if (kind < 20) {
    const headers = rk.signWebhook(SECRET, body, { deliveryId: `dlv-${i}` });
    return { headers, body: Buffer.concat([body.subarray(0, -1), Buffer.from(' }')]), expect: 'rejected' };
  }
  if (kind < 22) {
    return { headers: rk.signWebhook(SECRET, body, { deliveryId: `dlv-${i}`, timestamp: Date.now() / 1000 - 600 }), body, expect: 'rejected' };
  }
  return { headers: rk.signWebhook(SECRET, body, { deliveryId: `dlv-${i}` }), body, expect: 'accepted', genuine: true };
}

function classify(decision) {
  if (decision.startsWith('accepted')) return 'accepted';
  if (decision.startsWith('rejected')) return 'rejected';
  return 'duplicate';
}

async function main() {
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, SOAK_SECRET: SECRET, SOAK_CAPACITY: String(CAPACITY) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = new URL(await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(String(d).trim()));
    child.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
  }));
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const post = (p) => new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { ...p.headers, 'content-type': 'application/json', 'content-length': p.body.length } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ decision: JSON.parse(Buffer.concat(chunks)).decision, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    });
    req.on('error', reject);
    req.end(p.body);
  });

  const expected = { accepted: 0, duplicate: 0, rejected: 0 };
  const got = { accepted: 0, duplicate: 0, rejected: 0 };
  const latencies = [];
  let mismatches = 0;
  let previous = [];
  let rssFull = null;
  let sent = 0;
  for (let start = 0; start < N && Date.now() < DEADLINE; start += BATCH) {
    const batch = [];
    for (let i = start; i < Math.min(N, start + BATCH); i++) batch.push(plan(i, previous));
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const p = batch[next++];
        const r = await post(p);
        latencies.push(r.ms);
        expected[p.expect]++;
        got[classify(r.decision)]++;
        if (classify(r.decision) !== p.expect) mismatches++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    sent += batch.length;
    previous = batch.filter((p) => p.genuine);
    if (rssFull === null && sent >= 0.4 * N) rssFull = rss(child.pid);
  }
  const rssEnd = rss(child.pid);
  child.kill();
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2);
  const growth = rssFull ? ((rssEnd - rssFull) / rssFull) * 100 : NaN;
  console.log(`${label}: sent ${sent} | accepted ${got.accepted}/${expected.accepted} | duplicate ${got.duplicate}/${expected.duplicate} | rejected ${got.rejected}/${expected.rejected} | mismatches ${mismatches}`);
  console.log(`${label}: RSS ${rssFull} kB at 40% (dedup windows full) -> ${rssEnd} kB at the end (${growth.toFixed(1)}%) | latency p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`);
  const ok = sent === N && mismatches === 0 && JSON.stringify(got) === JSON.stringify(expected) && Math.abs(growth) <= 10;
  if (!ok) console.log(`${label}: FAILED`);
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
