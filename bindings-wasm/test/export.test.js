'use strict';
// tests/vectors/export.json against the installed package.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rk = require('royaltykit');

const VECTORS = process.env.ROYALTYKIT_VECTORS || path.join(__dirname, '..', '..', 'tests', 'vectors');
const V = JSON.parse(fs.readFileSync(path.join(VECTORS, 'export.json'), 'utf8'));

test('export transitions', () => {
  for (const c of V.transitions) {
    assert.equal(rk.exportState(c.state).known, c.state_known, JSON.stringify(c));
    const run = () => rk.validateExportCommand(c.state, c.command);
    if (c.error) {
      assert.throws(run, (e) => e instanceof rk.ExportStateError && e.code === c.error && JSON.stringify(e.allowed) === JSON.stringify(c.allowed) && e.message.includes(c.command), JSON.stringify(c));
    } else {
      assert.equal(run(), c.expected_state, JSON.stringify(c));
    }
  }
});

test('export poll decisions', () => {
  for (const c of V.poll) {
    const run = () => rk.exportPollDecision(c.state, c.attempt, { random: c.random, maxPolls: c.max_polls, maxUnknownPolls: c.max_unknown_polls });
    if (c.error) assert.throws(run, (e) => e.code === c.error);
    else {
      const d = run();
      assert.equal(d.action, c.expected.action, JSON.stringify(c));
      assert.ok(Math.abs(d.delaySeconds - c.expected.delay_seconds) < 1e-9);
    }
  }
});

test('export downloads', () => {
  for (const c of V.download) {
    const run = () => rk.checkExportDownload(c.status, c.headers, c.body ?? '');
    if (!c.error) assert.equal(run(), true, c.comment);
    else if (c.error === 'api_error') {
      assert.throws(run, (e) => e instanceof rk.ApiError && e.kind === c.api_error.kind && e.declared === c.api_error.declared && e.bodyCode === c.api_error.body_code, c.comment);
    } else assert.throws(run, (e) => e instanceof rk.ExportDownloadError && e.code === c.error, c.comment);
  }
});

test('export list queries, scopes, human routes, step-up', () => {
  const names = { limit: 'limit', cursor: 'cursor', export_class: 'exportClass', status: 'status', format: 'format' };
  for (const c of V.list_query) {
    const q = Object.fromEntries(c.query.map(([k, v]) => [names[k] ?? k, v]));
    const run = () => rk.validateExportListQuery(q);
    if (c.error) assert.throws(run, (e) => e.code === c.error, c.comment);
    else assert.equal(run(), c.expected, c.comment);
  }
  assert.equal(rk.validateExportListQuery({ limit: 20 }), 'limit=20');
  for (const c of V.scopes) assert.deepEqual(rk.missingScopes(c.granted, c.operation_id), c.expected);
  for (const c of V.human_routes) {
    const o = rk.operation(c.operation_id);
    assert.deepEqual({ csrf: o.csrf, idempotency: o.idempotency, step_up: o.stepUp }, { csrf: c.csrf, idempotency: c.idempotency, step_up: c.step_up });
  }
  for (const c of V.step_up) {
    const run = () => rk.stepUpSatisfies(c.requirement, c.kind, c.at, { now: c.now, maxAgeSeconds: c.max_age_seconds });
    if (c.error) assert.throws(run, (e) => e.code === c.error);
    else assert.equal(run(), c.expected, JSON.stringify(c));
  }
});
