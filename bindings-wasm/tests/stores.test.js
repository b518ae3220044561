'use strict';
// The transactional dedup stores (PostgresDedupStore over pg, SqliteDedupStore over
// better-sqlite3) against a real PostgreSQL (the throw-away cluster scripts/test-node.sh starts:
// ROYALTYKIT_PG_DSN) and SQLite files: a receiver process killed (SIGKILL) at every step,
// PostgreSQL restarted mid-delivery, two processes racing one delivery. Whatever happens, the
// effect is applied exactly once.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const rk = require('royaltykit');
const { Pool } = require('pg');
const Database = require('better-sqlite3');

const CHILD = path.join(__dirname, 'store-child.cjs');
const SECRET = 'whsec_store_tests_0123456789abcdef';
const LEASE = 5;
const NOW = 1_763_900_000;
const dsn = process.env.ROYALTYKIT_PG_DSN;
if (!dsn) throw new Error('ROYALTYKIT_PG_DSN is not set: run the suite with scripts/test-node.sh, which starts PostgreSQL');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'royaltykit-stores-'));

/** What `f` resolves to, and the lines it printed with console.error meanwhile (until the
 * next turn of the event loop: a hook's rejection is printed then). */
async function printing(f) {
  const printed = [];
  const original = console.error;
  console.error = (...args) => printed.push(args.map(String).join(' '));
  try {
    const value = await f();
    await new Promise((resolve) => setImmediate(resolve));
    return [value, printed];
  } finally {
    console.error = original;
  }
}

class Db {
  constructor(kind) {
    this.kind = kind;
    this.table = `dedup_${crypto.randomBytes(6).toString('hex')}`;
    this.effects = `effects_${this.table}`;
  }
  async open() {
    if (this.kind === 'postgres') {
      this.target = dsn;
      this.pool = new Pool({ connectionString: dsn });
      this.pool.on('error', () => {});
      await this.pool.query(`CREATE TABLE ${this.effects} (delivery_id TEXT NOT NULL)`);
      await this.store().createTable();
    } else {
      this.target = path.join(tmp, `${this.table}.sqlite`);
      this.db = new Database(this.target, { timeout: 5000 });
      this.db.exec(`CREATE TABLE ${this.effects} (delivery_id TEXT NOT NULL)`);
      this.store();
    }
    return this;
  }
  store(clock) {
    const o = { table: this.table, leaseSeconds: LEASE, clock };
    return this.kind === 'postgres' ? new rk.PostgresDedupStore(this.pool, o) : new rk.SqliteDedupStore(this.db, o);
  }
  async effectsOf(id) {
    if (this.kind === 'postgres') {
      return Number((await this.pool.query(`SELECT count(*) AS n FROM ${this.effects} WHERE delivery_id = $1`, [id])).rows[0].n);
    }
    return this.db.prepare(`SELECT count(*) AS n FROM ${this.effects} WHERE delivery_id = ?`).get(id).n;
  }
  async states() {
    const sql = `SELECT state FROM ${this.table} ORDER BY dedup_key`;
    const rows = this.kind === 'postgres' ? (await this.pool.query(sql)).rows : this.db.prepare(sql).all();
    return rows.map((r) => r.state);
  }
  async handler(delivery, connection) {
    if (this.kind === 'postgres') await connection.query(`INSERT INTO ${this.effects} (delivery_id) VALUES ($1)`, [delivery.deliveryId]);
    else connection.prepare(`INSERT INTO ${this.effects} (delivery_id) VALUES (?)`).run(delivery.deliveryId);
  }
  receiver(clock, handler) {
    return new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-7/stores', store: this.store(clock),
      handler: handler ?? ((d, c) => this.handler(d, c)) });
  }
  async close() {
    if (this.pool) await this.pool.end();
    if (this.db) this.db.close();
  }
}

function delivery(name) {
  const id = `dlv_${name}_${crypto.randomBytes(4).toString('hex')}`;
  const body = JSON.stringify({ event: 'enterprise.release.updated', occurred_at: '2026-11-22T04:05:06Z',
    resource: { type: 'release', reference: id, url: `/api/v1/releases/${id}` } });
  const headers = rk.signWebhook(SECRET, body, { timestamp: NOW, deliveryId: id });
  const d = { secret: SECRET, headers, body, now: NOW, lease_seconds: LEASE, id };
  const file = path.join(tmp, `${id}.json`);
  fs.writeFileSync(file, JSON.stringify(d));
  return [file, d];
}

