// royaltykit/client: the reporting and enterprise APIs over WHATWG fetch (Node, Bun, Deno).
import type { RateBudget, RedisFleet, Session, Token, EnterpriseToken, RequestParams, AbortSignalLike, MachineEvent, RoyaltyKitError, Telemetry, RevealedSecret, DeliveryStates, RecoveryReport } from './index.js';
import type { OperationId, OperationParameterNames } from './native/operations.js';
export { Session, RedisFleet, ReconcileRequired, CallFailedError, PaginationError } from './index.js';
export type { AbortSignalLike, MachineEvent, Telemetry, DeliveryStates, RecoveryReport };

/**
 * An export job interrupted by its AbortSignal (`code` 'export_interrupted'). The request in
 * flight was aborted and the temporary file removed. `runExport(null, { resume: e.checkpoint })`
 * finishes the job without creating a second export. The message is the core's, the same in every language.
 */
export declare class ExportInterruptedError extends RoyaltyKitError {
  readonly name: 'ExportInterruptedError';
  readonly code: 'export_interrupted';
  /** The export's id when the service had named it, else null. */
  readonly exportId: string | null;
  /** The job's state when it was interrupted (portable JSON, no token). */
  readonly checkpoint: string;
  /** The signal's reason. */
  readonly cause: unknown;
}
/** A WHATWG WritableStream of bytes (structurally). */
export interface WritableStreamLike {
  getWriter(): { write(chunk: Uint8Array): Promise<void>; close(): Promise<void> };
}

/** What both clients take. */
export interface ClientOptions {
  /**
   * The API's origin, e.g. `https://reports.example`, checked when the client is built: `https`
   * (plain `http` only to a loopback host), a host, no user-info, query, fragment or API prefix
   * (`/api/…`, which the client adds); a mistake throws InvalidArgumentError before any request.
   */
  baseUrl: string;
  /** Accept plain `http` to any host (default false): the credentials then travel in clear. */
  allowInsecureHttp?: boolean;
  /** The most attempts of each request (default: the core's, 5). */
  maxAttempts?: number;
  /**
   * Called with each of the machines' events, in order: each send and response, each retry with
   * its rule and wait, token refreshes, rate-budget waits, polls, a download's `progress` (at each
   * tenth of its body and when whole, as it arrives), a deprecated operation's `notice` (once per
   * Session) and how each call ended. Never a token, a credential, a header or a body. With
   * neither `onEvent`, a diagnostics subscriber nor telemetry, a `notice` is still shown, as a
   * process warning of type `RoyaltyKitNotice` (`console.warn` where there is no `process`).
   */
  onEvent?: (event: MachineEvent) => void;
  // Where the runtime has node:diagnostics_channel (Node, Bun, Deno), the same events are
  // published on the channel `royaltykit:client` when it has subscribers.
  /** The most seconds from a request's first send to the start of a retry (default: the core's, 300). */
  maxElapsedSeconds?: number;
  /** A WHATWG fetch (default: the global one; undici's, Bun's and Deno's work). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  fetch?: (input: string, init?: any) => Promise<any>;
  /**
   * The client's Session: the token, the one token exchange in flight and the rate budget its
   * concurrent calls share (20 first calls at once make one exchange). Default: a new one per
   * client. Pass `otherClient.session` so clients of one API key (or one client id and tenant)
   * share it; never share one between the two APIs.
   */
  session?: Session;
  /** The request-rate windows of the client's own Session (reporting: none by default, the spec
   * shows none; enterprise: the spec's one-minute limits); the session keeps a copy. Not with
   * `session` (give the budget to the Session). */
  budget?: RateBudget;
  /**
   * The processes of one API client as a fleet (the spec's rate limits hold per API client):
   * the client's session is `fleet.session(budget)`, so every process with the fleet's prefix
   * shares one token (one exchange for the fleet; the others adopt it from Redis) and one rate
   * budget (each request reserved in Redis before it is sent). Not with `session` (give the
   * session `fleet.session(budget)` instead).
   */
  fleet?: RedisFleet;
  /**
   * Milliseconds to make the connection (TCP and TLS). Default: the core's (10 000), which is
   * also undici's own connect timeout in Node. fetch does not report when the connection is made,
   * so when this is given the wait for the response headers is bounded by `connectTimeoutMs +
   * readTimeoutMs` together; when it is not, by `readTimeoutMs` alone (the runtime's connect
   * timeout bounds the connection). A bad value (not more than 0, or more than a day) throws
   * InvalidArgumentError naming `connect_timeout` when the client is built.
   */
  connectTimeoutMs?: number;
  /**
   * Milliseconds to wait for the response (plus `connectTimeoutMs` when given, see there), then for each
   * next piece of the body (an idle bound: a large artifact that keeps arriving is never cut off).
   * Default: the core's (30 000). A request that times out is the `timeout` transport failure
   * (retried by the core's rules). A bad value throws InvalidArgumentError naming `read_timeout`.
   */
  readTimeoutMs?: number;
  /** An alias of `readTimeoutMs` (giving both is a TypeError). */
  timeoutMs?: number;
  /** The least seconds between two reads of a pending export (default: the core's). */
  minPollIntervalSeconds?: number;
  /** The most seconds between two reads of a pending export (default: the core's). */
  maxPollIntervalSeconds?: number;
  /**
   * One scope per logical operation (`request`: the operation id; `runExport`: 'runExport'), fed
   * every machine event of it, its token exchange included. `openTelemetry()` from
   * royaltykit/otel makes one: an INTERNAL span per operation, a CLIENT span per send.
   */
  telemetry?: Telemetry;
  /** For tests: the clock (Unix seconds), the sleep (the waits the machines ask for: backoff,
   * Retry-After, pacing; a call waiting for another call's token exchange is woken by it), and
   * the seed source of jitter and keys. */
  clock?: () => number;
  sleep?: (seconds: number, signal?: AbortSignalLike) => Promise<void>;
  seed?: () => number;
}

