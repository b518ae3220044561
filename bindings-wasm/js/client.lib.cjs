'use strict';
// royaltykit/client: the reporting and enterprise APIs over WHATWG fetch (Node's undici, Bun,
// Deno, Workers). Every rule is the core's: each request is a Call machine (retries,
// Retry-After, token refresh, idempotency key) and an export is an ExportJob, all on the
// client's Session (the token, the one token exchange in flight, the rate budget). This
// file performs the steps and maps fetch's failures to the core's transport failures. The entry
// points (client.cjs, client.mjs, client.workerd.mjs) instantiate the wasm first, each the way
// its runtime allows.
const rk = require('./lib.cjs');
const { telemetryScope } = require('./telemetry.cjs');
// node:fs where the runtime has it (Node, Bun, Deno), null elsewhere (Workers, browsers).
const files = require('#files');
// node:diagnostics_channel's channels where the runtime has it, else null.
const diagnostics = require('#diagnostics');

const { Call, ExportJob, Pages, Recovery, RateBudget, Session, FleetToken, ReconcileRequired, CallFailedError, PaginationError } = rk;

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
  // `bad port`: fetch refuses a port of the Fetch standard's blocklist (9, 6000, …) before
  // connecting, so nothing was sent.
  if (/ECONNREFUSED|ConnectionRefused|Connection refused|UND_ERR_CONNECT_TIMEOUT|ENOTFOUND|EAI_AGAIN|bad port/.test(text)) return 'connect_failed';
  return 'connection_lost';
}

// What the common system error codes mean, for the message of a call that failed on them.
const ERROR_CODES = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'name not resolved',
  EAI_AGAIN: 'name not resolved (temporary failure)',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  UND_ERR_SOCKET: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate names another host',
};

/**
 * A rejected fetch as one line: its class and what the deepest error under it says (undici's
 * `fetch failed` hides the reason in `cause`), with the system code's meaning when known:
 * `TypeError: connection refused (connect ECONNREFUSED 127.0.0.1:8080)`.
 */
