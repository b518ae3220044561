// Types of the royaltykit npm package. Time values are Unix seconds.

/** Error codes of webhook verification and signing (stable across JS, Python, Kotlin, Rust). */
export type WebhookErrorCode =
  | 'missing_header'
  | 'invalid_header'
  | 'invalid_secret'
  | 'payload_too_large'
  | 'invalid_timestamp'
  | 'invalid_signature_header'
  | 'no_matching_signature'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_payload';

export type ErrorCode = WebhookErrorCode | 'invalid_argument';

/** Base class of every error thrown by this package. */
export class RoyaltyKitError extends Error {
  readonly code: ErrorCode;
}
/** A delivery was rejected; `code` says why. */
export class WebhookVerificationError extends RoyaltyKitError {
  readonly code: WebhookErrorCode;
  /** The header at fault, when one is. */
  readonly header?: string;
  /** Seconds between the delivery's timestamp and `now`, for the timestamp errors. */
  readonly skewSeconds?: number;
  /** The tolerance (s) or body limit (bytes) that was exceeded. */
  readonly limit?: number;
}
/** An argument or option is out of range. */
export class InvalidArgumentError extends RoyaltyKitError {
  readonly code: 'invalid_argument';
  /** The argument's name (Rust spelling, e.g. `tolerance_seconds`). */
  readonly argument: string;
}

/** Anything that carries HTTP headers: Node's `IncomingHttpHeaders`, a WHATWG `Headers`, a `Map`, or `[name, value]` pairs. */
export type HeadersLike =
  | Record<string, string | string[] | undefined>
  | Headers
  | Map<string, string | string[]>
  | ReadonlyArray<readonly [string, string]>;

/** The raw request body: the exact bytes received. A string is encoded as UTF-8. */
export type BodyLike = Uint8Array | ArrayBuffer | string;

export interface VerifyOptions {
  /** Unix seconds (or a Date); defaults to the system clock. */
  now?: number | Date;
  /** Allowed clock difference, 0–86400 s; default 300. */
  toleranceSeconds?: number;
  /** Largest accepted body; default 262144 (256 KiB). */
  maxBodyBytes?: number;
}

export interface WebhookEvent {
  /** The event name as sent; unknown names are kept. */
  readonly name: string;
  /** Whether the spec lists this event name. */
  readonly isKnown: boolean;
  /** `enterprise.webhook.test`: acknowledge, do not act. */
  readonly isTest: boolean;
  readonly resourceType: string;
  readonly resourceReference: string;
  /** Canonical API path: fetch it before any irreversible decision. */
  readonly resourceUrl: string;
  /** `occurred_at` as Unix seconds. */
  readonly occurredAt: number;
  /** `occurred_at` as sent (RFC 3339). */
  readonly occurredAtText: string;
  /** The original delivery reference, on replays only. */
  readonly replayOf: string | null;
}

export interface VerifiedWebhook {
  readonly deliveryId: string;
  readonly timestamp: number;
  /** Which of the secrets given matched (0 = first). */
  readonly secretIndex: number;
  /** Key of the signed content: dedup on it too, see the README. */
  readonly contentKey: string;
  readonly event: WebhookEvent;
}

export function verifyWebhook(
  headers: HeadersLike,
  body: BodyLike,
  secrets: string | readonly string[],
  options?: VerifyOptions,
): VerifiedWebhook;

/** A verifier built once with its secrets; cheaper per delivery than `verifyWebhook`. */
export class WebhookVerifier {
  constructor(secrets: string | readonly string[], options?: Omit<VerifyOptions, 'now'>);
  verify(headers: HeadersLike, body: BodyLike, now?: number | Date): VerifiedWebhook;
  /** Frees the wasm memory now (otherwise freed when garbage-collected). */
  free(): void;
}

export interface SignedHeaders {
  'Service-Webhook-Id': string;
  'Service-Webhook-Timestamp': string;
  'Service-Webhook-Signature': string;
}

export function signWebhook(
  secret: string | readonly string[],
  body: BodyLike,
  options?: { timestamp?: number | Date; deliveryId?: string },
): SignedHeaders;

export function activeSecrets(
  current: string,
  previous?: string | null,
  previousValidUntil?: number | Date | null,
  now?: number | Date,
): string[];

export function deliveryKey(namespace: string, deliveryId: string): string;
export function eventKey(
  namespace: string,
  event: Pick<WebhookEvent, 'name' | 'resourceType' | 'resourceReference' | 'occurredAtText'>,
): string;
export function contentKey(secret: string, timestamp: string | number, body: BodyLike): string;
export function idempotencyKey(tenant: string, operationId: string, body?: BodyLike | null): string;

export class DedupWindow {
  constructor(capacity: number, ttlSeconds: number);
  /** True when `key` was not seen within the TTL (process it); records it either way. */
  checkAndInsert(key: string, now?: number | Date): boolean;
  has(key: string, now?: number | Date): boolean;
  readonly size: number;
  readonly capacity: number;
  free(): void;
}

export const HEADER_NAMES: readonly string[];
