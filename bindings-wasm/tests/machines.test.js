'use strict';
// The protocol machines' transcripts (tests/vectors/machines.json) against the installed npm
// package: each machine is driven the way a host drives it (switch on `step`, do it against the
// script, report the outcome) and the steps are compared with the transcript's.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const rk = require('royaltykit');

const VECTORS = process.env.ROYALTYKIT_VECTORS || path.join(__dirname, '..', '..', 'tests', 'vectors');
const data = JSON.parse(fs.readFileSync(path.join(VECTORS, 'machines.json'), 'utf8'));
const bytes = (b) => ('hex' in b ? Buffer.from(b.hex, 'hex') : Buffer.from(b.utf8, 'utf8'));
// Waits are compared to a microsecond (the transcripts' own tolerance is 1e-9 s).
const rounded = (steps) => steps.map((s) => ('seconds' in s ? { ...s, seconds: Math.round(s.seconds * 1e6) / 1e6 } : s));

function receipt(i) {
  const secrets = i.secrets.map((s) => ({ secret: s.secret, validUntil: s.valid_until }));
  const verifier = new rk.WebhookVerifier(secrets);
  const r = verifier.receipt(i.headers, bytes(i.body), { namespace: i.namespace, now: i.now, transactional: i.transactional === true,
    claimContentKey: i.claim_content_key === true, inbox: i.inbox === true });
  const answers = [...i.answers];
  const steps = [];
  for (let s = r.next(); ; ) {
    if (s.step === 'reply') {
      const { message, ...reply } = JSON.parse(s.body);
      assert.ok(r.finished);
      steps.push({ step: 'reply', status: s.status, ...reply });
      return steps;
    }
    steps.push({ ...s });
    if (s.step === 'run_handler' || s.step === 'enqueue') assert.ok(r.delivery.deliveryId);
    // every answer through the receipt's one input, report; "cancel": the host was cancelled
    // while the step was in flight (a wait takes an answer only then)
    const a = s.step === 'wait' && answers[0] !== 'cancel' ? 'ok' : answers.shift();
    if (a === 'cancel') s = r.report('cancelled');
    else if (s.step === 'claim' && a !== 'store_down') s = r.report({ claimed: a });
    else if (s.step === 'enqueue' && (a === 'new' || a === 'dup')) s = r.report({ enqueued: a === 'new' });
    else if (s.step === 'commit' && (a === 'lost' || (a === 'ok' && i.transactional === true))) s = r.report({ marked: a === 'ok' });
    else s = r.report(a === 'ok' ? 'done' : 'failed');
  }
}

/** A token as a transcript's events give it: a reporting one bound to the transcript's tenant. */
const bearer = (api, value, tenant) => (api === 'reports' ? rk.BearerToken.reports(value, tenant) : rk.BearerToken.enterprise(value));

/** A step as the transcripts show it (`core/tests/machines.rs`, `call_view` and `job_view`), and
 * whether the script goes on: `send` (an outcome event), `token` (a token event), `wait`, or the end. */
function view(s) {
  switch (s.step) {
    case 'send': {
      const auth = s.request.headers.find(([name]) => name === 'Authorization');
      return [{ step: 'send', method: s.request.method, target: s.request.pathAndQuery, token: auth ? auth[1].replace(/^Bearer /, '') : null,
        idempotency_key: s.request.idempotencyKeySent ? s.request.idempotencyKey : null }, 'send'];
    }
    case 'wait':
      return [{ step: 'wait', seconds: s.seconds }, 'wait'];
    case 'refresh_token':
      return [{ step: 'refresh_token' }, 'token'];
    case 'await_token':
      return [{ step: 'await_token', seconds: s.seconds }, 'end'];
    case 'reserve': // a fleet's reservation: its keys and arguments, the script's text left out (`reserve_view`)
      assert.equal(s.command[0], 'EVAL');
      assert.equal(s.command[1], rk.RESERVE_SCRIPT);
      return [{ step: 'reserve', command: s.command.slice(2) }, 'end'];
    case 'reconcile':
      assert.ok(Array.isArray(s.candidates) && typeof s.reason === 'string');
      return [{ step: 'reconcile', reconcile: s.reconcile, stage: s.stage, candidates: s.candidates, candidates_count: s.candidates.length }, 'end'];
    case 'done':
      return [s.exportId === undefined ? { step: 'done', status: s.status, body: Buffer.from(s.body).toString() }
        : { step: 'done', export_id: s.exportId, artifact: Buffer.from(s.body).toString() }, 'end'];
    case 'fail':
      assert.ok(s.error === null || s.error instanceof rk.RoyaltyKitError);
      return [{ step: 'fail', rule: s.rule, status: s.status, code: s.error ? s.error.code : null, transport: s.transport,
        retry_after_seconds: s.retryAfterSeconds, stage: s.stage, export_id: s.exportId }, 'end'];
    default:
      throw new Error(`unknown step ${s.step}`);
  }
}