export type { OperationId, OperationParameterNames };

/**
 * An operation's parameters, as for `Call` (the client adds the token and the tenant), with the
 * operation's own path and query parameter names from the catalog.
 */
export type OperationParams<Op extends OperationId = OperationId> = Omit<RequestParams, 'token' | 'keyRandom' | 'path' | 'query'> & {
  path?: Record<OperationParameterNames[Op]['path'], string | number>;
  query?: Partial<Record<OperationParameterNames[Op]['query'], string | number | boolean | null | undefined>>;
};

/** What `request` returns: the parsed JSON body, the bytes of an artifact, or null. */
export type OperationResult = unknown;

/** A whole 2xx response (`requestRaw`). */
export interface RawResponse {
  status: number;
  /** As received, in order (repeated names kept). */
  headers: Array<[string, string]>;
  body: Uint8Array;
  /** What `request` resolves to. */
  data: OperationResult;
}

/** What `withOptions` changes (see ClientOptions for each). */
export interface CallOptions {
  maxAttempts?: number | null;
  maxElapsedSeconds?: number | null;
  connectTimeoutMs?: number | null;
  readTimeoutMs?: number | null;
  /** An alias of `readTimeoutMs` (giving both is a TypeError). */
  timeoutMs?: number | null;
  minPollIntervalSeconds?: number | null;
  maxPollIntervalSeconds?: number | null;
}

export interface ApiClient {
  /** The Session the client's calls share (pass it as `session` to another client of the same API key). */
  readonly session: Session;
  /**
   * Performs one operation; throws ApiError, ReconcileRequired or CallFailedError (or the
   * signal's reason when aborted). Redirects are never followed: a 3xx (or a fetch that followed
   * one anyway) fails with CallFailedError rule `redirect`, naming the origin it pointed at.
   */
  request<Op extends OperationId>(operationId: Op, params?: OperationParams<Op>, options?: { signal?: AbortSignalLike }): Promise<OperationResult>;
  /**
   * This client with other bounds for the calls made through the copy (null: the core's
   * default; not named: the client's), checked as the client's options are. The copy shares
   * the fetch, the credentials and the session.
   */
  withOptions(options: CallOptions): this;
  /** `request`, resolving to the whole 2xx response. */
  requestRaw<Op extends OperationId>(operationId: Op, params?: OperationParams<Op>, options?: { signal?: AbortSignalLike }): Promise<RawResponse>;
  /**
   * Every item of a list operation, page after page (`for await (const item of
   * client.paginate('listPlatformExports'))`): the core decides each page's query, where its
   * items are and when the list ends; each page is one `request` with `params` (`params.query`
   * is where the walk starts). Lazy: a page is requested when its first item is asked for.
   * Throws InvalidArgumentError when called (an operation that is not a GET, a bound below 1, a
   * page size out of range); while iterating, what `request` throws, and PaginationError when
   * the list cannot be read on (the items given before it stand).
   */
  paginate<Op extends OperationId>(operationId: Op, params?: OperationParams<Op>, options?: PaginateOptions): AsyncIterableIterator<unknown>;
}

