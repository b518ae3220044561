// make bench, Node part. Usage: node bench.mjs <cases.json> <out.json>
// Every contender verifies the same delivery (its own header/secret format) once per call.
// Contenders of one body run interleaved: ROUNDS rounds, each a timed batch per contender;
// reported: min and median over the rounds of ns per call.
import { createRequire } from 'node:module';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const require = createRequire(process.cwd() + '/');
const rk = require('royaltykit');
const { Webhook: SvixWebhook } = await import('svix');
const { Webhook: StandardWebhook } = require('standardwebhooks');
const Stripe = require('stripe');
const stripe = new Stripe('sk_test_bench');

const [casesFile, outFile] = process.argv.slice(2);
const { cases } = JSON.parse(readFileSync(casesFile, 'utf8'));
const ROUNDS = Number(process.env.BENCH_ROUNDS || 15);
const BATCH_NS = Number(process.env.BENCH_BATCH_MS || 20) * 1e6;

function calibrate(fn) {
  let n = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    const dt = Number(process.hrtime.bigint() - t0);
    if (dt > BATCH_NS / 4 || n > 1e7) return Math.max(1, Math.round((n * BATCH_NS) / Math.max(dt, 1)));
    n *= 4;
  }
}

function timeInterleaved(contenders) {
  const batches = contenders.map(([, fn]) => {
    for (let i = 0; i < 200; i++) fn(); // warm-up (JIT)
    return calibrate(fn);
  });
  const samples = contenders.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    contenders.forEach(([, fn], k) => {
      const n = batches[k];
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) fn();
      samples[k].push(Number(process.hrtime.bigint() - t0) / n);
    });
  }
  return contenders.map(([name], k) => {
    const s = samples[k].sort((a, b) => a - b);
    return { contender: name, min_ns: s[0], median_ns: s[Math.floor(s.length / 2)] };
  });
}

// Hand-written node:crypto, as a careful user would write it: headers, timestamp tolerance,
// createHmac + timingSafeEqual against every v1 value; then JSON.parse for the event.
function handWritten(headers, body, secret, nowSec, parse) {
  const id = headers['service-webhook-id'];
  const ts = headers['service-webhook-timestamp'];
  const sigHeader = headers['service-webhook-signature'];
  if (!id || !ts || !sigHeader) throw new Error('missing header');
  if (!/^\d{1,15}$/.test(ts)) throw new Error('bad timestamp');
  const expected = createHmac('sha256', secret).update(ts + '.').update(body).digest();
  let ok = false;
  for (const part of sigHeader.split(',')) {
    const [v, hex] = part.trim().split('=', 2);
    if (v !== 'v1' || !hex || hex.length !== 64) continue;
    const got = Buffer.from(hex, 'hex');
    if (got.length === 32 && timingSafeEqual(got, expected)) ok = true;
  }
  if (!ok) throw new Error('no matching signature');
  if (Math.abs(nowSec - Number(ts)) > 300) throw new Error('timestamp');
  return parse ? JSON.parse(body) : true;
}

