// royaltykit/express: webhook receiving as Node (req, res, next) middleware (Express, Connect, node:http).
import type { InboxReceiverOptions, ReceiverOptions, WebhookReceiver } from './index.js';

/** The parts of Node's IncomingMessage the middleware reads. */
export interface IncomingMessageLike {
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  readableEnded?: boolean;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** The parts of Node's ServerResponse the middleware writes. */
export interface ServerResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

/** `app.post('/webhooks', webhookMiddleware({ secrets, namespace, store, handler }))`. */
export function webhookMiddleware(
  receiver: WebhookReceiver | ReceiverOptions | InboxReceiverOptions,
): (req: IncomingMessageLike, res: ServerResponseLike, next?: (error?: unknown) => void) => void;
