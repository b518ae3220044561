// Types of the royaltykit npm package. Time values are Unix seconds.
//
// Records, string enums and the error's fields are generated from the Rust core's own types
// (tsify, in ./native/royaltykit_wasm.d.ts) and re-exported here; this file declares only the
// argument shapes, the classes and the functions.
import type {
  ApiError as ApiErrorFields,
  ApiSession,
  ApiErrorKind,
  ClaimState,
  EventLevel,
  ExportCommand,
  ExportStateInfo,
  FleetTokenStep,
  InboxCounts,
  InboxEntry,
  InboxPoisonEntry,
  InboxStep,
  Jitter,
  Operation,
  PageItems,
  PagesEnd,
  PollDecision,
  RateDecision,
  ReceiptStep,
  ReceiverDecision,
  RecoveryOptions as RecoveryBounds,
  RecoveryReport,
  ResponseNotices,
  RetryAction,
  RetryAfter,
  RetryClass,
  RetryDecision,
  Route,
  RoyaltyKitError as ErrorFields,
  ParamStyle,
  SignedHeaders,
  SqlDialect,
  SqlStatement,
  StepUp,
  StepUpKind,
  TransportFailure,
  VerifiedWebhook,
  WebhookEvent,
} from './native/types.js';

export type {
  Api,
  ApiSession,
  ApiErrorKind,
  Auth,
  BodyRule,
  ClaimState,
  ErrorFamily,
  EventLevel,
  ExportCommand,
  ExportStateInfo,
  FleetTokenStep,
  Idempotency,
  InboxCounts,
  InboxEntry,
  InboxPoisonEntry,
  InboxStep,
  Jitter,
  Operation,
  PageItems,
  PagesEnd,
  ParamStyle,
  PollAction,
  PollDecision,
  QueryKind,
  QueryParam,
  RateDecision,
  ReceiptStep,
  ReceiverDecision,
  ReceiverStep,
  Reconcile,
  RecoveredDelivery,
  RecoveryAction,
  RecoveryReport,
  ResponseNotices,
  RetryAction,
  RetryAfter,
  RetryAfterForm,
  RetryClass,
  RetryDecision,
  Route,
  SignedHeaders,
  SqlDialect,
  SqlStatement,
  StepUp,
  StepUpKind,
  Surface,
  TransportFailure,
  VerifiedWebhook,
  WebhookEvent,
} from './native/types.js';

// ---- errors ----------------------------------------------------------------------------------------

/** The fields of the core's error in one family, without the family tag. */
type Fields<F extends ErrorFields['family']> = Omit<Extract<ErrorFields, { family: F }>, 'family' | 'message' | 'code' | 'httpStatus'>;

/** Base class of every error thrown by this package: `code` is stable across JS, Python, Kotlin
 * and Rust; `httpStatus` is what a webhook receiver should answer when this error ends its
 * handling (400, 401, 413, or 500 for its own faults and configuration). */
export class RoyaltyKitError extends Error {
  readonly code: string;
  readonly httpStatus: number;
}
/** A delivery was rejected (or could not be signed); `code` says why. */
export class WebhookVerificationError extends RoyaltyKitError {}
export interface WebhookVerificationError extends Fields<'webhook'> {}
/** An argument or option is out of range (`argument` names it). */
export class InvalidArgumentError extends RoyaltyKitError {}
export interface InvalidArgumentError extends Fields<'invalid_argument'> {}
/** A request could not be built (`parameter` names the culprit). */
export class RequestBuildError extends RoyaltyKitError {}
export interface RequestBuildError extends Fields<'request'> {}
/** A 2xx token response that breaks the contract. */
export class TokenResponseError extends RoyaltyKitError {}
export interface TokenResponseError extends Fields<'token_response'> {}
/** A command the export's state does not allow (`state`, `command`, `allowed`). */
export class ExportStateError extends RoyaltyKitError {}
export interface ExportStateError extends Fields<'export_state'> {}
/** A download answered with 206 or `Content-Range`. */
export class ExportDownloadError extends RoyaltyKitError {}
export interface ExportDownloadError extends Fields<'export_download'> {}
/** An API error response, parsed (and throwable): `code` is `api_error`, `bodyCode` the body's
 * own code; `kind` is the stable field to branch on. `status` is the response's HTTP status;
 * `httpStatus`, as on every error, what a webhook receiver answers when this error ends its
 * handling (500). The message is the core's, the same in every language: `401 Unauthorized
 * (unauthenticated) [invalid_client]`; the server's own message is `serverMessage`. */
export class ApiError extends RoyaltyKitError {}
export interface ApiError extends Omit<ApiErrorFields, 'message'>, Omit<Fields<'api'>, 'error'> {
  /** The message of the response body (the error's `message` is the core's whole sentence). */
  readonly serverMessage: string;
}
/** A request may have been applied and must not be sent again blindly (code `reconcile_required`,
 * the core's family): check its effect first, as `reconcile` says; an export job's `candidates`
 * are the exports that may be its own. */
export class ReconcileRequired extends RoyaltyKitError {}
export interface ReconcileRequired extends Fields<'reconcile_required'> {}
/** A call or export job stopped without an API error to show (code `call_failed`, the core's
 * family): its attempts or time ran out on transport failures, or a `Retry-After` passed its
 * budget. The message names the operation, the host, the reason, the attempts made and the
 * fetch's last error (`cause`). */
export class CallFailedError extends RoyaltyKitError {}
export interface CallFailedError extends Fields<'call_failed'> {
  /** The HTTP library's last error (the fetch's rejection), when a transport failure ended it. */
  readonly cause?: unknown;
}

/** A list that cannot be read to its end; the items given before it stand. `page_unreadable`:
 * a page that is not JSON or has no items array; `next_page_unknown`: a page that says more
 * follow without saying how to ask for them; `list_cursor_repeated`: a cursor or a page given
 * again (reading on would loop). The message is the core's, the same in every language. */
export class PaginationError extends RoyaltyKitError {
  readonly code: 'page_unreadable' | 'next_page_unknown' | 'list_cursor_repeated';
}
export interface PaginationError extends Fields<'pagination'> {}

// ---- argument shapes ---------------------------------------------------------------------------------

/** A WHATWG `Headers` (fetch, undici, edge runtimes), or anything with `entries()` and `get()`. */
export interface HeadersObject {
  entries(): IterableIterator<[string, string]>;
  get(name: string): string | null;
}
/** Anything that carries HTTP headers: Node's `IncomingHttpHeaders`, a `Headers`, a `Map`, or
 * `[name, value]` pairs. */
export type HeadersLike =
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | SignedHeaders
  | HeadersObject
  | ReadonlyMap<string, string | readonly string[]>
  | ReadonlyArray<readonly [string, string]>;

/** The raw request body: the exact bytes received. A string is encoded as UTF-8. */
export type BodyLike = Uint8Array | ArrayBuffer | string;
/** Unix seconds, or a Date. */
export type Time = number | Date;

export interface VerifyOptions {
  /** Defaults to the system clock. */
  now?: Time;
  /** Allowed clock difference, 0–86400 s; the core's default is 300. */
  toleranceSeconds?: number;
  /** Largest accepted body; the core's default is 262144 (256 KiB). */
  maxBodyBytes?: number;
  /** Bodies of at least this many bytes get node:crypto's HMAC where it exists (default 1536,
   * measured by `make bench`); `Infinity` keeps every HMAC in wasm. */
  hostMacThreshold?: number;
}

// ---- webhooks and dedup --------------------------------------------------------------------------

/**
 * When a secret stops verifying: Unix seconds (a finite number), a valid `Date`, or an ISO 8601
 * text such as the rotation's `previous_secret_valid_until` (`2026-11-22T03:05:06Z`). Anything
 * else (NaN, an infinity, an invalid Date, unreadable text) is refused with InvalidArgumentError
 * where the secret is given, never taken for "no expiry": `Number(process.env.X)` with X unset
 * fails loudly. Leave it out (or null) for a secret without one.
 */
export type ValidUntil = number | Date | string;

/** A signing secret with the last Unix second it verifies (the rotation's
 * `previous_secret_valid_until`); after it, the secret never verifies. A plain object of this
 * shape, or a `WebhookSecret` (which hides the secret when printed). */
export interface WebhookSecretLike {
  readonly secret: string;
  readonly validUntil?: ValidUntil | null;
}
/** A signing secret and its expiry (Unix seconds; null: none): `new WebhookSecret(secret,
 * validUntil?)` checks `validUntil` at once; `activeSecrets` returns them. Printing it hides
 * the secret. */
export class WebhookSecret {
  #private;
  constructor(secret: string, validUntil?: ValidUntil | null);
  readonly secret: string;
  readonly validUntil: number | null;
}
/** One secret or several, current first; a plain string never expires. */
export type Secrets = string | WebhookSecretLike | readonly (string | WebhookSecretLike)[];
export function verifyWebhook(headers: HeadersLike, body: BodyLike, secrets: Secrets, options?: VerifyOptions): VerifiedWebhook;

/** What `verifyRequest` reads of a WHATWG `Request` (declared here, so no DOM or Node types are needed). */
export interface RequestLike {
  readonly headers: HeadersObject;
  readonly body: {
    getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  } | null;
}
/** A verified delivery and the exact bytes it was verified over. */
export interface VerifiedRequest {
  readonly webhook: VerifiedWebhook;
  readonly body: Uint8Array;
}
/**
 * Verifies the delivery in a WHATWG `Request` (route handlers, Hono, Bun.serve, Deno.serve,
 * Workers): reads the raw body once (at most `maxBodyBytes` + 1 bytes). Rejects with
 * WebhookVerificationError; answer its `httpStatus`.
 */
export function verifyRequest(request: RequestLike, secrets: Secrets, options?: VerifyOptions): Promise<VerifiedRequest>;

/** A verifier built once with its secrets; cheaper per delivery than `verifyWebhook`. */
export class WebhookVerifier {
  constructor(secrets: Secrets, options?: Omit<VerifyOptions, 'now'>);
  verify(headers: HeadersLike, body: BodyLike, now?: Time): VerifiedWebhook;
  /**
   * One delivery as a machine: drive it with `next()` until it says `reply`. On a `window` the receipt claims, releases and commits its keys
   * there itself (at `now`, else the clock at each step) and asks only for `run_handler`,
   * `wait` and `reply`.
   */
  /** `transactional`: the keys are marked done inside your database transaction (steps `begin`,
   * `commit` inside it, `run_handler`, `commit_transaction`, or `rollback`). `claimContentKey`:
   * claim the content key after the delivery key (opt-in; see `ReceiverOptions.claimContentKey`).
   * `inbox`: a verified delivery is persisted in an inbox (step `enqueue`, then `enqueued()`) and
   * answered at once, `queued` or `duplicate`; a worker runs the handler (not with `window`). */
  receipt(
    headers: HeadersLike,
    body: BodyLike,
    options: { namespace: string; now?: Time; window?: DedupWindow; transactional?: boolean; claimContentKey?: boolean; inbox?: boolean },
  ): WebhookReceipt;
  /** Frees the wasm memory now (otherwise freed when garbage-collected). */
  free(): void;
}

