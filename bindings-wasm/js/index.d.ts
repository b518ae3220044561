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

export type ErrorCode = WebhookErrorCode | 'invalid_argument' | 'missing_parameter' | 'invalid_parameter' | 'unknown_parameter' | 'invalid_endpoint_url' | 'unknown_operation' | 'invalid_token_response';

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

// ---- retry -----------------------------------------------------------------------------------------

/** The service's delays between webhook delivery attempts (30, 120, 600, 1800, 3600, 7200, 21600 s). */
export function webhookRetrySchedule(): number[];
/** When the next delivery attempt is due, or null once all eight attempts are made. */
export function webhookNextAttemptAt(firstAttemptAt: number, attemptsMade: number): number | null;
/** The latest time at which the service gives a delivery up. */
export function webhookGivesUpAt(firstAttemptAt: number): number;

export type Jitter = 'none' | 'full' | 'equal';
export interface BackoffPolicy {
  /** Delays (s) before retries 1, 2, …. */
  steps?: number[];
  /** After the steps: a uniform delay in [min, max); without it the last step repeats. */
  band?: [number, number] | null;
  jitter?: Jitter;
  capSeconds: number;
}
/** Seconds before retry `attempt` (1 = first). Default policy: 2, 5, 15, then 30–60 s. */
export function backoffDelay(attempt: number, options?: { random?: number; policy?: BackoffPolicy }): number;

export interface RetryAfter {
  seconds: number;
  /** The server asked for longer than the cap. */
  capped: boolean;
  form: 'delta_seconds' | 'http_date';
}
/** A Retry-After value relative to `now`; null when absent or garbage. */
export function parseRetryAfter(value: string | null | undefined, now?: number | Date, options?: { capSeconds?: number }): RetryAfter | null;

export type RetryClass =
  | 'read'
  | 'token_exchange'
  | 'idempotent_write'
  | 'safe_update'
  | 'unsafe_create'
  | 'submit'
  | 'checkout'
  | 'addon_action'
  | 'upload';
export type TransportFailure = 'timeout' | 'connect_failed' | 'connection_lost';
export type RetryAction = 'retry' | 'stop' | 'reconcile' | 'refresh_token';
export type Reconcile = 'lookup_by_sent_data' | 'fetch_release_review_state' | 'check_checkout_state' | 'read_addon_status';

export interface RetryInput {
  retryClass: RetryClass;
  /** The response status, or… */
  status?: number;
  headers?: HeadersLike;
  /** …the transport failure when there was no response. */
  transport?: TransportFailure;
  /** Attempts made so far, the failed one included. */
  attempt: number;
  elapsedSeconds?: number;
  /** The token was already refreshed for this request. */
  tokenRefreshed?: boolean;
  /** In [0, 1); defaults to Math.random(). */
  random?: number;
  now?: number | Date;
  /** Default 5. */
  maxAttempts?: number;
  /** Default 300. */
  maxElapsedSeconds?: number;
}
export interface RetryDecision {
  action: RetryAction;
  delaySeconds: number;
  /** Stable id of the rule that decided, e.g. `server_error_retry`. */
  rule: string;
  reason: string;
  reconcile: Reconcile | null;
}
export function decideRetry(input: RetryInput): RetryDecision;

export interface RateDecision {
  allowed: boolean;
  waitUntil: number | null;
  limit: string | null;
}
export type RatePreset = 'enterprise' | 'enterprise_ddex' | 'enterprise_audio_upload' | 'enterprise_chunk_upload';
export class RateBudget {
  constructor(windows: RatePreset | ReadonlyArray<{ name: string; limit: number; windowSeconds?: number }>);
  tryAcquire(now?: number | Date): RateDecision;
  free(): void;
}

// ---- catalog, requests, error bodies, tokens -----------------------------------------------------------