/** Reports a send's outcome event through `report` (a response, maybe streamed, or a transport failure). */
function report(machine, e, now) {
  if (e.transport) return machine.report({ failure: e.transport }, now);
  const r = e.response;
  if (e.streamed !== undefined) assert.equal(machine.streams(r.status), e.streamed, `streams(${r.status})`);
  if (e.streamed) machine.report({ status: r.status, headers: r.headers, length: Buffer.byteLength(r.body) }, now);
  else machine.report({ status: r.status, headers: r.headers, body: r.body }, now);
}

function drive(machine, i, api, tenant) {
  let now = i.start;
  const events = [...i.events];
  const budget = i.budget ? new rk.RateBudget(i.budget.map(([name, limit, windowSeconds]) => ({ name, limit, windowSeconds }))) : undefined;
  const steps = [];
  for (let n = 0; n < 200; n++) {
    const [v, kind] = view(machine.next(now, budget));
    // the host keeps the checkpoint an export job gives before performing the step
    if (machine instanceof rk.ExportJob && machine.checkpoint() !== null) v.checkpoint = true;
    steps.push(v);
    if (kind === 'end') return steps;
    if (kind === 'wait') now += v.seconds;
    else if (kind === 'token') {
      const e = events.shift();
      machine.token(bearer(api, e.token, tenant), e.valid_for == null ? undefined : now + e.valid_for);
    } else {
      const e = events.shift();
      now += e.after ?? 0;
      report(machine, e, now);
    }
  }
  throw new Error(`no end after 200 steps: ${JSON.stringify(steps)}`);
}

function exchange(i) {
  const x = i.exchange;
  const request = x.api === 'reports'
    ? rk.buildTokenRequest({ clientId: x.client_id, clientSecret: x.client_secret, tenantId: x.tenant_id })
    : rk.buildEnterpriseTokenRequest({ apiKey: x.api_key, apiSecret: x.api_secret });
  return drive(rk.Call.exchange(request, { seed: i.options.seed }), i, x.api, i.params?.tenant_id);
}

function call(i) {
  if (i.exchange) return exchange(i);
  const p = i.params;
  const c = new rk.Call(i.operation, { path: p.path, query: p.query, body: p.body, tenantId: p.tenant_id, idempotencyKey: p.idempotency_key,
    idempotencyHeader: p.idempotency_header, requestId: p.request_id, maxAttempts: i.options.max_attempts,
    maxElapsedSeconds: i.options.max_elapsed_seconds, seed: i.options.seed });
  return drive(c, i, rk.operation(i.operation).api, p.tenant_id);
}

const jobOf = (o) => new rk.ExportJob({ tenantId: o.tenant_id, body: o.body, idempotencyHeader: o.idempotency_header, requestId: o.request_id,
  maxPolls: o.max_polls, maxPollSeconds: o.max_poll_seconds, reconcileGraceSeconds: o.reconcile_grace_seconds,
  minPollIntervalSeconds: o.min_poll_interval_seconds, maxPollIntervalSeconds: o.max_poll_interval_seconds, maxAttempts: o.max_attempts,
  maxElapsedSeconds: o.max_elapsed_seconds, seed: o.seed, idField: o.id_field, stateField: o.state_field });

function exportJob(i) {
  return drive(jobOf(i.options), i, 'reports', i.options.tenant_id);
}

/** Several machines on one Session, played by the transcript's script (`fn session` in
 * core/tests/machines.rs): each machine is asked with `next(now, session)`; with `fleet` (a
 * prefix) the session is that Fleet's, whose reservations the script answers. */
function session(i) {
  const windows = i.budget && i.budget.map(([name, limit, windowSeconds]) => ({ name, limit, windowSeconds }));
  const s = typeof i.fleet === 'string' ? new rk.Fleet({ prefix: i.fleet }).session(windows ?? undefined) : new rk.Session(windows ?? undefined);
  assert.equal(s.fleet?.prefix ?? null, i.fleet ?? null);
  const machines = i.machines.map((m) => (m.kind === 'call'
    ? new rk.Call(m.operation, { path: m.params.path, query: m.params.query, body: m.params.body, tenantId: m.params.tenant_id,
      idempotencyKey: m.params.idempotency_key, idempotencyHeader: m.params.idempotency_header, requestId: m.params.request_id,
      maxAttempts: m.options.max_attempts, maxElapsedSeconds: m.options.max_elapsed_seconds, seed: m.options.seed })
    : jobOf(m.options)));
  let now = i.start;
  const steps = [];
  for (const a of i.script) {
    if (a.next !== undefined) {
      steps.push({ ...view(machines[a.next].next(now, s))[0], machine: a.next });
    } else if (a.respond !== undefined) {
      now += a.after ?? 0;
      report(machines[a.respond], a, now);
    } else if (a.token !== undefined) {
      s.storeToken(bearer(i.api, a.token, i.tenant_id), a.valid_for == null ? undefined : now + a.valid_for);
    } else if (a.exchange_failed !== undefined) {
      s.exchangeFailed(a.exchange_failed);
    } else if (a.abandon === true) {
      s.abandonExchange();
    } else if (a.advance !== undefined) {
      now += a.advance;
    } else if ('reserved' in a) {
      machines[a.machine].report({ reply: a.reserved }, now);
    } else if (a.reserve_failed !== undefined) {
      machines[a.reserve_failed].report({ failure: 'connect_failed' }, now);
    } else {
      throw new Error(`unknown script action ${JSON.stringify(a)}`);
    }
  }
  return { steps, exchanges: s.exchanges };
}