/** One webhook delivery as a machine: every input returns the step that follows. */
export class WebhookReceipt {
  /** The step pending. */
  next(): ReceiptStep;
  /** The verified delivery, or null when verification failed. */
  readonly delivery: VerifiedWebhook | null;
  /** Once replied, what happened; null before. */
  readonly outcome: 'processed' | 'duplicate' | 'in_progress' | 'rejected' | 'acknowledged' | 'queued' | 'handler_failed' | 'store_unavailable' | 'cancelled' | 'claim_lost' | null;
  /** Whether the receipt has reached its reply. */
  readonly finished: boolean;
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (WebhookReceipt)
  /**
   * What became of the pending step, the receipt's one input: `'done'`, `'failed'` or
   * `'cancelled'`, or `{ claimed: state }`, `{ marked: changed }` or `{ enqueued: isNew }`. `done`:
   * the release, begin, transaction commit, rollback, wait, handler or (plain) commit was
   * performed; `claimed`: the claim's state; `marked`: whether the transactional commit's mark
   * changed a row; `enqueued`: whether the delivery was new to the inbox; `failed`: the step
   * failed, which the pending step gives its meaning (a failed release or rollback counts as done,
   * a failed handler is the handler's, any other failure the store's); `cancelled`: the host was
   * cancelled during the step (see `cancelled`). Returns the next step. `InvalidArgumentError`
   * (`invalid_argument`) for an outcome the pending step cannot have (the receipt unchanged), or a
   * name or state the core does not know. A shape none of those is a `TypeError`.
   */
  report(outcome: ReceiptOutcome): ReceiptStep;
  /**
   * The state the store gave the key of the pending claim: `new`, `in_progress` or `done`. Returns
   * the next step. `InvalidArgumentError` (`invalid_argument`) for another state.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  claimed(state: ClaimState): ReceiptStep;
  /**
   * The store could not be reached for the pending claim, commit, begin, transaction commit or
   * enqueue. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  storeFailed(): ReceiptStep;
  /**
   * The pending release is done (or failed: the claim's lease runs out). Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  released(): ReceiptStep;
  /**
   * The handler stored its effect. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  handlerSucceeded(): ReceiptStep;
  /**
   * The handler threw. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  handlerFailed(): ReceiptStep;
  /**
   * The pending commit is done. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  committed(): ReceiptStep;
  /**
   * The pending wait is over. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  waited(): ReceiptStep;
  /**
   * (Transactional.) The pending commit (the mark inside the transaction) changed no row: the
   * claim's lease ran out and another worker took the key. Returns the next step, a rollback.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  claimLost(): ReceiptStep;
  /**
   * (Transactional.) The transaction is open. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  began(): ReceiptStep;
  /**
   * (Transactional.) The transaction committed. Returns the next step, the reply.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  transactionCommitted(): ReceiptStep;
  /**
   * (Transactional.) The pending rollback is done (or failed). Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  rolledBack(): ReceiptStep;
  /**
   * The host was cancelled while the pending step was in flight (an aborted request): report this
   * instead of its outcome. Returns the next step: only rollbacks and releases follow, then the 503
   * reply (outcome `cancelled`). During a pending rollback or release it counts as that step done
   * (a cancelled one is a failed one) and the reply stays what it was; once replied, nothing
   * changes.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  cancelled(): ReceiptStep;
  /**
   * (Inbox.) The pending enqueue is done: `isNew` true when the delivery was added, false when it
   * was in the inbox already. Returns the next step, the reply: 200 `{"result":"queued"}` or
   * `{"result":"duplicate"}` (outcome `queued` or `duplicate`).
   * @deprecated kept for one release: use `report(outcome)`.
   */
  enqueued(isNew: boolean): ReceiptStep;
  // generated: end (WebhookReceipt)
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the receipt is unusable after. */
  free(): void;
}

export function signWebhook(secret: string | readonly string[], body: BodyLike, options?: { timestamp?: Time; deliveryId?: string }): SignedHeaders;
/** The secrets to verify with at `now` during a rotation (current first), each carrying its
 * expiry: a verifier or receiver built from them never accepts the previous one after
 * `previousValidUntil` (`previous_secret_valid_until`, as the service returns it or parsed). */
export function activeSecrets(current: string, previous?: string | null, previousValidUntil?: ValidUntil | null, now?: Time): WebhookSecret[];
/**
 * A webhook subscription's signing secret as its create or rotation revealed it
 * (`revealedSecret(body)`, or `createSubscription` / `rotateSecret` of royaltykit/client). The
 * service shows the secret once: store it now. Printing it (util.inspect, String,
 * JSON.stringify) never shows the secret.
 */
export class RevealedSecret {
  #private;
  private constructor();
  /** The new signing secret (no expiry). */
  readonly secret: WebhookSecret;
  /** A rotation's `previous_secret_valid_until`, Unix seconds: until then deliveries carry the
   * previous secret's signature too. null for a create. */
  readonly previousValidUntil: number | null;
  /** The subscription's reference, when the response names it. */
  readonly reference: string | null;
  /** The response as JSON text with every secret member removed: safe to log or store. */
  readonly record: string;
  /**
   * The secrets a verifier or receiver takes from now on: the new one, then `previous` (the
   * secret held before this rotation) carrying `previousValidUntil` as its expiry, so it never
   * verifies after it. Without a `previousValidUntil` (a create) or a `previous`, the new one alone.
   */
  secrets(previous?: string | null): WebhookSecret[];
}
/**
 * The reveal-once signing secret of a subscription's create (`createEnterpriseWebhook`) or
 * rotation (`rotateEnterpriseWebhookSecret`) response: pass the raw 2xx body. Throws
 * WebhookVerificationError with code `secret_not_revealed` for a body that is not a JSON object
 * (of at most 1 MiB), names no secret, or whose `previous_secret_valid_until` is not a time; its
 * message never contains the body.
 */
export function revealedSecret(body: BodyLike): RevealedSecret;
/**
 * The event's canonical resource path (`resource.url`), checked before it is fetched with a
 * bearer token: returned only when it is a path under the enterprise API (`/api/v1/…`: no
 * scheme or authority, query, fragment, dot segment, backslash, encoded slash, space or control
 * character; at most 2048 bytes); otherwise WebhookVerificationError with code
 * `invalid_resource_url`. Request it on the enterprise API's own base URL.
 */
export function resourcePath(urlOrEvent: string | Pick<WebhookEvent, 'resourceUrl'>): string;
/** A client's timeouts in seconds: each one given checked (more than 0, at most a day), each one not given the library's default (10 s to connect, 30 s to read); else `InvalidArgumentError` naming `connect_timeout` or `read_timeout`. */
export function clientTimeouts(connectSeconds?: number | null, readSeconds?: number | null): { connectSeconds: number; readSeconds: number };
/** The error to throw for a Call's or an ExportJob's `fail` or `reconcile` step, from the core's
 * error table: the error a failure carries (an ApiError, …), else a CallFailedError whose message
 * names `operationId`, the host of `baseUrl`, the reason, the attempts and `cause` (the HTTP
 * library's last error, in words), or a ReconcileRequired. */
export function callStepError(
  step: Extract<CallStep, { step: 'fail' | 'reconcile' }>, operationId: string, baseUrl: string, cause?: string | null,
): RoyaltyKitError;
// generated by scripts/gen_surface.py from surface/functions.toml: begin
/**
 * Unix seconds of a time as the services send one (RFC 3339, the ISO 8601 extended and basic forms,
 * HTTP-dates): the library's one timestamp parser; null for anything else.
 */
export function parseTimestamp(text: string): number | null;
/**
 * `baseUrl` without its trailing `/` when a client may send its requests to it: `https` (plain
 * `http` only to a loopback host, or anywhere with `allowInsecureHttp`, since the credentials would
 * travel in clear), a host, no user-info, query, fragment or API prefix (`/api/…`, which the client
 * adds); otherwise `InvalidArgumentError` (`invalid_argument`), naming `base_url`, saying what is
 * wrong and what is accepted. The clients call it when they are built.
 */
export function checkBaseUrl(baseUrl: string, allowInsecureHttp?: boolean): string;
/**
 * The one message of a failed call (`call_failed`), the same in every language: the operation, the
 * host of `baseUrl`, the machine's `reason`, the `attempts` made and the HTTP library's last error
 * (`cause`) when there was one.
 */
export function callFailedMessage(operation: string, baseUrl: string, reason: string, attempts: number, cause?: string | null): string;
/**
 * The one message of an interrupted export job: whether the service named the export (`exportId`)
 * and what resuming from the checkpoint does.
 */
export function exportInterruptedMessage(exportId?: string | null): string;
/**
 * The namespaced dedup key of a delivery (its `Service-Webhook-Id`, `deliveryId`): what receivers
 * claim; `InvalidArgumentError` (`invalid_argument`) for an empty or over-long namespace or id.
 */
export function deliveryKey(namespace: string, deliveryId: string): string;
/**
 * The content key of signed content under a secret: the timestamp as sent (`timestamp`) and the raw
 * `body`, the key a verification under `secret` as its first secret carries. It depends only on
 * what the signature covers, so a delivery resent under a new delivery id keeps it.
 * `invalid_secret` for an unusable secret.
 */
export function contentKey(secret: string, timestamp: string | number, body: BodyLike): string;
/**
 * The deterministic idempotency key of one logical request (a retry computes the same one), from
 * the id the caller gave it (`requestId`); `InvalidArgumentError` (`invalid_argument`) for an empty
 * or over-long namespace, operation id or request id.
 */
export function idempotencyKey(namespace: string, operationId: string, requestId: string): string;
/**
 * The `lastError` every inbox keeps for a failed handler run, the same in every language: `Kind:
 * message` (`kind`: the error's class name), the kind alone when the message is empty, the message
 * alone when the kind is; cut to 1024 bytes.
 */
export function handlerErrorText(kind: string, message: string): string;
/**
 * The service's delays between webhook delivery attempts, in seconds.
 */
export function webhookRetrySchedule(): number[];
/**
 * When the service makes a delivery's next attempt (Unix seconds), from its first attempt
 * (`firstAttemptAt`) and the attempts made so far, the first included (`attemptsMade`), each
 * attempt made when it was due: the first attempt's time for 0, null once all eight are made;
 * `InvalidArgumentError` (`invalid_argument`) for a negative count.
 */
export function webhookNextAttemptAt(firstAttemptAt: Time, attemptsMade: number): number | null;
/**
 * The latest time (Unix seconds) the service gives a delivery up, from its first attempt
 * (`firstAttemptAt`): the final attempt's due time plus its 10 s limit.
 */
export function webhookGivesUpAt(firstAttemptAt: Time): number;
/**
 * The scopes the operation `operationId` needs that `granted` lacks, in the catalog's order (empty
 * when it may be called); `InvalidArgumentError` (`invalid_argument`) for an operation the catalog
 * does not know.
 */
export function missingScopes(granted: string[], operationId: string): string[];
/**
 * What an export's state as the server sent it (`value`) means: its canonical name (an unknown
 * value kept as sent, up to 200 characters), whether the spec shows it, whether it is an end state,
 * and the commands it allows. Never refuses: an unknown state allows only `get`.
 */
export function exportState(value: string): ExportStateInfo;
/**
 * The state expected after `command` on an export in `state` (`cancel` gives cancelled, `revoke`
 * revoked, `get` and `download` leave it); `ExportStateError` (`invalid_export_transition`) naming
 * the state, the command and the commands allowed, and only `get` allowed in a state the spec does
 * not show. `InvalidArgumentError` (`invalid_argument`) for a command that is none of `get`,
 * `cancel`, `revoke` and `download`.
 */
export function validateExportCommand(state: string, command: ExportCommand): string;
/**
 * The next step of a create, poll and download loop after the `attempt`-th read of an export in
 * `state` (1 after the first): `download` once ready, `stop` when cancelled or revoked, and
 * `keep_polling` with the delay of the default backoff (2, 5, 15, then 30 to 60 s, where `random`
 * in [0, 1) places it, the host's randomness when left out) in queued and every state the spec does
 * not show, until `maxPolls` reads (100 when left out), where it is `stop` with a reason naming the
 * state and the budget. `InvalidArgumentError` (`invalid_argument`) for an attempt below 1, a
 * random value outside [0, 1) or a bound below 1.
 */