/** What `paginate` takes besides the operation's parameters. */
export interface PaginateOptions {
  /** Most pages to request (from 1; default: none). */
  maxPages?: number | null;
  /** Most items to give (from 1; default: none); no page is requested past them. */
  maxItems?: number | null;
  /** The page size to ask for (`limit` or `size`; default: the query's, else the core's choice for the operation). */
  pageSize?: number | null;
  /** Aborting it aborts the request in flight; the next item asked for rejects with the signal's reason. */
  signal?: AbortSignalLike;
}

export interface ExportResult {
  exportId: string;
  /** Bytes in the artifact. */
  size: number;
  /** Where it was written, when `to` was a path. */
  path: string | null;
  /** The artifact, when no `to` was given. */
  data: Uint8Array | null;
}

/** What `runExport` takes besides the body. */
export interface RunExportOptions {
  to?: string | WritableStreamLike;
  /** Called after each piece of the artifact is written (`total`: its Content-Length, null when
   * unknown); a restarted download starts from 0 again. The client's `onEvent` gets `progress`
   * events too, at each tenth of the body and when it is whole. */
  onProgress?: (received: number, total: number | null) => void;
  /**
   * Called (and awaited) with the job's checkpoint before each of its requests goes out and
   * before each of its pauses (a poll interval, a backoff, a Retry-After), when it changed since
   * the last one given (or the one resumed from; the core's `ExportJob.checkpoint()` rule): persist it; `runExport(null, { resume })` finishes the job, and a job resumed
   * during a pause waits out the rest of it.
   */
  onCheckpoint?: (checkpoint: string) => void | Promise<void>;
  /**
   * Aborting it aborts the request in flight, removes the temporary file and throws
   * ExportInterruptedError (with the export id and the checkpoint).
   */
  signal?: AbortSignalLike;
}

/** The options of a new export job. */
export interface NewExportOptions extends RunExportOptions {
  requestId?: string;
  maxPolls?: number;
  /** Most seconds of polling, from the create's answer to the last read (default: bounded by `maxPolls` only). */
  maxPollSeconds?: number;
  /** Seconds, in all, to look again for an export a lost create may have made (default: the core's). */
  reconcileGraceSeconds?: number;
  /** The least seconds between two reads of a pending export (default: the client's, else the core's). */
  minPollIntervalSeconds?: number;
  /** The most seconds between two reads of a pending export (default: the client's, else the core's). */
  maxPollIntervalSeconds?: number;
  resume?: undefined;
}

/** The options of a resumed job: its checkpoint; the job's own bounds come from it. */
export interface ResumeExportOptions extends RunExportOptions {
  /** A checkpoint from `onCheckpoint` or `ExportInterruptedError.checkpoint` (any language's client). */
  resume: string;
}

export interface ReportsClient extends ApiClient {
  readonly tenantId: string;
  /**
   * Creates an export, waits for it and downloads the complete artifact to `to` (a file path on Node:
   * streamed to a temporary file as it arrives and renamed into place when whole; or a WritableStream,
   * written once whole), else into `data`. A create that may have been applied is looked up (every
   * page of the list, again after a grace), never sent twice; when the lookup cannot tell,
   * ReconcileRequired carries the ids of the exports that may be this job's (`candidates`).
   * `runExport(null, { resume: checkpoint, to })` finishes an interrupted job instead (a body
   * and `resume` together are a TypeError). An aborted `signal` throws ExportInterruptedError.
   */
  runExport(body: object | string | Uint8Array, options?: NewExportOptions): Promise<ExportResult>;
  runExport(body: null | undefined, options: ResumeExportOptions): Promise<ExportResult>;
}

export function createReportsClient(
  options: ClientOptions & {
    credentials: { clientId: string; clientSecret: string };
    /** X-Tenant-ID: the tenant UUID issued with the credentials. */
    tenantId: string;
    scopes?: string[];
    /** The header that carries idempotency keys, if your contract names it (the spec does not). */
    idempotencyHeader?: string;
  },
): ReportsClient;

