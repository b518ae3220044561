import m from './fastify.cjs';

export const { royaltykitWebhooks } = m;
export default royaltykitWebhooks;
