// The load driver of the end-to-end receiver bench (bench/e2e/run.py runs it; node/setup.sh copies
// it beside the installed autocannon). Promises:
//   - every request is a fresh delivery: a unique Service-Webhook-Id, a small event body like
//     tests/receivers sends (its own resource reference), signed `v1=<hex>` HMAC-SHA256 over
//     `<timestamp>.<body>` with the current timestamp. --presign deliveries are signed before the
//     load starts (so signing costs nothing during it); past them, each is signed when sent.
//   - a warm-up run (--warmup seconds, results discarded), then the measured run (--seconds),
//     both with --connections connections, pipelining 1;
//   - prints one JSON line of the measured run: {rps, p50_ms, p99_ms, requests, errors, non2xx}
//     (rps = completed requests / measured seconds; errors = socket errors + timeouts).
// Usage: node load.mjs --url http://127.0.0.1:PORT/webhook --secret S [--connections 16]
//        [--warmup 1] [--seconds 5] [--presign 200000]
import { createHmac, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const { values: a } = parseArgs({
  options: {
    url: { type: 'string' }, secret: { type: 'string' }, connections: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '1' }, seconds: { type: 'string', default: '5' }, presign: { type: 'string', default: '200000' },
  },
});
if (!a.url || !a.secret) throw new Error('--url and --secret are required');
const url = new URL(a.url);

const run = randomUUID().slice(0, 8); // ids unique across runs against one store too
let n = 0;
function delivery() {
  const ref = `ref-${run}-${n++}`;
  const body = JSON.stringify({
    event: 'ddex.delivery.acknowledged',
    resource: { type: 'ddex_message', reference: ref, url: `/api/v1/ddex/messages/${ref}` },
    occurred_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  });
  const ts = String(Math.floor(Date.now() / 1000));
  const mac = createHmac('sha256', a.secret).update(`${ts}.${body}`).digest('hex');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'service-webhook-id': `msg_${run}_${n}`,
      'service-webhook-timestamp': ts,
      'service-webhook-signature': `v1=${mac}`,
    },
  };
}
const presigned = Array.from({ length: Number(a.presign) }, delivery);
let next = 0;
const take = () => (next < presigned.length ? presigned[next++] : delivery());

function load(seconds) {
  return autocannon({
    url: url.origin,
    connections: Number(a.connections),
    duration: Number(seconds),
    requests: [{ method: 'POST', path: url.pathname, setupRequest: (req) => ({ ...req, ...take() }) }],
  });
}

if (Number(a.warmup) > 0) await load(a.warmup);
const r = await load(a.seconds);
const seconds = r.duration || Number(a.seconds);
console.log(JSON.stringify({
  rps: Math.round(r.requests.total / seconds),
  p50_ms: r.latency.p50,
  p99_ms: r.latency.p99,
  requests: r.requests.total,
  errors: r.errors + r.timeouts,
  non2xx: r.non2xx,
  signed_when_sent: Math.max(0, next - presigned.length),
}));
