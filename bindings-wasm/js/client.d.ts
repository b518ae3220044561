// royaltykit/client: the reporting and enterprise APIs over WHATWG fetch (Node, Bun, Deno).
import type { RateBudget, Session, Token, EnterpriseToken, RequestParams, AbortSignalLike, MachineEvent } from './index.js';
import type { OperationId, OperationParameterNames } from './native/operations.js';
export { Session, ReconcileRequired, CallFailedError } from './index.js';
export type { AbortSignalLike, MachineEvent };
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
   * its rule and wait, token refreshes, rate-budget waits, polls and how each call ended. Never
   * a token, a credential, a header or a body.
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
   * Milliseconds to wait for a response (default 30 000), then for each next piece of a streamed
   * artifact (so a large one that keeps arriving is never cut off); a request that times out is
   * the `timeout` transport failure.
   */
  timeoutMs?: number;
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
   * default). The copy shares the fetch, the credentials and the session.
   */
  withOptions(options: { maxAttempts?: number | null; maxElapsedSeconds?: number | null; timeoutMs?: number | null }): this;
  /** `request`, resolving to the whole 2xx response. */
  requestRaw<Op extends OperationId>(operationId: Op, params?: OperationParams<Op>, options?: { signal?: AbortSignalLike }): Promise<RawResponse>;
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

export interface ReportsClient extends ApiClient {
  readonly tenantId: string;
  /**
   * Creates an export, waits for it and downloads the complete artifact to `to` (a file path on Node:
   * streamed to a temporary file as it arrives and renamed into place when whole; or a WritableStream,
   * written once whole), else into `data`. A create that may have been applied is looked up (every
   * page of the list, again after a grace), never sent twice; when the lookup cannot tell,
   * ReconcileRequired carries the ids of the exports that may be this job's (`candidates`).
   */
  runExport(
    body: object | string | Uint8Array,
    options?: {
      to?: string | WritableStreamLike;
      requestId?: string;
      maxPolls?: number;
      /** Most seconds of polling, from the create's answer to the last read (default: bounded by `maxPolls` only). */
      maxPollSeconds?: number;
      /** Seconds, in all, to look again for an export a lost create may have made (default: the core's). */
      reconcileGraceSeconds?: number;
      onProgress?: (received: number, total: number | null) => void;
      signal?: AbortSignalLike;
    },
  ): Promise<ExportResult>;
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

export function createEnterpriseClient(options: ClientOptions & { credentials: { apiKey: string; apiSecret: string } }): ApiClient;

export type { Token, EnterpriseToken };
