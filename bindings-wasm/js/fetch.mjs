export { verifyRequest, webhookHandler, WebhookReceiver, WebhookVerificationError } from './index.mjs';