export interface QueryParamSpec {
  name: string;
  kind: 'uuid' | 'limit' | 'key' | 'cursor' | 'text' | 'positive' | 'date' | 'sort';
  required: boolean;
}
/** One operation of either API, as data. */
export interface Operation {
  readonly id: string;
  readonly api: 'reports' | 'enterprise';
  readonly surface: 'machine' | 'human' | 'enterprise';
  readonly method: string;
  readonly path: string;
  readonly auth: 'none' | 'basic_client' | 'bearer' | 'session' | 'api_key';
  readonly scope: string | null;
  /** `key`: declared, header name not shown; `header`: Idempotency-Key. */
  readonly idempotency: 'none' | 'key' | 'header';
  readonly csrf: boolean;
  readonly stepUp: 'none' | 'recent' | 'recent_mfa' | 'recent_non_recovery';
  readonly tenantHeader: boolean;
  readonly userHeader: boolean;
  readonly body: 'none' | 'optional' | 'required';
  readonly success: readonly number[];
  /** Declared error statuses; null where the spec declares none (enterprise). */
  readonly errors: readonly number[] | null;
  readonly query: readonly QueryParamSpec[];
  readonly openQuery: boolean;
  readonly noStore: boolean;
  readonly retryClass: RetryClass;
}
export function operations(): readonly Operation[];
export function operation(id: string): Operation;

export interface RequestParams {
  path?: Record<string, string | number>;
  query?: Record<string, string | number | boolean | null | undefined> | ReadonlyArray<readonly [string, string | number]>;
  /** An object is sent as JSON; a string or bytes as is. */
  body?: object | string | Uint8Array | ArrayBuffer | null;
  token?: string;
  tenantId?: string;
  userId?: string;
  idempotencyKey?: string;
  /** Header for the key on reporting `idem` routes (its name is not shown in the spec). */
  idempotencyHeader?: string;
}
/** A request to send with your own client. Printing it hides credentials. */
export class RequestDescriptor {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly pathAndQuery: string;
  readonly headers: Array<[string, string]>;
  readonly body: Uint8Array | null;
  readonly idempotencyKey: string | null;
  url(base: string): string;
}
export class RequestBuildError extends RoyaltyKitError {
  readonly code: any;
  /** missing_parameter, invalid_parameter, unknown_parameter, invalid_endpoint_url, unknown_operation */
  readonly parameter: string;
}
export function buildRequest(operationId: string, params?: RequestParams): RequestDescriptor;

export type ApiErrorKind =
  | 'bad_request' | 'unauthenticated' | 'forbidden' | 'not_found' | 'conflict' | 'validation'
  | 'rate_limited' | 'unavailable' | 'timeout' | 'server_error' | 'other';
/** A parsed API error response (throwable). `code` is the body's own code, or null. */
export class ApiError extends RoyaltyKitError {
  readonly code: 'api_error';
  /** The body's own code, if it has one. */
  readonly bodyCode: string | null;
  readonly api: 'reports' | 'enterprise';
  readonly status: number;
  readonly kind: ApiErrorKind;
  readonly reason: string | null;
  readonly fieldErrors: Record<string, string[]>;
  readonly retryAfterSeconds: number | null;
  readonly declared: boolean | null;
  readonly operationId: string | null;
  readonly rawBody: string;
}
export function parseApiError(
  api: 'reports' | 'enterprise',
  status: number,
  headers: HeadersLike | null | undefined,
  body: BodyLike | null | undefined,
  options?: { operationId?: string; now?: number | Date },
): ApiError;

export class TokenResponseError extends RoyaltyKitError {
  readonly code: any;
}
/** A reporting access token; printing it hides `accessToken`. */
export class Token {
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  readonly expiresIn: number;
  readonly expiresAt: number;
  readonly refreshAt: number;
  readonly scopes: string[];
  readonly missingScopes: string[];
  readonly warnings: string[];
}
export class EnterpriseToken {
  readonly token: string;
  readonly expiresAt: number | null;
  readonly refreshAt: number | null;
}
export function buildTokenRequest(params: { clientId: string; clientSecret: string; tenantId: string; scopes?: string[] }): RequestDescriptor;
/** Throws ApiError for an error status, TokenResponseError for a broken success body. */
export function parseTokenResponse(status: number, headers: HeadersLike, body: BodyLike, options?: { requestedScopes?: string[]; now?: number | Date }): Token;
export function buildEnterpriseTokenRequest(params: { apiKey: string; apiSecret: string }): RequestDescriptor;
export function parseEnterpriseTokenResponse(status: number, headers: HeadersLike, body: BodyLike, options?: { now?: number | Date }): EnterpriseToken;
export function missingScopes(granted: string[], operationId: string): string[];
export function responseNotices(headers: HeadersLike): { deprecated: boolean; deprecatedAt: number | null; sunsetAt: number | null; link: string | null };
