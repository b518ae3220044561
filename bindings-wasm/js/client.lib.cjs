'use strict';
// royaltykit/client: the reporting and enterprise APIs over WHATWG fetch (Node's undici, Bun,
// Deno, Workers). Every rule is the core's: each request is a Call machine (retries,
// Retry-After, token refresh, idempotency key) and an export is an ExportJob, all on the
// client's Session (the token, the one token exchange in flight, the rate budget). This
// file performs the steps and maps fetch's failures to the core's transport failures. The entry
// points (client.cjs, client.mjs, client.workerd.mjs) instantiate the wasm first, each the way
// its runtime allows.
const rk = require('./lib.cjs');
// node:fs where the runtime has it (Node, Bun, Deno), null elsewhere (Workers, browsers).
const files = require('#files');

const { Call, ExportJob, RateBudget, Session, ReconcileRequired, CallFailedError } = rk;

/**
 * Which transport failure a rejected fetch was: `connect_failed` only when nothing can have been
 * sent (a refused connection, a connect timeout, a name that does not resolve); our own timeout is
 * `timeout`; anything else (reset, closed early, truncated body) is `connection_lost`, since the
 * request may have been applied. undici, Bun and Deno name these differently.
 */
function transportFailure(e, timedOut) {
  if (timedOut) return 'timeout';
  const codes = [];
  for (let c = e; c && codes.length < 5; c = c.cause) codes.push(String(c.code ?? ''), String(c.message ?? ''));
  const text = codes.join(' ');
  if (/ECONNREFUSED|ConnectionRefused|Connection refused|UND_ERR_CONNECT_TIMEOUT|ENOTFOUND|EAI_AGAIN/.test(text)) return 'connect_failed';
  return 'connection_lost';
}

/** AbortSignal.any, or its equivalent where the runtime lacks it (Node 18). */
function anySignal(signals) {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals);
  const c = new AbortController();
  for (const s of signals) {
    if (s.aborted) c.abort(s.reason);
    else s.addEventListener('abort', () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}

/** An AbortSignal that fires `ms` after it was last (re)armed. */
function idleTimeout(ms) {
  const c = new AbortController();
  let timer;
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => c.abort(new DOMException('The operation timed out.', 'TimeoutError')), ms);
  };
  rearm();
  return { signal: c.signal, rearm, clear: () => clearTimeout(timer) };
}

/**
 * Where a streamed artifact goes as it arrives: a temporary file next to the target path (renamed
 * over it when whole), else memory (a WritableStream cannot take back a partial attempt, so it gets
 * the artifact once, whole). Each attempt of the download starts it afresh.
 */
class Sink {
  constructor(path, onProgress) {
    this.path = path;
    this.onProgress = onProgress;
    this.length = 0;
    this.total = null;
    this.chunks = [];
    this.file = null;
    this.failed = null;
  }

