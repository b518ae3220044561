'use strict';
// royaltykit/express: webhook receiving as Node `(req, res, next)` middleware — Express,
// Connect, or a plain `http.createServer`. It reads the raw body itself, whatever the content
// type, up to the receiver's limit (no express.raw/json needed, and their limits do not apply).
const { WebhookReceiver } = require('./index.cjs');

function readBody(req, limit) {
  // Already read by a raw or text parser mounted before this middleware: use those bytes.
  if (Buffer.isBuffer(req.body)) return Promise.resolve(req.body);
  if (typeof req.body === 'string') return Promise.resolve(Buffer.from(req.body, 'utf8'));
  if (req.readableEnded && req.body !== undefined) {
    return Promise.reject(new TypeError('royaltykit/express: the body was parsed before this middleware (express.json()?): mount the webhook route before body parsers, so the exact bytes can be verified'));
  }
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      // Past the limit the rest is drained, not kept: the core answers 413 for limit + 1 bytes.
      if (size <= limit) chunks.push(c.subarray(0, limit + 1 - size));
      size += c.length;
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Middleware receiving webhook deliveries: `app.post('/webhooks', webhookMiddleware({ secrets,
 * namespace, store, handler }))`, or a WebhookReceiver. Answers the receiver's status and JSON
 * body; errors reading the request go to `next` when there is one.
 */
function webhookMiddleware(receiverOrOptions) {
  const receiver = receiverOrOptions instanceof WebhookReceiver ? receiverOrOptions : new WebhookReceiver(receiverOrOptions);
  return (req, res, next) => {
    readBody(req, receiver.maxBodyBytes)
      .then((body) => receiver.receive(req.headers, body, undefined, { route: req.route?.path ?? null }))
      .then((r) => {
        res.statusCode = r.status;
        res.setHeader('content-type', 'application/json');
        res.end(r.body);
      })
      .catch((e) => {
        if (typeof next === 'function') return next(e);
        res.statusCode = 500;
        res.end();
      });
  };
}

module.exports = { webhookMiddleware };
