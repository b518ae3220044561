'use strict';
// make demo: real HTTP deliveries to the receiver on 127.0.0.1; prints what it decided.
const rk = require('royaltykit');
const { startReceiver } = require('./receiver.js');

const CURRENT = 'whsec_demo_current_secret';
const PREVIOUS = 'whsec_demo_previous_secret';
const now = () => Math.floor(Date.now() / 1000);
const event = (name, extra = {}) =>
  Buffer.from(JSON.stringify({
    event: name,
    resource: { type: 'ddex_message', reference: '5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b', url: '/api/v1/ddex/messages/5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b' },
    occurred_at: '2026-11-22T04:00:00Z',
    ...extra,
  }));

async function main() {
  // The rotation happened a minute ago: the previous secret is valid for four more minutes.
  const secrets = rk.activeSecrets(CURRENT, PREVIOUS, now() + 240);
  let dbUp = true;
  const stored = [];
  const store = (e) => {
    if (!dbUp) throw new Error('DB down');
    stored.push(e.name);
  };
  const { server, url } = await startReceiver({ secrets, store });
  const post = async (headers, body) => {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: r.status, decision: (await r.json()).decision };
  };

  const body = event('ddex.delivery.acknowledged');
  const genuine = rk.signWebhook(CURRENT, body, { deliveryId: 'dlv-0001' });
  const stale = rk.signWebhook(CURRENT, event('ddex.delivery.blocked'), { timestamp: now() - 600, deliveryId: 'dlv-0005' });
  const rotated = event('ddex.delivery.rejected');
  const v2Body = event('ddex.import.completed');
  const v2 = rk.signWebhook(CURRENT, v2Body, { deliveryId: 'dlv-0007' });
  const replayBody = event('ddex.delivery.acknowledged', { replay_of: 'dlv-0001' });
  const forgedBody = event('ddex.delivery.failed');
  const testBody = event('enterprise.webhook.test');

  const outageBody = event('ddex.delivery.failed', { resource: { type: 'ddex_message', reference: '9c1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b', url: '/api/v1/ddex/messages/9c1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b' } });
  const outage = rk.signWebhook(CURRENT, outageBody, { deliveryId: 'dlv-0011' });
  const outageRedelivery = rk.signWebhook(CURRENT, outageBody, { deliveryId: 'dlv-0011', timestamp: now() + 1 });
  const setDb = (up) => () => {
    dbUp = up;
  };

  const cases = [
    ['genuine delivery', genuine, body, 200, /^accepted/],
    ['exact duplicate (at-least-once)', genuine, body, 200, /duplicate delivery id/],
    ['same signed content, new delivery id', { ...genuine, 'Service-Webhook-Id': 'dlv-attacker-9' }, body, 200, /same signed content/],
    ['tampered body', rk.signWebhook(CURRENT, body, { deliveryId: 'dlv-0004' }), Buffer.concat([body.subarray(0, body.length - 1), Buffer.from(' }')]), 401, /no_matching_signature/],
    ['stale timestamp (10 min old)', stale, event('ddex.delivery.blocked'), 400, /timestamp_too_old/],
    ['signed with the previous secret (rotation)', rk.signWebhook(PREVIOUS, rotated, { deliveryId: 'dlv-0006' }), rotated, 200, /accepted \(secret #1\)/],
    ['unknown v2 signature beside a valid v1', { ...v2, 'Service-Webhook-Signature': 'v2=' + 'ab'.repeat(32) + ',' + v2['Service-Webhook-Signature'] }, v2Body, 200, /^accepted/],
    ['test event', rk.signWebhook(CURRENT, testBody, { deliveryId: 'dlv-0008' }), testBody, 200, /test event/],
    ['operator replay (replay_of, new id): processed', rk.signWebhook(CURRENT, replayBody, { deliveryId: 'dlv-0009' }), replayBody, 200, /^accepted/],
    ['signed with a wrong secret', rk.signWebhook('whsec_attacker', forgedBody, { deliveryId: 'dlv-0010' }), forgedBody, 401, /no_matching_signature/],
    ['DB down: processing fails', outage, outageBody, 500, /processing failed/, setDb(false)],
    ["the service's redelivery, DB back", outageRedelivery, outageBody, 200, /^accepted/, setDb(true)],
    ['that redelivery again', outageRedelivery, outageBody, 200, /duplicate delivery id/],
  ];

  const rows = [];
  let ok = true;
  for (const [name, headers, b, wantStatus, wantDecision, before] of cases) {
    if (before) before();
    const got = await post(headers, b);
    const pass = got.status === wantStatus && wantDecision.test(got.decision);
    ok &&= pass;
    rows.push([name, got.decision, String(got.status), pass ? 'ok' : `EXPECTED ${wantStatus} ${wantDecision}`]);
  }
  server.close();
  // Exactly one effect for the delivery whose first attempt failed: nothing lost, nothing doubled.
  const outageStored = stored.filter((n) => n === 'ddex.delivery.failed').length;
  ok &&= outageStored === 1;

  const head = ['delivery', 'receiver decided', 'HTTP', 'check'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => '| ' + r.map((c, i) => c.padEnd(widths[i])).join(' | ') + ' |';
  console.log(line(head));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  rows.forEach((r) => console.log(line(r)));
  console.log(`\nThe delivery that failed on the DB outage was stored ${outageStored} time(s) after its redeliveries.`);
  console.log(ok ? `${rows.length} deliveries, every outcome as expected.` : 'SOME OUTCOMES WERE NOT AS EXPECTED');
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