function describeFailure(e, timedOut) {
  if (timedOut) return timedOut;
  let root = e;
  for (let c = e?.cause, depth = 0; c && depth < 8; c = c.cause, depth++) root = c;
  const text = String(root?.message ?? root ?? '');
  const meaning = ERROR_CODES[root?.code] ?? ERROR_CODES[e?.code]
    ?? (/bad port/.test(text) ? 'port blocked by fetch (the Fetch standard\'s bad ports)' : undefined);
  const name = e?.name ?? 'Error';
  return `${name}: ${meaning ? `${meaning} (${text})` : text}`;
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

/** An AbortSignal that fires `ms` after it was last (re)armed (`rearm(ms)` may change the bound);
 * `text` then says which wait ran out. */
function idleTimeout(ms, text) {
  const c = new AbortController();
  let timer;
  const state = { signal: c.signal, text, clear: () => clearTimeout(timer) };
  state.rearm = (next = ms, nextText = state.text) => {
    ms = next;
    state.text = nextText;
    clearTimeout(timer);
    timer = setTimeout(() => c.abort(new DOMException('The operation timed out.', 'TimeoutError')), ms);
  };
  state.rearm();
  return state;
}

/** A body's bytes, the idle timeout re-armed at each piece (a body that keeps arriving is never cut off). */
async function readAll(body, timeout) {
  if (!body) return new Uint8Array(0);
  const chunks = [];
  let length = 0;
  // A reader, not `for await`: every runtime's streams have one.
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    timeout.rearm();
    chunks.push(value);
    length += value.length;
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Where a streamed artifact goes as it arrives: a temporary file next to the target path (renamed
 * over it when whole), else memory (a WritableStream cannot take back a partial attempt, so it gets
 * the artifact once, whole). Each attempt of the download starts it afresh.
 */
/** A file system error naming the user's `target` instead of the temporary file beside it (its
 * code, errno and syscall kept, the original as `cause`); anything else as it is. */
function ownPath(e, target) {
  if (!e || typeof e.code !== 'string' || e.path === undefined) return e;
  const err = new Error(`${e.code}: ${String(e.message).split(':').slice(1).join(':').split(',')[0].trim() || e.code}, ${e.syscall ?? 'open'} '${target}'`, { cause: e });
  Object.assign(err, { code: e.code, errno: e.errno, syscall: e.syscall, path: target });
  return err;
}

/** A notice nobody listens to, shown once per operation and session (the core gives it once):
 * `process.emitWarning` (type `RoyaltyKitNotice`; `process.on('warning')` sees it), or
 * `console.warn` where there is no `process` (Workers). */
function warn(e) {
  if (typeof globalThis.process?.emitWarning === 'function') {
    globalThis.process.emitWarning(e.message, { type: 'RoyaltyKitNotice', code: e.rule ?? undefined });
  } else {
    console.warn(`royaltykit: ${e.message}`);
  }
}

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

  /** Creates the temporary file (before the job starts, so a bad path fails before any export is
   * created), with mode 0644 less the umask: the artifact's mode once renamed, as in every language. */
  async open() {
    if (this.path === null) return;
    const { fs, path } = files;
    this.tmp = path.join(path.dirname(path.resolve(this.path)), `.royaltykit-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    try {
      this.file = await fs.open(this.tmp, 'wx', 0o644);
    } catch (e) {
      this.tmp = null;
      throw ownPath(e, this.path);
    }
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

  /** Runs `f`; what it throws (the disk, naming the user's path; the progress callback) is the
   * sink's, never a transport failure. */
  async #own(f) {
    try {
      return await f();
    } catch (e) {
      this.failed = this.path === null ? e : ownPath(e, this.path);
      throw this.failed;
    }
  }

  /** The artifact is whole: renamed into place (a path), else its bytes. */
  async finish() {
    if (this.file !== null) {
      await this.#own(async () => {
        await this.file.sync();
        await this.file.close();
        this.file = null;
        await files.fs.rename(this.tmp, this.path);
      });
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

// The options each client takes: any other name is a mistake (a misspelt `timeoutMS` would
// otherwise be ignored), refused when the client is built.
const COMMON_OPTIONS = ['baseUrl', 'allowInsecureHttp', 'fetch', 'session', 'budget', 'fleet', 'timeoutMs', 'connectTimeoutMs', 'readTimeoutMs',
  'clock', 'sleep', 'seed', 'credentials', 'maxAttempts', 'maxElapsedSeconds', 'onEvent', 'telemetry'];
// What `withOptions` changes for the calls of a copy.
const CALL_OPTIONS = new Set(['maxAttempts', 'maxElapsedSeconds', 'timeoutMs', 'connectTimeoutMs', 'readTimeoutMs',
  'minPollIntervalSeconds', 'maxPollIntervalSeconds']);
// What `runExport` takes besides the body.
const RUN_OPTIONS = new Set(['to', 'requestId', 'maxPolls', 'maxPollSeconds', 'reconcileGraceSeconds', 'minPollIntervalSeconds',
  'maxPollIntervalSeconds', 'onProgress', 'onCheckpoint', 'resume', 'signal']);
// What `paginate` takes besides the operation's parameters.
const PAGINATE_OPTIONS = new Set(['maxPages', 'maxItems', 'pageSize', 'signal']);
// What `createSubscription` takes: the subscription, and the call's options.
const SUBSCRIPTION_FIELDS = new Set(['name', 'endpointUrl', 'events']);
const SUBSCRIPTION_OPTIONS = new Set(['requestId', 'signal']);
// What `recoverDeliveries` takes besides the subscription.
const RECOVER_OPTIONS = new Set(['store', 'namespace', 'since', 'now', 'maxReplays', 'maxReplaysPerDelivery', 'maxEntries', 'signal']);
// The runExport options that shape a new job: a resumed job has them from its checkpoint.
const JOB_OPTIONS = ['requestId', 'maxPolls', 'maxPollSeconds', 'reconcileGraceSeconds', 'minPollIntervalSeconds', 'maxPollIntervalSeconds'];

const given = (v) => v !== undefined && v !== null;

/**
 * The connect and read timeouts (milliseconds given, null: the core's defaults) checked by the
 * core (`clientTimeouts`: more than 0, at most a day; else InvalidArgumentError naming
 * `connect_timeout` / `read_timeout`), as milliseconds. `timeoutMs` is an alias of `readTimeoutMs`.
 */
function timeouts(connectMs, readMs) {
  for (const [name, v] of [['connectTimeoutMs', connectMs], ['readTimeoutMs', readMs]]) {
    if (given(v) && typeof v !== 'number') throw new TypeError(`${name} must be a number of milliseconds`);
  }
  const t = rk.clientTimeouts(given(connectMs) ? connectMs / 1000 : null, given(readMs) ? readMs / 1000 : null);
  return { connectMs: t.connectSeconds * 1000, readMs: t.readSeconds * 1000, given: { connect: connectMs ?? null, read: readMs ?? null } };
}

/** The read timeout given in `o` (`readTimeoutMs`, or its alias `timeoutMs`; both: TypeError), `fallback` when neither is named. */
function readTimeoutOf(o, fallback) {
  if (given(o.timeoutMs) && given(o.readTimeoutMs)) {
    throw new TypeError('timeoutMs is an alias of readTimeoutMs: give one of them, not both');
  }
  if ('readTimeoutMs' in o && o.readTimeoutMs !== undefined) return o.readTimeoutMs;
  if ('timeoutMs' in o && o.timeoutMs !== undefined) return o.timeoutMs;
  return fallback;
}

/** The poll-interval bounds given in `o` (undefined: not given). */
function pollBounds(o) {
  const out = {};
  if (o.minPollIntervalSeconds !== undefined) out.minPollIntervalSeconds = o.minPollIntervalSeconds;
  if (o.maxPollIntervalSeconds !== undefined) out.maxPollIntervalSeconds = o.maxPollIntervalSeconds;
  return out;
}

/**
 * An export job interrupted by its AbortSignal (code `export_interrupted`): the temporary file
 * is removed; `exportId` is the export's id when the service had named it (else null),
 * `checkpoint` the job's state at that moment (`runExport(null, { resume: checkpoint })` finishes
 * it without a second export), `cause` the signal's reason. Its message is the core's.
 */
class ExportInterruptedError extends rk.RoyaltyKitError {
  constructor(exportId, checkpoint, cause) {
    super('export_interrupted', rk.exportInterruptedMessage(exportId));
    this.name = 'ExportInterruptedError';
    this.exportId = exportId;
    this.checkpoint = checkpoint;
    this.httpStatus = 500;
    Object.defineProperty(this, 'cause', { value: cause, writable: true, configurable: true, enumerable: false });
  }
}
Object.defineProperty(ExportInterruptedError, 'name', { value: 'ExportInterruptedError' });

/** The bounds given, as the machines' options (the core checks them; undefined: its defaults). */
function limits(o) {
  const out = {};
  if (o.maxAttempts !== undefined && o.maxAttempts !== null) out.maxAttempts = o.maxAttempts;
  if (o.maxElapsedSeconds !== undefined && o.maxElapsedSeconds !== null) out.maxElapsedSeconds = o.maxElapsedSeconds;
  return out;
}
const OPTIONS = {
  reports: new Set([...COMMON_OPTIONS, 'tenantId', 'scopes', 'idempotencyHeader', 'minPollIntervalSeconds', 'maxPollIntervalSeconds']),
  enterprise: new Set(COMMON_OPTIONS),
};

function checkOptions(o, api) {
  if (o === null || typeof o !== 'object') throw new TypeError('options must be an object ({ baseUrl, credentials, ... })');
  const known = OPTIONS[api];
  for (const name of Object.keys(o)) {
    if (!known.has(name)) {
      throw new TypeError(`unknown option \`${name}\` for the ${api} client; it takes: ${[...known].join(', ')}`);
    }
  }
}

