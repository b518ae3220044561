'use strict';
// A worker process for redis-inbox.test.js: drains a RedisInbox (REDIS_PORT, INBOX_PREFIX,
// INBOX_LEASE) until no entry is pending. Its handler appends the delivery id to the list
// `<prefix>effects` (the effect), prints `effect <delivery id>`, then sleeps 300 ms, so the test
// can SIGKILL it after an effect and before its mark. Prints `started` first and `done <counts>`
// last.
const rk = require('royaltykit');
const { connected } = require('./redis.cjs');

const { REDIS_PORT: port, INBOX_PREFIX: prefix, INBOX_LEASE: lease } = process.env;
const say = (line) => process.stdout.write(`${line}\n`);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const client = await connected(Number(port));
  const inbox = new rk.RedisInbox(client, { prefix, leaseSeconds: Number(lease) });
  const handler = async (delivery, redis) => {
    await redis.sendCommand(['RPUSH', `${prefix}effects`, delivery.deliveryId]);
    say(`effect ${delivery.deliveryId}`);
    await pause(300);
  };
  say('started');
  const total = { processed: 0, retried: 0, poisoned: 0 };
  for (;;) {
    const r = await inbox.drain(handler, { onError: (e) => say(`handler failed: ${e}`) });
    for (const k of Object.keys(total)) total[k] += r[k];
    if (!(await inbox.counts()).pending) break;
    await pause(100); // an entry held by the lease of a killed worker
  }
  say(`done ${JSON.stringify(total)}`);
  client.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