/** A fleet token step as the transcripts show it (`fleet_token_view` in core/tests/machines.rs):
 * a script's text as its name. */
function fleetTokenView(s) {
  switch (s.step) {
    case 'command': {
      const names = { [rk.RESERVE_SCRIPT]: 'RESERVE_SCRIPT', [rk.PUBLISH_SCRIPT]: 'PUBLISH_SCRIPT', [rk.UNLOCK_SCRIPT]: 'UNLOCK_SCRIPT' };
      return { step: 'command', command: s.command.map((a) => names[a] ?? a) };
    }
    case 'wait':
      return { step: 'wait', seconds: s.seconds };
    case 'failed':
      return { step: 'failed', reason: s.reason };
    default:
      return { step: s.step };
  }
}

/** A fleet token refresh driven by the transcript's events (`fn fleet_token` in
 * core/tests/machines.rs); the steps after each event, and whether the session holds a token. */
function fleetToken(i) {
  let now = i.now;
  const session = new rk.Fleet({ prefix: i.prefix }).session();
  if (typeof i.held === 'string') session.storeToken(bearer(i.api, i.held, i.tenant_id));
  const ft = new rk.FleetToken(session, i.api, { tenantId: i.tenant_id, seed: i.seed, now });
  try {
    const steps = [fleetTokenView(ft.next())];
    for (const e of i.events) {
      if (e.advance !== undefined) {
        now += e.advance;
        continue;
      }
      let s;
      if ('reply' in e) s = ft.replied(e.reply, session, now);
      else if ('redis_failed' in e) s = ft.redisFailed(session);
      else if (typeof e.exchanged === 'string') s = ft.exchanged(bearer(i.api, e.exchanged, i.tenant_id), e.refresh_at, now);
      else if (typeof e.exchange_failed === 'string') s = ft.exchangeFailed(e.exchange_failed);
      else if ('waited' in e) s = ft.waited();
      else throw new Error(`unknown event ${JSON.stringify(e)}`);
      assert.deepEqual(s, ft.next(), 'an input returns the step next() gives');
      steps.push(fleetTokenView(s));
    }
    return { steps, has_token: session.hasToken };
  } finally {
    ft.free();
  }
}

/** A walk over pages fed the transcript's bodies (`fn pages` in core/tests/machines.rs): each
 * `fetch` recorded with its query, then the next body reported to `page()`. */
function pages(i) {
  const o = i.options;
  const walk = new rk.Pages(i.operation, i.query, { maxPages: o.max_pages, maxItems: o.max_items, pageSize: o.page_size, idField: o.id_field });
  const bodies = [...i.pages];
  const steps = [];
  try {
    for (;;) {
      const s = walk.next();
      if (s.step === 'fetch') {
        steps.push({ step: 'fetch', query: s.query });
        if (bodies.length === 0) return steps; // a fetch the transcript did not script: the steps differ
        const items = walk.page(bodies.shift());
        steps.push(items === null ? { step: 'page', items: null } : { step: 'page', member: items.member, take: items.take });
        assert.equal(walk.items, steps.filter((x) => x.take !== undefined).reduce((n, x) => n + x.take, 0));
      } else if (s.step === 'done') {
        assert.equal(walk.pages, s.pages);
        steps.push({ step: 'done', end: s.end, pages: s.pages, items: s.items });
        return steps;
      } else {
        assert.ok(s.error instanceof rk.RoyaltyKitError, String(s.error));
        assert.equal(s.error.httpStatus, 500);
        assert.ok(s.error.message.length > 0);
        // The family, as the JS error table gives it: the class.
        steps.push({ step: 'fail', code: s.error.code, family: s.error instanceof rk.PaginationError ? 'pagination' : s.error.name });
        // The walk is over: a page reported now is refused.
        assert.throws(() => walk.page('[]'), rk.InvalidArgumentError);
        return steps;
      }
    }
  } finally {
    walk.free();
  }
}

/** A recovery run fed the transcript's pages, store states and replay answers (`fn recovery` in
 * core/tests/machines.rs): each key's state from `states` (`new` when absent), each replay
 * answered by the next of `replays` (`{ failed: code }` → replayFailed, else `{ body }` →
 * replayed); the report in the transcript's snake_case. */
/** An input returns the step that follows: the one `next()` gives. */
function returnsNext(run, step) {
  assert.deepEqual(step, run.next(), 'an input returns the step next() gives');
}

