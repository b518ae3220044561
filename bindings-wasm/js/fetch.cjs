'use strict';
// royaltykit/fetch: verification for WHATWG Request handlers.
const { verifyRequest, WebhookVerificationError } = require('./index.cjs');

module.exports = { verifyRequest, WebhookVerificationError };