/** An options object whose names are all in `names` (a misspelt one would otherwise be ignored). */
function known(o, names, what) {
  if (o === null || typeof o !== 'object') throw new TypeError(`${what}: options must be an object`);
  for (const name of Object.keys(o)) {
    if (!names.has(name)) throw new TypeError(`unknown option \`${name}\` for ${what}; it takes: ${[...names].join(', ')}`);
  }
}

/** A create's or rotation's reveal-once secret, read by the core from the raw 2xx body (never
 * decoded here); the body's bytes are zeroed once read. */
function revealed(done) {
  const body = done.body ?? new Uint8Array(0);
  try {
    return rk.revealedSecret(body);
  } finally {
    body.fill(0);
  }
}

/** A 2xx body: parsed when the core calls it JSON, else the bytes (an artifact); null when empty. */
function parsed(done) {
  if (!done.body || done.body.length === 0) return null;
  return done.json ? JSON.parse(new TextDecoder().decode(done.body)) : done.body;
}

/** A base for both APIs' clients: performs a machine's steps until its end. */
class Client {
  constructor(o, api, tokenRequest, parseToken, defaultBudget) {
    if (typeof o.baseUrl !== 'string') throw new TypeError('baseUrl must be the API base URL');
    if (o.allowInsecureHttp !== undefined && typeof o.allowInsecureHttp !== 'boolean') throw new TypeError('allowInsecureHttp must be a boolean');
    // A wrong base URL fails here, before any request, not after a minute of retries.
    this._base = rk.checkBaseUrl(o.baseUrl, o.allowInsecureHttp === true);
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
    // the budget. Clients of one API key share one by passing `session`; the processes of one API
    // client share the token and the budget through Redis by passing `fleet` (a RedisFleet): the
    // session is then the fleet's.
    const fleet = o.fleet ?? null;
    if (fleet !== null && !(fleet instanceof rk.RedisFleet)) throw new TypeError('fleet must be a RedisFleet (new RedisFleet(redisClient, { prefix }))');
    if (o.session !== undefined && o.session !== null) {
      if (!(o.session instanceof Session)) throw new TypeError('session must be a Session');
      if (budget !== null) throw new TypeError('budget: give it to the Session (new Session(budget)), not to a client built on a session');
      if (fleet !== null) throw new TypeError('fleet: give it to the Session (fleet.session(budget)), not to a client built on a session');
      if (o.session.fleet !== null && !(o.session.fleet instanceof rk.RedisFleet)) {
        throw new TypeError('session: a fleet\'s session needs a RedisFleet (its Redis client sends the fleet\'s commands), not a Fleet');
      }
      this.session = o.session;
    } else {
      this.session = fleet !== null ? fleet.session(budget ?? defaultBudget) : new Session(budget ?? defaultBudget);
    }
    this._api = api;
    // The wait for the response headers is bounded by read (plus connect when connectTimeoutMs
    // is given: fetch cannot tell when the connection is made), then read bounds each wait for
    // the next piece of the body.
    this._timeouts = timeouts(o.connectTimeoutMs ?? null, readTimeoutOf(o, null));
    this._pollBounds = pollBounds(o);
    this._clock = o.clock ?? (() => Date.now() / 1000);
    this._sleep = o.sleep ?? ((seconds, signal) => new Promise((resolve, reject) => {
      const t = setTimeout(resolve, seconds * 1000);
      signal?.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
    }));
    this._seed = o.seed;
    // Each request's bounds (the core's defaults when not given: 5 attempts, 300 s).
    this._limits = limits(o);
    if (o.onEvent !== undefined && typeof o.onEvent !== 'function') throw new TypeError('onEvent must be a function (event) => void');
    // Each of the machines' events (the core's MachineEvent): sends, responses, retries with
    // their rule and wait, token refreshes, rate-budget waits, polls, a download's progress, a
    // deprecated operation's notice, how each call ended.
    this._onEvent = o.onEvent ?? null;
    const t = o.telemetry ?? null;
    if (t !== null && (typeof t !== 'object' || typeof t.operation !== 'function')) {
      throw new TypeError('telemetry must be an object with operation(name, { baseUrl }) (royaltykit/otel makes one)');
    }
    // One scope per logical operation, fed its machine events (royaltykit/otel: spans).
    this._telemetry = t;
    this._tokenRequest = tokenRequest;
    this._parseToken = parseToken;
  }