export function exportPollDecision(state: string, attempt: number, options?: { random?: number; maxPolls?: number | null }): PollDecision;
/**
 * Checks a download response before its body is used (`status`, `headers`, `body`; `now` the time
 * of the check, the host's clock when left out): a 2xx other than 206, without `Content-Range`,
 * whose body is as long as its `Content-Length` says, is the whole artifact. `ExportDownloadError`
 * (`partial_content_unsupported`) for a 206, any `Content-Range`, or a body shorter or longer than
 * its `Content-Length`; `ApiError` (`api_error`) for any other status (409 not ready, 422, …),
 * parsed; `InvalidArgumentError` (`invalid_argument`) for a status outside 100 to 599.
 */
export function checkExportDownload(status: number, headers?: HeadersLike | null | undefined, body?: BodyLike | null, options?: { now?: Time }): true;
/**
 * Whether a step-up of `kind` made at `at` satisfies a route's `requirement` at `now` (the host's
 * clock when left out), a step-up counting as recent for `maxAgeSeconds` (the spec does not give
 * it, so the caller says). A recovery-code step-up never satisfies `recent_mfa` or
 * `recent_non_recovery`; one from the future or older than the age satisfies only `none`.
 * `InvalidArgumentError` (`invalid_argument`) for a negative age or an unknown requirement or kind.
 */
export function stepUpSatisfies(requirement: StepUp, kind: StepUpKind, at: Time, options: { maxAgeSeconds: number; now?: Time }): boolean;
/**
 * The wait a `Retry-After` value (`value`, as the response sent it) asks for, relative to `now`
 * (the host's clock when left out): its seconds and its form (delta seconds, or a date: an
 * HTTP-date, ISO 8601 accepted too), the whole wait, never shortened (0 for a date in the past);
 * null when it is absent or garbage (empty, negative, fractional, an unreadable date).
 */
export function parseRetryAfter(value: string | null | undefined, now?: Time): RetryAfter | null;
/**
 * The SQL dialect of a database from what its driver reports: its `product` name (`PostgreSQL`,
 * `SQLite`) and `version` (Python's `sqlite3.sqlite_version`, JDBC's `databaseProductVersion`);
 * `InvalidArgumentError` (`invalid_argument`) for an SQLite older than 3.35 (no `RETURNING`) or
 * another database.
 */
export function detectSqlDialect(product: string, version: string): SqlDialect;
/**
 * What the `states` of a delivery's claims mean: the states of the keys claimed so far, in the
 * order of `planReceipt`'s keys, up to and including the first that is not `new`. `process` with
 * 200 when every state is `new` (or there are none); otherwise `retry_later` with 503 when any is
 * `in_progress`, else `acknowledge` with 200, and in both the positions of the `new` ones to
 * release. `InvalidArgumentError` (`invalid_argument`) for a state the core does not know.
 */
export function decideClaims(states: readonly ClaimState[]): ReceiverDecision;
// generated: end
export function eventKey(namespace: string, event: Pick<WebhookEvent, 'name' | 'resourceType' | 'resourceReference' | 'occurredAtText'>): string;

export class DedupWindow {
  /** `ttlSeconds` (how long a processed key is remembered) defaults to the service's whole
   * redelivery schedule plus the tolerance; `leaseSeconds` (how long a claim holds) to 60. */
  constructor(capacity: number, ttlSeconds?: number | null, options?: { leaseSeconds?: number });
  /** Claims `key` before processing: `new` (process, then `commit` or `release`), `in_progress`
   * (answer 503) or `done` (answer 200, skip). */
  claim(key: string, now?: Time): ClaimState;
  /** Marks `key` processed: call once the effect is stored, before answering 2xx. */
  commit(key: string, now?: Time): void;
  /** Gives up a claim after processing failed (then answer 5xx); true when one was dropped. */
  release(key: string, now?: Time): boolean;
  /** One phase: true when `key` was not seen (records it as processed). Prefer `claim`. */
  checkAndInsert(key: string, now?: Time): boolean;
  has(key: string, now?: Time): boolean;
  /** The state of `key` read without claiming it: `new` (never claimed, or its lease or
   * time-to-live ran out), `in_progress` (claimed, not committed) or `done`. */
  state(key: string, now?: Time): ClaimState;
  readonly size: number;
  readonly capacity: number;
  free(): void;
}

export const HEADER_NAMES: readonly string[];

// ---- receivers ------------------------------------------------------------------------------------

/** The two-phase dedup contract a receiver needs: a DedupWindow (one process), a
 * RedisDedupStore (several), or your own over your database. Methods may return promises. */
export interface DedupStore {
  claim(key: string): ClaimState | Promise<ClaimState>;
  commit(key: string): unknown;
  release(key: string): unknown;
}

/**
 * A store that can say what it knows of a key without claiming it: what
 * `EnterpriseClient.recoverDeliveries` asks of the receiver's store. Every built-in store has it
 * (DedupWindow, RedisDedupStore, PostgresDedupStore, SqliteDedupStore, and the inboxes
 * PostgresInbox, SqliteInbox and RedisInbox); a store of your own adds `state(key)` to be used there (a
 * receiver never calls it). `new`: never claimed (or its claim or time-to-live ran out),
 * `in_progress`: claimed and not committed (an inbox: received, not yet processed), `done`:
 * processed.
 */
export interface DeliveryStates {
  state(key: string): ClaimState | Promise<ClaimState>;
}

/** The event names the spec lists, as the service sends them (`knownEventNames()` gives the same
 * list at run time). */
export type KnownEventName =
  | 'ddex.delivery.status_changed'
  | 'ddex.delivery.blocked'
  | 'ddex.delivery.acknowledged'
  | 'ddex.delivery.rejected'
  | 'ddex.delivery.failed'
  | 'ddex.import.completed'
  | 'ddex.import.failed'
  | 'ddex.connection.degraded'
  | 'enterprise.webhook.test';
/** An event name: one the spec lists (completed by editors), or any other the service may send
 * before this library knows it. */
export type EventNameLike = KnownEventName | (string & {});
/** The event names the spec lists, from the core (a new array each call). A delivery's
 * `event.name` may be another one: it is kept as sent. */
export function knownEventNames(): KnownEventName[];

/** What a receiver runs for a new delivery (sync or async): with a transactional store it is
 * called with the transaction's connection as well. */
export type WebhookHandler = (delivery: VerifiedWebhook, connection?: any) => unknown;

/**
 * Runs a delivery's handlers by its event name, the same in every language (the core decides
 * where a delivery goes; the router keeps the handlers): the `on` handlers registered for its
 * name, in registration order; then every `onAny` handler; then, only when no `on` handler names
 * the event (a name nobody registered, or one the spec does not list, kept as sent), the
 * `otherwise` handler. A delivery no handler takes is acknowledged (the service does not send it
 * again). Each handler is awaited before the next; one that throws stops the rest and fails the
 * delivery as a plain handler's throw does (500, released, redelivered: the handlers before it
 * run again, so keep them idempotent). Give the router, or `router.handler`, wherever a handler
 * goes (`WebhookReceiver`, `webhookHandler`, `webhookMiddleware`, `royaltykitWebhooks`).
 *
 * ```ts
 * const router = new EventRouter()
 *   .on('ddex.delivery.failed', async (d) => alert(d.event))
 *   .onAny((d) => audit(d))
 *   .otherwise((d) => log(d.event.name));
 * app.post('/webhooks', webhookMiddleware({ secrets, namespace: 'org-1', handler: router }));
 * ```
 */
export class EventRouter {
  #private;
  constructor();
  /** Registers `handler` for deliveries of the event `name`, as the service sends it (a name the
   * spec does not list is accepted). Throws InvalidArgumentError (argument `event`) at once for an
   * empty name, one longer than 256 bytes or one with a space or control character. */
  on(name: EventNameLike, handler: WebhookHandler): this;
  /** Registers `handler` for every delivery, after the handlers named for its event. */
  onAny(handler: WebhookHandler): this;
  /** Registers the fallback: the handler of a delivery no `on` handler names (a later call
   * replaces it). */
  otherwise(handler: WebhookHandler): this;
  /** Where a delivery of the event `name` goes: the indices of the `on` registrations that run,
   * in order (counted from 0 over `on` calls), whether the `onAny` handlers run, whether the
   * fallback does. */
  route(name: EventNameLike): Route;
  /** The router as a handler: runs the delivery's route, awaiting each handler in turn. */
  readonly handler: (delivery: VerifiedWebhook, connection?: any) => Promise<void>;
}

export interface ReceiverOptions extends Omit<VerifyOptions, 'now'> {
  /** Current secret first, then the previous one during a rotation with its `validUntil`
   * (the rotation's `previous_secret_valid_until`): after it, that secret never verifies. */
  secrets: Secrets;
  /** Your organization, subscription or tenant: keys of one store never mix namespaces. */
  namespace: string;
  /** Default: a DedupWindow of 100,000 keys, one per delivery (two with `claimContentKey`; one process only).
   * A `TransactionalDedupStore` (PostgresDedupStore, SqliteDedupStore) makes processing exactly once. */
  store?: DedupStore | TransactionalDedupStore<any>;
  /** Stores the delivery's effect; runs once per new delivery. Throwing (or rejecting)
   * releases the claims and answers 500, so the service redelivers. With a transactional store it
   * is called with the transaction's connection as well: write the effect with it, never commit.
   * An EventRouter runs the handlers the delivery's event name routes to. */
  handler: WebhookHandler | EventRouter;
  /** Called with what the handler threw (default: console.error). */
  onError?: (error: unknown, delivery: VerifiedWebhook) => void;
  /** Called once per delivery with what happened: the receipt's outcome, the status answered,
   * the delivery id and the event name (null when it was not verified); never the body. */
  onEvent?: (event: { kind: 'receipt'; outcome: WebhookReceipt['outcome']; status: number; deliveryId: string | null; event: string | null }) => void;
  /** Called when the store fails (`what`: claim, begin, markDone, commit, commitTransaction); the
   * delivery is answered 503 so the sender retries it (default: console.error, with the cause). */
  onStoreError?: (error: unknown, what: string) => void;
  /** One scope per delivery, ended with its outcome (`openTelemetry()` from royaltykit/otel: a SERVER span). */
  telemetry?: Telemetry;
  /**
   * Also claim each delivery's content key (a hash of the signed timestamp and body) after its
   * delivery key. Default false: deliveries are deduplicated by `Service-Webhook-Id`, as the
   * spec says, and every new id runs the handler. Opting in stops a captured delivery resent
   * under a new id inside the tolerance (the id is not signed), and it also merges two genuine
   * deliveries whose body and timestamp are byte-identical (two changes of one resource in the
   * same second): the second is acknowledged and its handler never runs.
   */
  claimContentKey?: boolean;
  /** Not with a store and a handler: see `InboxReceiverOptions`. */
  inbox?: never;
}

/**
 * A receiver in inbox mode: each verified delivery is inserted in `inbox` (its row is the
 * delivery's dedup record) and answered at once — 200 `{"result":"queued"}`, `{"result":
 * "duplicate"}` for one already there, 503 when the insert fails — however long the handler
 * takes: the handler runs in the inbox's worker (`inbox.runWorker(handler)`), never in the request.
 */
