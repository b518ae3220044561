// make bench, clients: the minimal loopback API both contenders of every language call (the fake API
// of tests/fakeapi is a thread-per-connection Python server, too slow to compare per-call costs).
// Usage: node server.mjs → prints "listening <port>" and serves until it is killed (run.sh does).
//
// HTTP/1.1 over raw sockets, keep-alive, answers in one write:
// - POST /api/platform/v1/oauth/token (reporting client credentials) → a bearer token (1 h);
// - GET /api/platform/v1/exports/<id> with `Authorization: Bearer <that token>` and `X-Tenant-ID`
//   → 200 and a small JSON export; without them 401 (so a contender that skips a header fails);
// - GET /_stats → {"tokens": n, "gets": n, "unauthorized": n}; GET /_last → the header names of
//   the last GET of an export (to show both contenders send the same request).
import net from 'node:net';

const TOKEN = 'rt_bench_00112233445566778899aabbccddeeff';
const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const EXPORT = {
  id: '7a1f6c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b', status: 'ready', export_class: 'statements', format: 'csv',
  created_at: '2026-11-27T06:00:00Z', completed_at: '2026-11-27T06:00:05Z', size_bytes: 1048576,
};
const stats = { tokens: 0, gets: 0, unauthorized: 0 };
let last = [];

function response(status, reason, body, extra = '') {
  const b = Buffer.from(body);
  return Buffer.concat([Buffer.from(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n${extra}` +
    `Content-Length: ${b.length}\r\nConnection: keep-alive\r\n\r\n`, 'latin1'), b]);
}
const EXPORT_OK = response(200, 'OK', JSON.stringify(EXPORT));
const UNAUTHORIZED = response(401, 'Unauthorized', '{"message":"Unauthenticated."}');
const NOT_FOUND = response(404, 'Not Found', '{"message":"Resource not found"}');
const TOKEN_OK = response(200, 'OK', JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600,
  scope: 'exports:read exports:write' }), 'Cache-Control: no-store\r\n');

function handle(head, body) {
  const lines = head.split('\r\n');
  const [method, target] = lines[0].split(' ');
  const headers = new Map();
  for (let i = 1; i < lines.length; i++) {
    const c = lines[i].indexOf(':');
    if (c > 0) headers.set(lines[i].slice(0, c).trim().toLowerCase(), lines[i].slice(c + 1).trim());
  }
  if (method === 'GET' && target.startsWith('/api/platform/v1/exports/')) {
    last = [...headers.keys()];
    if (headers.get('authorization') !== `Bearer ${TOKEN}` || headers.get('x-tenant-id') !== TENANT) {
      stats.unauthorized++;
      return UNAUTHORIZED;
    }
    stats.gets++;
    return EXPORT_OK;
  }
  if (method === 'POST' && target === '/api/platform/v1/oauth/token') {
    const auth = headers.get('authorization') ?? '';
    const grant = (() => { try { return JSON.parse(body.toString()).grant_type; } catch { return null; } })();
    if (auth !== `Basic ${Buffer.from('cid:csecret').toString('base64')}` || grant !== 'client_credentials') {
      return response(401, 'Unauthorized', '{"message":"bad client credentials"}');
    }
    stats.tokens++;
    return TOKEN_OK;
  }
  if (method === 'GET' && target === '/_stats') return response(200, 'OK', JSON.stringify(stats));
  if (method === 'GET' && target === '/_last') return response(200, 'OK', JSON.stringify(last));
  return NOT_FOUND;
}

const server = net.createServer((sock) => {
  sock.setNoDelay(true);
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    const out = [];
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) break;
      const head = buf.toString('latin1', 0, end);
      if (/\r\ntransfer-encoding:/i.test(head)) { // no client here sends a chunked request
        sock.end(response(400, 'Bad Request', '{"message":"chunked request bodies are not served"}'));
        return;
      }
      const m = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      const len = m ? Number(m[1]) : 0;
      if (buf.length < end + 4 + len) break;
      out.push(handle(head, buf.subarray(end + 4, end + 4 + len)));
      buf = buf.subarray(end + 4 + len);
    }
    if (out.length) sock.write(out.length === 1 ? out[0] : Buffer.concat(out));
  });
  sock.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
