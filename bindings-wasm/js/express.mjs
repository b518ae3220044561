import m from './express.cjs';

export const { webhookMiddleware } = m;
