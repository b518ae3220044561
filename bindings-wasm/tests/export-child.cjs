'use strict';
// One export job in a process of its own, for interrupt.test.js: Ctrl-C (SIGINT) aborts it
// through an AbortController, each checkpoint is persisted to a file as it is handed out, and
// the interruption's export id and checkpoint are written before exiting with code 3.
// Configuration (JSON, argv[2]): url, tenant, keyed, body, to, checkpointFile, result, resume (a
// file holding a checkpoint), waitForever (the waits the job asks for never end by themselves,
// and each is announced on stdout as `waiting`).
const fs = require('node:fs');
const { createReportsClient, ExportInterruptedError } = require('royaltykit/client');

const cfg = JSON.parse(process.argv[2]);
const ac = new AbortController();
process.once('SIGINT', () => ac.abort(new Error('SIGINT')));

// The test's time: each wait the job asks for passes at once (the clock moves by it), or, with
// waitForever, never ends by itself.
let offset = 0;
const clock = () => Date.now() / 1000 + offset;
const sleep = (seconds, signal) => new Promise((resolve, reject) => {
  if (signal?.aborted) return reject(signal.reason);
  const t = setTimeout(() => {
    offset += seconds;
    resolve();
  }, cfg.waitForever ? 3_600_000 : 0);
  signal?.addEventListener('abort', () => {
    clearTimeout(t);
    reject(signal.reason);
  }, { once: true });
  if (cfg.waitForever) process.stdout.write('waiting\n');
});

const client = createReportsClient({
  baseUrl: cfg.url, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: cfg.tenant,
  ...(cfg.keyed ? { idempotencyHeader: 'Idempotency-Key' } : {}), clock, sleep,
});

(async () => {
  const resume = cfg.resume ? fs.readFileSync(cfg.resume, 'utf8') : null;
  try {
    const r = await client.runExport(resume === null ? cfg.body : null, {
      to: cfg.to, signal: ac.signal, ...(resume === null ? {} : { resume }),
      onCheckpoint: (text) => fs.writeFileSync(cfg.checkpointFile, text),
    });
    fs.writeFileSync(cfg.result, JSON.stringify({ exportId: r.exportId, size: r.size }));
    process.exit(0);
  } catch (e) {
    if (e instanceof ExportInterruptedError) {
      fs.writeFileSync(cfg.result, JSON.stringify({ name: e.name, code: e.code, message: e.message, exportId: e.exportId, checkpoint: e.checkpoint, cause: String(e.cause?.message ?? e.cause) }));
      process.exit(3);
    }
    console.error(e);
    process.exit(1);
  }
})();