const results = [];
// Memory per DedupWindow entry, first (before other work grows the heap): growth of the wasm
// module's linear memory while a fresh window fills with 100,000 keys (64 KiB pages).
{
  // The test-hooks build of the same module exposes its linear memory size (not in the package).
  const native = require(process.env.ROYALTYKIT_HOOKS_NATIVE);
  const keys = Array.from({ length: 100000 }, (_, i) => `dlv1:org_42:wh_mem_${String(i).padStart(12, '0')}`);
  const before = native.wasmMemoryBytes();
  const w = new native.DedupWindow(100000, 3600, undefined, new Uint8Array(16));
  for (const k of keys) w.checkAndInsert(k, 1000);
  const after = native.wasmMemoryBytes();
  w.free();
  results.push({ group: 'memory', case: 'DedupWindow, 100,000 keys of 31 B', contender: 'wasm memory growth', bytes_per_entry: (after - before) / 100000 });
}
for (const c of cases) {
  const body = Buffer.from(c.body, 'utf8');
  const bodyText = c.body;
  const rkHeaders = Object.fromEntries(Object.entries(c.royaltykit.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const secret = c.royaltykit.secret;
  const now = c.timestamp;
  const verifier = new rk.WebhookVerifier(secret);
  const svix = new SvixWebhook(c.svix.secret);
  const sw = new StandardWebhook(c.svix.secret);
  const contenders = [
    ['royaltykit WebhookVerifier.verify', () => verifier.verify(rkHeaders, body, now)],
    ['royaltykit verifyWebhook', () => rk.verifyWebhook(rkHeaders, body, secret, { now })],
    ['royaltykit verifyWebhook, HMAC forced to wasm', () => rk.verifyWebhook(rkHeaders, body, secret, { now, hostMacThreshold: Infinity })],
    ['royaltykit verifyWebhook, HMAC forced to node:crypto', () => rk.verifyWebhook(rkHeaders, body, secret, { now, hostMacThreshold: 0 })],
    ['node:crypto hand-written + JSON.parse', () => handWritten(rkHeaders, body, secret, now, true)],
    ['node:crypto hand-written, signature only', () => handWritten(rkHeaders, body, secret, now, false)],
    ['svix Webhook.verify (no JSON parse)', () => svix.verify(bodyText, c.svix.headers)],
    ['standardwebhooks Webhook.verify (+ JSON.parse)', () => sw.verify(bodyText, c.svix.headers)],
    ['stripe webhooks.signature.verifyHeader', () => stripe.webhooks.signature.verifyHeader(body, c.stripe.header, c.stripe.secret, 300)],
  ];
  for (const [, fn] of contenders) fn(); // every contender must accept the delivery (or throw)
  // ...and must reject a forged one, or it is not verifying anything.
  const forged = Buffer.from(bodyText.replace('"event":"', '"event":"x'));
  for (const [name, fn] of [
    ['royaltykit', () => verifier.verify(rkHeaders, forged, now)],
    ['node:crypto', () => handWritten(rkHeaders, forged, secret, now, false)],
    ['svix', () => svix.verify(forged.toString(), c.svix.headers)],
    ['standardwebhooks', () => sw.verify(forged.toString(), c.svix.headers)],
    ['stripe', () => stripe.webhooks.signature.verifyHeader(forged, c.stripe.header, c.stripe.secret, 300)],
  ]) {
    let threw = false;
    try { fn(); } catch { threw = true; }
    if (!threw) throw new Error(`${name} accepted a forged delivery`);
  }
  const v = verifier.verify(rkHeaders, body, now);
  if (v.event.name !== JSON.parse(bodyText).event) throw new Error('wrong event');
  for (const r of timeInterleaved(contenders)) results.push({ group: 'verify', case: c.name, bytes: c.bytes, ...r });
  process.stderr.write(`node: ${c.name} done\n`);
}

// Where node:crypto should take over the HMAC: both paths over a sweep of body sizes.
for (const size of [256, 1024, 1536, 2048, 4096, 16384]) {
  const head = '{"event":"ddex.import.failed","resource":{"type":"ddex_import","reference":"r","url":"/v1/imports/r"},"occurred_at":"2026-11-22T06:30:00Z","note":"';
  const body = Buffer.from(head + 'x'.repeat(size - head.length - 2) + '"}');
  const secret = cases[0].royaltykit.secret;
  const now = cases[0].timestamp;
  const headers = rk.signWebhook(secret, body, { timestamp: now, deliveryId: 'sweep' });
  const rows = timeInterleaved([
    ['wasm HMAC', () => rk.verifyWebhook(headers, body, secret, { now, hostMacThreshold: Infinity })],
    ['node:crypto HMAC', () => rk.verifyWebhook(headers, body, secret, { now, hostMacThreshold: 0 })],
  ]);
  for (const r of rows) results.push({ group: 'threshold', case: `${size} B`, bytes: size, ...r });
}

// Other calls.
{
  const keys = Array.from({ length: 200000 }, (_, i) => `dlv1:org_42:wh_del_${String(i).padStart(12, '0')}`);
  const w = new rk.DedupWindow(100000, 3600);
  let i = 0;
  const dupes = new rk.DedupWindow(100000, 3600);
  for (let k = 0; k < 1000; k++) dupes.checkAndInsert(keys[k], 1000);
  let j = 0;
  const errBody = Buffer.from('{"error":{"code":"validation_failed","message":"The request is invalid.","details":[{"field":"name","issue":"required"}]},"request_id":"req_123"}');
  const errHeaders = { 'content-type': 'application/json', 'x-request-id': 'req_123' };
  const rows = timeInterleaved([
    ['DedupWindow.checkAndInsert (new keys, full window)', () => w.checkAndInsert(keys[(i = (i + 1) % keys.length)], 1000)],
    ['DedupWindow.checkAndInsert (duplicates)', () => dupes.checkAndInsert(keys[(j = (j + 1) % 1000)], 1000)],
    ['decideRetry (503 with Retry-After, read)', () => rk.decideRetry({ retryClass: 'read', status: 503, headers: { 'retry-after': '7' }, attempt: 1, elapsedSeconds: 0.5, random: 0.25, now: 1000 })],
    ['parseApiError (422 JSON body)', () => rk.parseApiError('enterprise', 422, errHeaders, errBody, { now: 1000 })],
  ]);
  for (const r of rows) results.push({ group: 'calls', case: '', bytes: 0, ...r });
}
const versions = Object.fromEntries(['royaltykit', 'svix', 'standardwebhooks', 'stripe'].map(
  (p) => [p, JSON.parse(readFileSync(`node_modules/${p}/package.json`, 'utf8')).version]));
writeFileSync(outFile, JSON.stringify({ language: 'node', node: process.version, versions, results }, null, 1));
