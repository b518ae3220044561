// make bench, clients, Node part. Usage: node bench.mjs <base url> <out.json>
// The cost per call of royaltykit/client's request() (createReportsClient over the global fetch,
// its token already cached) against the same GET made directly with fetch: the same headers
// (bearer token, tenant, Accept), the body read and its JSON parsed, as request() does.
// Contenders run interleaved: ROUNDS rounds, each a timed batch per contender; reported: min and
// median over the rounds of µs per call.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';

const require = createRequire(`${process.cwd()}/`);
const { createReportsClient } = require('royaltykit/client');

const ROUNDS = Number(process.env.BENCH_CLIENT_ROUNDS ?? 31);
const BATCH_NS = Number(process.env.BENCH_CLIENT_BATCH_MS ?? 40) * 1e6;
const WARMUP = Number(process.env.BENCH_CLIENT_WARMUP ?? 2000);
const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const EXPORT_ID = '7a1f6c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
const TOKEN = 'rt_bench_00112233445566778899aabbccddeeff'; // what the server issues; the direct contender holds it
const HEADERS = { Accept: 'application/json', Authorization: `Bearer ${TOKEN}`, 'X-Tenant-ID': TENANT };

const [base, outFile] = process.argv.slice(2);
const url = `${base}/api/platform/v1/exports/${EXPORT_ID}`;

const reports = createReportsClient({ baseUrl: base, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT });
const params = { path: { export: EXPORT_ID } };

async function direct() {
  const r = await fetch(url, { headers: HEADERS });
  if (r.status !== 200) throw new Error(`status ${r.status}`);
  return JSON.parse(new TextDecoder().decode(await r.arrayBuffer()));
}

const contenders = [
  ['royaltykit', () => reports.request('getPlatformExport', params)],
  ['direct', direct],
];

async function timed(fn, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - t0);
}

async function main() {
  const stats = async () => (await fetch(`${base}/_stats`)).json();
  const start = await stats();
  // Both get the same answer; the royaltykit client obtains its token here (not timed).
  const answers = [];
  for (const [, fn] of contenders) answers.push(await fn());
  if (answers.some((a) => JSON.stringify(a) !== JSON.stringify(answers[0])) || answers[0].id !== EXPORT_ID) {
    throw new Error(`different answers: ${JSON.stringify(answers)}`);
  }
  const before = await stats();
  if (before.tokens - start.tokens !== 1 || before.unauthorized !== start.unauthorized) throw new Error(`server saw ${JSON.stringify(before)}`);

  const batches = [];
  for (const [, fn] of contenders) {
    await timed(fn, WARMUP);
    let n = 1;
    for (;;) {
      const dt = await timed(fn, n);
      if (dt > BATCH_NS / 4 || n > 1e6) { batches.push(Math.max(1, Math.round(n * BATCH_NS / Math.max(dt, 1)))); break; }
      n *= 2;
    }
  }
  const samples = contenders.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < contenders.length; k++) samples[k].push((await timed(contenders[k][1], batches[k])) / batches[k] / 1e3);
  }
  const after = await stats();
  // the timed calls were all answered, and never exchanged a token
  if (after.tokens !== before.tokens || after.unauthorized !== start.unauthorized) throw new Error(`server saw ${JSON.stringify(after)}`);
  const results = contenders.map(([name], k) => {
    const s = samples[k].sort((a, b) => a - b);
    return { language: 'Node', client: 'fetch', contender: name, min_us: s[0], median_us: s[s.length >> 1] };
  });
  const [rk, d] = results;
  process.stderr.write(`node fetch: royaltykit ${rk.median_us.toFixed(1)} µs, direct ${d.median_us.toFixed(1)} µs, ` +
    `${(rk.median_us / d.median_us).toFixed(2)}×\n`);
  writeFileSync(outFile, JSON.stringify(results, null, 1));
}

main().catch((e) => { console.error(e); process.exit(1); });