  /** Creates the temporary file (before the job starts, so a bad path fails before any export is created). */
  async open() {
    if (this.path === null) return;
    const { fs, path } = files;
    this.tmp = path.join(path.dirname(path.resolve(this.path)), `.royaltykit-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    this.file = await fs.open(this.tmp, 'wx');
  }

  /** A new attempt of the download: the sink starts afresh. */
  async start(contentLength) {
    this.length = 0;
    this.total = Number(contentLength) || null;
    this.chunks = [];
    this.position = 0;
    if (this.file !== null) await this.#own(() => this.file.truncate(0));
  }

  async write(chunk) {
    if (this.file !== null) {
      await this.#own(() => this.file.write(chunk, 0, chunk.length, this.position));
      this.position += chunk.length;
    } else {
      this.chunks.push(chunk);
    }
    this.length += chunk.length;
    await this.#own(() => this.onProgress?.(this.length, this.total));
  }

  /** Runs `f`; what it throws (the disk, the progress callback) is the sink's, never a transport failure. */
  async #own(f) {
    try {
      return await f();
    } catch (e) {
      this.failed = e;
      throw e;
    }
  }

  /** The artifact is whole: renamed into place (a path), else its bytes. */
  async finish() {
    if (this.file !== null) {
      await this.file.sync();
      await this.file.close();
      this.file = null;
      await files.fs.rename(this.tmp, this.path);
      this.tmp = null;
      return null;
    }
    const data = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      data.set(c, at);
      at += c.length;
    }
    return data;
  }

  /** Leaves nothing behind: the temporary file goes unless it was renamed. */
  async close() {
    if (this.file !== null) await this.file.close().catch(() => {});
    if (this.tmp) await files.fs.rm(this.tmp, { force: true });
  }
}

/** A base for both APIs' clients: performs a machine's steps until its end. */
class Client {
  constructor(o, tokenRequest, parseToken, defaultBudget) {
    if (typeof o.baseUrl !== 'string') throw new TypeError('baseUrl must be the API base URL');
    this._base = o.baseUrl.replace(/\/+$/, '');
    // The global fetch called as a function of its own: Workers throw "Illegal invocation" for a
    // fetch called as a method of another object.
    this._fetch = o.fetch ?? (typeof globalThis.fetch === 'function' ? (url, init) => globalThis.fetch(url, init) : undefined);
    // Deno's fetch sends a request again by itself when a reused keep-alive connection closes
    // before the response: for a create the server had applied, a second export. Requests that
    // are not safe to repeat go over a connection of their own there (nothing to reuse, so
    // nothing resent); the core decides every retry.
    this._ownConnection = o.fetch === undefined && typeof globalThis.Deno?.createHttpClient === 'function';
    if (typeof this._fetch !== 'function') throw new TypeError('fetch must be a WHATWG fetch function (global fetch by default)');
    const budget = o.budget ?? null;
    if (budget !== null && !(budget instanceof RateBudget)) throw new TypeError('budget must be a RateBudget');
    // One Session per client: its concurrent calls share the token, one exchange in flight and
    // the budget. Clients of one API key share one by passing `session`.
    if (o.session !== undefined && o.session !== null) {
      if (!(o.session instanceof Session)) throw new TypeError('session must be a Session');
      if (budget !== null) throw new TypeError('budget: give it to the Session (new Session(budget)), not to a client built on a session');
      this.session = o.session;
    } else {
      this.session = new Session(budget ?? defaultBudget);
    }
    this._timeoutMs = o.timeoutMs ?? 30_000;
    this._clock = o.clock ?? (() => Date.now() / 1000);
    this._sleep = o.sleep ?? ((seconds, signal) => new Promise((resolve, reject) => {
      const t = setTimeout(resolve, seconds * 1000);
      signal?.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
    }));
    this._seed = o.seed;
    this._tokenRequest = tokenRequest;
    this._parseToken = parseToken;
  }

  /** Sends `request`; a body the machine streams (`stream(status)` gives the sink) goes to the sink. */
  async _send(request, signal, stream) {
    // `timeoutMs` bounds the wait for the response, then each wait for the next piece of a
    // streamed body (an idle timeout): a large artifact that keeps arriving is never cut off.
    const timeout = idleTimeout(this._timeoutMs);
    const both = signal ? anySignal([signal, timeout.signal]) : timeout.signal;
    let sink = null;
    let connection = null;
    try {
      const init = { method: request.method, headers: request.headers, body: request.body ?? undefined, redirect: 'manual', signal: both };
      if (this._ownConnection && request.method !== 'GET' && request.method !== 'HEAD') {
        connection = globalThis.Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
        init.client = connection;
      }
      const r = await this._fetch(request.url(this._base), init);
      // Redirects are never followed. A browser or Worker answers `redirect: 'manual'` with an
      // opaque redirect (status 0, no Location); a fetch that followed one anyway (its own
      // redirect setting) gives another origin's answer: both are reported as the 3xx they were
      // (with the origin reached, when known), which the core stops on (rule `redirect`).
      if (r.type === 'opaqueredirect' || r.status === 0 || r.redirected) {
        await r.body?.cancel().catch(() => {});
        return { status: 307, headers: r.redirected && r.url ? [['Location', r.url]] : [], body: new Uint8Array(0) };
      }
      const headers = [...r.headers];
      sink = stream ? stream(r.status) : null;
      if (!sink) return { status: r.status, headers, body: new Uint8Array(await r.arrayBuffer()) };
      await sink.start(r.headers.get('content-length'));
      if (r.body) {
        for await (const chunk of r.body) {
          timeout.rearm();
          await sink.write(chunk);
        }
      }
      return { status: r.status, headers, length: sink.length };
    } catch (e) {
      if (sink?.failed) throw sink.failed;
      if (signal?.aborted) throw signal.reason ?? e; // the caller's own cancellation
      return { failure: transportFailure(e, timeout.signal.aborted) };
    } finally {
      timeout.clear();
      connection?.close();
    }
  }

  /** Drives `machine` on the client's session to `done` (returned); throws for reconcile and fail. A body the machine streams goes into `sink`. */
  async _drive(machine, operationId, signal, sink) {
    const stream = sink ? (status) => (machine.streams(status) ? sink : null) : null;
    const session = this.session;
    for (;;) {
      signal?.throwIfAborted();
      const version = session.version;
      const s = machine.next(this._clock(), session);
      switch (s.step) {
        case 'send': {
          const r = await this._send(s.request, signal, stream);
          if (r.failure) machine.transportFailure(r.failure, this._clock());
          else if (r.length !== undefined) machine.streamedResponse(r.status, r.headers, r.length, this._clock());
          else machine.response(r.status, r.headers, r.body, this._clock());
          break;
        }
        case 'wait':
          await this._sleep(s.seconds, signal);
          break;
        case 'refresh_token': // this call leads the session's one exchange
          await this._exchange(signal);
          break;
        case 'await_token': // another call of the session is obtaining the token
          await session.waitForChange(version, s.seconds, signal);
          break;
        case 'done':
          return s;
        case 'reconcile':
          throw new ReconcileRequired('reconcile_required', s.reason, {
            reconcile: s.reconcile, reason: s.reason, candidates: s.candidates, stage: s.stage, operationId,
          });
        case 'fail':
          if (s.error) throw s.error;
          throw new CallFailedError('call_failed', s.reason, {
            rule: s.rule, transport: s.transport, status: s.status, retryAfterSeconds: s.retryAfterSeconds, operationId,
            stage: s.stage ?? null, exportId: s.exportId ?? null,
          });
        default:
          throw new Error(`unknown step ${s.step}`);
      }
    }
  }

  /** The token exchange (its own call, on the session's budget), its outcome reported to the
   * session, which wakes the calls waiting for it: the token, or why it failed (then the
   * exchange's error is thrown), or nothing when it was cancelled (the signal's reason is). */
  async _exchange(signal) {
    try {
      const exchange = Call.exchange(this._tokenRequest(), { seed: this._seed?.() });
      let done;
      try {
        done = await this._drive(exchange, 'token exchange', signal);
      } finally {
        exchange.free();
      }
      this.session.storeToken(this._parseToken(done.status, done.headers, done.body, this._clock()));
    } catch (e) {
      if (signal?.aborted) this.session.abandonExchange();
      else this.session.exchangeFailed(String(e?.message ?? e));
      throw e;
    }
  }

  /**
   * Performs one operation (`params` as for `Call`: path, query, body, requestId, …): the parsed
   * JSON body, the bytes of an artifact, or null. Throws ApiError, ReconcileRequired or
   * CallFailedError; `{ signal }` cancels it (the AbortSignal's reason is thrown).
   */
  async request(operationId, params, opts) {
    const call = new Call(operationId, { ...this._defaults(), ...params, token: undefined, seed: this._seed?.() });
    let done;
    try {
      done = await this._drive(call, operationId, opts?.signal);
    } finally {
      call.free(); // now, not at garbage collection (bench/PROFILES.md, client overhead)
    }
    if (!done.body || done.body.length === 0) return null;
    return done.json ? JSON.parse(new TextDecoder().decode(done.body)) : done.body;
  }

  _defaults() {
    return {};
  }
}

class ReportsClient extends Client {
  constructor(o) {
    const c = o.credentials ?? {};
    if (typeof o.tenantId !== 'string') throw new TypeError('tenantId must be the tenant UUID');
    super(o, () => rk.buildTokenRequest({ clientId: c.clientId, clientSecret: c.clientSecret, tenantId: o.tenantId, scopes: o.scopes }),
      (status, headers, body, now) => rk.parseTokenResponse(status, headers, body, { tenantId: o.tenantId, requestedScopes: o.scopes, now }));
    this.tenantId = o.tenantId;
    this._idempotencyHeader = o.idempotencyHeader;
  }

  _defaults() {
    return { tenantId: this.tenantId, idempotencyHeader: this._idempotencyHeader };
  }

  /**
   * Creates an export from `body`, waits for it, downloads the complete artifact: to `to` (a file
   * path on Node: streamed to a temporary file as it arrives and renamed into place when whole; or
   * a WritableStream, written once whole), else returned as `data`. A create that may have been
   * applied is looked up, never sent twice: when the lookup cannot tell, ReconcileRequired
   * carries the ids of the exports that may be this job's (`candidates`).
   */
  async runExport(body, opts = {}) {
    const to = opts.to ?? null;
    const toStream = to !== null && typeof to.getWriter === 'function';
    if (to !== null && typeof to !== 'string' && !toStream) throw new TypeError('to must be a file path or a WritableStream');
    if (typeof to === 'string' && files === null) throw new TypeError('to: a file path needs a file system (Node, Bun, Deno); here, give a WritableStream');
    const job = new ExportJob({ tenantId: this.tenantId, body, requestId: opts.requestId, idempotencyHeader: this._idempotencyHeader,
      maxPolls: opts.maxPolls, maxPollSeconds: opts.maxPollSeconds, reconcileGraceSeconds: opts.reconcileGraceSeconds, seed: this._seed?.() });
    const sink = new Sink(typeof to === 'string' ? to : null, opts.onProgress);
    try {
      await sink.open();
      const done = await this._drive(job, 'export job', opts.signal, sink);
      const data = await sink.finish();
      const result = { exportId: done.exportId, size: sink.length, path: null, data: null };
      if (typeof to === 'string') {
        result.path = to;
      } else if (toStream) {
        const writer = to.getWriter();
        await writer.write(data);
        await writer.close();
      } else {
        result.data = data;
      }
      return result;
    } finally {
      await sink.close();
    }
  }
}

class EnterpriseClient extends Client {
  constructor(o) {
    const c = o.credentials ?? {};
    super(o, () => rk.buildEnterpriseTokenRequest({ apiKey: c.apiKey, apiSecret: c.apiSecret }),
      (status, headers, body, now) => rk.parseEnterpriseTokenResponse(status, headers, body, { now }), 'enterprise');
  }
}

/** A client of the reporting API's machine surface (see the README, "Clients"). */
function createReportsClient(options) {
  return new ReportsClient(options ?? {});
}

/** A client of the enterprise organization API, paced by the spec's one-minute limits. */
function createEnterpriseClient(options) {
  return new EnterpriseClient(options ?? {});
}

module.exports = { createReportsClient, createEnterpriseClient, Session, ReconcileRequired, CallFailedError };
