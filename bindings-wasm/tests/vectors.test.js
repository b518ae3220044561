'use strict';
// Runs every shared vector file (tests/vectors/*.json, one shape: see tests/vectors/shape.py)
// against the installed npm package with one generic runner. Only the adapter table below is
// specific to JS: how each `function` a group names is called, and the value it gives back.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');
const rk = require('royaltykit');

const VECTORS = process.env.ROYALTYKIT_VECTORS || path.join(__dirname, '..', '..', 'tests', 'vectors');
const load = (name) => JSON.parse(fs.readFileSync(path.join(VECTORS, name), 'utf8'));
const bytes = (b) => (b == null ? null : 'hex' in b ? Buffer.from(b.hex, 'hex') : Buffer.from(b.utf8, 'utf8'));
const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

// ---- the generic runner -------------------------------------------------------------------------

function member(actual, key) {
  // The parsed response's `message` (the record's field in Rust and Kotlin) is an ApiError's
  // `serverMessage` here: the error's own message is the core's whole sentence.
  if (key === 'message' && actual instanceof rk.ApiError) return { found: true, value: actual.serverMessage };
  if (actual !== null && typeof actual === 'object') {
    if (key in actual) return { found: true, value: actual[key] };
    if (camel(key) in actual) return { found: true, value: actual[camel(key)] };
  }
  return { found: false };
}

const CHECKS = { _prefix: (got, want) => got.startsWith(want), _max_len: (got, want) => [...got].length <= want, _count: (got, want) => got.length === want };

/** Why `actual` does not match `expected` (a subset match, see shape.py), or null. */
function mismatch(expected, actual) {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return `expected ${JSON.stringify(expected)}, got ${util.inspect(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const m = mismatch(expected[i], actual[i]);
      if (m) return `[${i}]: ${m}`;
    }
    return null;
  }
  if (expected !== null && typeof expected === 'object') {
    for (const [k, want] of Object.entries(expected)) {
      const suffix = Object.keys(CHECKS).find((s) => k.endsWith(s) && member(actual, k.slice(0, -s.length)).found);
      if (suffix) {
        if (!CHECKS[suffix](member(actual, k.slice(0, -suffix.length)).value, want)) return `\`${k}\` ${JSON.stringify(want)} does not hold`;
        continue;
      }
      const got = member(actual, k);
      if (!got.found) return `\`${k}\` missing`;
      const m = mismatch(want, got.value);
      if (m) return `${k}: ${m}`;
    }
    return null;
  }
  if (typeof expected === 'number' && typeof actual === 'number') return Math.abs(expected - actual) < 1e-9 ? null : `expected ${expected}, got ${actual}`;
  return expected === actual ? null : `expected ${JSON.stringify(expected)}, got ${util.inspect(actual)}`;
}

function runFile(file, minimum = 1) {
  const data = load(file);
  test(file, async (t) => {
    let count = 0;
    for (const group of data.testGroups) {
      const adapter = ADAPTERS[group.function];
      await t.test(`${group.function} (${group.tests.length} tests)`, async () => {
        assert.ok(adapter, `no adapter for ${group.function}`);
        const failures = [];
        for (const c of group.tests) {
          count++;
          let problem;
          try {
            const value = await adapter(c.input);
            problem = c.result === 'valid' ? mismatch(c.expected, value) : `accepted: ${util.inspect(value)}`;
          } catch (e) {
            if (!(e instanceof rk.RoyaltyKitError)) problem = `threw ${e && e.stack}`;
            else problem = c.result === 'invalid' ? mismatch(c.error, e) && `${mismatch(c.error, e)} (${e.message})` : `refused: ${e.code} (${e.message})`;
          }
          if (problem) failures.push(`tcId ${c.tcId} (${c.comment}): ${problem}`);
        }
        assert.deepEqual(failures, []);
      });
    }
    assert.equal(count, data.numberOfTests);
    assert.ok(count >= minimum);
  });
}