export interface InboxReceiverOptions extends Omit<ReceiverOptions, 'store' | 'handler' | 'onError' | 'inbox'> {
  /** A PostgresInbox, a SqliteInbox, a RedisInbox or your own. */
  inbox: Inbox;
  store?: never;
  /** The handler goes to the worker (`inbox.runWorker(handler)`). */
  handler?: never;
}

/** What to answer: `status` and a small JSON `body`; `delivery` once verified. */
export interface Receipt {
  readonly status: number;
  readonly body: string;
  readonly delivery?: VerifiedWebhook;
}

/** Verify → plan → claim → handler → commit (or release), the rules from the core. */
export class WebhookReceiver {
  constructor(options: ReceiverOptions | InboxReceiverOptions);
  /** `info.route`: the framework's route (`/webhooks`), which names the delivery's telemetry scope. */
  receive(headers: HeadersLike, body: BodyLike, now?: Time, info?: { route?: string | null; signal?: AbortSignalLike | null }): Promise<Receipt>;
  /**
   * Replaces the secrets for the deliveries that arrive from now on (a rotation on a live
   * receiver: no new receiver to swap into the framework); a delivery already being received
   * keeps the verifier it started with. Refused as the constructor refuses them (TypeError,
   * InvalidArgumentError `invalid_secret`, …), the secrets in use then kept. After a rotation
   * pass `rotated.secrets(current)`: deliveries signed with `current` verify until the rotation's
   * `previousValidUntil`, never after.
   */
  useSecrets(secrets: Secrets): void;
  readonly maxBodyBytes: number;
}

/** What `webhookHandler` resolves to: the runtime's own `Response` where the environment declares
 * one (DOM or Node types), else the parts of it declared here. */
export type FetchResponse = typeof globalThis extends { Response: { prototype: infer R } }
  ? R
  : { readonly status: number; readonly headers: HeadersObject; text(): Promise<string> };

/** `async (request) => Response` for WHATWG Request handlers. */
export function webhookHandler(receiver: WebhookReceiver | ReceiverOptions | InboxReceiverOptions): (request: RequestLike) => Promise<FetchResponse>;

/** The dedup contract on Redis for receivers in several processes. */
export class RedisDedupStore implements DedupStore, DeliveryStates {
  /** A node-redis (v4+) client, or an ioredis client. */
  constructor(
    client: { sendCommand(args: string[]): Promise<unknown> } | { call(...args: string[]): Promise<unknown> },
    options?: { prefix?: string; ttlSeconds?: number; leaseSeconds?: number },
  );
  claim(key: string): Promise<ClaimState>;
  /** The state of `key` read without claiming it (one GET, read by the core's `lookupReply`):
   * `new` when Redis has no such key (never claimed, or its lease or time-to-live ran out). */
  state(key: string): Promise<ClaimState>;
  /** True when done; false when another worker claimed the key after this claim's lease ran out. */
  commit(key: string): Promise<boolean>;
  /** True when this worker's claim was released. */
  release(key: string): Promise<boolean>;
}

/** A dedup store in the handler's own database: the delivery is marked done inside the
 * transaction that holds its effect (`begin`, `markDone`, `commitTransaction` / `rollback`). */
export interface TransactionalDedupStore<Tx> {
  readonly transactional: true;
  claim(key: string): Promise<ClaimState>;
  release(key: string): Promise<unknown>;
  begin(): Promise<Tx>;
  /** False when the claim was lost (its lease ran out and another worker took the key). */
  markDone(tx: Tx, key: string): Promise<boolean>;
  commitTransaction(tx: Tx): Promise<void>;
  rollback(tx: Tx): Promise<void>;
}

export interface SqlStoreOptions {
  /** Default `royaltykit_dedup` (a plain identifier, optionally `schema.table`). */
  table?: string;
  ttlSeconds?: number;
  leaseSeconds?: number;
  /** Unix seconds (default: `Date.now() / 1000`). */
  clock?: () => number;
}

/** Exactly-once dedup on PostgreSQL with node-postgres: a `pg.Pool` (a client per transaction)
 * or a connected `pg.Client` (transactions one after the other); the handler gets the
 * transaction's client. The table is created when missing before the first claim, unless
 * `createTable: false`. */
export class PostgresDedupStore<Client = any> implements TransactionalDedupStore<Client>, DeliveryStates {
  constructor(pool: { query(sql: string, args?: unknown[]): Promise<unknown>; connect(): Promise<Client> }, options?: SqlStoreOptions & { createTable?: boolean });
  readonly transactional: true;
  /** Creates the table and its index when missing (idempotent). */
  createTable(): Promise<void>;
  claim(key: string): Promise<ClaimState>;
  /** The state of `key` read without claiming it (autocommit, the core's `lookup`): `done` within
   * its time-to-live, `in_progress` for a claim within its lease, else `new` (no row, or a claim
   * whose lease ran out). */
  state(key: string): Promise<ClaimState>;
  release(key: string): Promise<boolean>;
  begin(): Promise<Client>;
  markDone(tx: Client, key: string): Promise<boolean>;
  commitTransaction(tx: Client): Promise<void>;
  rollback(tx: Client): Promise<void>;
  /** Deletes the rows expired now; resolves to how many. */
  purge(): Promise<number>;
}

/** Exactly-once dedup on SQLite with better-sqlite3 (one `Database`; transactions one after
 * the other); the handler gets the `Database` inside `BEGIN IMMEDIATE`. */
export class SqliteDedupStore<Db = any> implements TransactionalDedupStore<Db>, DeliveryStates {
  constructor(db: Db, options?: SqlStoreOptions);
  readonly transactional: true;
  claim(key: string): Promise<ClaimState>;
  /** The state of `key` read without claiming it (the core's `lookup`): `done` within its
   * time-to-live, `in_progress` for a claim within its lease, else `new`. */
  state(key: string): Promise<ClaimState>;
  release(key: string): Promise<boolean>;
  begin(): Promise<Db>;
  markDone(tx: Db, key: string): Promise<boolean>;
  commitTransaction(tx: Db): Promise<void>;
  rollback(tx: Db): Promise<void>;
  purge(): Promise<number>;
}

/** The dedup contract in your SQL database as statements and the meaning of their results. */
export class SqlDedupProtocol {
  constructor(dialect: SqlDialect, options: { paramStyle: ParamStyle; table?: string; ttlSeconds?: number; leaseSeconds?: number });
  static newToken(): string;
  readonly table: string;
  static claimReply(rows: number): 'new' | null;
  static stateReply(state: string | null | undefined): 'in_progress' | 'done';
  /** What a lookup returned: `new` for no row, `done`, else `in_progress`. */
  static lookupReply(state: string | null | undefined): ClaimState;
  static guardedReply(rows: number): boolean;
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (SqlDedupProtocol)
  /** The statements creating the table and its index when missing (idempotent). */
  schema(): string[];
  /**
   * The claim of `key` with `token` (autocommit) at `now` (Unix seconds); count the rows it
   * returns. `InvalidArgumentError` (`invalid_argument`) for a key or token the store cannot hold.
   */
  claim(key: string, token: string, now: Time): SqlStatement;
  /**
   * Reads a taken key's state (one column, one row or none). `InvalidArgumentError`
   * (`invalid_argument`) for a key the store cannot hold.
   */
  state(key: string): SqlStatement;
  /**
   * The read-only lookup of `key`'s state at `now` (Unix seconds; delivery recovery, autocommit,
   * never a claim): a row only while the key is live. Read it with `lookupReply`.
   * `InvalidArgumentError` (`invalid_argument`) for a key the store cannot hold.
   */
  lookup(key: string, now: Time): SqlStatement;
  /** The statement opening the handler's transaction (`BEGIN`; `BEGIN IMMEDIATE` on SQLite). */
  begin(): string;
  /** The statement committing the handler's transaction (`COMMIT`). */
  commit(): string;
  /** The statement rolling the handler's transaction back (`ROLLBACK`). */
  rollback(): string;
  /**
   * Marks `key` done with its claim's `token` at `now` inside the handler's transaction; count the
   * changed rows. `InvalidArgumentError` (`invalid_argument`) for a key or token the store cannot
   * hold.
   */
  markDone(key: string, token: string, now: Time): SqlStatement;
  /**
   * Gives up this worker's claim of `key` with `token` (autocommit, after a rollback).
   * `InvalidArgumentError` (`invalid_argument`) for a key or token the store cannot hold.
   */
  release(key: string, token: string): SqlStatement;
  /** Deletes the rows expired at `now`; count the changed rows. */
  purge(now: Time): SqlStatement;
  // generated: end (SqlDedupProtocol)
}

/** The dedup contract on Redis as commands (argument lists) and the meaning of their replies. */
export class RedisDedupProtocol {
  constructor(options?: { prefix?: string; ttlSeconds?: number; leaseSeconds?: number });
  /** A claim token: 32 hex characters from the platform's random source. */
  static newToken(): string;
  /** `'new'` for `OK`; null for nil (then send `stateCommand`). */
  static claimReply(reply: string | null | undefined): 'new' | null;
  static stateReply(reply: string | null | undefined): 'in_progress' | 'done';
  /** What a lookup's reply means: `new` for nil, `done` once committed, else `in_progress`. */
  static lookupReply(reply: string | null | undefined): ClaimState;
  /** The guarded commit's or release's reply: true for 1 (done, released), false otherwise. */
  static guardedReply(reply: string | number | null | undefined): boolean;
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (RedisDedupProtocol)
  /**
   * The claim of `key` with `token`: `SET <prefix><key> claim:<token> NX PX <lease ms>`. Its reply
   * goes to `claimReply`. `InvalidArgumentError` (`invalid_argument`) for a key or token the store
   * cannot hold.
   */
  claimCommand(key: string, token: string): string[];
  /**
   * Reads a taken key's state: `GET <prefix><key>`. Its reply goes to `stateReply`.
   * `InvalidArgumentError` (`invalid_argument`) for a key the store cannot hold.
   */
  stateCommand(key: string): string[];
  /**
   * The read-only lookup of `key`'s state (delivery recovery; never a claim): `GET <prefix><key>`.
   * Its reply goes to `lookupReply`. `InvalidArgumentError` (`invalid_argument`) for a key the
   * store cannot hold.
   */
  lookupCommand(key: string): string[];
  /**
   * The guarded commit of `key` by the claim holding `token` (`EVAL`): its reply is 1 when done.
   * Read it with `guardedReply`. `InvalidArgumentError` (`invalid_argument`) for a key or token the
   * store cannot hold.
   */
  commitCommand(key: string, token: string): string[];
  /**
   * The guarded release of `key` by the claim holding `token` (`EVAL`): its reply is 1 when
   * released. Read it with `guardedReply`. `InvalidArgumentError` (`invalid_argument`) for a key or
   * token the store cannot hold.
   */
  releaseCommand(key: string, token: string): string[];
  // generated: end (RedisDedupProtocol)
}

// ---- the inbox: persist a verified delivery, answer at once, process in a worker --------------------

/** What the inbox's worker hands the handler: the entry and its event, parsed by the core from the
 * body as received (`event` as a receiver's delivery has it, so an EventRouter works). */
export interface InboxDelivery {
  /** Its delivery key. */
  readonly key: string;
  /** Its `Service-Webhook-Id`. */
  readonly deliveryId: string;
  /** Handler runs started, this one included. */
  readonly attempts: number;
  /** The delivery's raw JSON body, as received. */
  readonly body: string;
  readonly event: WebhookEvent;
}

/** A worker's handler: `handler(delivery, connection)` inside the transaction that marks the entry
 * done (write the effect with `connection`, never commit); sync or async, or an EventRouter. */
export type InboxHandler<Tx = any> = ((delivery: InboxDelivery, connection: Tx) => unknown) | EventRouter;