function recovery(i) {
  const o = i.options;
  const run = new rk.Recovery(i.subscription, i.namespace, i.since, i.now,
    { maxReplays: o.max_replays, maxReplaysPerDelivery: o.max_replays_per_delivery, maxEntries: o.max_entries });
  const bodies = [...i.pages];
  const replays = [...i.replays];
  const steps = [];
  try {
    for (;;) {
      const s = run.next();
      switch (s.step) {
        case 'fetch':
          assert.equal(s.operationId, 'listEnterpriseWebhookDeliveries');
          steps.push({ step: 'fetch', query: s.query });
          if (bodies.length === 0) return steps;
          returnsNext(run, run.page(bodies.shift()));
          break;
        case 'check':
          steps.push({ step: 'check', keys: s.keys });
          returnsNext(run, run.checked(s.keys.map((k) => i.states[k] ?? 'new')));
          break;
        case 'replay': {
          assert.equal(s.operationId, 'replayEnterpriseWebhookDelivery');
          steps.push({ step: 'replay', delivery: s.delivery });
          if (replays.length === 0) return steps;
          const answer = replays.shift();
          returnsNext(run, typeof answer.failed === 'string' ? run.replayFailed(answer.failed) : run.replayed(answer.body));
          break;
        }
        case 'done': {
          const r = s.report;
          steps.push({ step: 'done', report: {
            entries: r.entries, considered: r.considered, before_since: r.beforeSince, skipped: r.skipped, replayed: r.replayed, end: r.end,
            deliveries: r.deliveries.map((d) => ({ reference: d.reference, event: d.event, status: d.status, created_at: d.createdAt,
              replays: d.replays, action: d.action, replay: d.replay, error: d.error })),
          } });
          // The run is over: an input now is refused.
          assert.throws(() => run.page('{"data": []}'), rk.InvalidArgumentError);
          return steps;
        }
        default:
          assert.ok(s.error instanceof rk.RoyaltyKitError, String(s.error));
          steps.push({ step: 'fail', code: s.error.code, family: s.error instanceof rk.PaginationError ? 'pagination' : s.error.name });
          return steps;
      }
    }
  } finally {
    run.free();
  }
}

/** A step of an inbox worker as the transcripts show it (`fn inbox_view` in core/tests/machines.rs). */
function inboxView(s) {
  switch (s.step) {
    case 'idle':
      return { step: 'idle', seconds: s.seconds };
    case 'run_handler':
      return { step: 'run_handler', key: s.entry.key, attempts: s.entry.attempts };
    case 'mark_done':
      return { step: 'mark_done', key: s.key, attempts: s.attempts };
    case 'settle':
      return { step: 'settle', key: s.key, attempts: s.attempts, poison: s.poison, retry_at: s.retryAt, error: s.error };
    default:
      return { step: s.step };
  }
}

/** An inbox worker fed the transcript's events (`fn inbox` in core/tests/machines.rs); the steps
 * after each event, and the worker's counters. */
function inbox(i) {
  const o = i.options;
  const w = new rk.InboxWorker({ maxAttempts: o.max_attempts, pollSeconds: o.poll_seconds, transactional: o.transactional, drain: o.drain,
    seed: i.seed });
  try {
    const steps = [inboxView(w.next())];
    for (const e of i.events) { // every event through the worker's one input, report
      let s;
      if ('claimed' in e) {
        const c = e.claimed;
        s = w.report({ claimed: c === null ? null : { key: c.key, deliveryId: c.delivery_id, event: c.event, body: c.body, attempts: c.attempts } }, e.now);
      } else if (typeof e.handler_failed === 'string') s = w.report({ failed: e.handler_failed }, e.now);
      else if (typeof e.marked === 'boolean') s = w.report({ marked: e.marked });
      else if ('store_failed' in e) s = w.report({ failed: 'the store could not be reached' });
      else if (['waited', 'began', 'handler', 'committed', 'rolled_back', 'settled'].some((k) => k in e)) s = w.report('done');
      else throw new Error(`unknown event ${JSON.stringify(e)}`);
      assert.deepEqual(s, w.next(), 'an input returns the step next() gives');
      steps.push(inboxView(s));
    }
    return { steps, counts: { processed: w.processed, retried: w.retried, poisoned: w.poisoned } };
  } finally {
    w.free();
  }
}

const ADAPTERS = { receipt, call, export_job: exportJob, session, pages, recovery, inbox, fleet_token: fleetToken };
// The least each group holds (the session group is new and small).
const MINIMUM = { receipt: 40, call: 40, export_job: 40, session: 5, pages: 20, recovery: 20, inbox: 16, fleet_token: 12 };

/** `got` restricted to the members `want` names, step by step; asserts each is there. */
function sameSteps(got, want, what) {
  assert.equal(got.length, want.length, `${what}: ${JSON.stringify(got)}`);
  for (let n = 0; n < want.length; n++) {
    for (const k of Object.keys(want[n])) assert.ok(k in got[n], `${what}: step ${n} has no ${k}`);
  }
  assert.deepEqual(rounded(got.map((g, n) => Object.fromEntries(Object.keys(want[n]).map((k) => [k, g[k]])))), rounded(want), what);
}


