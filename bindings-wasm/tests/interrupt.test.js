'use strict';
// Interrupt and resume (issue 42, point 6), from the installed package: a child process runs
// runExport against a fake reporting API in this process, which holds the k-th request open and
// sends the child SIGINT (for every request of a whole run, and once during a poll wait); the
// child's AbortSignal interrupts the job, which throws ExportInterruptedError with the export id
// and the checkpoint and leaves no temporary file. A second child resumes from that checkpoint:
// the artifact is complete at `to` and the two runs together created exactly one export. Then the
// core's shared checkpoints (tests/vectors/checkpoints.json) are resumed here, and the checkpoint
// callback is checked call by call.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const rk = require('royaltykit');
const { createReportsClient, ExportInterruptedError } = require('royaltykit/client');
const { fakeReports } = require('./fake-reports.cjs');

const ROOT = process.env.ROYALTYKIT_ROOT ?? path.resolve(__dirname, '../..');
const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const BODY = { export_class: 'statements', format: 'csv', period: '2026-10' };
const CHILD = path.join(__dirname, 'export-child.cjs');

/** Runs the child with `cfg`; `onStdoutLine` sees what it prints. Resolves to its exit code. */
function runChild(cfg, { onSpawn, onStdoutLine } = {}) {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'pipe'] });
  onSpawn?.(child);
  let stderr = '';
  child.stderr.on('data', (c) => { stderr += c; });
  if (onStdoutLine) readline.createInterface({ input: child.stdout }).on('line', (l) => onStdoutLine(l, child));
  else child.stdout.resume();
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
}

/** The test's time: a clock the waits move forward, each wait passing at once. */
function testTime() {
  let now = Date.now() / 1000;
  return { clock: () => now, sleep: async (seconds) => { now += seconds; } };
}

const temps = (dir) => fs.readdirSync(dir).filter((n) => n.startsWith('.royaltykit-'));

/**
 * One interrupted run and its resume. `at`: the number of the request held when SIGINT is sent,
 * or 'wait' (SIGINT during the first wait of the job: a poll wait). Returns what was seen.
 */
async function interruptAndResume(keyed, at) {
  const api = await fakeReports({ tenant: TENANT });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-interrupt-'));
  const cfg = {
    url: api.url, tenant: TENANT, keyed, body: BODY, to: path.join(dir, 'out.csv'),
    checkpointFile: path.join(dir, '..', `${path.basename(dir)}.checkpoint`), result: path.join(dir, '..', `${path.basename(dir)}.result`),
  };
  try {
    let child;
    let heldOp = null;
    if (at !== 'wait') {
      api.hold = (entry) => {
        if (entry.n !== at) return false;
        heldOp = entry.op;
        child.kill('SIGINT');
        return true;
      };
    }
    const first = await runChild({ ...cfg, waitForever: at === 'wait' }, {
      onSpawn: (c) => { child = c; },
      onStdoutLine: (line, c) => { if (line === 'waiting') c.kill('SIGINT'); },
    });
    assert.equal(first.code, 3, `interrupted at ${at}: exit ${first.code} ${first.signal ?? ''} ${first.stderr}`);
    const interrupted = JSON.parse(fs.readFileSync(cfg.result, 'utf8'));
    assert.equal(interrupted.name, 'ExportInterruptedError');
    assert.equal(interrupted.code, 'export_interrupted');
    assert.equal(interrupted.cause, 'SIGINT');
    assert.equal(interrupted.message, rk.exportInterruptedMessage(interrupted.exportId));
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing is left at the target: no artifact, no temporary file');
    const createsBefore = api.creates;
    const created = api.requests.find((r) => r.op === 'create' && r.exportId)?.exportId ?? null;
    // The export id is known once a create was answered (a held create was applied, unanswered).
    const answered = api.requests.some((r) => r.op === 'create' && (at === 'wait' || r.n < at));
    assert.equal(interrupted.exportId, answered ? created : null, `at ${at} (${heldOp})`);
    // The checkpoint the callback persisted last is the one before the last send of the job.
    const jobSends = api.requests.filter((r) => r.op !== 'token').length;
    assert.equal(fs.existsSync(cfg.checkpointFile), jobSends > 0);

    fs.writeFileSync(cfg.checkpointFile, interrupted.checkpoint);
    api.hold = null;
    const second = await runChild({ ...cfg, resume: cfg.checkpointFile });
    assert.equal(second.code, 0, `resumed after ${at}: ${second.stderr}`);
    const done = JSON.parse(fs.readFileSync(cfg.result, 'utf8'));
    assert.deepEqual(fs.readFileSync(cfg.to), api.artifact);
    assert.equal(done.size, api.artifact.length);
    assert.equal(api.creates, 1, `at ${at} (${heldOp}): one export in both runs together (${createsBefore} in the first)`);
    assert.equal(done.exportId, [...api.exports.keys()][0]);
    const keys = new Set(api.requests.filter((r) => r.op === 'create').map((r) => r.key));
    if (keyed) {
      assert.equal(keys.size, 1, 'every create carried the same idempotency key');
      assert.match([...keys][0], /^idem_/);
    } else {
      assert.deepEqual([...keys], [null]);
      assert.equal(api.requests.filter((r) => r.op === 'create').length, 1, 'an unkeyed job never sends a create again');
    }
    assert.deepEqual(temps(dir), []);
    assert.deepEqual(fs.readdirSync(dir), ['out.csv']);
    return { heldOp, requests: api.requests.length };
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(cfg.checkpointFile, { force: true });
    fs.rmSync(cfg.result, { force: true });
  }
}

