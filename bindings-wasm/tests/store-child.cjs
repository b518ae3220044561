'use strict';
// A receiver process for stores.test.js: receives one delivery on a transactional store and
// SIGKILLs itself at the step it is told, as a crash would.
//   node store-child.cjs <postgres|sqlite> <connection string or file> <delivery.json> <kill point> [<start at ms>]
// Kill points: none, after_claim, after_mark, after_effect, after_commit; `restart` runs
// ROYALTYKIT_PG_RESTART after the effect is written; `slow` holds the transaction 0.5 s.
const fs = require('node:fs');
const { execSync } = require('node:child_process');
const rk = require('royaltykit');

const [kind, target, file, kill, startAt] = process.argv.slice(2);
const d = JSON.parse(fs.readFileSync(file, 'utf8'));
const { STORE_TABLE: table, STORE_EFFECTS: effects } = process.env;
const die = (point) => {
  if (kill === point) process.kill(process.pid, 'SIGKILL');
};

async function main() {
  let store, pool, db;
  if (kind === 'postgres') {
    const { Pool } = require('pg');
    pool = new Pool({ connectionString: target });
    pool.on('error', () => {}); // an idle client dropped by a restart
    store = new rk.PostgresDedupStore(pool, { table, leaseSeconds: d.lease_seconds });
  } else {
    const Database = require('better-sqlite3');
    db = new Database(target, { timeout: 5000 });
    store = new rk.SqliteDedupStore(db, { table, leaseSeconds: d.lease_seconds });
  }
  for (const [m, point] of [['claim', 'after_claim'], ['markDone', 'after_mark'], ['commitTransaction', 'after_commit']]) {
    const f = store[m].bind(store);
    store[m] = async (...args) => {
      const v = await f(...args);
      die(point);
      return v;
    };
  }
  const handler = async (delivery, connection) => {
    if (kind === 'postgres') await connection.query(`INSERT INTO ${effects} (delivery_id) VALUES ($1)`, [delivery.deliveryId]);
    else connection.prepare(`INSERT INTO ${effects} (delivery_id) VALUES (?)`).run(delivery.deliveryId);
    die('after_effect');
    if (kill === 'restart') execSync(process.env.ROYALTYKIT_PG_RESTART);
    if (kill === 'slow') await new Promise((r) => setTimeout(r, 500));
  };
  const receiver = new rk.WebhookReceiver({ secrets: d.secret, namespace: 'org-7/stores', store, handler });
  while (Date.now() < Number(startAt || 0)) await new Promise((r) => setTimeout(r, 1));
  const reply = await receiver.receive(d.headers, Buffer.from(d.body), d.now);
  process.stdout.write(`${reply.status} ${reply.body}\n`);
  if (pool) await pool.end();
  if (db) db.close();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
