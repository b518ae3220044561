// royaltykit/fetch: verification for WHATWG Request handlers.
export { verifyRequest, WebhookVerificationError } from './index.mjs';
export type { RequestLike, VerifiedRequest, VerifyOptions } from './index.mjs';