  /** Sends `request`; a body the machine streams (`stream(status)` gives the sink) goes to the sink,
   * `progress(received, total)` called after each piece is written (what it throws is thrown as it
   * is, never a transport failure). */
  async _send(request, signal, stream, progress) {
    const { connectMs, readMs, given: g } = this._timeouts;
    // fetch gives no sign of the connection: with connectTimeoutMs given, the wait for the
    // headers is bounded by connect + read; without it, by read alone (the runtime keeps its own
    // connect timeout: undici's is 10 s, the core's default). Then read bounds each wait for the
    // next piece of the body (an idle timeout): a large artifact that keeps arriving is never cut
    // off.
    const headersMs = g.connect !== null ? connectMs + readMs : readMs;
    const timeout = idleTimeout(headersMs, g.connect !== null
      ? `TimeoutError: no response within ${headersMs} ms (connect ${connectMs} ms + read ${readMs} ms)`
      : `TimeoutError: no response within ${readMs} ms (read timeout)`);
    const both = signal ? anySignal([signal, timeout.signal]) : timeout.signal;
    let sink = null;
    let connection = null;
    let own = null; // what `progress` threw
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
      timeout.rearm(readMs, `TimeoutError: no data for ${readMs} ms while reading the body (read timeout)`);
      sink = stream ? stream(r.status) : null;
      if (!sink) return { status: r.status, headers, body: await readAll(r.body, timeout) };
      await sink.start(r.headers.get('content-length'));
      if (r.body) {
        for await (const chunk of r.body) {
          timeout.rearm();
          await sink.write(chunk);
          if (progress) {
            try {
              progress(sink.length, sink.total);
            } catch (e) {
              own = { error: e };
              throw e;
            }
          }
        }
      }
      return { status: r.status, headers, length: sink.length };
    } catch (e) {
      if (sink?.failed) throw sink.failed;
      if (own) throw own.error;
      if (signal?.aborted) throw signal.reason ?? e; // the caller's own cancellation
      const timedOut = timeout.signal.aborted ? timeout.text : null;
      return { failure: transportFailure(e, timedOut !== null), error: e, text: describeFailure(e, timedOut) };
    } finally {
      timeout.clear();
      connection?.close();
    }
  }

  /**
   * Drives `machine` on the client's session to `done` (returned); throws for reconcile and fail.
   * A body the machine streams goes into `sink`; `scope` (telemetry) gets every event;
   * `onCheckpoint(text)` (an export job's) is awaited with each checkpoint the job gives, before
   * the step is performed (the core's rule: before each request and each pause, so a Retry-After
   * or backoff the job holds survives the process).
   */
  async _drive(machine, operationId, { signal, sink, scope, onCheckpoint } = {}) {
    const session = this.session;
    const { stream, progress } = this._target(machine, sink, scope);
    let failed = null; // the last send's rejection when it got no response: the cause of the error the call ends in
    for (;;) {
      signal?.throwIfAborted();
      const version = session.version;
      const s = machine.next(this._clock(), session);
      this._deliver(machine, scope);
      const text = onCheckpoint ? machine.checkpoint() : null;
      if (text !== null) await onCheckpoint(text);
      switch (s.step) {
        case 'send': {
          const r = await this._send(s.request, signal, stream, progress);
          failed = r.failure ? r : null;
          machine.report(r, this._clock());
          break;
        }
        case 'reserve': machine.report(await this._command(s.command, signal), this._clock()); break; // a fleet's: counted in its budget first
        case 'wait': await this._sleep(s.seconds, signal); break;
        case 'await_token': await session.waitForChange(version, s.seconds, signal); break;
        case 'refresh_token': await (session.fleet !== null ? this._fleetToken(signal, scope) : this._exchange(signal, scope)); break;
        case 'done': return s;
        default: throw this._failure(s, operationId, failed); // reconcile, fail: the core's error
      }
    }
  }

  /** Where the body of a response to `machine` goes: `stream(status)` gives `sink` when the machine
   * streams it, and `progress` reports its pieces as they arrive (their events delivered at once). */
  _target(machine, sink, scope) {
    if (!sink) return { stream: null, progress: undefined };
    const progress = (received, total) => { machine.progress(received, total); this._deliver(machine, scope); };
    return { stream: (status) => (machine.streams(status) ? sink : null), progress };
  }

  /** The machine's events so far, to the diagnostics channel, onEvent and the telemetry scope;
   * with nothing listening, a deprecated or sunset operation's notice is still shown (a process
   * warning, as Python's logger and Kotlin's default onEvent show it) and the rest dropped. */
  _deliver(machine, scope) {
    const channel = diagnostics?.client.hasSubscribers ? diagnostics.client : null;
    if (this._onEvent !== null || channel !== null || scope) {
      for (const e of machine.takeEvents()) {
        channel?.publish(e);
        this._onEvent?.(e);
        scope?.event(e);
      }
    } else {
      for (const e of machine.takeEvents('warning')) if (e.kind === 'notice') warn(e);
    }
  }

  /** A command sent to the fleet's Redis: the machines' outcome `{ reply }`, or `{ failure }` when
   * Redis cannot be reached (a reservation waits a second and asks again, never sends uncounted;
   * a token refresh goes on without the fleet). */
  async _command(command, signal) {
    try {
      return { reply: await this.session.fleet.command(command) };
    } catch (e) {
      if (signal?.aborted) throw signal.reason ?? e;
      return { failure: 'connect_failed' };
    }
  }

  /** The error a `reconcile` or `fail` step ends the call in: the core's (ReconcileRequired,
   * CallFailedError, …), the fetch's last rejection its cause when the last send ended in one. */
  _failure(s, operationId, failed) {
    if (s.step !== 'reconcile' && s.step !== 'fail') return new Error(`unknown step ${s.step}`);
    const e = rk.callStepError(s, operationId, this._base, failed?.text ?? null);
    if (failed) e.cause = failed.error;
    return e;
  }

  /** The token exchange (its own call, on the session's budget), its outcome reported to the
   * session, which wakes the calls waiting for it: the token, or why it failed (then the
   * exchange's error is thrown), or nothing when it was cancelled (the signal's reason is). */
  async _exchange(signal, scope) {
    try {
      this.session.storeToken(await this._obtainToken(signal, scope));
    } catch (e) {
      if (signal?.aborted) this.session.abandonExchange();
      else this.session.exchangeFailed(String(e?.message ?? e));
      throw e;
    }
  }

  /** The token exchange itself (its own call, on the session's budget): the parsed token. */
  async _obtainToken(signal, scope) {
    const exchange = Call.exchange(this._tokenRequest(), { ...this._limits, seed: this._seed?.() });
    let done;
    try {
      done = await this._drive(exchange, 'token exchange', { signal, scope });
    } finally {
      exchange.free();
    }
    return this._parseToken(done.status, done.headers, done.body, this._clock());
  }

  /** A fleet session's token refresh: the core's FleetToken driven through the fleet's Redis —
   * the token another process published adopted, or this process exchanges under the fleet's
   * lock (`_obtainToken`) and publishes. The session holds the outcome and wakes the calls
   * waiting: the token, or why it failed (then the exchange's error is thrown); cancelled, the
   * fleet's exchange lock is released when this process holds it (best effort), the exchange
   * abandoned and the signal's reason thrown. */
  async _fleetToken(signal, scope) {
    const session = this.session;
    const refresh = new FleetToken(session, this._api, { tenantId: this.tenantId, seed: this._seed?.(), now: this._clock() });
    try {
      await this._fleetSteps(refresh, signal, scope);
    } catch (e) {
      if (signal?.aborted) {
        // Cancelled: the session's exchange is abandoned first (this process's waiting calls go
        // on at once, whatever Redis does), then the fleet's exchange lock this process holds is
        // released (best effort), so the fleet's other processes need not wait out its lease.
        const unlock = refresh.abandonCommand();
        session.abandonExchange();
        if (unlock !== null) await session.fleet.command(unlock).catch(() => {});
      } else if (session.exchanging) session.exchangeFailed(String(e?.message ?? e));
      throw e;
    } finally {
      refresh.free();
    }
  }

  /** `refresh`'s steps: the token another process published adopted, or this process's exchange
   * run (`_obtainToken`) and published; throws the exchange's error when it failed. */
  async _fleetSteps(refresh, signal, scope) {
    const session = this.session;
    let failure = null; // what the exchange threw
    for (;;) {
      signal?.throwIfAborted();
      const s = refresh.next();
      switch (s.step) {
        case 'command': {
          const r = await this._command(s.command, signal);
          if ('failure' in r) refresh.redisFailed(session);
          else refresh.replied(r.reply, session, this._clock());
          break;
        }
        case 'exchange': {
          const token = await this._obtainToken(signal, scope).catch((e) => { if (signal?.aborted) throw e; failure = e; return null; });
          if (token === null) refresh.exchangeFailed(String(failure?.message ?? failure));
          else refresh.exchanged(token, undefined, this._clock());
          break;
        }
        case 'wait': await this._sleep(s.seconds, signal); refresh.waited(); break;
        case 'done': return;
        case 'failed': throw failure ?? new rk.RoyaltyKitError('token_exchange_failed', s.reason);
        default: throw new Error(`unknown step ${s.step}`);
      }
    }
  }


  /**
   * This client with other bounds for the calls made through the copy (`maxAttempts`,
   * `maxElapsedSeconds`, `connectTimeoutMs`, `readTimeoutMs` or its alias `timeoutMs`,
   * `minPollIntervalSeconds`, `maxPollIntervalSeconds`; null: the core's default; not named: the
   * client's). Checked as the client's options are. The copy shares the fetch, the credentials and
   * the session (the token, its one exchange, the budget):
   * `client.withOptions({ maxAttempts: 2, readTimeoutMs: 5000 }).request('listPlatformExports')`.
   */
  withOptions(o) {
    if (o === null || typeof o !== 'object') throw new TypeError('withOptions takes an object ({ maxAttempts, maxElapsedSeconds, readTimeoutMs, ... })');
    for (const name of Object.keys(o)) {
      if (!CALL_OPTIONS.has(name)) throw new TypeError(`unknown option \`${name}\` for withOptions; it takes: ${[...CALL_OPTIONS].join(', ')}`);
    }
    const copy = Object.assign(Object.create(Object.getPrototypeOf(this)), this);
    copy._limits = limits({ ...this._limits, ...o });
    const g = this._timeouts.given;
    copy._timeouts = timeouts('connectTimeoutMs' in o ? o.connectTimeoutMs : g.connect, readTimeoutOf(o, g.read));
    copy._pollBounds = { ...this._pollBounds, ...pollBounds(o) };
    return copy;
  }

  /**
   * Performs one operation (`params` as for `Call`: path, query, body, requestId, …): the parsed
   * JSON body, the bytes of an artifact, or null. Throws ApiError, ReconcileRequired or
   * CallFailedError; `{ signal }` cancels it (the AbortSignal's reason is thrown).
   */
  async request(operationId, params, opts) {
    return parsed(await this._done(operationId, params, opts));
  }

  /**
   * `request`, resolving to the whole 2xx response: `{ status, headers, body, data }` (headers as
   * received, in order; `body` the bytes; `data` what `request` resolves to).
   */
  async requestRaw(operationId, params, opts) {
    const done = await this._done(operationId, params, opts);
    return { status: done.status, headers: done.headers, body: done.body, data: parsed(done) };
  }

  /**
   * Every item of a list operation, page after page, as an async iterator (`for await (const item
   * of client.paginate('listPlatformExports', { query: { format: 'csv' } }, { maxItems: 500 }))`).
   * The core's Pages decides each page's query (`params.query` is where the walk starts: its
   * `cursor`, `page`, `limit` or `size`), where a page's items are and when the list ends. Each
   * page is one `request` of the operation with `params` (path, userId, …): the client's session,
   * token, retries, rate budget, events and telemetry. Lazy: a page is requested only when its
   * first item is asked for, so `maxItems` or a `break` stops the requests too. `maxPages` and
   * `maxItems` bound the walk (default: none); `pageSize` is the `limit` or `size` asked for
   * (default: the operation's, from the query, else the core's). Throws InvalidArgumentError
   * when called, before any request (an unknown operation or one that is not a GET, a bound below
   * 1, a page size out of range); while iterating, what `request` throws, and PaginationError when
   * the list cannot be read on (the items given before it stand). Aborting `signal` aborts the
   * request in flight, and the next item asked for rejects with the signal's reason.
   */
  paginate(operationId, params, opts = {}) {
    if (opts === null || typeof opts !== 'object') throw new TypeError('paginate options must be an object ({ maxPages, maxItems, pageSize, signal })');
    for (const name of Object.keys(opts)) {
      if (!PAGINATE_OPTIONS.has(name)) throw new TypeError(`unknown option \`${name}\` for paginate; it takes: ${[...PAGINATE_OPTIONS].join(', ')}`);
    }
    if (params !== undefined && params !== null && typeof params !== 'object') throw new TypeError('params must be an object ({ path, query, ... })');
    const pages = new Pages(operationId, params?.query, { maxPages: opts.maxPages, maxItems: opts.maxItems, pageSize: opts.pageSize });
    return this._walk(pages, operationId, params ?? {}, opts.signal);
  }

  /** The items of `pages`, each page fetched by `_done` when the first of its items is asked for. */
  async *_walk(pages, operationId, params, signal) {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        signal?.throwIfAborted();
        const s = pages.next();
        if (s.step === 'done') return;
        if (s.step === 'fail') throw s.error;
        const done = await this._done(operationId, { ...params, query: s.query }, { signal });
        const at = pages.page(done.body ?? new Uint8Array(0));
        if (at === null) continue; // no items array: the next step is the PaginationError
        // The core read the body as JSON: so does JSON.parse, to the same value.
        const page = JSON.parse(decoder.decode(done.body));
        const items = at.member === null ? page : page[at.member];
        for (let i = 0; i < at.take; i++) {
          signal?.throwIfAborted();
          yield items[i];
        }
      }
    } finally {
      pages.free();
    }
  }

  /** One operation to its `done` step, inside its telemetry scope; `read(done)` (default: the
   * step itself) runs inside the scope too, so what it throws ends the scope. */
  async _done(operationId, params, opts, read = (done) => done) {
    return this._operation(operationId, async (scope) => {
      const call = new Call(operationId, { ...this._defaults(), ...params, ...this._limits, token: undefined, seed: this._seed?.() });
      let done;
      try {
        done = await this._drive(call, operationId, { signal: opts?.signal, scope });
      } finally {
        call.free(); // now, not at garbage collection (bench/PROFILES.md, client overhead)
      }
      return read(done);
    });
  }

  /** Runs `f(scope)` inside a telemetry scope named `name` (none without telemetry), ended with what `f` threw, or null. */
  async _operation(name, f) {
    const scope = telemetryScope(this._telemetry, 'operation', name, { baseUrl: this._base });
    let result;
    try {
      result = await f(scope);
    } catch (e) {
      scope?.end(e);
      throw e;
    }
    scope?.end(null);
    return result;
  }

  _defaults() {
    return {};
  }
}

