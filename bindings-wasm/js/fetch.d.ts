// royaltykit/fetch: WHATWG Request handlers (Next.js, Remix, Hono, Bun.serve, Deno.serve, Workers).
export { verifyRequest, webhookHandler, WebhookReceiver, EventRouter, WebhookVerificationError } from './index.js';
export type { RequestLike, VerifiedRequest, VerifyOptions, ReceiverOptions, InboxReceiverOptions, DedupStore, WebhookHandler, EventNameLike, KnownEventName } from './index.js';