/** What a worker did: entries processed (committed), failed attempts settled to be retried, and
 * entries set aside as poison. */
export interface InboxReport {
  processed: number;
  retried: number;
  poisoned: number;
}

export interface InboxWorkerOptions {
  /** Stops the worker: checked before each claim and during each wait (the report resolves). A
   * handler that throws once it is aborted rolls back, is never settled, and its throw rejects. */
  signal?: AbortSignalLike | null;
  /** Handler runs of one entry before it is poison (1 to 100; default 5). */
  maxAttempts?: number;
  /** Seconds to wait when nothing is due (default 1; `runWorker` only). */
  pollSeconds?: number;
  /** The jitter's seed (default: the platform's RNG). */
  seed?: number;
  /** Hears each handler failure (default: console.error). */
  onError?: (error: unknown, delivery: InboxDelivery) => void;
  /** Hears each store failure (`step`: claim, begin, markDone, commitTransaction, settle; a
   * RedisInbox: claim, markDone, settle); the
   * worker waits the backoff and claims again (default: console.error). */
  onStoreError?: (error: unknown, step: string) => void;
}

/** A poison entry (`Inbox.poisoned()`; the core's `InboxPoisonEntry`). */
export interface PoisonEntry {
  key: string;
  deliveryId: string;
  event: string;
  attempts: number;
  lastError: string | null;
  /** Unix seconds. */
  receivedAt: number;
}

/** What a receiver in inbox mode needs (`enqueue`), and what recovery reads (`state`). */
export interface Inbox extends DeliveryStates {
  /** Persists a verified delivery: true for a new entry, false for a duplicate. */
  enqueue(key: string, deliveryId: string, event: string, body: string): Promise<boolean>;
}

/** The inboxes in your SQL database (PostgresInbox, SqliteInbox). */
export interface SqlInbox<Tx> extends Inbox {
  /** Creates the table and its index when missing (idempotent). */
  createTable(): Promise<void>;
  /** `new` when never received, `done` once processed, `in_progress` while pending or poison. */
  state(key: string): Promise<ClaimState>;
  /** The poison entries, oldest first, at most `limit` (1 to 1000, default DEFAULT_POISON_LISTED). */
  poisoned(limit?: number): Promise<PoisonEntry[]>;
  /** Puts a poison entry back to pending with no attempts counted: false when `key` is not poison. */
  retry(key: string): Promise<boolean>;
  /** The number of entries in each state (a state with none is absent). */
  counts(): Promise<Partial<Record<'pending' | 'done' | 'poison', number>>>;
  /** Deletes the done entries past their time-to-live; resolves to how many. */
  purge(): Promise<number>;
  /**
   * Runs the worker until `signal` aborts: claims each due entry, calls `handler(delivery,
   * connection)` in a transaction and marks the entry done in it (the effect commits exactly
   * once); a handler that throws rolls back and is retried after the core's backoff, poison after
   * `maxAttempts`. Resolves to the worker's counters once stopped.
   */
  runWorker(handler: InboxHandler<Tx>, options?: InboxWorkerOptions): Promise<InboxReport>;
  /** As `runWorker`, resolving once nothing is due (entries waiting for a retry stay pending). */
  drain(handler: InboxHandler<Tx>, options?: InboxWorkerOptions): Promise<InboxReport>;
  /** (Worker steps, for a loop of your own over `InboxWorker`.) `claim(now)`: at `now` (default: the inbox's clock); give
   * the worker's `claimed` the same `now`. */
  claim(now?: Time): Promise<InboxEntry | null>;
  begin(): Promise<Tx>;
  markDone(tx: Tx, key: string, attempts: number): Promise<boolean>;
  commitTransaction(tx: Tx): Promise<void>;
  rollback(tx: Tx): Promise<void>;
  settle(key: string, attempts: number, poison: boolean, retryAt: number, error: string): Promise<void>;
  /** The inbox's clock, Unix seconds. */
  readonly clock: () => number;
}

export interface SqlInboxOptions {
  /** Default `royaltykit_inbox` (a plain identifier, optionally `schema.table`). */
  table?: string;
  /** How long a done entry is kept (and a redelivery is a duplicate); the core's default. */
  ttlSeconds?: number;
  /** How long a claim holds an entry before another worker may take it (keep handlers shorter). */
  leaseSeconds?: number;
  /** Unix seconds (default: `Date.now() / 1000`). */
  clock?: () => number;
}

/** An inbox on PostgreSQL with node-postgres: a `pg.Pool` (each worker transaction on a client of
 * its own) or a connected `pg.Client` (statements wait for the open transaction). Workers in any
 * number of processes: a claim skips the entries others hold. The table is created when missing
 * before the first statement, unless `createTable: false`. */
export class PostgresInbox<Client = any> implements SqlInbox<Client> {
  constructor(pool: { query(sql: any, args?: unknown[]): Promise<unknown>; connect(): Promise<Client> }, options?: SqlInboxOptions & { createTable?: boolean });
  createTable(): Promise<void>;
  enqueue(key: string, deliveryId: string, event: string, body: string): Promise<boolean>;
  state(key: string): Promise<ClaimState>;
  poisoned(limit?: number): Promise<PoisonEntry[]>;
  retry(key: string): Promise<boolean>;
  counts(): Promise<Partial<Record<'pending' | 'done' | 'poison', number>>>;
  purge(): Promise<number>;
  runWorker(handler: InboxHandler<Client>, options?: InboxWorkerOptions): Promise<InboxReport>;
  drain(handler: InboxHandler<Client>, options?: InboxWorkerOptions): Promise<InboxReport>;
  claim(now?: Time): Promise<InboxEntry | null>;
  begin(): Promise<Client>;
  markDone(tx: Client, key: string, attempts: number): Promise<boolean>;
  commitTransaction(tx: Client): Promise<void>;
  rollback(tx: Client): Promise<void>;
  settle(key: string, attempts: number, poison: boolean, retryAt: number, error: string): Promise<void>;
  readonly clock: () => number;
}

/** An inbox on SQLite with better-sqlite3 (one `Database`, SQLite 3.35 or later; the table is
 * created when missing). A receiver's insert waits while the worker's transaction is open (one
 * writer at a time). */
export class SqliteInbox<Db = any> implements SqlInbox<Db> {
  constructor(db: Db, options?: SqlInboxOptions);
  createTable(): Promise<void>;
  enqueue(key: string, deliveryId: string, event: string, body: string): Promise<boolean>;
  state(key: string): Promise<ClaimState>;
  poisoned(limit?: number): Promise<PoisonEntry[]>;
  retry(key: string): Promise<boolean>;
  counts(): Promise<Partial<Record<'pending' | 'done' | 'poison', number>>>;
  purge(): Promise<number>;
  runWorker(handler: InboxHandler<Db>, options?: InboxWorkerOptions): Promise<InboxReport>;
  drain(handler: InboxHandler<Db>, options?: InboxWorkerOptions): Promise<InboxReport>;
  claim(now?: Time): Promise<InboxEntry | null>;
  begin(): Promise<Db>;
  markDone(tx: Db, key: string, attempts: number): Promise<boolean>;
  commitTransaction(tx: Db): Promise<void>;
  rollback(tx: Db): Promise<void>;
  settle(key: string, attempts: number, poison: boolean, retryAt: number, error: string): Promise<void>;
  readonly clock: () => number;
}

/** The inbox table in your SQL database as statements and the meaning of their results (rows are
 * read by position). */
export class SqlInboxProtocol {
  /** The core's inbox constants. */
  static readonly limits: {
    readonly defaultTable: string;
    readonly defaultMaxAttempts: number;
    readonly maxAttempts: number;
    readonly defaultPollSeconds: number;
    readonly maxBodyBytes: number;
    readonly maxErrorBytes: number;
    readonly maxPoisonListed: number;
    /** What `poisoned()` lists when given no limit (DEFAULT_POISON_LISTED). */
    readonly defaultPoisonListed: number;
  };
  constructor(dialect: SqlDialect, options: { paramStyle: ParamStyle; table?: string; ttlSeconds?: number; leaseSeconds?: number });
  readonly table: string;
  readonly leaseSeconds: number;
  static enqueueReply(rows: number): boolean;
  markDone(key: string, attempts: number, now: number): SqlStatement;
  static guardedReply(rows: number): boolean;
  settle(key: string, attempts: number, poison: boolean, retryAt: number, error: string): SqlStatement;
  /** Six columns: key, delivery id, event, attempts, last error, received at. */
  poisoned(limit: number): SqlStatement;
  static lookupReply(state: string | null | undefined): ClaimState;
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (SqlInboxProtocol)
  /** The statements creating the table and its index when missing (idempotent). */
  schema(): string[];
  /**
   * The insert of a verified delivery at `now` (Unix seconds; autocommit): `key` its delivery key,
   * `deliveryId` its `Service-Webhook-Id`, `event` its event name, `body` its raw JSON body as
   * text. Read its count of inserted rows with `enqueueReply`. `InvalidArgumentError`
   * (`invalid_argument`) for a bad key, an empty delivery id or a body over 256 KiB (the spec's
   * payload limit).
   */
  enqueue(key: string, deliveryId: string, event: string, body: string, now: Time): SqlStatement;
  /**
   * The claim of the oldest due entry at `now` (autocommit): it counts an attempt and holds the
   * entry for the lease; one row of five columns (`inbox_key`, `delivery_id`, `event`, `body`,
   * `attempts`: report it to the worker's `claimed`) or none.
   */
  claim(now: Time): SqlStatement;
  /** The statement opening the handler's transaction (`BEGIN`; `BEGIN IMMEDIATE` on SQLite). */
  begin(): string;
  /** The statement committing the handler's transaction (`COMMIT`). */
  commit(): string;
  /** The statement rolling the handler's transaction back (`ROLLBACK`). */
  rollback(): string;
  /**
   * The statement putting a poison entry back to pending at `now` with no attempts counted: one row
   * changed means retried, none means `key` is not a poison entry. `InvalidArgumentError`
   * (`invalid_argument`) for a key the store cannot hold.
   */
  retry(key: string, now: Time): SqlStatement;
  /**
   * The read-only lookup of `key` (delivery recovery): one column, `state`, or no row. Read it with
   * `lookupReply`. `InvalidArgumentError` (`invalid_argument`) for a key the store cannot hold.
   */
  lookup(key: string): SqlStatement;
  /** The count of entries by state: rows of two columns, `state` and its count. */
  counts(): SqlStatement;
  /** The statement deleting done entries past their TTL at `now`. */
  purge(now: Time): SqlStatement;
  // generated: end (SqlInboxProtocol)
}

/** Poison entries an inbox's `poisoned()` lists when given no limit (the core's, 100). */
export const DEFAULT_POISON_LISTED: number;


export interface RedisInboxOptions {
  /** The key prefix (default `{royaltykit:inbox}:`, a Redis Cluster hash tag: give a prefix of
   * your own a `{…}` tag too). */
  prefix?: string;
  /** How long a done entry is kept (and a redelivery is a duplicate); the core's default. */
  ttlSeconds?: number;
  /** How long a claim holds an entry before another worker may take it (keep handlers shorter). */
  leaseSeconds?: number;
}

/**
 * An inbox on a Redis stream (Redis 6.2 or later, with persistence), on a node-redis (v4+) or
 * ioredis client. Workers in any number of processes; a claim whose worker died is taken again
 * after the lease. **Effects are at least once**: Redis shares no transaction with the handler's
 * effects, so a worker killed between its effect and its mark (or a handler outliving the lease)
 * runs the handler again. Make the handler idempotent, or use PostgresInbox for exactly once. The
 * handler gets `(delivery, client)`: this inbox's Redis client.
 */