// ---- the adapter table ---------------------------------------------------------------------------

const text = (u8) => (u8 === null ? null : { utf8: Buffer.from(u8).toString('utf8') });
const descriptor = (d) => {
  assert.ok(!util.inspect(d).includes('tok_ABC') && !JSON.stringify(d).includes('tok_ABC') && !util.inspect(d).includes('sec_1'), 'printing hides credentials');
  return { ...d.toJSON(), headers: d.headers, body: text(d.body) };
};
const outcome = (f) => {
  try {
    return f().contentKey;
  } catch (e) {
    return e.code;
  }
};

/** verifyWebhook with the wasm HMAC and with node:crypto's (the package picks by body size), and
 * the reusable WebhookVerifier: all must agree. */
/** A vector's secrets: strings, or `{ secret, valid_until }` as `{ secret, validUntil }`. */
const secrets = (list) => list.map((s) => (typeof s === 'string' ? s : { secret: s.secret, validUntil: s.valid_until }));

function verifyWebhook(i) {
  const opts = { now: i.now, toleranceSeconds: i.tolerance, maxBodyBytes: i.max_body_bytes };
  const run = (threshold) => rk.verifyWebhook(i.headers, bytes(i.body), secrets(i.secrets), { ...opts, hostMacThreshold: threshold });
  const outcomes = [outcome(() => run(0))];
  for (const threshold of [Infinity, 0]) {
    let verifier;
    try {
      verifier = new rk.WebhookVerifier(secrets(i.secrets), { ...opts, hostMacThreshold: threshold });
    } catch {
      continue;
    }
    outcomes.push(outcome(() => verifier.verify(i.headers, bytes(i.body), i.now)));
  }
  const result = outcome(() => run(Infinity));
  for (const o of outcomes) assert.equal(o, result, 'the HMAC paths and the verifier agree');
  return run(Infinity);
}

function rateBudget(i) {
  const b = new rk.RateBudget(i.preset ?? i.windows.map(([name, limit, windowSeconds]) => ({ name, limit, windowSeconds })));
  return i.ops.map((op) => {
    const all = Array.from({ length: op.repeat ?? 1 }, () => b.tryAcquire(op.now));
    for (const d of all) assert.deepEqual(d, all[0], 'repeats give the same decision');
    return all[0];
  });
}

const LIST_NAMES = { export_class: 'exportClass' };

/** A vector's bearer token. A reporting token without its tenant cannot be built with the public
 * API any more (`BearerToken.reports` requires it): the case that proves the core refuses one is
 * reached through the class's own constructor. */
function bearerToken(t) {
  // a reporting token without its tenant: an explicit null, which every machine route refuses
  return t.api === 'reports' ? rk.BearerToken.reports(t.value, t.tenant_id ?? null) : rk.BearerToken.enterprise(t.value);
}

/** activeSecrets: WebhookSecrets that hide the secret when printed, and that a verifier takes
 * with their expiry. */
function activeSecrets(i) {
  const list = rk.activeSecrets(i.current, i.previous, i.previous_valid_until, i.now);
  for (const s of list) {
    assert.ok(s instanceof rk.WebhookSecret);
    assert.ok(!util.inspect(s).includes(s.secret) && !JSON.stringify(s).includes(s.secret), 'printing hides the secret');
  }
  new rk.WebhookVerifier(list).free();
  return list;
}

/** revealedSecret: the expected record is `secrets(previous)` as `{ secret, valid_until }`, the
 * record parsed; printing the RevealedSecret (or its WebhookSecrets) never shows a secret. */
