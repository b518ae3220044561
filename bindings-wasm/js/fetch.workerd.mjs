export { verifyRequest, webhookHandler, WebhookReceiver, WebhookVerificationError } from './index.workerd.mjs';
