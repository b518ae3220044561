'use strict';
// A small fake reporting API on 127.0.0.1 for interrupt.test.js and timeouts.test.js, in the test
// process so that a test can hold any request open (and act while it is held): the token
// exchange, the export list, create (applied when it arrives; a create with an idempotency key
// seen before answers the same export), read (ready from the `readsUntilReady`-th read) and
// download. It counts what it applied: `creates`, and every request in `requests`.
const http = require('node:http');
const crypto = require('node:crypto');

const P = '/api/platform/v1';

async function fakeReports({ tenant, readsUntilReady = 2, exports = [], artifact } = {}) {
  const w = {
    requests: [],
    creates: 0,
    exports: new Map(),
    keys: new Map(),
    reads: new Map(),
    tokens: [],
    artifact: artifact ?? Buffer.from('id,amount\n'.concat(Array.from({ length: 2000 }, (_, i) => `${i},${i * 3}\n`).join(''))),
    /** `(entry) => true` holds that request open (never answered). */
    hold: null,
    held: [],
  };
  for (const e of exports) {
    w.exports.set(e.id, { ...e.export, id: e.id, status: e.status ?? 'queued' });
    if (e.key) w.keys.set(e.key, e.id);
  }
  const json = (res, status, payload) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  };
  function apply(req, path, body, entry) {
    const tenantOk = req.headers['x-tenant-id'] === tenant;
    if (req.method === 'POST' && path === `${P}/oauth/token`) {
      entry.op = 'token';
      if (!tenantOk || !String(req.headers.authorization ?? '').startsWith('Basic ')) return (res) => json(res, 401, { message: 'invalid client' });
      const token = `rt_${crypto.randomBytes(12).toString('hex')}`;
      w.tokens.push(token);
      return (res) => json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600, scope: 'exports:read exports:write' });
    }
    if (!tenantOk) return (res) => json(res, 400, { message: 'tenant' });
    if (req.method === 'GET' && path === `${P}/exports`) {
      entry.op = 'list';
      const data = [...w.exports.values()];
      return (res) => json(res, 200, { data, next_cursor: null });
    }
    if (req.method === 'POST' && path === `${P}/exports`) {
      entry.op = 'create';
      const key = entry.key;
      if (key !== null && w.keys.has(key)) {
        const e = w.exports.get(w.keys.get(key));
        return (res) => json(res, 200, e);
      }
      const e = { ...JSON.parse(body.toString('utf8')), id: crypto.randomUUID(), status: 'queued' };
      w.exports.set(e.id, e);
      if (key !== null) w.keys.set(key, e.id);
      w.creates += 1;
      entry.exportId = e.id;
      return (res) => json(res, 200, e);
    }
    const m = /^\/api\/platform\/v1\/exports\/([0-9a-f-]+)(\/download)?$/.exec(path);
    const e = m ? w.exports.get(m[1]) : undefined;
    if (req.method === 'GET' && e && !m[2]) {
      entry.op = 'read';
      const n = (w.reads.get(e.id) ?? 0) + 1;
      w.reads.set(e.id, n);
      if (n >= readsUntilReady) e.status = 'ready';
      return (res) => json(res, 200, e);
    }
    if (req.method === 'GET' && e && m[2]) {
      entry.op = 'download';
      if (e.status !== 'ready') return (res) => json(res, 409, { message: 'Export is not ready' });
      return (res) => {
        res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(w.artifact.length) });
        res.end(w.artifact);
      };
    }
    entry.op = 'unknown';
    return (res) => json(res, 404, { message: 'Resource not found' });
  }
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url, 'http://fake').pathname;
      const entry = { n: w.requests.length + 1, method: req.method, path, key: req.headers['idempotency-key'] ?? null, tenant: req.headers['x-tenant-id'] ?? null };
      w.requests.push(entry);
      const reply = apply(req, path, Buffer.concat(chunks), entry); // applied before it may be held
      if (w.hold?.(entry)) {
        w.held.push(res);
        return;
      }
      reply(res);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  w.url = `http://127.0.0.1:${server.address().port}`;
  w.close = () => new Promise((resolve) => {
    for (const res of w.held) res.destroy();
    server.closeAllConnections?.();
    server.close(resolve);
  });
  return w;
}

module.exports = { fakeReports, P };