function revealedSecret(i) {
  let r;
  try {
    r = rk.revealedSecret(bytes(i.body));
  } catch (e) {
    // the refusal never echoes the body (every vector's secrets start whsec_)
    assert.ok(!/whsec_/.test(`${util.inspect(e)} ${JSON.stringify(e)} ${e.stack}`), util.inspect(e));
    throw e;
  }
  const list = r.secrets(i.previous);
  const printed = [util.inspect(r, { depth: 5 }), JSON.stringify(r), String(r), util.inspect(list), JSON.stringify(list)].join('\n');
  for (const s of list) assert.ok(!printed.includes(s.secret), `printing shows ${s.secret}: ${printed}`);
  assert.ok(Object.isFrozen(r) && r.secret instanceof rk.WebhookSecret);
  new rk.WebhookVerifier(list).free();
  return {
    secrets: list.map((s) => ({ secret: s.secret, valid_until: s.validUntil })),
    previous_valid_until: r.previousValidUntil,
    reference: r.reference,
    record: JSON.parse(r.record),
  };
}

/** route_event: the registrations on an EventRouter, each handler recording itself; the core's
 * route for the event, and the handlers a delivery of it runs (`router.handler`), which must be
 * exactly that route in its order: the `on` indices, then every `onAny` handler, then the
 * fallback. The route is the result. */
async function routeEvent(i) {
  const router = new rk.EventRouter();
  const ran = [];
  let ons = 0;
  let anys = 0;
  for (const reg of i.registrations) {
    if ('on' in reg) {
      const n = ons++;
      router.on(reg.on, () => { ran.push(`on ${n}`); });
    } else if (reg.on_any) {
      const n = anys++;
      router.onAny(async () => { ran.push(`any ${n}`); });
    } else if (reg.otherwise) {
      router.otherwise(() => { ran.push('otherwise'); });
    } else {
      throw new Error(`unknown registration ${JSON.stringify(reg)}`);
    }
  }
  const route = router.route(i.event);
  const delivery = { deliveryId: 'dlv_vector', event: { name: i.event } };
  await router.handler(delivery);
  const want = [...route.named.map((n) => `on ${n}`), ...(route.any ? Array.from({ length: anys }, (_, n) => `any ${n}`) : []),
    ...(route.fallback ? ['otherwise'] : [])];
  assert.deepEqual(ran, want, 'a delivery runs the handlers of its route, in its order');
  return route;
}