export interface EnterpriseClient extends ApiClient {
  /**
   * The canonical fetch of the consumer workflow: the current state of the resource a webhook
   * event names, with the bearer token (and `X-User-Id` given `userId`). The URL must be a path
   * under the enterprise API: anything else throws RequestBuildError `invalid_resource_url` before any
   * request. Resolves to the parsed 2xx body.
   */
  fetchResource(
    resource: string | { resourceUrl: string } | { event: { resourceUrl: string } },
    options?: { userId?: string; signal?: AbortSignalLike },
  ): Promise<unknown>;
  /**
   * Creates a webhook subscription (`createEnterpriseWebhook`, JSON body `{ name, endpoint_url,
   * events }`) and resolves to its RevealedSecret. The signing secret is shown only once: store it
   * now (it can only be rotated afterwards). `secrets()` is what a verifier or receiver takes;
   * `record` is the response without the secret (safe to log). The request carries an
   * Idempotency-Key, reused on its retries; with `requestId` it is derived from it and the
   * client's API key, the same in every process. The raw 2xx body is read by the core alone: no
   * event or telemetry holds the secret. Throws what `request` throws, and
   * WebhookVerificationError `secret_not_revealed` for a 2xx answer that names no secret.
   */
  createSubscription(
    subscription: { name: string; endpointUrl: string; events: readonly string[] },
    options?: { requestId?: string; signal?: AbortSignalLike },
  ): Promise<RevealedSecret>;
  /**
   * Rotates the signing secret of the subscription `reference` (`rotateEnterpriseWebhookSecret`)
   * and resolves to its RevealedSecret: the new secret, shown only once (store it now), and
   * `previousValidUntil`. `secrets(previous)` (the secret held until now) is what a verifier or
   * receiver takes: both verify until `previousValidUntil`, then the new one alone. A rotation
   * whose answer was lost is never sent again: ReconcileRequired with `reconcile` 'rotate_again'
   * (rotate again at once, keeping the current secret until then).
   */
  rotateSecret(reference: string, options?: { signal?: AbortSignalLike }): Promise<RevealedSecret>;
  /**
   * Delivery recovery: reads the delivery log of the subscription `reference`, asks `store` the
   * state of each delivery from `since` on (never claiming), and replays those never processed.
   * Resolves to the core's RecoveryReport (each delivery's `action`: `processed`,
   * `processed_by_replay`, `in_progress`, `in_flight`, `replay_pending`, `unrecorded`,
   * `replayed`, `replay_failed`, `replay_limit`, `deferred`). Safe to run periodically: a
   * delivery or replay still being attempted is left alone. A replay ending in this library's
   * error (CallFailedError, ReconcileRequired, ApiError) is `replay_failed` with its `code`, and
   * the run goes on. Throws for bad arguments before any request, what a log request throws,
   * PaginationError when the log cannot be read on, what `store.state` throws, and the signal's
   * reason when aborted.
   */
  recoverDeliveries(reference: string, options: RecoverDeliveriesOptions): Promise<RecoveryReport>;
}

/** What `recoverDeliveries` takes besides the subscription. */
export interface RecoverDeliveriesOptions {
  /** The store the receiver uses (DedupWindow, RedisDedupStore, PostgresDedupStore, SqliteDedupStore, PostgresInbox, SqliteInbox, RedisInbox or your own with `state(key)`). */
  store: DeliveryStates;
  /** The receiver's namespace: the delivery keys are the ones it claims. */
  namespace: string;
  /** Deliveries created from then on are considered (a Date or Unix seconds). */
  since: Date | number;
  /** The time of the run (a Date or Unix seconds; default: the client's clock): a delivery in a
   * state the spec does not name counts as ended once the redelivery schedule has passed. */
  now?: Date | number | null;
  /** Most replays the run sends (from 1; default 100). */
  maxReplays?: number | null;
  /** Most replays of one delivery, all failed, before it is left alone (from 1; default 3). */
  maxReplaysPerDelivery?: number | null;
  /** Most log entries read (from 1; default 10000). */
  maxEntries?: number | null;
  /** Aborting it aborts the request in flight and rejects with the signal's reason. */
  signal?: AbortSignalLike;
}

export function createEnterpriseClient(options: ClientOptions & { credentials: { apiKey: string; apiSecret: string } }): EnterpriseClient;

export type { Token, EnterpriseToken };