test('machines.json', async (t) => {
  for (const group of data.testGroups) {
    await t.test(`${group.function} (${group.tests.length} transcripts)`, () => {
      assert.ok(ADAPTERS[group.function], `no adapter for ${group.function}`);
      assert.ok(group.tests.length >= MINIMUM[group.function]);
      for (const c of group.tests) {
        const what = `tcId ${c.tcId} ${c.comment}`;
        if (c.result === 'invalid') {
          assert.throws(() => ADAPTERS[group.function](c.input), (e) => e instanceof rk.RoyaltyKitError && e.code === c.error.code, what);
          continue;
        }
        const got = ADAPTERS[group.function](c.input);
        sameSteps(Array.isArray(got) ? got : got.steps, c.expected.steps, what);
        if ('exchanges' in c.expected) assert.equal(got.exchanges, c.expected.exchanges, `${what}: exchanges`);
        if ('counts' in c.expected) assert.deepEqual(got.counts, c.expected.counts, `${what}: counts`);
        if ('has_token' in c.expected) assert.equal(got.has_token, c.expected.has_token, `${what}: has_token`);
      }
    });
  }
  assert.equal(data.testGroups.reduce((n, g) => n + g.tests.length, 0), data.numberOfTests);
  assert.deepEqual(data.testGroups.map((g) => g.function).sort(), Object.keys(ADAPTERS).sort());
});

test('a saved export job resumes without a second create', () => {
  const tenantId = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
  let job = new rk.ExportJob({ tenantId, body: { format: 'csv' }, token: rk.BearerToken.reports('secret-bearer-9', tenantId), seed: 1 });
  assert.equal(job.next(0).step, 'send');
  job.report({ status: 200, headers: {}, body: '[]' }, 0);
  assert.equal(job.next(0).request.method, 'POST');
  const saved = job.save(); // the create is in flight when the process dies
  assert.ok(!saved.includes('secret-bearer-9'));
  job = rk.ExportJob.resume(saved);
  job.token(rk.BearerToken.reports('secret-bearer-10', tenantId));
  const s = job.next(5);
  assert.equal(s.step, 'send');
  assert.equal(s.request.method, 'GET', 'reconciled, never created twice');
});

test('a call without a seed draws its own from the platform RNG: every key differs, past the seed pool', () => {
  const keys = new Set();
  const n = 300; // more than the 128 seeds the package draws at a time
  for (let i = 0; i < n; i++) {
    const c = new rk.Call('createPlatformExport', {
      tenantId: '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e', body: '{"export_class":"statements","format":"csv"}',
      token: rk.BearerToken.reports('tok-1', '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e'),
    });
    const s = c.next(1763900000);
    assert.equal(s.step, 'send', JSON.stringify(s));
    assert.match(c.idempotencyKey, /\S{16,}/);
    keys.add(c.idempotencyKey);
  }
  assert.equal(keys.size, n);
  // a given seed still makes the same key
  const seeded = () => {
    const c = new rk.Call('createPlatformExport', { tenantId: '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e', body: '{}', seed: 7, token: rk.BearerToken.reports('t', '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e') });
    c.next(1763900000);
    return c.idempotencyKey;
  };
  assert.equal(seeded(), seeded());
});

// A call whose two attempts get a 503: its events carry every level (a send is debug, a retry
// info, the failure warning).
function failingCall() {
  const tenantId = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
  const c = new rk.Call('listPlatformExports', { tenantId, seed: 7, maxAttempts: 2, token: rk.BearerToken.reports('tok-events', tenantId) });
  let now = 1763900000;
  for (let i = 0; i < 10; i++) {
    const s = c.next(now);
    if (s.step === 'send') c.report({ status: 503, headers: { 'Retry-After': '1' }, body: '' }, now);
    else if (s.step === 'wait') now += s.seconds;
    else if (s.step === 'fail') return c;
    else throw new Error(JSON.stringify(s));
  }
  throw new Error('the call did not end');
}

test('events below the host\'s level are dropped and the rest kept in order', () => {
  const everything = failingCall().takeEvents();
  assert.deepEqual(new Set(everything.map((e) => e.level)), new Set(['debug', 'info', 'warning']));
  for (const [minLevel, kept] of [[undefined, ['debug', 'info', 'warning']], ['debug', ['debug', 'info', 'warning']],
    ['info', ['info', 'warning']], ['warning', ['warning']]]) {
    const c = failingCall();
    assert.deepEqual(c.takeEvents(minLevel), everything.filter((e) => kept.includes(e.level)), String(minLevel));
    assert.deepEqual(c.takeEvents(), [], `${minLevel}: the dropped events are gone too`);
  }
  assert.throws(() => failingCall().takeEvents('error'), (e) => e instanceof rk.InvalidArgumentError && /min_level/.test(e.message));
});

test('an input out of turn is refused with a reason', () => {
  const c = new rk.Call('listEnterpriseCountries', { seed: 1 });
  assert.throws(() => c.report({ status: 200, headers: {}, body: '{}' }), (e) => e instanceof rk.InvalidArgumentError && /no request is in flight/.test(e.message));
});

const NOW = 1763784000;
function signedDelivery(deliveryId, ref = 'm1') {
  const body = Buffer.from(JSON.stringify({
    event: 'ddex.import.completed',
    resource: { type: 'ddex_message', reference: ref, url: `/api/v1/ddex/messages/${ref}` },
    occurred_at: '2026-11-22T04:00:00Z',
  }));
  return [rk.signWebhook('whsec_window', body, { timestamp: NOW, deliveryId }), body];
}

