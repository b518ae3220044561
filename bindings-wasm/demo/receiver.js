'use strict';
// A webhook receiver as a user would write it with node:http and the royaltykit npm package:
// verify the raw body, dedup on the delivery key AND the content key, apply each event once.
const http = require('node:http');
const rk = require('royaltykit');

/**
 * Starts a receiver on 127.0.0.1 (ephemeral port). `secrets` are the active secrets (current
 * first). Resolves to { server, url }.
 */
function startReceiver({ secrets, namespace = 'org-demo/sub-1', capacity = 100_000, ttlSeconds = 3600 }) {
  const verifier = new rk.WebhookVerifier(secrets);
  const deliveries = new rk.DedupWindow(capacity, ttlSeconds); // delivery and content keys
  const events = new rk.DedupWindow(capacity, ttlSeconds); // event keys: apply once
  const answer = (res, status, decision, extra = {}) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ decision, ...extra }));
  };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let v;
      try {
        v = verifier.verify(req.headers, Buffer.concat(chunks)); // exact raw bytes, system clock
      } catch (e) {
        if (!(e instanceof rk.WebhookVerificationError)) throw e;
        return answer(res, e.httpStatus, `rejected: ${e.code}`, { code: e.code }); // 400, 401 or 413
      }
      // Both keys: the delivery id is not signed, the content key is.
      const newDelivery = deliveries.checkAndInsert(rk.deliveryKey(namespace, v.deliveryId));
      const newContent = deliveries.checkAndInsert(v.contentKey);
      if (!newDelivery) return answer(res, 200, 'duplicate delivery id, skipped');
      if (!newContent) return answer(res, 200, 'same signed content under a new id, skipped');
      if (v.event.isTest) return answer(res, 200, 'test event acknowledged');
      if (!events.checkAndInsert(rk.eventKey(namespace, v.event))) {
        return answer(res, 200, 'event already applied (replay), skipped');
      }
      // Here a real receiver persists the event, then fetches v.event.resourceUrl with a bearer
      // token before any irreversible decision.
      return answer(res, 200, `accepted (secret #${v.secretIndex})`, { event: v.event.name });
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/webhooks` }));
  });
}

module.exports = { startReceiver };