class ReportsClient extends Client {
  constructor(o) {
    checkOptions(o, 'reports');
    const c = o.credentials ?? {};
    if (typeof o.tenantId !== 'string') throw new TypeError('tenantId must be the tenant UUID');
    super(o, 'reports', () => rk.buildTokenRequest({ clientId: c.clientId, clientSecret: c.clientSecret, tenantId: o.tenantId, scopes: o.scopes }),
      (status, headers, body, now) => rk.parseTokenResponse(status, headers, body, { tenantId: o.tenantId, requestedScopes: o.scopes, now }));
    this.tenantId = o.tenantId;
    this._idempotencyHeader = o.idempotencyHeader;
    // The poll-interval bounds are checked by the core now (InvalidArgumentError), not at the first export.
    if (Object.keys(this._pollBounds).length) new ExportJob({ tenantId: this.tenantId, body: '{}', ...this._pollBounds }).free();
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
   *
   * `onCheckpoint(text)` is called (and awaited) with the job's state before each of its requests
   * goes out and before each of its pauses, when it changed (so a job killed during a
   * Retry-After resumes the wait, never sends early); `runExport(null, { resume: text, to })` finishes that job (the
   * body, requestId and the job's bounds come from the checkpoint; giving a body too is a
   * TypeError). When `signal` aborts, the request in flight is aborted, the temporary file
   * removed and ExportInterruptedError thrown with the export id and the checkpoint.
   */
  async runExport(body, opts = {}) {
    if (opts === null || typeof opts !== 'object') throw new TypeError('runExport options must be an object ({ to, onCheckpoint, resume, signal, ... })');
    for (const name of Object.keys(opts)) {
      if (!RUN_OPTIONS.has(name)) throw new TypeError(`unknown option \`${name}\` for runExport; it takes: ${[...RUN_OPTIONS].join(', ')}`);
    }
    const resume = opts.resume ?? null;
    if (resume !== null && typeof resume !== 'string') throw new TypeError('resume must be the checkpoint text that onCheckpoint or ExportInterruptedError gave');
    if (resume !== null && given(body)) {
      throw new TypeError('runExport: give the body of a new export, or null and { resume } (a checkpoint) to finish an interrupted one, not both');
    }
    if (resume === null && !given(body)) {
      throw new TypeError('runExport: give the body of the export, or null and { resume } (a checkpoint) to finish an interrupted one');
    }
    if (resume !== null) {
      const shaping = JOB_OPTIONS.filter((n) => given(opts[n]));
      if (shaping.length) throw new TypeError(`runExport: ${shaping.join(', ')} cannot be given with resume: the checkpoint carries the job's own`);
    }
    const onCheckpoint = opts.onCheckpoint ?? null;
    if (onCheckpoint !== null && typeof onCheckpoint !== 'function') throw new TypeError('onCheckpoint must be a function (checkpoint: string) => void | Promise<void>');
    const to = opts.to ?? null;
    const toStream = to !== null && typeof to.getWriter === 'function';
    if (to !== null && typeof to !== 'string' && !toStream) throw new TypeError('to must be a file path or a WritableStream');
    if (typeof to === 'string' && files === null) throw new TypeError('to: a file path needs a file system (Node, Bun, Deno); here, give a WritableStream');
    return this._operation('runExport', async (scope) => {
      const job = resume !== null ? ExportJob.resume(resume)
        : new ExportJob({ tenantId: this.tenantId, body, requestId: opts.requestId, idempotencyHeader: this._idempotencyHeader,
          maxPolls: opts.maxPolls, maxPollSeconds: opts.maxPollSeconds, reconcileGraceSeconds: opts.reconcileGraceSeconds,
          ...this._pollBounds, ...pollBounds(opts), ...this._limits, seed: this._seed?.() });
      // (A checkpoint of another tenant is refused by the core before its first request:
      // RequestBuildError, the session's token being this client's tenant's.)
      const sink = new Sink(typeof to === 'string' ? to : null, opts.onProgress);
      const signal = opts.signal;
      try {
        await sink.open();
        const done = await this._drive(job, 'export job', { signal, sink, scope, onCheckpoint: onCheckpoint ?? undefined });
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
      } catch (e) {
        // Aborted: the state now (a request in flight counts as lost when resumed) and the export's id.
        if (signal?.aborted) throw new ExportInterruptedError(job.exportId, job.save(), signal.reason ?? e);
        throw e;
      } finally {
        await sink.close(); // before the error reaches the caller: no temporary file is left
        job.free();
      }
    });
  }
}

class EnterpriseClient extends Client {
  constructor(o) {
    checkOptions(o, 'enterprise');
    const c = o.credentials ?? {};
    super(o, 'enterprise', () => rk.buildEnterpriseTokenRequest({ apiKey: c.apiKey, apiSecret: c.apiSecret }),
      (status, headers, body, now) => rk.parseEnterpriseTokenResponse(status, headers, body, { now }), 'enterprise');
    // What a key derived from a `requestId` is scoped to: the organization, named by its API key
    // (hashed into the key by the core, never sent as it is), so every process and language
    // holding the same key derives the same Idempotency-Key for the same requestId.
    this._keyNamespace = typeof c.apiKey === 'string' ? c.apiKey : undefined;
  }