test('a receipt on a DedupWindow claims and commits inside the core: it asks only for the handler', () => {
  const verifier = new rk.WebhookVerifier('whsec_window');
  const window = new rk.DedupWindow(100);
  const [headers, body] = signedDelivery('dlv_w1');
  const first = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW, window });
  assert.deepEqual(first.next(), { step: 'run_handler' });
  const key = rk.deliveryKey('org_1', 'dlv_w1');
  assert.equal(window.claim(key, NOW), 'in_progress', 'the window holds the claim');
  const twin = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW, window });
  assert.equal(twin.next().status, 503, 'another receipt holds it');
  assert.equal(window.claim(key, NOW), 'in_progress', 'and its claim was not released');
  const reply = first.report('done');
  assert.equal(reply.step, 'reply');
  assert.equal(reply.status, 200);
  assert.match(reply.body, /processed/);
  assert.equal(window.claim(key, NOW), 'done');
  const again = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW + 60, window });
  assert.equal(again.next().status, 200);
  assert.doesNotMatch(again.next().body, /processed/, 'a duplicate is acknowledged without the handler');
  // A failed handler releases its claims, so the redelivery is processed.
  const [h2, b2] = signedDelivery('dlv_w2', 'm2');
  const failing = verifier.receipt(h2, b2, { namespace: 'org_1', now: NOW, window });
  assert.equal(failing.report('failed').status, 500);
  assert.deepEqual(verifier.receipt(h2, b2, { namespace: 'org_1', now: NOW + 30, window }).next(), { step: 'run_handler' });
  assert.throws(() => verifier.receipt(h2, b2, { namespace: 'org_1', window: {} }), TypeError);
});

test('a receipt gives the delivery verify gives and, once replied, its outcome (null before)', () => {
  const verifier = new rk.WebhookVerifier('whsec_window');
  const window = new rk.DedupWindow(100);
  // Control characters in a field: the delivery crosses with the step, whatever its text holds.
  for (const ref of ['m1', 'm\u0001\u0002x', 'm\u0000\u0001\u0002x']) {
    const [headers, body] = signedDelivery(`dlv_${ref.length}_${ref.charCodeAt(1)}`, ref);
    const r = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW, window });
    assert.deepEqual(r.next(), { step: 'run_handler' });
    assert.equal(r.outcome, null, 'no outcome before the reply');
    assert.deepEqual(r.delivery, verifier.verify(headers, body, NOW));
    assert.equal(r.delivery.event.resourceReference, ref);
    assert.equal(r.report('done').status, 200);
    assert.equal(r.outcome, 'processed');
    const twin = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW, window });
    assert.equal(twin.next().step, 'reply', 'a duplicate replies at once');
    assert.equal(twin.outcome, 'duplicate');
    assert.deepEqual(twin.delivery, r.delivery);
    assert.equal(r.delivery, r.delivery, 'the same object at every read');
    r.free();
    twin.free();
    assert.equal(r.delivery.event.resourceReference, ref, 'readable after free()');
  }
  const held = signedDelivery('dlv_held', 'm9');
  assert.equal(verifier.receipt(...held, { namespace: 'org_1', now: NOW, window }).outcome, null);
  const busy = verifier.receipt(...held, { namespace: 'org_1', now: NOW, window });
  assert.deepEqual([busy.next().status, busy.outcome], [503, 'in_progress']);
  const failing = verifier.receipt(...signedDelivery('dlv_fails', 'm8'), { namespace: 'org_1', now: NOW, window });
  assert.equal(failing.report('failed').status, 500);
  assert.equal(failing.outcome, 'handler_failed');
  const forged = verifier.receipt(held[0], Buffer.from('{}'), { namespace: 'org_1', now: NOW, window });
  assert.deepEqual([forged.next().step, forged.delivery, forged.outcome], ['reply', null, 'rejected']);
});

test('a Session: calls on it share one exchange; waitForChange wakes the waiters, honours the seconds and an AbortSignal', async () => {
  const session = new rk.Session('enterprise');
  const [a, b] = [new rk.Call('listEnterpriseCountries', { seed: 1 }), new rk.Call('listEnterpriseCountries', { seed: 2 })];
  assert.equal(a.next(NOW, session).step, 'refresh_token');
  assert.equal(session.exchanging, true);
  const version = session.version;
  const wait = b.next(NOW, session);
  assert.equal(wait.step, 'await_token');
  assert.ok(wait.seconds > 0);
  const woken = session.waitForChange(version, wait.seconds);
  session.storeToken(rk.parseEnterpriseTokenResponse(200, {}, JSON.stringify({ token: 'tok_s', expires_at: null }), { now: NOW }));
  assert.equal(await woken, true);
  assert.equal(session.hasToken, true);
  for (const c of [a, b]) assert.equal(c.next(NOW, session).request.headers.find(([n]) => n === 'Authorization')[1], 'Bearer tok_s');
  assert.equal(session.exchanges, 1);
  // Already changed: at once; nothing new: after the seconds; an abort: its reason.
  assert.equal(await session.waitForChange(version, 60), true);
  assert.equal(await session.waitForChange(session.version, 0.01), false);
  const controller = new AbortController();
  const aborted = session.waitForChange(session.version, 60, controller.signal);
  controller.abort(new Error('cancelled'));
  await assert.rejects(aborted, /cancelled/);
  assert.throws(() => a.next(NOW, {}), TypeError);
  assert.throws(() => session.storeToken('tok'), TypeError);
  assert.throws(() => new rk.Session(42), TypeError);
});