export class RedisInbox<Client extends RedisClientLike = RedisClientLike> implements Inbox {
  constructor(client: Client, options?: RedisInboxOptions & { clock?: () => number });
  /** The client the inbox sends its commands with (the handler's second argument). */
  readonly client: Client;
  readonly protocol: RedisInboxProtocol;
  /** No transaction with the handler: the worker runs claim, handler, mark. */
  readonly transactional: false;
  enqueue(key: string, deliveryId: string, event: string, body: string): Promise<boolean>;
  /** `new` when never received (or done and past its TTL), `done` once processed, `in_progress`
   * while pending or poison. */
  state(key: string): Promise<ClaimState>;
  /** The poison entries, oldest first, at most `limit` (1 to 1000, default DEFAULT_POISON_LISTED). */
  poisoned(limit?: number): Promise<PoisonEntry[]>;
  /** Puts a poison entry back to pending with no attempts counted: false when `key` is not poison. */
  retry(key: string): Promise<boolean>;
  /** The number of entries in each state (a state with none is absent). */
  counts(): Promise<Partial<Record<'pending' | 'done' | 'poison', number>>>;
  /** Forgets the done entries past their time-to-live; resolves to how many. */
  purge(): Promise<number>;
  /** Runs the worker until `signal` aborts: claims each due entry, calls `handler(delivery,
   * client)`, then marks the entry done (at least once); a handler that throws is retried after
   * the core's backoff, poison after `maxAttempts`. Resolves to the worker's counters once stopped. */
  runWorker(handler: InboxHandler<Client>, options?: InboxWorkerOptions): Promise<InboxReport>;
  /** As `runWorker`, resolving once nothing is due (entries waiting for a retry stay pending). */
  drain(handler: InboxHandler<Client>, options?: InboxWorkerOptions): Promise<InboxReport>;
  /** (Worker steps, for a loop of your own over `new InboxWorker({ transactional: false })`.) */
  claim(now?: Time): Promise<InboxEntry | null>;
  /** False when another worker claimed the entry since (this claim's lease ran out). */
  markDone(tx: unknown, key: string, attempts: number): Promise<boolean>;
  settle(key: string, attempts: number, poison: boolean, retryAt: number, error: string): Promise<void>;
  /** The inbox's clock, Unix seconds. */
  readonly clock: () => number;
}

/** The inbox on a Redis stream as commands (argument lists to send as they are) and the meaning of
 * their replies: each reply one string (a number or its text) or null for nil (arrays come as
 * JSON text encoded by the script). */
export class RedisInboxProtocol {
  constructor(options?: RedisInboxOptions);
  readonly prefix: string;
  readonly leaseSeconds: number;
  enqueueCommand(key: string, deliveryId: string, event: string, body: string, now: number): string[];
  /** The reply of enqueue, mark, settle or retry: true for 1 (added, marked, settled, put back). */
  static addedReply(reply: string | number | null | undefined): boolean;
  claimCommand(now: number): string[];
  /** The claimed entry, or null when nothing is due. */
  static claimReply(reply: string | null | undefined): InboxEntry | null;
  markDoneCommand(key: string, attempts: number, now: number): string[];
  settleCommand(key: string, attempts: number, poison: boolean, retryAt: number, error: string): string[];
  poisonedCommand(limit: number): string[];
  static poisonedReply(reply: string | null | undefined): InboxPoisonEntry[];
  retryCommand(key: string): string[];
  /** The read-only lookup of `key` (delivery recovery). */
  lookupCommand(key: string): string[];
  /** `new` for nil, `done`, else `in_progress`. */
  static lookupReply(reply: string | null | undefined): ClaimState;
  countsCommand(now: number): string[];
  static countsReply(reply: string | null | undefined): InboxCounts;
  /** Its integer reply: how many done entries were forgotten. */
  purgeCommand(now: number): string[];
}

/** The worker of an inbox as a machine: ask `next()`, perform the step with your store and
 * handler, report the outcome (each input returns the next step). Every decision (backoff, poison,
 * guards) is the machine's. (`PostgresInbox.runWorker`, `SqliteInbox.drain`, `RedisInbox.runWorker`
 * drive it for you; `transactional: false`, as a Redis inbox runs it: no begin, commit or rollback.) */
export class InboxWorker {
  /** Throws InvalidArgumentError for `maxAttempts` outside 1 to 100 or a poll interval that is not
   * more than 0 and at most 3600 seconds. */
  constructor(options?: { maxAttempts?: number; pollSeconds?: number; transactional?: boolean; drain?: boolean; seed?: number });
  next(): InboxStep;
  /** @deprecated kept for one release: use `report({ claimed: entry }, now)`. */
  claimed(entry: InboxEntry | null, now: Time): InboxStep;
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (InboxWorker)
  /**
   * What became of the pending step at `now` (null or left out: the host's clock), the worker's one
   * input: `'done'`, `{ claimed: entry }`, `{ marked: changed }` or `{ failed: message }`. `done`:
   * the wait, begin, handler, commit, rollback or settle was performed; `claimed`: the claim's
   * entry (`{ key, deliveryId, event, body, attempts }`), null when nothing is due; `marked`:
   * whether the mark changed a row (false: another worker claimed the entry since); `failed`: the
   * step failed with a message for operators (never include a secret), which the pending step gives
   * its meaning (during the handler the handler's, kept as the entry's `last_error`; as good as
   * done for a rollback; the store's otherwise). Returns the next step. `InvalidArgumentError`
   * (`invalid_argument`) for an outcome the pending step cannot have (the worker unchanged), or one
   * the core cannot read. A shape none of those is a `TypeError`.
   */
  report(outcome: InboxOutcome, now?: Time | null): InboxStep;
  /**
   * The idle wait is over. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  waited(): InboxStep;
  /**
   * The transaction is open. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  began(): InboxStep;
  /**
   * The handler finished. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  handlerSucceeded(): InboxStep;
  /**
   * The handler failed with `error` at `now` (null or left out: the host's clock): a message for
   * operators, kept as the entry's `last_error` (never include a secret). Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  handlerFailed(error: string, now?: Time | null): InboxStep;
  /**
   * Whether the mark changed a row (`changed` false: another worker claimed the entry since).
   * Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  marked(changed: boolean): InboxStep;
  /**
   * The transaction committed: the entry is done. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  committed(): InboxStep;
  /**
   * The transaction was rolled back (or its connection is gone). Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  rolledBack(): InboxStep;
  /**
   * The failed attempt is recorded. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  settled(): InboxStep;
  /**
   * The store could not be reached at the pending store step. Returns the next step: a rollback
   * when a transaction is open, then a wait.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  storeFailed(): InboxStep;
  // generated: end (InboxWorker)
  readonly processed: number;
  readonly retried: number;
  readonly poisoned: number;
  /** Frees the wasm memory now (otherwise freed when garbage-collected). */
  free(): void;
}

/** What to do with a verified delivery: acknowledge a test event, or the keys to claim (the
 * delivery key; the content key too with `claimContentKey`, see `ReceiverOptions`). */
export function planReceipt(namespace: string, delivery: VerifiedWebhook, options?: { claimContentKey?: boolean }): ReceiverDecision;

// ---- retry -----------------------------------------------------------------------------------------

export interface BackoffPolicy {
  /** Delays (s) before retries 1, 2, …. */
  steps?: number[];
  /** After the steps: a uniform delay in [min, max); without it the last step repeats. */
  band?: [number, number] | null;
  /** No jitter when absent. */
  jitter?: Jitter;
  capSeconds: number;
}
export function backoffDelay(attempt: number, options?: { random?: number; policy?: BackoffPolicy }): number;

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
  tokenRefreshed?: boolean;
  /** Whether the request carried its idempotency key (`RequestDescriptor.idempotencyKeySent`);
   * an `idempotent_write` without it is reconciled, never repeated blindly. */
  idempotencyKeySent?: boolean;
  /** In [0, 1); defaults to Math.random(). */
  random?: number;
  now?: Time;
  maxAttempts?: number;
  maxElapsedSeconds?: number;
}
export function decideRetry(input: RetryInput): RetryDecision;

export type RatePreset = 'enterprise' | 'enterprise_ddex' | 'enterprise_audio_upload' | 'enterprise_chunk_upload';
export class RateBudget {
  constructor(windows: RatePreset | ReadonlyArray<{ name: string; limit: number; windowSeconds?: number }>);
  tryAcquire(now?: Time): RateDecision;
  free(): void;
}

// ---- catalog, requests, error bodies, tokens ---------------------------------------------------------

export function operations(): readonly Operation[];
export function operation(id: string): Operation;

export interface RequestParams {
  path?: Record<string, string | number>;
  query?: Record<string, string | number | boolean | null | undefined> | ReadonlyArray<readonly [string, string | number]>;
  /** An object is sent as JSON; a string or bytes as is. */
  body?: object | string | Uint8Array | ArrayBuffer | null;
  /** The bearer token, typed by the API that issued it: a token of one API is refused on the other's routes. */
  token?: Token | EnterpriseToken | BearerToken;
  /** `X-Tenant-ID`; default: the tenant the token was obtained for (another one is refused). */
  tenantId?: string;
  userId?: string;
  /** This logical request's key (keep it for its retries); default: random, or from `requestId`. */
  idempotencyKey?: string;
  /** Header for the key on reporting `idem` routes (its name is not shown in the spec). */
  idempotencyHeader?: string;
  /** An id you give this logical request: the key is derived from it (a retry recomputes it). */
  requestId?: string;
  /** The tenant or organization a `requestId` key is scoped to (default: `tenantId`). */
  keyNamespace?: string;
  /** 16 random bytes for the default random key (default: `crypto.getRandomValues`). */
  keyRandom?: Uint8Array;
}
/** A request to send with your own client. It holds credentials: printing it hides them. */
export class RequestDescriptor {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly pathAndQuery: string;
  readonly headers: Array<[string, string]>;
  readonly body: Uint8Array | null;
  readonly idempotencyKey: string | null;
  /** Whether the key is in `headers`: pass it to `decideRetry`. */
  readonly idempotencyKeySent: boolean;
  url(base: string): string;
}
export function buildRequest(operationId: string, params?: RequestParams): RequestDescriptor;
export function parseApiError(
  api: 'reports' | 'enterprise',
  status: number,
  headers: HeadersLike | null | undefined,
  body: BodyLike | null | undefined,
  options?: { operationId?: string; now?: Time },
): ApiError;

