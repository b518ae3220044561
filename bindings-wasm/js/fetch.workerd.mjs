export { verifyRequest, WebhookVerificationError } from './index.workerd.mjs';