function child(db, file, kill, startAt = 0) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CHILD, db.kind, db.target, file, kill, String(startAt)],
      { env: { ...process.env, STORE_TABLE: db.table, STORE_EFFECTS: db.effects } });
    let out = '';
    let err = '';
    p.stdout.on('data', (b) => { out += b; });
    p.stderr.on('data', (b) => { err += b; });
    p.on('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}

async function redeliver(db, d, later = 0) {
  const r = await db.receiver(() => Date.now() / 1000 + later).receive(d.headers, Buffer.from(d.body), d.now);
  return [r.status, JSON.parse(r.body)];
}

for (const kind of ['postgres', 'sqlite']) {
  test.describe(`transactional store on ${kind}`, () => {
    let db;
    test.beforeEach(async () => { db = await new Db(kind).open(); });
    test.afterEach(async () => { await db.close(); });

    for (const point of ['after_claim', 'after_mark', 'after_effect']) {
      test(`killed ${point}: nothing applied, the redelivery applies it once`, async () => {
        const [file, d] = delivery(point);
        const r = await child(db, file, point);
        assert.equal(r.signal, 'SIGKILL', r.err);
        assert.equal(await db.effectsOf(d.id), 0);
        assert.equal((await redeliver(db, d))[0], 503); // the claim's lease still holds
        const [status, body] = await redeliver(db, d, LEASE + 1);
        assert.deepEqual([status, body.result], [200, 'processed']);
        assert.equal(await db.effectsOf(d.id), 1);
        assert.deepEqual(await db.states(), ['done']); // the delivery key (the content key is opt-in)
        assert.deepEqual(await redeliver(db, d, LEASE + 2), [200, { result: 'acknowledge' }]);
        assert.equal(await db.effectsOf(d.id), 1);
      });
    }

    test('killed after the commit: the redelivery is a duplicate', async () => {
      const [file, d] = delivery('after_commit');
      const r = await child(db, file, 'after_commit');
      assert.equal(r.signal, 'SIGKILL', r.err);
      assert.equal(await db.effectsOf(d.id), 1);
      assert.deepEqual(await redeliver(db, d), [200, { result: 'acknowledge' }]);
      assert.deepEqual(await redeliver(db, d, LEASE + 1), [200, { result: 'acknowledge' }]);
      assert.equal(await db.effectsOf(d.id), 1);
    });

    test('two processes racing one delivery apply it once', async () => {
      const [file, d] = delivery('race');
      const start = Date.now() + 1000;
      const rs = await Promise.all([child(db, file, 'slow', start), child(db, file, 'slow', start)]);
      assert.deepEqual(rs.map((r) => r.code), [0, 0], rs.map((r) => r.err).join('\n'));
      const statuses = rs.map((r) => Number(r.out.split(' ')[0])).sort();
      assert.equal(statuses[0], 200, rs.map((r) => r.out).join(''));
      assert.ok([200, 503].includes(statuses[1]));
      assert.equal(await db.effectsOf(d.id), 1);
      assert.deepEqual(await redeliver(db, d, LEASE + 1), [200, { result: 'acknowledge' }]);
    });

    test('a failing handler rolls its effect back; the redelivery applies it once', async () => {
      const [, d] = delivery('fails');
      const receiver = db.receiver(undefined, async (dl, c) => {
        await db.handler(dl, c);
        throw new Error('the handler failed after writing');
      });
      receiver.onError = () => {};
      const r = await receiver.receive(d.headers, Buffer.from(d.body), d.now);
      assert.equal(r.status, 500);
      assert.equal(await db.effectsOf(d.id), 0);
      assert.deepEqual(await db.states(), []); // released at once
      assert.equal((await redeliver(db, d))[0], 200);
      assert.equal(await db.effectsOf(d.id), 1);
    });

    test('an onError that throws still rolls back, releases and answers 500', async () => {
      const [, d] = delivery('onerror');
      const receiver = db.receiver(undefined, async (dl, c) => {
        await db.handler(dl, c);
        throw new Error('the handler failed after writing');
      });
      const told = [];
      receiver.onError = (e) => { told.push(e.message); throw new Error('onError itself failed'); };
      const [r, printed] = await printing(() => receiver.receive(d.headers, Buffer.from(d.body), d.now));
      assert.deepEqual([r.status, JSON.parse(r.body).error], [500, 'handler_failed']);
      assert.deepEqual(told, ['the handler failed after writing']);
      assert.ok(printed.some((l) => l.includes('onError threw') && l.includes('onError itself failed')), printed.join('\n'));
      assert.equal(await db.effectsOf(d.id), 0); // the transaction was rolled back, not left open
      assert.deepEqual(await db.states(), []); // released at once
      assert.equal((await redeliver(db, d))[0], 200);
      assert.equal(await db.effectsOf(d.id), 1);
    });

    test('an async onError that rejects changes nothing either (no unhandled rejection)', async () => {
      const [, d] = delivery('onerror-async');
      const receiver = db.receiver(undefined, async () => { throw new Error('the handler failed'); });
      receiver.onError = async () => { throw new Error('onError rejected'); };
      const [r, printed] = await printing(() => receiver.receive(d.headers, Buffer.from(d.body), d.now));
      assert.equal(r.status, 500);
      assert.ok(printed.some((l) => l.includes('onError threw') && l.includes('onError rejected')), printed.join('\n'));
      assert.deepEqual(await db.states(), []);
    });

    test('concurrent deliveries in one process each apply once', async () => {
      const ds = Array.from({ length: 10 }, (_, i) => delivery(`c${i}`)[1]);
      const receiver = db.receiver();
      const replies = await Promise.all([...ds, ...ds].map((d) => receiver.receive(d.headers, Buffer.from(d.body), d.now)));
      for (const d of ds) assert.equal(await db.effectsOf(d.id), 1);
      assert.ok(replies.every((r) => r.status === 200 || r.status === 503), replies.map((r) => r.status).join());
      assert.ok(replies.filter((r) => r.status === 200).length >= 10);
    });

    test('purge removes only expired rows', async () => {
      const [, d] = delivery('purge');
      assert.equal((await redeliver(db, d))[0], 200);
      assert.equal(await db.store().purge(), 0);
      assert.equal(await db.store(() => Date.now() / 1000 + 40 * 86400).purge(), 1); // the delivery's one key
      assert.deepEqual(await db.states(), []);
    });
  });
}

test('a pg.Client shared by concurrent deliveries: transactions one after the other, each applied once', async () => {
  const db = await new Db('postgres').open();
  const client = new (require('pg').Client)({ connectionString: dsn });
  await client.connect();
  try {
    const ds = Array.from({ length: 8 }, (_, i) => delivery(`client${i}`)[1]);
    const receiver = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-7/stores',
      store: new rk.PostgresDedupStore(client, { table: db.table, leaseSeconds: LEASE }),
      handler: async (d, c) => {
        assert.equal(c, client);
        await db.handler(d, c);
        await new Promise((r) => setTimeout(r, 5)); // other deliveries run meanwhile, never inside this transaction
      } });
    const replies = await Promise.all([...ds, ...ds].map((d) => receiver.receive(d.headers, Buffer.from(d.body), d.now)));
    for (const d of ds) assert.equal(await db.effectsOf(d.id), 1);
    assert.ok(replies.every((r) => r.status === 200 || r.status === 503), replies.map((r) => r.status).join());
    assert.ok(replies.filter((r) => r.status === 200).length >= 8);
  } finally {
    await client.end();
    await db.close();
  }
});

