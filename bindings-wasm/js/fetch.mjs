export { verifyRequest, WebhookVerificationError } from './index.mjs';