const ADAPTERS = {
  verify_webhook: verifyWebhook,
  resource_path: (i) => ({ path: rk.resourcePath(i.resource_url) }),
  call_failed_message: (i) => rk.callFailedMessage(i.operation, i.base_url, i.reason, i.attempts, i.cause),
  export_interrupted_message: (i) => rk.exportInterruptedMessage(i.export_id),
  client_timeouts: (i) => {
    const t = rk.clientTimeouts(i.connect_timeout, i.read_timeout);
    return { connect_seconds: t.connectSeconds, read_seconds: t.readSeconds };
  },
  check_base_url: (i) => rk.checkBaseUrl(i.base_url, i.allow_insecure_http),
  active_secrets: activeSecrets,
  revealed_secret: revealedSecret,
  route_event: routeEvent,
  delivery_key: (i) => rk.deliveryKey(i.namespace, i.delivery_id),
  event_key: (i) => rk.eventKey(i.namespace, { name: i.name, resourceType: i.resource_type, resourceReference: i.resource_reference, occurredAtText: i.occurred_at }),
  content_key: (i) => rk.contentKey(i.secret, i.timestamp, bytes(i.body)),
  idempotency_key: (i) => rk.idempotencyKey(i.namespace, i.operation_id, i.request_id),
  dedup_window: (i) => {
    const w = new rk.DedupWindow(i.capacity, i.ttl_seconds);
    return i.ops.map((op) => w.checkAndInsert(op.key, op.now));
  },
  dedup_claims: (i) => {
    const w = new rk.DedupWindow(i.capacity, i.ttl_seconds, { leaseSeconds: i.lease_seconds });
    return i.ops.map((op) => (op.op === 'commit' ? (w.commit(op.key, op.now), null) : w[op.op](op.key, op.now)));
  },
  decide_retry: (i) =>
    rk.decideRetry({
      retryClass: i.retry_class, status: i.status, headers: i.headers, transport: i.transport, attempt: i.attempt, elapsedSeconds: i.elapsed_seconds,
      tokenRefreshed: i.token_refreshed, idempotencyKeySent: i.idempotency_key_sent, random: i.random, now: i.now, maxAttempts: i.max_attempts, maxElapsedSeconds: i.max_elapsed_seconds,
    }),
  webhook_retry_schedule: () => rk.webhookRetrySchedule(),
  webhook_next_attempt_at: (i) => rk.webhookNextAttemptAt(i.first_attempt_at, i.attempts_made),
  webhook_gives_up_at: (i) => rk.webhookGivesUpAt(i.first_attempt_at),
  backoff_delay: (i) =>
    rk.backoffDelay(i.attempt, { random: i.random, policy: i.policy && { steps: i.policy.steps, band: i.policy.band, jitter: i.policy.jitter, capSeconds: i.policy.cap_seconds } }),
  parse_retry_after: (i) => rk.parseRetryAfter(i.value, i.now),
  rate_budget: rateBudget,
  api_error_message: (i) => rk.parseApiError(i.api, i.status, i.headers, bytes(i.body), { operationId: i.operation_id ?? undefined, now: i.now }).message,
  parse_api_error: (i) => rk.parseApiError(i.api, i.status, i.headers, bytes(i.body), { operationId: i.operation_id ?? undefined, now: i.now }),
  build_request: ({ operation_id, params: p }) =>
    descriptor(rk.buildRequest(operation_id, {
      path: p.path, query: p.query, body: bytes(p.body), token: p.token && bearerToken(p.token), tenantId: p.tenant_id, userId: p.user_id, idempotencyKey: p.idempotency_key,
      idempotencyHeader: p.idempotency_header, requestId: p.request_id, keyNamespace: p.key_namespace, keyRandom: Buffer.from(p.key_random, 'hex'),
    })),
  build_token_request: (i) => descriptor(rk.buildTokenRequest({ clientId: i.client_id, clientSecret: i.client_secret, tenantId: i.tenant_id, scopes: i.scopes })),
  build_enterprise_token_request: (i) => descriptor(rk.buildEnterpriseTokenRequest({ apiKey: i.api_key, apiSecret: i.api_secret })),
  parse_token_response: (i) => {
    const tk = rk.parseTokenResponse(i.status, i.headers, bytes(i.body), { requestedScopes: i.requested_scopes, tenantId: i.tenant_id, now: i.now });
    assert.ok(!util.inspect(tk).includes(tk.accessToken) && !JSON.stringify(tk).includes(tk.accessToken), 'printing hides the token');
    return tk;
  },
  parse_enterprise_token_response: (i) => rk.parseEnterpriseTokenResponse(i.status, i.headers, bytes(i.body), { now: i.now }),
  parse_api_session: (i) => rk.parseApiSession(i.status, i.headers, bytes(i.body), { now: i.now }),
  missing_scopes: (i) => rk.missingScopes(i.granted, i.operation_id),
  response_notices: (i) => rk.responseNotices(i.headers),
  operation: (i) => rk.operation(i.operation_id),
  export_state: (i) => rk.exportState(i.state),
  validate_export_command: (i) => rk.validateExportCommand(i.state, i.command),
  export_poll_decision: (i) =>
    rk.exportPollDecision(i.state, i.attempt, { random: i.random, maxPolls: i.max_polls }),
  check_export_download: (i) => rk.checkExportDownload(i.status, i.headers, bytes(i.body)) && 'ok',
  validate_export_list_query: (i) => rk.validateExportListQuery(Object.fromEntries(i.query.map(([k, v]) => [LIST_NAMES[k] ?? k, v]))),
  plan_receipt: (i) => rk.planReceipt(i.namespace, rk.verifyWebhook(i.headers, bytes(i.body), i.secrets, { now: i.now }),
    i.claim_content_key === undefined ? undefined : { claimContentKey: i.claim_content_key }),
  decide_claims: (i) => rk.decideClaims(i.states),
  redis_dedup_command: (i) => {
    const p = new rk.RedisDedupProtocol({ prefix: i.prefix, ttlSeconds: i.ttl_seconds, leaseSeconds: i.lease_seconds });
    return i.op === 'state' ? p.stateCommand(i.key) : p[`${i.op}Command`](i.key, i.token);
  },
  redis_dedup_reply: (i) => ({ claim: rk.RedisDedupProtocol.claimReply, state: rk.RedisDedupProtocol.stateReply }[i.op] ?? rk.RedisDedupProtocol.guardedReply)(i.reply),
  redis_inbox_command: (i) => {
    const p = new rk.RedisInboxProtocol({ prefix: i.prefix, ttlSeconds: i.ttl_seconds, leaseSeconds: i.lease_seconds });
    const body = i.body === undefined ? undefined : bytes(i.body).toString('utf8');
    const ops = {
      enqueue: () => p.enqueueCommand(i.key, i.delivery_id, i.event, body, i.now),
      claim: () => p.claimCommand(i.now),
      mark_done: () => p.markDoneCommand(i.key, i.attempts, i.now),
      settle: () => p.settleCommand(i.key, i.attempts, i.poison, i.retry_at, i.error),
      poisoned: () => p.poisonedCommand(i.limit),
      retry: () => p.retryCommand(i.key),
      lookup: () => p.lookupCommand(i.key),
      counts: () => p.countsCommand(i.now),
      purge: () => p.purgeCommand(i.now),
    };
    return ops[i.op]();
  },
  redis_inbox_reply: (i) => {
    const P = rk.RedisInboxProtocol;
    return { claim: P.claimReply, poisoned: P.poisonedReply, counts: P.countsReply, added: P.addedReply, lookup: P.lookupReply }[i.op](i.reply);
  },
  step_up_satisfies: (i) => rk.stepUpSatisfies(i.requirement, i.kind, i.at, { now: i.now, maxAgeSeconds: i.max_age_seconds }),
};