test('a Session\'s failed exchange fails the calls that waited for it; an abandoned one lets the next call lead', () => {
  const session = new rk.Session();
  const calls = [1, 2, 3, 4].map((seed) => new rk.Call('listEnterpriseCountries', { seed }));
  assert.equal(calls[0].next(NOW, session).step, 'refresh_token');
  assert.equal(calls[1].next(NOW, session).step, 'await_token');
  session.exchangeFailed('401 from the token endpoint');
  const failed = calls[1].next(NOW, session);
  assert.equal(failed.step, 'fail');
  assert.equal(failed.rule, 'token_exchange_failed');
  assert.match(failed.reason, /401 from the token endpoint/);
  assert.equal(calls[2].next(NOW, session).step, 'refresh_token');
  assert.equal(calls[3].next(NOW, session).step, 'await_token');
  session.abandonExchange();
  assert.equal(calls[3].next(NOW, session).step, 'refresh_token');
  assert.equal(session.exchanges, 3);
});

test('an export job\'s reconcile step carries its candidates and stage', () => {
  const data = JSON.parse(fs.readFileSync(path.join(VECTORS, 'machines.json'), 'utf8'));
  const cases = data.testGroups.find((g) => g.function === 'export_job').tests.filter((c) => c.expected.steps.at(-1).step === 'reconcile');
  assert.ok(cases.length >= 3);
  for (const c of cases) {
    const last = exportJob(c.input).at(-1);
    assert.equal(last.stage, 'reconcile');
    assert.equal(last.reconcile, 'lookup_by_sent_data');
    assert.ok(Array.isArray(last.candidates));
  }
});

test('a fail or reconcile step gives the core error of its family (callStepError, as Python and Kotlin)', () => {
  const fail = { step: 'fail', rule: 'attempts_exhausted', reason: 'would retry, but 3 of 3 attempts are used', status: null,
    transport: 'timeout', retryAfterSeconds: null, error: null, stage: 'poll', exportId: 'exp_9', attempts: 3 };
  const e = rk.callStepError(fail, 'getPlatformExport', 'https://api.example.com/base', 'ReadTimeout:\nslow');
  assert.ok(e instanceof rk.CallFailedError && e instanceof rk.RoyaltyKitError);
  assert.equal(e.message, 'getPlatformExport to api.example.com: would retry, but 3 of 3 attempts are used (3 attempts made); last failure: ReadTimeout: slow');
  assert.deepEqual([e.code, e.httpStatus, e.rule, e.transport, e.status, e.attempts, e.operationId, e.stage, e.exportId],
    ['call_failed', 500, 'attempts_exhausted', 'timeout', null, 3, 'getPlatformExport', 'poll', 'exp_9']);
  const r = rk.callStepError({ step: 'reconcile', reconcile: 'lookup_by_sent_data', reason: 'the create may have been applied',
    candidates: ['exp_1'], stage: 'reconcile' }, 'createPlatformExport', 'https://api.example.com');
  assert.ok(r instanceof rk.ReconcileRequired);
  assert.deepEqual([r.code, r.message, r.reconcile, r.candidates, r.stage, r.operationId],
    ['reconcile_required', 'the create may have been applied', 'lookup_by_sent_data', ['exp_1'], 'reconcile', 'createPlatformExport']);
  const api = new rk.ApiError('api_error', '404', {});
  assert.equal(rk.callStepError({ ...fail, error: api }, 'op', 'https://h'), api);
  assert.throws(() => rk.callStepError({ step: 'wait', seconds: 1 }, 'op', 'https://h'), rk.InvalidArgumentError);
});

