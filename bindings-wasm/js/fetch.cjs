'use strict';
// royaltykit/fetch: WHATWG Request handlers (Next.js, Remix, Hono, Bun.serve, Deno.serve, Workers).
const { verifyRequest, webhookHandler, WebhookReceiver, EventRouter, WebhookVerificationError } = require('./index.cjs');

module.exports = { verifyRequest, webhookHandler, WebhookReceiver, EventRouter, WebhookVerificationError };
