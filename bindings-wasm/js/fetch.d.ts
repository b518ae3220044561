// royaltykit/fetch: WHATWG Request handlers (Next.js, Remix, Hono, Bun.serve, Deno.serve, Workers).
export { verifyRequest, webhookHandler, WebhookReceiver, WebhookVerificationError } from './index.js';
export type { RequestLike, VerifiedRequest, VerifyOptions, ReceiverOptions, DedupStore } from './index.js';