test('without createTable(), the first claims create the table (deliveries at once); createTable: false does not', async () => {
  const db = await new Db('postgres').open();
  try {
    const table = `${db.table}_auto`;
    const ds = Array.from({ length: 6 }, (_, i) => delivery(`auto${i}`)[1]);
    const receiver = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-7/stores',
      store: new rk.PostgresDedupStore(db.pool, { table, leaseSeconds: LEASE }), handler: (d, c) => db.handler(d, c) });
    const replies = await Promise.all(ds.map((d) => receiver.receive(d.headers, Buffer.from(d.body), d.now)));
    assert.deepEqual(replies.map((r) => r.status), ds.map(() => 200));
    for (const d of ds) assert.equal(await db.effectsOf(d.id), 1);
    const off = `${db.table}_off`;
    const seen = [];
    const manual = new rk.WebhookReceiver({ secrets: SECRET, namespace: 'org-7/stores', handler: () => {},
      store: new rk.PostgresDedupStore(db.pool, { table: off, createTable: false }), onStoreError: (e, what) => seen.push([what, e.code]) });
    const [, d] = delivery('off');
    assert.equal((await manual.receive(d.headers, Buffer.from(d.body), d.now)).status, 503);
    // the outage is reported with its cause (PostgreSQL's undefined_table)
    assert.deepEqual(seen, [['claim', '42P01']]);
    await db.pool.query(`DROP TABLE IF EXISTS ${table}`);
  } finally {
    await db.close();
  }
});

test('PostgreSQL restarted mid-delivery: 503, nothing applied, the redelivery applies it once', async () => {
  const db = await new Db('postgres').open();
  try {
    const [file, d] = delivery('restart');
    const r = await child(db, file, 'restart');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.split(' ')[0], '503', r.out);
    // this process's idle connections died with the server: a new pool
    await db.pool.end().catch(() => {});
    db.pool = new Pool({ connectionString: dsn });
    db.pool.on('error', () => {});
    assert.equal(await db.effectsOf(d.id), 0);
    const [status, body] = await redeliver(db, d);
    assert.deepEqual([status, body.result], [200, 'processed']);
    assert.equal(await db.effectsOf(d.id), 1);
  } finally {
    await db.close();
  }
});

test('detectSqlDialect: the core reads the driver\'s product and version; an SQLite older than 3.35 is refused', () => {
  assert.equal(rk.detectSqlDialect('PostgreSQL', '16.2'), 'postgres');
  assert.equal(rk.detectSqlDialect('SQLite', '3.45.1'), 'sqlite');
  assert.throws(() => rk.detectSqlDialect('SQLite', '3.34.1'), (e) => e instanceof rk.InvalidArgumentError && /3\.35 or later/.test(e.message));
  assert.throws(() => rk.detectSqlDialect('MySQL', '8.0'), (e) => e.code === 'invalid_argument' && /PostgreSQL and SQLite/.test(e.message));
});
