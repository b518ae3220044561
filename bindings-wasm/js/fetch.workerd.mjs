export { verifyRequest, webhookHandler, WebhookReceiver, EventRouter, WebhookVerificationError } from './index.workerd.mjs';
