'use strict';
// The documentation's Node examples (README.md and docs/, see docs.cjs), run against the installed package. The HTTP example
// runs against a small server on 127.0.0.1 started here.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');

const { docExample } = require('./docs.cjs');
const RETRY_LOG = '503: retry in 2 s (server_error_retry)\n429: retry in 3 s (rate_limited_retry_after)\ndone after 3 attempts\n';
const HTTP_LOG = 'token for 3600 s, missing scopes: exports:write\n404 not_found export_not_found declared=true\n';
const EXPORT_LOG = 'created exp_1 (queued)\npoll 1: queued -> keep_polling\npoll 2: ready -> download\ndownloaded 8 bytes\n';
const EXPECTED = { node: '500\n200\n200 1\n', 'node-retry': RETRY_LOG, 'node-http': HTTP_LOG, 'node-export': EXPORT_LOG,
  'node-sqlite-store': '200 200\n1\n' };

/** The reporting API's token and export routes, as far as the examples need them. */
function fakeReportsApi() {
  let reads = 0;
  const server = http.createServer((req, res) => {
    const json = (status, body, headers = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'POST' && req.url === '/api/platform/v1/oauth/token') {
      const ok = req.headers.authorization === 'Basic ' + Buffer.from('cli:secret').toString('base64') && req.headers['x-tenant-id'];
      if (!ok) return json(401, { error: 'invalid_client' });
      return json(200, { access_token: 'tok_local_1', token_type: 'Bearer', expires_in: 3600, scope: 'exports:read' }, { 'cache-control': 'no-store' });
    }
    if (req.headers.authorization !== 'Bearer tok_local_1') return json(401, { message: 'token missing' });
    if (req.method === 'GET' && req.url === '/api/platform/v1/exports/exp_404') return json(404, { message: 'Export not found', code: 'export_not_found' });
    if (req.method === 'POST' && req.url === '/api/platform/v1/exports') return json(201, { id: 'exp_1', status: 'queued' });
    if (req.method === 'GET' && req.url === '/api/platform/v1/exports/exp_1') return json(200, { id: 'exp_1', status: ++reads === 1 ? 'queued' : 'ready' });
    if (req.method === 'GET' && req.url === '/api/platform/v1/exports/exp_1/download') {
      res.writeHead(200, { 'content-type': 'text/csv' });
      return res.end('a,b\n1,2\n');
    }
    return json(500, { message: 'unexpected route' });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

for (const [name, output] of Object.entries(EXPECTED)) {
  test(`documentation example ${name} runs and prints the documented outcome`, async () => {
    const code = docExample(name);
    assert.ok(code, `the documentation has example ${name}`);
    const file = path.join(process.cwd(), `readme-${name}.js`);
    fs.writeFileSync(file, code);
    const server = await fakeReportsApi();
    try {
      const env = { ...process.env, ROYALTYKIT_BASE_URL: `http://127.0.0.1:${server.address().port}`, ROYALTYKIT_TOKEN: 'tok_local_1' };
      const { stdout } = await promisify(execFile)(process.execPath, [file], { env, timeout: 30_000 });
      assert.equal(stdout, output);
    } finally {
      server.close();
    }
  });
}
