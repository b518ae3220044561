// royaltykit/client: the reporting and enterprise APIs over WHATWG fetch (Node, Bun, Deno).
import type { RateBudget, Token, EnterpriseToken, RequestParams } from './index.js';
import type { OperationId, OperationParameterNames } from './native/operations.js';
export { ReconcileRequired, CallFailedError } from './index.js';

/** An AbortSignal (structurally: the package's types need no DOM or Node globals). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
}
/** A WHATWG WritableStream of bytes (structurally). */
export interface WritableStreamLike {
  getWriter(): { write(chunk: Uint8Array): Promise<void>; close(): Promise<void> };
}

/** What both clients take. */
export interface ClientOptions {
  /** The API's base URL, e.g. `https://reports.example`. */
  baseUrl: string;
  /** A WHATWG fetch (default: the global one; undici's, Bun's and Deno's work). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  fetch?: (input: string, init?: any) => Promise<any>;
  /** Shared request-rate windows (reporting: none by default, the spec shows none; enterprise: the spec's one-minute limits). */
  budget?: RateBudget;
  /**
   * Milliseconds to wait for a response (default 30 000), then for each next piece of a streamed
   * artifact (so a large one that keeps arriving is never cut off); a request that times out is
   * the `timeout` transport failure.
   */
  timeoutMs?: number;
  /** For tests: the clock (Unix seconds), the sleep, and the seed source of jitter and keys. */
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

export interface ApiClient {
  /** Performs one operation; throws ApiError, ReconcileRequired or CallFailedError (or the signal's reason when aborted). */
  request<Op extends OperationId>(operationId: Op, params?: OperationParams<Op>, options?: { signal?: AbortSignalLike }): Promise<OperationResult>;
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
   * written once whole), else into `data`. A create that may have been applied is looked up, never
   * sent twice.
   */
  runExport(
    body: object | string | Uint8Array,
    options?: {
      to?: string | WritableStreamLike;
      requestId?: string;
      maxPolls?: number;
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
