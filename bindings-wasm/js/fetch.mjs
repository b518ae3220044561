export { verifyRequest, webhookHandler, WebhookReceiver, EventRouter, WebhookVerificationError } from './index.mjs';