  /**
   * Creates a webhook subscription (`createEnterpriseWebhook`, the JSON body `{ name,
   * endpoint_url, events }`) and resolves to its RevealedSecret: the signing secret the service
   * shows only once (store it now: it cannot be read again, only rotated), the subscription's
   * `reference`, and `record`, the response without the secret (safe to log). `secrets()` is what
   * a verifier or receiver takes. The request carries an Idempotency-Key, the same on each of its
   * retries (a create that may have been applied is sent again only under it, so the service
   * answers it once); with `requestId` the key is derived from it and the client's API key, the
   * same in every process. The raw 2xx body is read by the core (`revealedSecret`) and nowhere
   * else: no event, log or telemetry ever holds the secret. Throws ApiError, ReconcileRequired or
   * CallFailedError as `request` does, and WebhookVerificationError `secret_not_revealed` when
   * the 2xx response names no secret.
   */
  async createSubscription(subscription, opts = {}) {
    if (subscription === null || typeof subscription !== 'object') {
      throw new TypeError('createSubscription takes the subscription ({ name, endpointUrl, events }) and options ({ requestId, signal })');
    }
    known(subscription, SUBSCRIPTION_FIELDS, 'the subscription');
    known(opts, SUBSCRIPTION_OPTIONS, 'createSubscription');
    const { name, endpointUrl, events } = subscription;
    if (typeof name !== 'string') throw new TypeError('name must be a string');
    if (typeof endpointUrl !== 'string') throw new TypeError('endpointUrl must be a string (the URL deliveries are sent to)');
    if (!Array.isArray(events) || !events.every((e) => typeof e === 'string')) throw new TypeError('events must be an array of event names (strings)');
    const params = { body: { name, endpoint_url: endpointUrl, events } };
    if (given(opts.requestId)) Object.assign(params, { requestId: opts.requestId, keyNamespace: this._keyNamespace });
    return this._done('createEnterpriseWebhook', params, { signal: opts.signal }, revealed);
  }

