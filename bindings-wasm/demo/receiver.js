'use strict';
// A webhook receiver as a user would write it with node:http and the royaltykit npm package:
// verify the raw body, claim the delivery key AND (opted in) the content key, store the event,
// commit after storing it or release when storing failed (two-phase dedup: a failure loses
// nothing). An operator replay has a new delivery id and is processed: the spec dedups by
// Service-Webhook-Id. The content key is the opt-in the package's receivers take as
// `claimContentKey: true`: it stops a captured delivery resent under a new id, and it also merges
// two genuine deliveries whose body and timestamp are byte-identical (two changes of one resource
// in the same second); the package's receivers claim only the delivery key by default.
const http = require('node:http');
const rk = require('royaltykit');

/**
 * Starts a receiver on 127.0.0.1 (ephemeral port). `secrets` are the active secrets (current
 * first); `store(event)` persists an event and may throw (then the receiver answers 500 and the
 * service's redelivery is processed). Resolves to { server, url }.
 */
function startReceiver({ secrets, namespace = 'org-demo/sub-1', capacity = 100_000, store = () => {} }) {
  const verifier = new rk.WebhookVerifier(secrets);
  // Two-phase dedup (claim, then commit or release); the default TTL outlasts the service's
  // whole redelivery schedule.
  const deliveries = new rk.DedupWindow(capacity); // delivery and content keys
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
      // Both keys (the opt-in): the delivery id is not signed, the content key is.
      const keys = [rk.deliveryKey(namespace, v.deliveryId), v.contentKey];
      const claims = keys.map((k) => deliveries.claim(k));
      if (claims.some((c) => c !== 'new')) {
        keys.forEach((k, i) => claims[i] === 'new' && deliveries.release(k));
        if (claims.includes('in_progress')) return answer(res, 503, 'being processed: retry later');
        return answer(res, 200, claims[0] !== 'new' ? 'duplicate delivery id, skipped' : 'same signed content under a new id, skipped');
      }
      const done = (status, decision, extra) => {
        keys.forEach((k) => deliveries.commit(k));
        return answer(res, status, decision, extra);
      };
      if (v.event.isTest) return done(200, 'test event acknowledged');
      try {
        // A real receiver persists the event here, then fetches v.event.resourceUrl with a bearer
        // token before any irreversible decision.
        store(v.event);
      } catch (e) {
        keys.forEach((k) => deliveries.release(k));
        return answer(res, 500, `processing failed (${e.message}): released, the redelivery will be processed`);
      }
      return done(200, `accepted (secret #${v.secretIndex})`, { event: v.event.name });
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/webhooks` }));
  });
}

module.exports = { startReceiver };