/** A reporting access token; printing it hides `accessToken`. */
export class Token {
  #private;
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  readonly expiresIn: number;
  readonly expiresAt: number;
  readonly refreshAt: number;
  /** Scopes granted; null when the response did not say (the grant is unknown). */
  readonly scopes: string[] | null;
  /** Scopes requested but not granted; null when the grant is unknown. */
  readonly missingScopes: string[] | null;
  readonly warnings: string[];
  /** The tenant the token was obtained for: requests built with it send it and refuse another. */
  readonly tenantId: string;
}
/** An enterprise token; printing it hides `token`. */
export class EnterpriseToken {
  #private;
  readonly token: string;
  readonly expiresAt: number | null;
  readonly refreshAt: number | null;
}
/** A bearer token and the API that issued it, for a token restored from a cache; printing it hides `value`. */
export class BearerToken {
  #private;
  private constructor();
  /** `tenantId`, required: the tenant it was obtained for (requests send it and refuse another). */
  /** `tenantId` is required; an explicit `null` makes a token every machine route refuses. */
  static reports(value: string, tenantId: string | null): BearerToken;
  static enterprise(value: string): BearerToken;
  readonly api: 'reports' | 'enterprise';
  readonly value: string;
  /** The tenant of a reporting token; absent for an enterprise one. */
  readonly tenantId?: string;
}
export function buildTokenRequest(params: { clientId: string; clientSecret: string; tenantId: string; scopes?: string[] }): RequestDescriptor;
/** `tenantId`: the tenant the exchange was made for (its `X-Tenant-ID`); the token remembers it. */
export function parseTokenResponse(status: number, headers: HeadersLike, body: BodyLike, options: { tenantId: string; requestedScopes?: string[]; now?: Time }): Token;
/** Checks an API session response (granted scopes, when to refresh); throws ApiError or TokenResponseError. */
export function parseApiSession(status: number, headers: HeadersLike | null | undefined, body: BodyLike | null | undefined, options?: { now?: Time }): ApiSession;
export function buildEnterpriseTokenRequest(params: { apiKey: string; apiSecret: string }): RequestDescriptor;
export function parseEnterpriseTokenResponse(status: number, headers: HeadersLike, body: BodyLike, options?: { now?: Time }): EnterpriseToken;
export function responseNotices(headers: HeadersLike): ResponseNotices;

// ---- exports -----------------------------------------------------------------------------------------

export function validateExportListQuery(query: { limit?: number | string; cursor?: string; exportClass?: string; status?: string; format?: string }): string;

// ---- protocol machines ---------------------------------------------------------------------------

/** What a host does next for a `Call` or an `ExportJob`. */
export type CallStep =
  | { step: 'send'; request: RequestDescriptor }
  | { step: 'wait'; seconds: number }
  | { step: 'refresh_token'; reason: string }
  /** (On a Session.) Another call is obtaining the session's token: ask again once the session's
   * `version` changed (`session.waitForChange`), at the latest after `seconds`. */
  | { step: 'await_token'; seconds: number }
  /** (On a fleet's Session.) Reserve this request in the fleet's rate budget: send `command` to
   * Redis as it is (an EVAL of RESERVE_SCRIPT), then report `reserved(reply)` (`ok`, or `wait
   * <second> <window>`) or `reserveFailed()` when Redis cannot be reached; ask again. */
  | { step: 'reserve'; command: string[] }
  | {
      step: 'reconcile';
      reconcile: 'lookup_by_sent_data' | 'fetch_release_review_state' | 'check_checkout_state' | 'read_addon_status' | 'rotate_again';
      reason: string;
      /** An export job's: the ids of the exports that may be its own, possibly none; [] for a call. */
      candidates: string[];
      /** `reconcile` for an export job, null for a call. */
      stage: 'reconcile' | null;
    }
  | {
      step: 'done';
      status: number;
      headers: Array<[string, string]>;
      body: Uint8Array;
      /** Whether `body` is JSON by its Content-Type (parse it); else bytes (an artifact). */
      json: boolean;
      exportId?: string;
    }
  | {
      step: 'fail';
      rule: string;
      reason: string;
      status: number | null;
      transport: TransportFailure | null;
      retryAfterSeconds: number | null;
      /** The error to throw; null for a transport failure. */
      error: RoyaltyKitError | null;
      stage: 'list' | 'create' | 'reconcile' | 'poll' | 'download' | null;
      exportId: string | null;
      /** The requests the call sent. */
      attempts: number;
    };

export interface MachineLimits {
  maxAttempts?: number;
  maxElapsedSeconds?: number;
  /** The seed of jitter and generated keys (default: the platform's RNG). */
  seed?: number;
}

/**
 * What the machines of one API client share: the token, when to refresh it, the one token
 * exchange in flight, the rate budget. One per API client (per API key, or per client id and
 * tenant), never shared between the two APIs.
 */
export class Session {
  /** `budget`: a RateBudget (the session keeps a copy of its windows and counts), a preset name
   * or windows; none by default. */
  constructor(budget?: RateBudget | RatePreset | ReadonlyArray<{ name: string; limit: number; windowSeconds?: number }> | null);
  /** Changes whenever a call waiting on the session has something new to look at. */
  readonly version: number;
  /** Token exchanges the session's calls have started. */
  readonly exchanges: number;
  /** Whether a token exchange is in flight. */
  readonly exchanging: boolean;
  readonly hasToken: boolean;
  /** Stores the token a `refresh_token` step obtained (or one restored from a cache), refreshed
   * at its `refreshAt` unless `refreshAt` is given; wakes the calls waiting. */
  storeToken(token: Token | EnterpriseToken | BearerToken, refreshAt?: Time | null): void;
  /** The exchange in flight failed (never pass a credential): the calls that waited for it fail
   * with rule `token_exchange_failed`; wakes them. */
  exchangeFailed(reason: string): void;
  /** The exchange in flight was cancelled: the next call that asks leads a new one. */
  abandonExchange(): void;
  /** The Fleet (or RedisFleet) the session was made by (`fleet.session(budget)`), sharing its
   * token and budget with the fleet's other processes; null for a session of one process. */
  readonly fleet: Fleet | null;
  /** Resolves true once `version` differs from `since`, false after `seconds`; rejects with the
   * signal's reason when it aborts. */
  waitForChange(since: number, seconds: number, signal?: AbortSignalLike): Promise<boolean>;
  free(): void;
}

// ---- fleets: the processes of one API client sharing one token and one rate budget in Redis ----

/** The Lua script of a `reserve` step's EVAL (one request reserved in every window of the budget). */
export const RESERVE_SCRIPT: string;
/** The Lua script that publishes the exchanged token and releases the fleet's exchange lock. */
export const PUBLISH_SCRIPT: string;
/** The Lua script that releases the exchange lock when this process still holds it. */
export const UNLOCK_SCRIPT: string;
/** The key prefix of a Fleet made without one: `royaltykit:fleet:`. */
export const DEFAULT_FLEET_PREFIX: string;
/** Seconds a process waits before looking again while another holds the exchange lock. */
export const FLEET_POLL_SECONDS: number;

/** A node-redis (v4+) client, or an ioredis client (structurally). */
export type RedisClientLike = { sendCommand(args: string[]): Promise<unknown> } | { call(...args: string[]): Promise<unknown> };

/**
 * Where the processes of one API client keep their shared token and rate budget in Redis (the
 * core's Fleet). Sans I/O: `session(budget)` is a Session whose calls ask `reserve` before each
 * send and whose token refresh is a FleetToken; RedisFleet sends the commands for the clients.
 */
export class Fleet {
  /** `prefix`: default DEFAULT_FLEET_PREFIX; give each API client its own. Throws
   * InvalidArgumentError for an empty prefix, one over 128 bytes, or one with spaces or control
   * characters. */
  constructor(options?: { prefix?: string | null });
  readonly prefix: string;
  /** A Session of this fleet: its token is the fleet's, and with `budget` each request is
   * reserved in the fleet's Redis before it is sent. */
  session(budget?: RateBudget | RatePreset | ReadonlyArray<{ name: string; limit: number; windowSeconds?: number }> | null): Session;
  free(): void;
}

/**
 * A Fleet whose commands go to Redis through your client (as RedisDedupStore takes it). Give it
 * to a client (`createEnterpriseClient({ ..., fleet })`): every process with the same prefix then
 * shares one token (one exchange for the fleet) and one rate budget (counted in Redis). The token
 * is stored in Redis: protect it as you protect the API secret.
 */
export class RedisFleet extends Fleet {
  constructor(client: RedisClientLike, options?: { prefix?: string | null });
  /** Sends one command (a step's `command`) and resolves to its reply as text, or null for nil;
   * rejects when Redis cannot be reached or answers an error. Never log a command. */
  command(args: string[]): Promise<string | null>;
}

/**
 * One token refresh of a fleet session (the core's FleetToken), run instead of the exchange when
 * a call of a fleet session says `refresh_token`: it adopts the token another process published,
 * or takes the fleet's exchange lock, exchanges and publishes. Every input returns the next step.
 */
export class FleetToken {
  /** Throws InvalidArgumentError for a session that is not a fleet's. `seed` names this process
   * (default: the platform's RNG). */
  constructor(session: Session, api: 'enterprise' | 'reports', options?: { tenantId?: string | null; seed?: number; now?: Time });
  next(): FleetTokenStep;
  /** The reply of the pending `command` as text (null for nil); a token adopted or published is stored in `session`. */
  replied(reply: string | null, session: Session, now?: Time): FleetTokenStep;
  /** Redis could not be reached for the pending `command`: this process goes on without it. */
  redisFailed(session: Session): FleetTokenStep;
  waited(): FleetTokenStep;
  /** The token this process's exchange obtained, due at `refreshAt` (default: the token's own). */
  exchanged(token: Token | EnterpriseToken | BearerToken, refreshAt?: Time | null, now?: Time): FleetTokenStep;
  /** The exchange this process ran failed (never pass a credential). */
  exchangeFailed(reason: string): FleetTokenStep;
  /** The command (an EVAL of UNLOCK_SCRIPT) releasing the fleet's exchange lock while this
   * refresh holds it (its exchange is running), else null. For a call cancelled mid-exchange:
   * take it, call `session.abandonExchange()` (the process's waiting calls go on at once), then
   * send it to Redis best effort (ignore its failure), so the fleet's other processes need not
   * wait out the lock's lease. */
  abandonCommand(): string[] | null;
  /** Seconds since the refresh started. */
  elapsed(now?: Time): number;
  free(): void;
}

/** An AbortSignal (structurally: the package's types need no DOM or Node globals). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** What a machine did (`takeEvents()`, a client's `onEvent`): one schema in every language. */
export interface MachineEvent {
  /** `send`, `response`, `transport_failure`, `retry`, `refresh_token`, `rate_limited`, `notice` (a deprecated operation, once per Session), `reconcile`, `done`, `fail`; an export job adds `poll`, and a download `progress` (at each tenth of its body, each MiB when its length is unknown, and when whole). */
  kind: string;
  /** The operation id (`exchangePlatformClientCredential` for a token exchange). */
  operation: string;
  /** The attempt (1 for the first send), or the poll's number. */
  attempt: number;
  method: string | null;
  /** The request's path, without the query. */
  path: string | null;
  status: number | null;
  transport: TransportFailure | null;
  /** The retry rule that decided (`server_error_retry`, `retry_after`, `attempts_exhausted`, …). */
  rule: string | null;
  reason: string | null;
  /** `retry`, `rate_limited`: seconds until the next send. */
  waitSeconds: number | null;
  /** `poll`: the export's state as the service sent it. */
  state: string | null;
  /** `progress`: the bytes of the download's body received so far. */
  receivedBytes: number | null;
  /** `progress`: the body's length as its Content-Length announced it, when it did. */
  totalBytes: number | null;
  /** The level a log shows it at, the same in every language: `debug` (send, response, done), `warning` (fail, notice), `info` (the rest). */
  level: 'debug' | 'info' | 'warning';
  /** The event as one log line, the same in every language: `retry listPlatformExports #1: 503 wait 2.1 s (server_error_retry)`. */
  message: string;
}

/**
 * What a client or receiver reports to a tracing system (`openTelemetry()` from
 * royaltykit/otel makes one over @opentelemetry/api; the package itself needs no OpenTelemetry).
 */
export interface Telemetry {
  /** A client's logical operation begins (`listPlatformExports`, `runExport`, …); `baseUrl` is the client's. */
  operation?(name: string, info: { baseUrl: string }): OperationScope;
  /** A webhook delivery arrives; `route` is the framework's route when it gives one. */
  receipt?(info: { route: string | null }): ReceiptScope;
}