  /**
   * Rotates the signing secret of the subscription `reference` (`rotateEnterpriseWebhookSecret`)
   * and resolves to the RevealedSecret: the new secret, shown only once (store it now), and
   * `previousValidUntil`, until when deliveries still carry the previous secret's signature too.
   * `secrets(previous)` (`previous`: the secret held until now) is the list a verifier or
   * receiver takes from now on; the previous one stops verifying after `previousValidUntil`. A
   * rotation whose answer was lost (a timeout, a dropped connection, a 5xx after sending) is never
   * sent again: it throws ReconcileRequired with `reconcile` 'rotate_again' (rotate again at once,
   * keeping the current secret until then). The raw 2xx body is read by the core alone, as for
   * `createSubscription`.
   */
  async rotateSecret(reference, opts = {}) {
    if (typeof reference !== 'string') throw new TypeError('reference must be the subscription\'s reference (a string)');
    known(opts, new Set(['signal']), 'rotateSecret');
    return this._done('rotateEnterpriseWebhookSecret', { path: { reference } }, { signal: opts.signal }, revealed);
  }

  /**
   * Delivery recovery ("keep periodic reconciliation until event delivery is proven"): reads the
   * delivery log of the subscription `reference` (`listEnterpriseWebhookDeliveries`), asks
   * `store` the state of each delivery from `since` on (a Date or Unix seconds) under
   * `namespace` (the receiver's: the keys are the ones it claims), and replays
   * (`replayEnterpriseWebhookDelivery`) those never processed. Resolves to the core's
   * RecoveryReport: what each delivery was found to be and what was done (`processed`,
   * `processed_by_replay`, `in_progress`, `in_flight`, `replay_pending`, `unrecorded`,
   * `replayed`, `replay_failed`, `replay_limit`, `deferred`). Every decision is the core's
   * `Recovery` machine's; this performs its steps. Safe to run periodically: a delivery or a
   * replay the service is still attempting is left alone, so a run never replays what an earlier
   * run replayed while that replay is pending.
   *
   * `store` is the receiver's store, asked `state(key)` (sync or a Promise) and never claimed:
   * DedupWindow, RedisDedupStore, PostgresDedupStore, SqliteDedupStore, an inbox (PostgresInbox,
   * SqliteInbox) or your own. Each request is one `request` of the client (its session, token,
   * retries, rate budget, events and telemetry). A replay is an unsafe create: one whose answer was lost is never sent again; a
   * replay that ends in this library's error (CallFailedError, ReconcileRequired, ApiError such
   * as a 404, …) is reported `replay_failed` with that error's `code` and the run goes on.
   * `now` (a Date or Unix seconds; default: the client's clock) is the time of the run: a
   * delivery in a state the spec does not name counts as ended once the redelivery schedule has
   * passed. `maxReplays` (default 100), `maxReplaysPerDelivery` (3) and `maxEntries` (10000)
   * bound the run. Throws TypeError or InvalidArgumentError for bad arguments before any request; what a
   * log request throws; PaginationError when the log cannot be read on (nothing was replayed);
   * an error `store.state` throws; the signal's reason when `signal` aborts (the request in
   * flight is aborted).
   */
  async recoverDeliveries(reference, opts) {
    if (typeof reference !== 'string') throw new TypeError('reference must be the subscription\'s reference (a string)');
    if (opts === undefined || opts === null || typeof opts !== 'object') {
      throw new TypeError('recoverDeliveries takes the subscription\'s reference and options ({ store, namespace, since, now, maxReplays, maxReplaysPerDelivery, maxEntries, signal })');
    }
    known(opts, RECOVER_OPTIONS, 'recoverDeliveries');
    const { store, signal } = opts;
    if (typeof store?.state !== 'function') {
      throw new TypeError('store must have state(key) (a DedupWindow, RedisDedupStore, PostgresDedupStore, SqliteDedupStore, PostgresInbox, SqliteInbox, RedisInbox or your own): the store the receiver uses');
    }
    if (typeof opts.namespace !== 'string') throw new TypeError('namespace must be the receiver\'s namespace (a string)');
    if (!(opts.since instanceof Date) && typeof opts.since !== 'number') throw new TypeError('since must be a Date or Unix seconds');
    if (given(opts.now) && !(opts.now instanceof Date) && typeof opts.now !== 'number') throw new TypeError('now must be a Date or Unix seconds');
    const run = new Recovery(reference, opts.namespace, opts.since, given(opts.now) ? opts.now : this._clock(),
      { maxReplays: opts.maxReplays, maxReplaysPerDelivery: opts.maxReplaysPerDelivery, maxEntries: opts.maxEntries });
    try {
      return await this._recoverySteps(run, reference, store, signal);
    } finally {
      run.free();
    }
  }

