// The small suite every JavaScript runtime runs against the installed package (issue: npm
// runtimes): a valid, a tampered, a stale and a rotated delivery, a large body (node:crypto's
// HMAC where it exists, wasm elsewhere), one retry decision, one error body, and royaltykit/fetch
// on a WHATWG Request and with an EventRouter. Expected values come from the enterprise spec,
// not from the package.
const enc = new TextEncoder();
const SECRET = 'whsec_runtime_suite';
const OLD = 'whsec_runtime_previous';
const NOW = 1795320000;
const event = (pad) => enc.encode(JSON.stringify({
  event: 'ddex.delivery.acknowledged',
  resource: { type: 'ddex_message', reference: 'r-1', url: '/api/v1/ddex/messages/r-1' },
  occurred_at: '2026-11-22T04:00:00Z',
  note: 'x'.repeat(pad),
}));

const outcome = async (f) => {
  try {
    const v = await f();
    return `accepted ${v.deliveryId ?? v.webhook?.deliveryId}`;
  } catch (e) {
    return `${e.code}/${e.httpStatus}`;
  }
};

/** Runs the suite; resolves to `{ passed, failed: [[name, got, want]] }`. */
export async function run(rk, fetchApi) {
  const body = event(0);
  const large = event(4096);
  const signed = rk.signWebhook(SECRET, body, { timestamp: NOW, deliveryId: 'dlv_rt_1' });
  const tampered = enc.encode(new TextDecoder().decode(body).replace('r-1', 'r-2'));
  const rotated = rk.signWebhook(OLD, body, { timestamp: NOW, deliveryId: 'dlv_rt_2' });
  const signedLarge = rk.signWebhook(SECRET, large, { timestamp: NOW, deliveryId: 'dlv_rt_3' });
  const request = (b, headers) => new Request('https://receiver.example/webhooks', { method: 'POST', headers, body: b });
  const cases = [
    ['valid delivery', () => outcome(() => rk.verifyWebhook(signed, body, SECRET, { now: NOW })), 'accepted dlv_rt_1'],
    ['tampered body', () => outcome(() => rk.verifyWebhook(signed, tampered, SECRET, { now: NOW })), 'no_matching_signature/401'],
    ['stale delivery (301 s > 300 s tolerance)', () => outcome(() => rk.verifyWebhook(signed, body, SECRET, { now: NOW + 301 })), 'timestamp_too_old/400'],
    ['rotated secret: previous one still accepted', () => outcome(() => rk.verifyWebhook(rotated, body, [SECRET, OLD], { now: NOW })), 'accepted dlv_rt_2'],
    ['4 KiB body', () => outcome(() => new rk.WebhookVerifier(SECRET).verify(signedLarge, large, NOW)), 'accepted dlv_rt_3'],
    ['retry decision: read, 503, first attempt', () => {
      const d = rk.decideRetry({ retryClass: 'read', attempt: 1, status: 503, random: 0 });
      return `${d.action} ${d.delaySeconds}`;
    }, 'retry 2'],
    ['error body: enterprise 401', () => {
      const e = rk.parseApiError('enterprise', 401, [], '{"success":false,"message":"Missing bearer token"}');
      return `${e.kind} ${e.reason} ${e.status}`;
    }, 'unauthenticated missing_bearer_token 401'],
    ['idempotency keys: one random key per request (the runtime RNG)', () => {
      const params = { body: { export_class: 'statements', format: 'csv' }, token: rk.BearerToken.reports('t', '0f8fad5b-d9cb-469f-a165-70867728950e'), tenantId: '0f8fad5b-d9cb-469f-a165-70867728950e' };
      const [a, b] = [rk.buildRequest('createPlatformExport', params), rk.buildRequest('createPlatformExport', params)];
      return `${/^idem_[0-9a-f]{32}$/.test(a.idempotencyKey)} ${a.idempotencyKey !== b.idempotencyKey}`;
    }, 'true true'],
    ['royaltykit/fetch: a Request', () => outcome(() => fetchApi.verifyRequest(request(body, signed), SECRET, { now: NOW })), 'accepted dlv_rt_1'],
    ['royaltykit/fetch: a tampered Request', () => outcome(() => fetchApi.verifyRequest(request(tampered, signed), SECRET, { now: NOW })), 'no_matching_signature/401'],
    ['royaltykit/fetch: an EventRouter as a receiver\'s handler', async () => {
      const runs = [];
      const router = new fetchApi.EventRouter()
        .on('ddex.delivery.acknowledged', async (d) => { runs.push(`on ${d.deliveryId}`); })
        .onAny((d) => { runs.push(`any ${d.event.name}`); })
        .otherwise(() => { runs.push('otherwise'); });
      const r = await new fetchApi.WebhookReceiver({ secrets: SECRET, namespace: 'runtime-suite', handler: router }).receive(signed, body, NOW);
      return `${r.status} ${runs.join(', ')}`;
    }, '200 on dlv_rt_1, any ddex.delivery.acknowledged'],
  ];
  const failed = [];
  for (const [name, f, want] of cases) {
    let got;
    try {
      got = await f();
    } catch (e) {
      got = `threw ${e && e.stack ? e.stack : e}`;
    }
    if (got !== want) failed.push([name, got, want]);
  }
  return { passed: cases.length - failed.length, failed };
}

/** One line the test script greps: `ROYALTYKIT-SUITE <runtime> passed=N failed=[...]`. */
export const line = (runtime, r) => `ROYALTYKIT-SUITE ${runtime} passed=${r.passed} failed=${JSON.stringify(r.failed)}`;
