'use strict';
// A worker process for inbox.test.js: drains a PostgresInbox (ROYALTYKIT_PG_DSN, INBOX_TABLE,
// INBOX_LEASE) until no entry is pending, its handler inserting the effect row (resource UNIQUE,
// in INBOX_EFFECTS) then sleeping a random 0-300 ms. It prints each step as it happens, so the
// test can SIGKILL it at chosen moments: `started`, `claimed <key>`, `inserted <key>`,
// `marked <key>`, `committed <key>`. An effect inserted twice would fail the UNIQUE insert inside the
// transaction: it prints `DUPLICATE <resource>` and exits 3.
const { Pool } = require('pg');
const rk = require('royaltykit');

const { ROYALTYKIT_PG_DSN: dsn, INBOX_TABLE: table, INBOX_EFFECTS: effects, INBOX_LEASE: lease } = process.env;
const say = (line) => process.stdout.write(`${line}\n`);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const pool = new Pool({ connectionString: dsn });
  pool.on('error', () => {});
  const inbox = new rk.PostgresInbox(pool, { table, leaseSeconds: Number(lease) });
  // Each worker step, announced once it is done, with the key of the entry claimed last.
  let key = null;
  for (const [m, line] of [['claim', 'claimed'], ['markDone', 'marked'], ['commitTransaction', 'committed']]) {
    const f = inbox[m].bind(inbox);
    inbox[m] = async (...args) => {
      const v = await f(...args);
      if (m === 'claim') key = v?.key ?? null;
      if (key !== null) say(`${line} ${key}`);
      return v;
    };
  }
  const handler = async (delivery, client) => {
    try {
      await client.query(`INSERT INTO ${effects} (resource, delivery_id) VALUES ($1, $2)`, [delivery.event.resourceReference, delivery.deliveryId]);
    } catch (e) {
      if (e.code === '23505') {
        say(`DUPLICATE ${delivery.event.resourceReference}`);
        process.exit(3);
      }
      throw e;
    }
    say(`inserted ${delivery.key}`);
    await pause(Math.floor(Math.random() * 301));
  };
  say('started');
  const total = { processed: 0, retried: 0, poisoned: 0 };
  for (;;) {
    const r = await inbox.drain(handler, { maxAttempts: 20, onError: (e) => say(`handler failed: ${e}`) });
    for (const k of Object.keys(total)) total[k] += r[k];
    if (!(await inbox.counts()).pending) break;
    await pause(100); // entries held by the leases of killed workers
  }
  say(`done ${JSON.stringify(total)}`);
  await pool.end();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