for (const keyed of [true, false]) {
  const kind = keyed ? 'a keyed client' : 'an unkeyed client (the job lists first)';
  test(`SIGINT at each request of a run of ${kind}, and during a poll wait; each resume ends with one export and no temp file`, async () => {
    // A whole run first, to know its requests.
    const api = await fakeReports({ tenant: TENANT });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-whole-'));
    const whole = await runChild({ url: api.url, tenant: TENANT, keyed, body: BODY, to: path.join(dir, 'out.csv'),
      checkpointFile: path.join(dir, 'cp'), result: path.join(dir, 'result') });
    assert.equal(whole.code, 0, whole.stderr);
    const ops = api.requests.map((r) => r.op);
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(ops, keyed ? ['token', 'create', 'read', 'read', 'download'] : ['token', 'list', 'create', 'read', 'read', 'download']);

    const held = [];
    for (let k = 1; k <= ops.length; k++) held.push((await interruptAndResume(keyed, k)).heldOp);
    assert.deepEqual(held, ops);
    await interruptAndResume(keyed, 'wait');
  });
}

test('the shared checkpoints (saved by the core) resume through this client: the request named next, one export, the artifact', async () => {
  const vectors = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'vectors', 'checkpoints.json'), 'utf8'));
  const body = JSON.parse(vectors.body);
  for (const v of vectors.checkpoints) {
    // The export "a previous process" created: the polling one's id, the keyed create's key.
    const id = v.export_id ?? '7c9e6679-7425-40de-944b-e07072fc6b14';
    const api = await fakeReports({
      tenant: vectors.tenant_id,
      exports: [{ id, export: body, key: v.keyed ? JSON.parse(v.checkpoint).call.params.idempotency_key : undefined }],
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-vectors-'));
    try {
      const client = createReportsClient({ baseUrl: api.url, credentials: { clientId: 'cid', clientSecret: 'csecret' },
        tenantId: vectors.tenant_id, ...testTime() });
      const result = await client.runExport(null, { resume: v.checkpoint, to: path.join(dir, 'out.csv') });
      assert.equal(result.exportId, id, v.comment);
      assert.deepEqual(fs.readFileSync(path.join(dir, 'out.csv')), api.artifact);
      assert.equal(api.creates, 0, `${v.comment}: no second export`);
      assert.equal(api.exports.size, 1);
      const [token, next] = api.requests;
      assert.equal(token.op, 'token');
      assert.equal(next.method, v.next.method, v.comment);
      assert.equal(next.path, v.next.path, v.comment);
      if (v.next.idempotency_key) assert.equal(next.key, v.next.idempotency_key);
      assert.ok(!api.requests.some((r) => r.op === 'create' && !v.keyed), 'an unkeyed checkpoint never creates blindly');
      assert.deepEqual(fs.readdirSync(dir), ['out.csv']);
    } finally {
      await api.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('onCheckpoint is awaited before each send and pause of the job, only when the state changed; the checkpoint resumes', async () => {
  const api = await fakeReports({ tenant: TENANT, readsUntilReady: 3 });
  const order = [];
  const fetchSeen = (url, init) => {
    const p = new URL(url).pathname;
    if (!p.endsWith('/oauth/token')) order.push(['send', `${init.method} ${p}`]);
    return fetch(url, init);
  };
  try {
    const client = createReportsClient({ baseUrl: api.url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT,
      idempotencyHeader: 'Idempotency-Key', fetch: fetchSeen, ...testTime() });
    const texts = [];
    const result = await client.runExport(BODY, {
      onCheckpoint: async (text) => {
        await new Promise((resolve) => setImmediate(resolve)); // awaited: the send waits for it
        texts.push(text);
        order.push(['checkpoint', texts.length - 1]);
      },
    });
    const sends = order.filter(([k]) => k === 'send');
    assert.deepEqual(sends.map(([, s]) => s.split(' ')[0]), ['POST', 'GET', 'GET', 'GET', 'GET']);
    // Every send comes right after a checkpoint (each state before a send differs from the last).
    order.forEach(([k], i) => {
      if (k === 'send') assert.equal(order[i - 1]?.[0], 'checkpoint', JSON.stringify(order));
    });
    for (let i = 1; i < texts.length; i++) assert.notEqual(texts[i], texts[i - 1]);
    // A checkpoint names no token or credential, and the one after the create (before the first
    // poll's pause) resumes to read that export.
    for (const t of texts) for (const secret of ['csecret', ...api.tokens]) assert.ok(!t.includes(secret));
    const before = api.requests.length;
    const again = await client.runExport(null, { resume: texts[1] });
    assert.equal(again.exportId, result.exportId);
    assert.equal(api.creates, 1);
    assert.equal(api.requests[before].op, 'read');
  } finally {
    await api.close();
  }
});

test('a job killed during a Retry-After resumes the wait and never sends early: onCheckpoint is awaited before each pause too', async () => {
  const api = await fakeReports({ tenant: TENANT });
  const time = testTime();
  let sent = 0;
  let reads = 0;
  let at429 = null;
  // The first read is answered 429 with Retry-After: 2 (the API never sees it).
  const fetch429 = (url, init) => {
    sent += 1;
    if (init.method === 'GET' && /\/exports\/[0-9a-f-]+$/.test(new URL(url).pathname) && ++reads === 1) {
      at429 = sent;
      return Promise.resolve(new Response('{"message":"slow down"}', { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '2' } }));
    }
    return fetch(url, init);
  };
  try {
    const client = createReportsClient({ baseUrl: api.url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT,
      idempotencyHeader: 'Idempotency-Key', fetch: fetch429, ...time });
    const given = [];
    await client.runExport(BODY, { onCheckpoint: (text) => { given.push({ text, at: time.clock(), sent }); } });
    assert.equal(reads, 3); // the 429, then queued, then ready
    // Given once the 429 had arrived: before its pause, then before the next read goes out.
    const [pause, next] = given.filter((g) => g.sent === at429);
    assert.ok(pause && next && pause.text !== next.text, JSON.stringify(given.map((g) => g.sent)));
    const resumed = (dt) => {
      const [job, session] = [rk.ExportJob.resume(pause.text), new rk.Session()];
      try {
        return job.next(pause.at + dt, session);
      } finally {
        job.free();
        session.free();
      }
    };
    for (const [dt, left] of [[0, 2], [1, 1]]) {
      const s = resumed(dt);
      assert.equal(s.step, 'wait', JSON.stringify(s));
      assert.ok(Math.abs(s.seconds - left) < 0.05, JSON.stringify(s));
    }
    assert.notEqual(resumed(2.5).step, 'wait'); // the Retry-After has passed: it goes on at once
  } finally {
    await api.close();
  }
});

test('runExport: a body and resume, or neither, or resume with a new job\'s options, is a TypeError; another tenant\'s checkpoint is refused before it is sent', async () => {
  const api = await fakeReports({ tenant: TENANT });
  try {
    const client = createReportsClient({ baseUrl: api.url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT, ...testTime() });
    const vectors = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'vectors', 'checkpoints.json'), 'utf8'));
    const cp = vectors.checkpoints[1].checkpoint;
    await assert.rejects(client.runExport(BODY, { resume: cp }), (e) => e instanceof TypeError && /not both/.test(e.message));
    await assert.rejects(client.runExport(null), (e) => e instanceof TypeError && /\{ resume \}/.test(e.message));
    await assert.rejects(client.runExport(undefined, {}), TypeError);
    await assert.rejects(client.runExport(null, { resume: cp, requestId: 'x' }), /requestId cannot be given with resume/);
    await assert.rejects(client.runExport(null, { resume: 42 }), /resume must be the checkpoint text/);
    await assert.rejects(client.runExport(BODY, { onCheckpoint: 'file.json' }), /onCheckpoint must be a function/);
    await assert.rejects(client.runExport(BODY, { resumed: cp }), /unknown option `resumed`/);
    await assert.rejects(client.runExport(null, { resume: '{not json' }), (e) => e instanceof rk.RoyaltyKitError);
    assert.equal(api.requests.length, 0);
    // The vectors' tenant is not this client's: the core refuses it before the job's first request.
    await assert.rejects(client.runExport(null, { resume: cp }), (e) => {
      assert.ok(e instanceof rk.RequestBuildError, String(e));
      assert.ok(e.message.includes(vectors.tenant_id) && e.message.includes(TENANT), e.message);
      return true;
    });
    assert.ok(api.requests.every((r) => r.op === 'token'), JSON.stringify(api.requests));
  } finally {
    await api.close();
  }
});