test('report takes each outcome of the pending step and refuses the rest', () => {
  const tenant = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
  const call = new rk.Call('listPlatformExports', { tenantId: tenant, seed: 3, maxAttempts: 3 });
  const session = new rk.Session();
  session.storeToken(rk.BearerToken.reports('tok_report', tenant));
  for (const shape of [null, 'ok', 200]) assert.throws(() => call.report(shape, 1000), TypeError);
  assert.equal(call.next(1000, session).step, 'send');
  assert.throws(() => call.report({ failure: 'dns' }, 1000), rk.InvalidArgumentError);
  assert.throws(() => call.report({ reply: 'ok' }, 1000), rk.InvalidArgumentError);
  call.report({ failure: 'connect_failed' }, 1000);
  assert.equal(call.next(1000, session).step, 'wait');
  assert.ok(call.takeEvents().some((e) => e.kind === 'transport_failure'));
  assert.equal(call.next(1100, session).step, 'send');
  call.report({ status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"data":[]}' }, 1100);
  const done = call.next(1100, session);
  assert.deepEqual([done.step, done.status, Buffer.from(done.body).toString()], ['done', 200, '{"data":[]}']);
  assert.throws(() => call.report({ status: 200, headers: [], body: '{}' }, 1100), rk.InvalidArgumentError);
});

test("a receipt's report takes each outcome of the pending step and refuses the rest", () => {
  const verifier = new rk.WebhookVerifier('whsec_window');
  const [headers, body] = signedDelivery('dlv_r1');
  const r = verifier.receipt(headers, body, { namespace: 'org_1', now: NOW, transactional: true });
  assert.equal(r.next().step, 'claim');
  for (const shape of [null, undefined, 1, true, ['claimed', 'new']]) assert.throws(() => r.report(shape), TypeError);
  for (const wrong of ['Done', 'claimed', { claimed: 'gone' }, { claimed: true }, { marked: 'yes' }, {}]) {
    assert.throws(() => r.report(wrong), rk.InvalidArgumentError);
  }
  assert.throws(() => r.report('done'), (e) => e instanceof rk.InvalidArgumentError && /waiting/.test(e.message));
  assert.equal(r.report({ claimed: 'new' }).step, 'begin');
  assert.equal(r.report('done').step, 'run_handler');
  assert.equal(r.report('done').step, 'commit');
  assert.throws(() => r.report({ enqueued: true }), rk.InvalidArgumentError); // no enqueue is pending
  assert.equal(r.report({ marked: false }).step, 'rollback'); // the claim was lost
  assert.equal(r.report('failed').step, 'release'); // a failed rollback counts as done
  const reply = r.report('failed'); // so does a failed release
  assert.deepEqual([reply.step, reply.status, r.outcome], ['reply', 503, 'claim_lost']);
  r.free();
  verifier.free();
});

test("an inbox worker's report takes each outcome of the pending step and refuses the rest", () => {
  const w = new rk.InboxWorker({ maxAttempts: 2, pollSeconds: 5, transactional: true, drain: false, seed: 7 });
  try {
    assert.equal(w.next().step, 'claim');
    for (const shape of [null, undefined, 1, ['done']]) assert.throws(() => w.report(shape, 100), TypeError);
    for (const wrong of ['claimed', 'Done', {}, { done: true }, { marked: 'yes' }, { failed: true }, { claimed: 'row' },
      { claimed: { key: 'k' } }, { claimed: { key: 'k', deliveryId: 'd', event: 'ping', body: '{}', attempts: -1 } }]) {
      assert.throws(() => w.report(wrong, 100), rk.InvalidArgumentError);
    }
    assert.throws(() => w.report('done', 100), (e) => e instanceof rk.InvalidArgumentError && /waiting/.test(e.message));
    assert.equal(w.report({ claimed: null }, 100).step, 'idle');
    assert.throws(() => w.report({ failed: 'no' }, 100), rk.InvalidArgumentError); // a wait cannot fail
    assert.equal(w.report('done', 105).step, 'claim');
    assert.equal(w.report({ claimed: { key: 'k', deliveryId: 'd', event: 'ping', body: '{}', attempts: 1 } }, 105).step, 'begin');
    assert.equal(w.report('done').step, 'run_handler');
    assert.equal(w.report({ failed: 'E: the handler failed' }, 105).step, 'rollback');
    const settle = w.report({ failed: 'the connection is gone' }); // as good as rolled back
    assert.deepEqual([settle.step, settle.error, settle.poison], ['settle', 'E: the handler failed', false]);
    w.report('done');
    assert.deepEqual([w.processed, w.retried, w.poisoned], [0, 1, 0]);
  } finally {
    w.free();
  }
});

test('the inputs report replaced still work for one release, each with one DeprecationWarning', async () => {
  const warned = [];
  const listener = (w) => { if (w.code === 'ROYALTYKIT_REPORT') warned.push(w.message); };
  process.on('warning', listener);
  try {
    const tenant = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
    const session = new rk.Session();
    session.storeToken(rk.BearerToken.reports('tok_report', tenant));
    const call = new rk.Call('listPlatformExports', { tenantId: tenant, seed: 3, maxAttempts: 3 });
    let now = 1000;
    const send = () => { // the next send, after any wait
      for (let s = call.next(now, session); s.step !== 'send'; s = call.next(now, session)) {
        assert.equal(s.step, 'wait');
        now += s.seconds;
      }
    };
    for (let i = 0; i < 2; i++) { // twice: one warning
      send();
      call.transportFailure('connect_failed', now);
    }
    send();
    assert.throws(() => call.streamedResponse(200, []), TypeError); // no length: nothing reported
    call.response(200, { 'Content-Type': 'application/json' }, '{"data":[]}', now);
    const done = call.next(now, session);
    assert.deepEqual([done.step, done.status], ['done', 200]);
    const [headers, body] = signedDelivery('dlv_old');
    const receipt = new rk.WebhookVerifier('whsec_window').receipt(headers, body, { namespace: 'org_1', now: NOW });
    assert.equal(receipt.storeFailed().status, 503); // the claim's store is down
    const worker = new rk.InboxWorker({ transactional: true, drain: true, seed: 1 });
    assert.equal(worker.claimed(null, 1000).step, 'drained');
    worker.free();
    await new Promise((resolve) => setImmediate(resolve)); // emitWarning reports on the next tick
    assert.deepEqual(warned.map((m) => m.split('(')[0]),
      ['transportFailure', 'streamedResponse', 'response', 'WebhookReceipt.storeFailed', 'InboxWorker.claimed']);
    assert.ok(warned.every((m) => /deprecated \(kept for one release\): use report\(/.test(m)), warned.join('\n'));
  } finally {
    process.off('warning', listener);
  }
});
