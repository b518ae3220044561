'use strict';
// One process of a fleet (fleet.test.js): an enterprise client of the installed package on a
// RedisFleet (the RESP client of redis.cjs), which prints `ready`, waits for `go` on its standard
// input (so the processes start their requests together), makes N requests at once and prints
// one JSON line: how many ended, the errors, the session's exchanges and its events by kind.
// Environment: URL (the fake API), REDIS_PORT, PREFIX, N, LIMIT (a per-minute budget; default:
// the enterprise preset).
const readline = require('node:readline');
const { createEnterpriseClient, RedisFleet } = require('royaltykit/client');
const rk = require('royaltykit');
const { respClient } = require('./redis.cjs');

const { URL: url, REDIS_PORT, PREFIX, N = '10', LIMIT } = process.env;
const redis = respClient(Number(REDIS_PORT));
const kinds = {};
const client = createEnterpriseClient({
  baseUrl: url,
  credentials: { apiKey: 'key-1', apiSecret: 'secret-1' },
  fleet: new RedisFleet(redis, { prefix: PREFIX }),
  budget: LIMIT ? new rk.RateBudget([{ name: 'api_client', limit: Number(LIMIT), windowSeconds: 60 }]) : undefined,
  onEvent: (e) => { kinds[e.kind] = (kinds[e.kind] ?? 0) + 1; },
});

console.log('ready');
readline.createInterface({ input: process.stdin }).once('line', async () => {
  const started = Date.now();
  const results = await Promise.allSettled(Array.from({ length: Number(N) }, () => client.request('listEnterpriseCountries')));
  console.log(JSON.stringify({
    done: results.filter((r) => r.status === 'fulfilled').length,
    errors: results.filter((r) => r.status === 'rejected').map((r) => `${r.reason?.code}: ${r.reason?.message}`),
    exchanges: client.session.exchanges,
    kinds,
    seconds: (Date.now() - started) / 1000,
  }));
  redis.close();
  process.exit(0);
});
