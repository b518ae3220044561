// royaltykit/fetch: verification for WHATWG Request handlers.
export { verifyRequest, WebhookVerificationError } from './index.js';
export type { RequestLike, VerifiedRequest, VerifyOptions } from './index.js';
