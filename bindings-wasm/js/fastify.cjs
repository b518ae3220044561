'use strict';
// royaltykit/fastify: a plugin with a POST route receiving webhook deliveries. Its content-type
// parser keeps the raw bytes of any content type, and is encapsulated: the rest of the app keeps
// Fastify's own parsers.
const { WebhookReceiver } = require('./index.cjs');

/**
 * `fastify.register(royaltykitWebhooks, { path: '/webhooks', secrets, namespace, store,
 * handler })`, or `{ path, receiver }` with a WebhookReceiver.
 */
async function royaltykitWebhooks(fastify, opts) {
  const receiver = opts.receiver instanceof WebhookReceiver ? opts.receiver : new WebhookReceiver(opts);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: receiver.maxBodyBytes + 1 }, (_req, body, done) => done(null, body));
  const route = opts.path ?? '/';
  fastify.post(route, async (request, reply) => {
    const r = await receiver.receive(request.headers, request.body ?? Buffer.alloc(0), undefined,
      { route: request.routeOptions?.url ?? route });
    return reply.code(r.status).type('application/json').send(r.body);
  });
}

module.exports = { royaltykitWebhooks, default: royaltykitWebhooks };
