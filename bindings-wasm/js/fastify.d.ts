// royaltykit/fastify: a plugin with a POST route receiving webhook deliveries.
import type { InboxReceiverOptions, ReceiverOptions, WebhookReceiver } from './index.js';

/** The parts of a Fastify instance the plugin uses. */
export interface FastifyInstanceLike {
  removeAllContentTypeParsers(): unknown;
  addContentTypeParser(type: string, options: { parseAs: 'buffer'; bodyLimit: number }, parser: (request: unknown, body: Uint8Array, done: (error: Error | null, body?: Uint8Array) => void) => void): unknown;
  post(path: string, handler: (request: { headers: Record<string, string | string[] | undefined>; body?: unknown }, reply: FastifyReplyLike) => Promise<unknown>): unknown;
}

/** The parts of a Fastify reply the plugin uses. */
export interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  type(contentType: string): FastifyReplyLike;
  send(body: string): unknown;
}

/** Options: a path (default `/`) and either a WebhookReceiver or its options. */
export type RoyaltyKitWebhooksOptions = { path?: string } & ({ receiver: WebhookReceiver } | ReceiverOptions | InboxReceiverOptions);

/** `fastify.register(royaltykitWebhooks, { path: '/webhooks', secrets, namespace, store, handler })`. */
export function royaltykitWebhooks(fastify: FastifyInstanceLike, options: RoyaltyKitWebhooksOptions): Promise<void>;
export default royaltykitWebhooks;