  /** The Recovery `run`'s steps to its report: each page read and each replay sent through
   * `request`'s own path, each key looked up in `store`; a replay that threw the library's own
   * error is `replay_failed` with its code, cancellation and any other error propagate. */
  async _recoverySteps(run, reference, store, signal) {
    for (;;) {
      signal?.throwIfAborted();
      const s = run.next();
      switch (s.step) {
        case 'fetch': {
          const done = await this._done(s.operationId, { path: { reference }, query: s.query }, { signal });
          run.page(done.body ?? new Uint8Array(0));
          break;
        }
        case 'check': {
          const states = [];
          for (const key of s.keys) states.push(await store.state(key));
          run.checked(states);
          break;
        }
        case 'replay': {
          const done = await this._done(s.operationId, { path: { reference, deliveryReference: s.delivery } }, { signal })
            .catch((e) => { if (signal?.aborted || !(e instanceof rk.RoyaltyKitError)) throw e; return e; });
          if (done instanceof rk.RoyaltyKitError) run.replayFailed(done.code);
          else run.replayed(done.body ?? new Uint8Array(0));
          break;
        }
        case 'done': return s.report;
        case 'fail': throw s.error;
        default: throw new Error(`unknown step ${s.step}`);
      }
    }
  }

  /**
   * The canonical fetch of the consumer workflow: the current state of the resource a webhook
   * event names (`resource` is a VerifiedWebhook, a WebhookEvent or its `resourceUrl`), with the
   * client's bearer token and, given `userId`, `X-User-Id`. The core checks the URL is a path under
   * the enterprise API and throws RequestBuildError `invalid_resource_url` before any request otherwise,
   * so the token goes nowhere else. Resolves to the parsed 2xx body, like `request`.
   */
  async fetchResource(resource, opts = {}) {
    if (opts === null || typeof opts !== 'object') throw new TypeError('fetchResource options must be an object ({ userId, signal })');
    const event = resource !== null && typeof resource === 'object' ? (resource.event ?? resource) : null;
    const url = event === null ? resource : event.resourceUrl;
    if (typeof url !== 'string') throw new TypeError('fetchResource takes a VerifiedWebhook, a WebhookEvent or its resourceUrl (a string)');
    const params = { path: { resource: url } };
    if (opts.userId != null) params.userId = opts.userId;
    return this.request('fetchEnterpriseResource', params, { signal: opts.signal });
  }
}

/** A client of the reporting API's machine surface (see docs/clients.md, "Clients"). */
function createReportsClient(options) {
  return new ReportsClient(options ?? {});
}

/** A client of the enterprise organization API, paced by the spec's one-minute limits. */
function createEnterpriseClient(options) {
  return new EnterpriseClient(options ?? {});
}

module.exports = { createReportsClient, createEnterpriseClient, Session, RedisFleet: rk.RedisFleet, ReconcileRequired, CallFailedError, PaginationError, ExportInterruptedError };