test('an AbortSignal aborted in-process: ExportInterruptedError with the signal\'s reason as cause, no file left; the checkpoint finishes the job', async () => {
  const api = await fakeReports({ tenant: TENANT, readsUntilReady: 1 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-abort-'));
  try {
    const client = createReportsClient({ baseUrl: api.url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT,
      idempotencyHeader: 'Idempotency-Key', ...testTime() });
    const ac = new AbortController();
    const reason = new Error('stopped by the test');
    api.hold = (entry) => {
      if (entry.op !== 'download') return false;
      ac.abort(reason);
      return true;
    };
    const to = path.join(dir, 'out.csv');
    let error;
    await assert.rejects(client.runExport(BODY, { to, signal: ac.signal }), (e) => { error = e; return true; });
    assert.ok(error instanceof ExportInterruptedError, String(error));
    assert.ok(error instanceof rk.RoyaltyKitError);
    assert.equal(error.name, 'ExportInterruptedError');
    assert.equal(error.code, 'export_interrupted');
    assert.equal(error.cause, reason);
    assert.equal(error.exportId, [...api.exports.keys()][0]);
    assert.equal(error.message, rk.exportInterruptedMessage(error.exportId));
    assert.deepEqual(fs.readdirSync(dir), []);
    api.hold = null;
    const done = await client.runExport(null, { resume: error.checkpoint, to });
    assert.equal(done.exportId, error.exportId);
    assert.deepEqual(fs.readFileSync(to), api.artifact);
    assert.equal(api.creates, 1);
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