/** One logical operation: every machine event of it (its token exchange's too), then its end. */
export interface OperationScope {
  event(event: MachineEvent): void;
  /** `error`: what the operation threw (null when it succeeded). */
  end(error: unknown): void;
}

/** One delivery, ended once with what was answered. */
export interface ReceiptScope {
  /** `outcome`: the receipt's (null when receiving threw), `status` the HTTP status answered,
   * `deliveryId` once verified, `error` what the handler or the store threw (else null). */
  end(result: { outcome: WebhookReceipt['outcome'] | null; status: number; deliveryId: string | null; error: unknown }): void;
}

/** What became of a `send` or a `reserve` (`Call.report`, `ExportJob.report`): a response read
 * whole, one whose body went to your sink (its length), no response (after a `reserve`: Redis
 * could not be reached), or the fleet's reply to a `reserve` (null for nil). */
export type StepOutcome =
  | { status: number; headers?: HeadersLike | null; body?: BodyLike | null }
  | { status: number; headers?: HeadersLike | null; length: number }
  | { failure: TransportFailure }
  | { reply: string | null };

/** What became of a receipt's step (`WebhookReceipt.report`): performed, failed, cancelled, or
 * the answer of a claim (the key's state), a transactional commit's mark (whether it changed a
 * row) or an enqueue (whether the delivery was new). */
export type ReceiptOutcome =
  | 'done'
  | 'failed'
  | 'cancelled'
  | { claimed: ClaimState }
  | { marked: boolean }
  | { enqueued: boolean };

/** What became of an inbox worker's step (`InboxWorker.report`): performed, the claim's entry
 * (null when nothing is due), the mark's answer (whether it changed a row), or a failure's
 * message (for operators; never a secret). */
export type InboxOutcome =
  | 'done'
  | { claimed: { key: string; deliveryId: string; event: string; body: string; attempts: number } | null }
  | { marked: boolean }
  | { failed: string };

declare class Machine {
  /** The step at `now` on a Session (its token and budget, shared with its other machines), or
   * standing alone, taking one request from `budget` before a send. */
  next(now?: Time, on?: RateBudget | Session): CallStep;
  /** What became of the step performed: the one input after `send` and `reserve`. Throws
   * InvalidArgumentError for an outcome the pending step cannot have. */
  report(outcome: StepOutcome, now?: Time): void;
  /** @deprecated kept for one release: use `report({ status, headers, body }, now)`. */
  response(status: number, headers: HeadersLike | null | undefined, body: BodyLike | null | undefined, now?: Time): void;
  /** Whether a response with `status` is streamed to your own sink (a file): only a 2xx to a download. */
  streams(status: number): boolean;
  /** The download's body is arriving: `received` bytes of `total` (null: unknown); a `progress` event at each tenth of it and when it is whole. */
  progress(received: number, total?: number | null): void;
  /** A download body you streamed to your sink, by its length; a partial one is read again, `done` then has no body.
   * @deprecated kept for one release: use `report({ status, headers, length }, now)`. */
  streamedResponse(status: number, headers: HeadersLike | null | undefined, length: number, now?: Time): void;
  /** @deprecated kept for one release: use `report({ failure }, now)`. */
  transportFailure(failure: TransportFailure, now?: Time): void;
  /** (A fleet's Session.) The reply of the pending `reserve` step (its text; null for nil):
   * `ok` sends at the next step, in the same second; `wait <second> <window>` waits until that
   * second (a `rate_limited` event). Throws InvalidArgumentError when no reservation is pending.
   * @deprecated kept for one release: use `report({ reply }, now)`. */
  reserved(reply: string | null, now?: Time): void;
  /** (A fleet's Session.) Redis could not be reached for the pending `reserve` step: the machine
   * waits a second and asks again (it never sends uncounted).
   * @deprecated kept for one release: use `report({ failure: 'connect_failed' }, now)`. */
  reserveFailed(now?: Time): void;
  token(token: Token | EnterpriseToken | BearerToken, refreshAt?: Time): void;
  /** The state as JSON text, to resume after a crash (never the token). */
  save(): string;
  /** What the machine did since the events were last taken, oldest first. */
  takeEvents(minLevel?: EventLevel | null): MachineEvent[];
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the machine is unusable after. */
  free(): void;
}

/** One API operation with retries, Retry-After, token refresh, idempotency key and rate budget. */
export class Call extends Machine {
  constructor(operationId: string, params?: Omit<RequestParams, 'keyRandom'> & MachineLimits);
  /**
   * A token exchange (from `buildTokenRequest` or `buildEnterpriseTokenRequest`) as a call, sent again by the
   * exchange's retry rules; parse its `done` response with `parseTokenResponse`. Its credentials are never saved.
   */
  static exchange(request: RequestDescriptor, params?: MachineLimits): Call;
  readonly idempotencyKey: string | null;
  static resume(saved: string): Call;
}

/** A reporting export (create, poll, download) as a machine. */
export class ExportJob extends Machine {
  constructor(params: {
    tenantId: string;
    /** The CreateExportRequest. */
    body: object | string | Uint8Array;
    token?: Token | BearerToken;
    idempotencyHeader?: string;
    requestId?: string;
    maxPolls?: number;
    /** Most seconds of polling, from the create's answer to the last read (default: bounded by `maxPolls` only). */
    maxPollSeconds?: number;
    /** Seconds, in all, a reconciling job looks again for an export a lost create may have made (default: the core's, 7 s: looks after 2 s, then 5 s); 0: one look. */
    reconcileGraceSeconds?: number;
    /** The shortest wait between two reads of a pending export, in seconds (default: the spec's backoff, 2 s, 5 s, 15 s, then 30–60 s). */
    minPollIntervalSeconds?: number;
    /** The longest wait between two reads of a pending export, in seconds (default: the backoff's 60 s cap). */
    maxPollIntervalSeconds?: number;
    idField?: string;
    stateField?: string;
  } & MachineLimits);
  readonly exportId: string | null;
  /**
   * The checkpoint to keep before performing the step just given, or null: the saved state when
   * that step is a send or a wait and it changed since the last one given (or resumed from),
   * once per step.
   */
  checkpoint(): string | null;
  static resume(saved: string): ExportJob;
}

/** What a host does next for a walk over pages (`Pages.next()`). */
export type PagesStep =
  /** Request the list with `query` (the caller's own parameters with the page's, in order), then
   * report its 2xx body to `page()`. */
  | { step: 'fetch'; query: Array<[string, string]> }
  /** The walk is over: why (`last`, `max_pages`, `max_items`), pages read, items given. */
  | { step: 'done'; end: PagesEnd; pages: number; items: number }
  /** The list cannot be read on; the items given before it stand. */
  | { step: 'fail'; error: PaginationError };

/** The bounds of a walk over pages (each optional: none). */
export interface PagesOptions {
  /** Most pages to read (from 1). */
  maxPages?: number | null;
  /** Most items to give (from 1); a page's items past it are not given. */
  maxItems?: number | null;
  /** The page size to ask for (`limit` or `size`; default: the query's, else 100 for a reporting
   * list, else the service's default). */
  pageSize?: number | null;
  /** The member naming an item, for the export list's keyset cursor (default `id`). */
  idField?: string | null;
}

/**
 * Every page of a list operation, one request at a time, bounded by pages or items: ask
 * `next()`; fetch the query of a `fetch` step with your own request (path, tenant, user) and
 * report its 2xx body to `page()`; give the first `take` items of the parsed page (`member`
 * null) or of its member `member`; ask again until `done` or `fail`. Never loops, never gives an
 * item twice. (The clients' `paginate` drives it for you.)
 */
export class Pages {
  /** A walk over `operationId`'s pages from `query` (its `cursor`, `page`, `limit` or `size` say
   * where to start and the page size). Throws InvalidArgumentError for an unknown operation, one
   * that is not a GET, a bound below 1, a page size out of range, or a query `limit`/`size` that
   * differs from `pageSize`. */
  constructor(operationId: string, query?: RequestParams['query'] | null, options?: PagesOptions);
  /** The step pending; the same until a page is reported. */
  next(): PagesStep;
  /** The 2xx body of the page fetched: where its items are, or null when it has no items array
   * (the next step is then `fail`). Throws InvalidArgumentError when no fetch is pending. */
  page(body: BodyLike): PageItems | null;
  /** Pages read so far. */
  readonly pages: number;
  /** Items given so far. */
  readonly items: number;
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the walk is unusable after. */
  free(): void;
}

/** The bounds of a recovery run (each optional: the core's default). */
export type RecoveryOptions = Partial<RecoveryBounds>;

/** What a host does next for a recovery run (`Recovery.next()`). */
export type RecoveryStep =
  /** Request `operationId` (`listEnterpriseWebhookDeliveries`) with path `{ reference:
   * subscription }` and `query`, then report its 2xx body to `page()`. */
  | { step: 'fetch'; operationId: 'listEnterpriseWebhookDeliveries'; query: Array<[string, string]> }
  /** Look each key up in the receiver's store without claiming it; report the states, in order,
   * to `checked()`. */
  | { step: 'check'; keys: string[] }
  /** Request `operationId` (`replayEnterpriseWebhookDelivery`) with path `{ reference:
   * subscription, deliveryReference: delivery }`; report its 2xx body to `replayed()`, or the code
   * of the library error it ended in to `replayFailed()`. */
  | { step: 'replay'; operationId: 'replayEnterpriseWebhookDelivery'; delivery: string }
  /** The run is over: what it found and did. */
  | { step: 'done'; report: RecoveryReport }
  /** The log cannot be read on; nothing was replayed. */
  | { step: 'fail'; error: PaginationError };

/**
 * One recovery run over a webhook subscription's delivery log: ask `next()`, perform the step
 * with your client and the receiver's store, report its outcome, and ask again until `done` or
 * `fail`. Every decision (what is processed, in flight, replayed, deferred) is the machine's.
 * (`EnterpriseClient.recoverDeliveries` drives it for you.)
 */
export class Recovery {
  /** A run over `subscription`'s log checking keys of `namespace` (the receiver's) for deliveries
   * from `since` on, at `now` (default: the clock). Throws InvalidArgumentError for an empty
   * subscription, an empty or over-long namespace, a time that is not finite Unix seconds, or a
   * bound below 1. */
  constructor(subscription: string, namespace: string, since: Time, now?: Time | null, options?: RecoveryOptions);
  /** The step pending; the same until its outcome is reported. */
  next(): RecoveryStep;
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (Recovery)
  /**
   * The 2xx body of the log page fetched. Returns the next step; a page that cannot be read makes
   * it the failure. `InvalidArgumentError` (`invalid_argument`) when no fetch is pending.
   */
  page(body: BodyLike): RecoveryStep;
  /**
   * The store's state of each key the pending check named, in order: `new`, `in_progress` or
   * `done`. Returns the next step. `InvalidArgumentError` (`invalid_argument`) when no check is
   * pending or the count differs from the keys', or for a state that is none of those.
   */
  checked(states: readonly ClaimState[]): RecoveryStep;
  /**
   * The 2xx body of the pending replay's request: the service accepted the replay. Returns the next
   * step. `InvalidArgumentError` (`invalid_argument`) when no replay is pending.
   */
  replayed(body: BodyLike): RecoveryStep;
  /**
   * The pending replay's request ended in the library's error of `code` (`call_failed`,
   * `reconcile_required`, an API error's code, …): the delivery is `replay_failed`, the run goes on
   * and the next run looks at it again. Returns the next step. `InvalidArgumentError`
   * (`invalid_argument`) when no replay is pending.
   */
  replayFailed(code: string): RecoveryStep;
  // generated: end (Recovery)
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the run is unusable after. */
  free(): void;
}