runFile('webhook.json', 160);
runFile('dedup.json');
runFile('retry.json', 200);
runFile('export.json');
runFile('api_error.json', 60);
runFile('requests.json', 40);
runFile('token.json');
runFile('receiver.json');

test('the node:crypto path: a throwing or lying primitive fails closed', () => {
  const body = Buffer.from('{"event":"ddex.import.failed","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T00:00:00Z"}');
  const headers = rk.signWebhook('s3cret', body, { timestamp: 1000, deliveryId: 'd1' });
  {
    const v = new rk.WebhookVerifier('s3cret', { hostMacThreshold: 0 });
    assert.equal(v.verify(headers, body, 1000).deliveryId, 'd1');
    // A different secret through node:crypto never matches.
    assert.throws(() => new rk.WebhookVerifier('other', { hostMacThreshold: 0 }).verify(headers, body, 1000), { code: 'no_matching_signature' });
    // A primitive that throws: the error reaches the caller; one that answers wrong bytes: no match.
    const native = require(require('node:path').join(require('node:path').dirname(require.resolve('royaltykit')), 'native/royaltykit_wasm.cjs'));
    const inner = new native.WebhookVerifier(['s3cret'], 300, 262144);
    const joined = Object.entries(headers).flat().join('\0');
    assert.throws(() => inner.verifyWithMac(joined, undefined, body, 1000, () => { throw new Error('primitive failed'); }), /primitive failed/);
    for (const answer of [new Uint8Array(32), new Uint8Array(31), 'not bytes', undefined]) {
      assert.throws(() => inner.verifyWithMac(joined, undefined, body, 1000, () => answer), (e) => JSON.parse(e).code === 'no_matching_signature');
    }
  }
});
