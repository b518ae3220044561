'use strict';
// royaltykit for JavaScript: a thin layer over the wasm core. It only converts host values
// (header shapes, body types), supplies the default clock and RNG, and maps errors to classes.
// Every rule (header names, limits, check order, key encodings) lives in the Rust core. The
// entry points (index.cjs, index.mjs, index.workerd.mjs) instantiate the wasm before this runs.

const { telemetryScope } = require('./telemetry.cjs');
const native = require('./native/royaltykit_wasm.cjs');

// The HMAC primitive. wasm has no access to the CPU's SHA extensions, so for larger bodies the
// MAC comes from node:crypto (same bytes, same secrets) while every rule still runs in the core;
// small bodies stay in wasm, where a call costs less than createHmac's fixed overhead. Without
// node:crypto (browsers, edge runtimes) everything stays in wasm: `#crypto` is node:crypto under
// the `node` condition (Node, Bun, Deno) and null elsewhere. The threshold is measured by
// `make bench` (bench/RESULTS.md, "Node: where node:crypto takes over the HMAC").
const nodeCrypto = require('#crypto');
// node:diagnostics_channel's channels where the runtime has it, else null.
const diagnostics = require('#diagnostics');
// The RNG for default delivery ids, dedup seeds and idempotency keys: WebCrypto, a global
// everywhere but Node 18, where node:crypto carries it.
const webCrypto = globalThis.crypto ?? nodeCrypto?.webcrypto;
const DEFAULT_HOST_MAC_THRESHOLD = 1536;

/** Bodies of at least this many bytes get node:crypto's HMAC (`hostMacThreshold` option). */
function macThreshold(o) {
  return nodeCrypto ? toNumber(o.hostMacThreshold, 'hostMacThreshold', DEFAULT_HOST_MAC_THRESHOLD) : Infinity;
}

/** `mac(secretIndex, timestamp)` for the core: HMAC-SHA256 of `<timestamp>.<body>`. */
function hostMac(keys, bytes) {
  return (index, timestamp) => nodeCrypto.createHmac('sha256', keys[index]).update(timestamp).update('.').update(bytes).digest();
}

/** Base class of every error this package throws; `code` is stable across languages. */
class RoyaltyKitError extends Error {
  constructor(code, message, details) {
    super(message);
    this.name = 'RoyaltyKitError';
    this.code = code;
    if (details) Object.assign(this, details);
  }
}

/** Defines a RoyaltyKitError subclass whose instances have `name` set to the class name. */
function errorClass(name) {
  const Cls = class extends RoyaltyKitError {
    constructor(code, message, details) {
      super(code, message, details);
      this.name = name;
    }
  };
  Object.defineProperty(Cls, 'name', { value: name });
  return Cls;
}
/** A webhook delivery was not accepted (or could not be signed). */
const WebhookVerificationError = errorClass('WebhookVerificationError');
/** An argument or option is out of range (code `invalid_argument`). */
const InvalidArgumentError = errorClass('InvalidArgumentError');
/** A request could not be built (`code`: missing_parameter, invalid_parameter, …; `parameter`). */
const RequestBuildError = errorClass('RequestBuildError');
/** A success response to a token exchange broke the contract (code `invalid_token_response`). */
const TokenResponseError = errorClass('TokenResponseError');
/** A command the export's state does not allow (code `invalid_export_transition`; `state`, `command`, `allowed`). */
const ExportStateError = errorClass('ExportStateError');
/** A download response that is not the whole artifact (code `partial_content_unsupported`). */
const ExportDownloadError = errorClass('ExportDownloadError');
/**
 * An API error response, parsed: `code` is `api_error`; `kind`, `reason`, `serverMessage` (the
 * body's message), `bodyCode` (the body's own code, or null), `fieldErrors`, `retryAfterSeconds`,
 * `declared`, `status` (the response's HTTP status), `rawBody`, `httpStatus` (as on every error:
 * the status a webhook receiver answers when this error ends its handling, 500). Its message is
 * the core's, the same in every language: `401 Unauthorized (unauthenticated) [invalid_client]`.
 * Throwable.
 */
const ApiError = errorClass('ApiError');
/**
 * A request may have been applied and must not be sent again blindly (code `reconcile_required`):
 * check its effect first, as `reconcile` says (`lookup_by_sent_data`, …). Also `operationId`,
 * `reason`, `candidates` (an export job's ids of the exports that may be its own; [] for a call)
 * and `stage` (`reconcile` for an export job, null for a call).
 */
const ReconcileRequired = errorClass('ReconcileRequired');
/**
 * A call or export job stopped without an API error to show (code `call_failed`): `rule`
 * (`attempts_exhausted`, `retry_after_exceeds_budget`, …), `reason`, `transport`, `status`,
 * `retryAfterSeconds`, `operationId`, `attempts`, `cause` (the fetch's last rejection), and for an
 * export job `stage` and `exportId`. Its message names the operation, the host, the reason, the
 * attempts and the last transport error.
 */
const CallFailedError = errorClass('CallFailedError');
/**
 * A list that cannot be read to its end (family `pagination`; `code` `page_unreadable`: a page
 * that is not JSON or has no items array, `next_page_unknown`: a page that says more follow
 * without saying how to ask for them, `list_cursor_repeated`: a cursor or a page given again,
 * which would loop). The items given before it stand. Its message is the core's.
 */
const PaginationError = errorClass('PaginationError');

// The one table from the core's error family to a class; everything else comes from the core.
const FAMILIES = {
  webhook: WebhookVerificationError,
  invalid_argument: InvalidArgumentError,
  request: RequestBuildError,
  token_response: TokenResponseError,
  export_state: ExportStateError,
  export_download: ExportDownloadError,
  api: ApiError,
  pagination: PaginationError,
  call_failed: CallFailedError,
  reconcile_required: ReconcileRequired,
  host: RoyaltyKitError,
};

/** The core's error (JSON text) as its class, with the core's message; an API error's parsed
 * response is flattened onto it (the server's own message as `serverMessage`). Anything else (a
 * JS TypeError, a wasm trap) passes through. */
function fromNative(e) {
  if (typeof e !== 'string' || !e.startsWith('{')) return e;
  const { family, code, message, error, ...details } = JSON.parse(e);
  const Cls = FAMILIES[family] || RoyaltyKitError;
  if (!error) return new Cls(code, message, details);
  const { message: serverMessage, ...response } = error;
  return new Cls(code, message, { ...details, ...response, serverMessage });
}

function call(fn) {
  try {
    return fn();
  } catch (e) {
    throw fromNative(e);
  }
}

// ---- conversions ------------------------------------------------------------------------------

const HEADER_NAMES = native.headerNames();
// Matches header names the core asks for, ASCII-case-insensitively. A regex without the `u`
// flag folds case only within ASCII for ASCII targets (no Kelvin-sign or long-s surprises),
// like the core.
const namesRegex = (names) => new RegExp('^(?:' + names.map((n) => n.replace(/[-]/g, '\\-')).join('|') + ')$', 'i');
const WEBHOOK_HEADERS = namesRegex(HEADER_NAMES);
const RESPONSE_HEADERS = namesRegex(native.responseHeaderNames());
const CREDENTIAL_HEADERS = native.credentialHeaderNames().map((n) => n.toLowerCase());
const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const encoder = new TextEncoder();
const utf8 = new TextDecoder();

function pushValue(flat, name, value) {
  if (typeof value === 'string') {
    flat.push(name, value);
  } else if (Array.isArray(value)) {
    for (const v of value) {
      if (typeof v !== 'string') throw new TypeError(`header ${name}: values must be strings`);
      flat.push(name, v);
    }
  } else if (value !== undefined) {
    throw new TypeError(`header ${name}: value must be a string or an array of strings`);
  }
}

function addPair(flat, wanted, name, value) {
  if (typeof name !== 'string') throw new TypeError('header names must be strings');
  if (wanted.test(name)) pushValue(flat, name, value);
}

/** Headers in any common shape -> flat [name, value, ...] of the headers the core reads. */
function flattenHeaders(headers, wanted = WEBHOOK_HEADERS) {
  const flat = [];
  if (headers === null || typeof headers !== 'object') {
    throw new TypeError('headers must be an object, a Headers, a Map or an array of [name, value] pairs');
  }
  if (Array.isArray(headers)) {
    for (const pair of headers) {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw new TypeError('header pairs must be [name, value] arrays');
      }
      addPair(flat, wanted, pair[0], pair[1]);
    }
  } else if (headers instanceof Map || (typeof headers.entries === 'function' && typeof headers.get === 'function')) {
    // Map, WHATWG Headers (fetch, undici), or anything with entries()
    for (const [name, value] of headers.entries()) addPair(flat, wanted, name, value);
  } else {
    for (const name of Object.keys(headers)) addPair(flat, wanted, name, headers[name]);
  }
  return flat;
}

function toBytes(body, what = 'body') {
  if (body instanceof Uint8Array) return body; // includes Buffer
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError(`${what} must be a Buffer, a Uint8Array, an ArrayBuffer or a string`);
}

// Secrets as the core takes them: the strings, and (when any has one) each one's end of
// validity, NaN for none. A secret is a string or `{ secret, validUntil }` (a WebhookSecret or a
// plain object; `validUntil`: Unix seconds, a Date or an ISO 8601 text — the rotation's
// previous_secret_valid_until as the service sends it; after it the secret never verifies).
// `validUntil` is read by the wasm layer (`validUntil`): NaN, an infinity, an invalid Date or an
// unreadable text is refused (invalid_argument), never taken for "no expiry"; only a missing
// (undefined or null) one is none.
class SecretList {
  constructor(list, validUntil) {
    this.list = list;
    this.validUntil = validUntil;
  }
}
const SECRETS_TYPE = 'secrets must be a string, a { secret, validUntil } object or an array of them';
function toSecrets(secrets) {
  if (secrets instanceof SecretList) return secrets;
  const items = typeof secrets === 'string' || (secrets !== null && typeof secrets === 'object' && !Array.isArray(secrets)) ? [secrets] : secrets;
  if (!Array.isArray(items)) throw new TypeError(SECRETS_TYPE);
  const list = new Array(items.length);
  let validUntil;
  items.forEach((s, i) => {
    if (typeof s === 'string') {
      list[i] = s;
      return;
    }
    if (s === null || typeof s !== 'object' || typeof s.secret !== 'string') throw new TypeError(SECRETS_TYPE);
    list[i] = s.secret;
    // A WebhookSecret's was checked when it was made.
    const until = s instanceof WebhookSecret ? s.validUntil ?? undefined : validUntilArg(s.validUntil, 'validUntil');
    if (until !== undefined) {
      validUntil ??= new Float64Array(items.length).fill(NaN);
      validUntil[i] = until;
    }
  });
  return new SecretList(list, validUntil);
}

/** A secret's end of validity as Unix seconds, or undefined for none (see toSecrets). */
function validUntilArg(value, what) {
  return call(() => native.validUntil(value, what));
}

/** A boolean argument that may be left out (false). */
function toBool(value, what) {
  return value === undefined || value === null ? false : toFlag(value, what);
}

/** A boolean argument nothing may leave out: a `TypeError` for anything but `true` or `false`. */
function toFlag(value, what) {
  if (typeof value !== 'boolean') throw new TypeError(`${what} must be a boolean (true or false)`);
  return value;
}

/**
 * A machine's outcome, a name or a plain object, as the JSON text the core reads
 * (`invalid_argument` for one it does not know); a `TypeError` for anything else.
 */
function outcomeJson(value, what) {
  if (typeof value !== 'string' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new TypeError(`${what} must be an outcome's name or an object naming it`);
  }
  return JSON.stringify(value);
}

function toStr(value, what) {
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string`);
  return value;
}

function toNumber(value, what, fallback) {
  if (value === undefined || value === null) return fallback;
  if (value instanceof Date) return value.getTime() / 1000;
  if (typeof value !== 'number') throw new TypeError(`${what} must be a number`);
  return value;
}

/** A whole-number argument that is a count, a status or a length: a number, never a Date (a Date is
 * a time, which `toNumber` reads as seconds). */
function toInteger(value, what) {
  if (value instanceof Date) throw new TypeError(`${what} must be a number, not a Date`);
  return toNumber(value, what);
}

function nowSeconds(now) {
  return toNumber(now, 'now', undefined) ?? Date.now() / 1000;
}

function options(opts) {
  if (opts !== undefined && (opts === null || typeof opts !== 'object')) {
    throw new TypeError('options must be an object');
  }
  return opts || {};
}

// ---- webhook ------------------------------------------------------------------------------------

/**
 * Verifies a webhook delivery. Throws WebhookVerificationError (with `code`) when it is not
 * genuine, fresh and well-formed; returns the delivery id, timestamp, matched secret index,
 * content key and parsed event otherwise.
 */
function verifyWebhook(headers, body, secrets, opts) {
  const o = options(opts);
  const l = lastVerifier;
  if (l !== null && l.secret === secrets && l.tolerance === o.toleranceSeconds && l.maxBody === o.maxBodyBytes
      && l.threshold === o.hostMacThreshold) {
    return l.verifier.verify(headers, body, o.now);
  }
  const list = toSecrets(secrets);
  let verifier;
  try {
    verifier = cachedVerifier(list, o);
  } catch (e) {
    // Unusable secrets or options: the one-shot path reports them in the contract's order
    // (a missing header first).
    if (e instanceof RoyaltyKitError) return verifyOnce(headers, body, list, o);
    throw e;
  }
  if (typeof secrets === 'string') {
    lastVerifier = { secret: secrets, tolerance: o.toleranceSeconds, maxBody: o.maxBodyBytes, threshold: o.hostMacThreshold, verifier };
  }
  return verifier.verify(headers, body, o.now);
}

/** Verification without a verifier: the core keys the HMAC for this call only. */
function verifyOnce(headers, body, secrets, o) {
  const { list, validUntil } = secrets;
  const flat = flattenHeaders(headers);
  const bytes = toBytes(body);
  const tolerance = toNumber(o.toleranceSeconds, 'toleranceSeconds', undefined);
  const maxBody = toNumber(o.maxBodyBytes, 'maxBodyBytes', undefined);
  const now = nowSeconds(o.now);
  // Only reached with secrets or options the core refused, so it ends in the core's error.
  return JSON.parse(call(() => native.verifyWebhook(flat, bytes, list, now, tolerance, maxBody, validUntil)));
}


/** The hot path's headers (`HotHeaders` in the wasm layer): the flat pairs joined by NUL, one
 * string crossing instead of one per item; null when an item holds a NUL (the array goes). */
function joinHeaders(flat) {
  for (const s of flat) if (s.includes('\0')) return null;
  return flat.join('\0');
}

/** A verified delivery from the wasm layer's `verified_text`: NUL-led fields in the record's
 * order (its JSON text when a string holds a NUL). `make test` checks it field by field
 * against the JSON of the same record. */
function verifiedFrom(text) {
  if (text.charCodeAt(0) !== 0) return JSON.parse(text);
  const p = text.split('\0');
  return {
    deliveryId: p[1],
    timestamp: Number(p[2]),
    secretIndex: Number(p[3]),
    contentKey: p[4],
    event: {
      name: p[5],
      isKnown: p[6] === '1',
      isTest: p[7] === '1',
      resourceType: p[9],
      resourceReference: p[10],
      resourceUrl: p[11],
      occurredAt: p[12] === '' ? null : Number(p[12]),
      occurredAtText: p[13],
      replayOf: p[8] === '1' ? p[14] : null,
    },
  };
}

// verifyWebhook reuses the verifier of its last few secret/option combinations: keying the HMAC
// and copying the secrets into wasm is a seventh of a small delivery's cost. At most
// VERIFIER_CACHE entries; the oldest is freed first.
const VERIFIER_CACHE = 8;
const verifiers = new Map();
// The verifier of the last call whose secret was one string, found without building the key
// (a string cannot change, so the same string with the same options is the same verifier).
let lastVerifier = null;
function cachedVerifier(secrets, o) {
  // length-prefixed, so no two secret lists or option sets share a key
  let key = `${o.toleranceSeconds}|${o.maxBodyBytes}|${o.hostMacThreshold}|${secrets.validUntil ?? ''}|`;
  for (const s of secrets.list) key += `${s.length}:${s}`;
  let v = verifiers.get(key);
  if (v === undefined) {
    v = new WebhookVerifier(secrets, o);
    if (verifiers.size >= VERIFIER_CACHE) {
      const [oldest, old] = verifiers.entries().next().value;
      verifiers.delete(oldest);
      if (lastVerifier !== null && lastVerifier.verifier === old) lastVerifier = null;
      old.free();
    }
    verifiers.set(key, v);
  }
  return v;
}

/** A verifier built once with its secrets (strings or `{ secret, validUntil }`, current first)
 * and options; `verify(headers, body, now?)`. */
class WebhookVerifier {
  constructor(secrets, opts) {
    const o = options(opts);
    const { list, validUntil } = toSecrets(secrets);
    const tolerance = toNumber(o.toleranceSeconds, 'toleranceSeconds', undefined);
    const maxBody = toNumber(o.maxBodyBytes, 'maxBodyBytes', undefined);
    this._inner = call(() => new native.WebhookVerifier(list, tolerance, maxBody, validUntil));
    this._macThreshold = macThreshold(o);
    // Keys for node:crypto, made only after the core accepted the secrets.
    this._keys = nodeCrypto ? list.map((s) => nodeCrypto.createSecretKey(Buffer.from(s, 'utf8'))) : null;
  }
  verify(headers, body, now) {
    const flat = flattenHeaders(headers);
    const joined = joinHeaders(flat);
    const whole = joined === null ? flat : undefined;
    const bytes = toBytes(body);
    const t = nowSeconds(now);
    if (bytes.length >= this._macThreshold) {
      const mac = hostMac(this._keys, bytes);
      return verifiedFrom(call(() => this._inner.verifyWithMac(joined ?? '', whole, bytes, t, mac)));
    }
    return verifiedFrom(call(() => this._inner.verify(joined ?? '', whole, bytes, t)));
  }
  /**
   * One delivery as a `WebhookReceipt` machine (keys scoped to `namespace`): drive it with
   * `next()` until it says `reply`. A rejected delivery's receipt replies at once. Only the
   * delivery key is claimed unless `claimContentKey` (see WebhookReceiver). `inbox: true`: a
   * verified delivery is persisted (step `enqueue`) and answered at once; a worker runs the
   * handler later.
   */
  receipt(headers, body, opts) {
    const o = options(opts);
    const flat = flattenHeaders(headers);
    const joined = joinHeaders(flat);
    const whole = joined === null ? flat : undefined;
    const bytes = toBytes(body);
    const mac = bytes.length >= this._macThreshold ? hostMac(this._keys, bytes) : undefined;
    const namespace = toStr(o.namespace, 'namespace');
    const w = o.window;
    const transactional = o.transactional === true;
    const claimContent = toBool(o.claimContentKey, 'claimContentKey');
    const inbox = toBool(o.inbox, 'inbox');
    if (w === undefined || w === null) {
      return new WebhookReceipt(call(() => this._inner.receipt(joined ?? '', whole, bytes, nowSeconds(o.now), namespace, mac, transactional, claimContent, inbox)));
    }
    if (!(w instanceof DedupWindow)) throw new TypeError('window must be a DedupWindow');
    if (transactional) throw new TypeError('window and transactional exclude each other: a DedupWindow is not a table in your database');
    if (inbox) throw new TypeError('window and inbox exclude each other: an inbox is a table in your database');
    const now = toNumber(o.now, 'now', undefined);
    return new WebhookReceipt(call(() => this._inner.receiptOn(w._inner, joined ?? '', whole, bytes, now, namespace, mac, claimContent)));
  }
  /** Releases the wasm memory now instead of at garbage collection. */
  free() {
    if (this._inner) this._inner.free();
    this._inner = undefined;
  }
}

/**
 * Signs a body as the service would. Returns the three headers as a plain object, ready to
 * pass to fetch/http.request. `timestamp` defaults to now, `deliveryId` to a random UUID.
 */
function signWebhook(secret, body, opts) {
  const o = options(opts);
  const { list } = toSecrets(secret);
  const bytes = toBytes(body);
  const ts = Math.floor(nowSeconds(o.timestamp));
  const id = o.deliveryId === undefined ? webCrypto.randomUUID() : toStr(o.deliveryId, 'deliveryId');
  return JSON.parse(call(() => native.signWebhook(list, bytes, ts, id)));
}

/**
 * A webhook signing secret with the last Unix second it verifies (`validUntil`; null: no
 * limit): `new WebhookSecret(secret, validUntil?)`, `validUntil` Unix seconds, a Date or an
 * ISO 8601 text (the rotation's `previous_secret_valid_until` as the service returns it);
 * anything else (NaN, an infinity, an invalid Date, unreadable text) is refused with
 * InvalidArgumentError. Verifiers and receivers take it where they take a secret; printing it
 * hides the secret.
 */
class WebhookSecret extends secretHolder('WebhookSecret', 'secret') {
  constructor(secret, validUntil) {
    super({ secret: toStr(secret, 'secret'), validUntil: validUntilArg(validUntil, 'validUntil') ?? null });
    Object.freeze(this); // checked once: its expiry cannot be changed afterwards
  }
}

/** The secrets to verify with at `now` during a rotation (current first), as WebhookSecrets
 * carrying their expiry: a verifier built from them never accepts the previous one after
 * `previousValidUntil` (Unix seconds, a Date or the ISO 8601 text the service returns). */
function activeSecrets(current, previous, previousValidUntil, now) {
  toStr(current, 'current');
  if (previous !== undefined && previous !== null) toStr(previous, 'previous');
  const until = validUntilArg(previousValidUntil, 'previousValidUntil');
  const active = JSON.parse(call(() => native.activeSecrets(current, previous ?? undefined, until, nowSeconds(now))));
  return active.map((s) => new WebhookSecret(s.secret, s.validUntil));
}

/**
 * A webhook subscription's signing secret as its create or rotation revealed it
 * (`revealedSecret(body)`, `EnterpriseClient.createSubscription` / `rotateSecret`). The service
 * shows the secret once: store it now. `secret` is a WebhookSecret (no expiry); `previousValidUntil`
 * a rotation's `previous_secret_valid_until` in Unix seconds (null for a create); `reference` the
 * subscription's reference (null when the response names none); `record` the response as JSON
 * text with every secret member removed (safe to log or store). `secrets(previous)` is the list a
 * verifier or receiver takes. Printing it (util.inspect, String, JSON.stringify) never shows the
 * secret. Made by `revealedSecret`, not by its constructor.
 */
class RevealedSecret extends secretHolder('RevealedSecret', 'secret') {
  constructor(fields) {
    super(fields);
    Object.freeze(this);
  }
  /**
   * The secrets to verify with from now on (the core's `RevealedSecret::secrets`): the new one,
   * then `previous` (the secret held before this rotation, a string) carrying `previousValidUntil`
   * as its expiry, so a verifier or receiver built from them never accepts the previous one after
   * it. Without a `previousValidUntil` (a create) or a `previous`, the new one alone.
   */
  secrets(previous = null) {
    const p = previous === undefined || previous === null ? undefined : toStr(previous, 'previous');
    const list = JSON.parse(call(() => native.revealedSecrets(this.secret.secret, this.previousValidUntil ?? undefined, p)));
    return list.map((s) => new WebhookSecret(s.secret, s.validUntil));
  }
}

/**
 * The reveal-once signing secret of a subscription's create (`createEnterpriseWebhook`) or
 * rotation (`rotateEnterpriseWebhookSecret`) response: pass the raw 2xx body (bytes or text), not
 * a parsed and re-serialized one. Returns a RevealedSecret; throws WebhookVerificationError with
 * code `secret_not_revealed` for a body that is not a JSON object (of at most 1 MiB), names no
 * secret, or whose `previous_secret_valid_until` is not a time. Its message never contains the body.
 */
function revealedSecret(body) {
  const r = JSON.parse(call(() => native.revealedSecret(toBytes(body))));
  return new RevealedSecret({ secret: new WebhookSecret(r.secret), previousValidUntil: r.previousValidUntil,
    reference: r.reference, record: r.record });
}

/**
 * The event's canonical resource path (`resource.url`), checked: returned only when it is a path
 * under the enterprise API (`/api/v1/…`), to fetch on the API's own base URL with a bearer token;
 * otherwise WebhookVerificationError with code `invalid_resource_url`. Takes the URL text or a
 * verified event (`delivery.event`).
 */
function resourcePath(urlOrEvent) {
  const url = urlOrEvent !== null && typeof urlOrEvent === 'object' ? urlOrEvent.resourceUrl : urlOrEvent;
  return call(() => native.resourcePath(toStr(url, 'url')));
}

/** A client's timeouts in seconds: each one given checked (more than 0, at most a day), each one not given the library's default (10 s to connect, 30 s to read); else `InvalidArgumentError` naming `connect_timeout` or `read_timeout`. */
function clientTimeouts(connectSeconds = null, readSeconds = null) {
  const [c, r] = call(() => native.clientTimeouts(toNumber(connectSeconds, 'connectSeconds', null) ?? undefined,
    toNumber(readSeconds, 'readSeconds', null) ?? undefined));
  return { connectSeconds: c, readSeconds: r };
}

/**
 * The error to throw for a Call's or an ExportJob's `fail` or `reconcile` step, from the core's
 * error table: the error a failure carries (an ApiError, …), else a CallFailedError whose message
 * names `operationId`, the host of `baseUrl`, the reason, the attempts and `cause` (the HTTP
 * library's last error, in words), or a ReconcileRequired.
 */
function callStepError(step, operationId, baseUrl, cause = null) {
  if (step === null || typeof step !== 'object') throw new TypeError('callStepError takes a fail or reconcile step');
  if (step.error) return step.error;
  const { request: _request, body: _body, error: _error, ...fields } = step;
  return call(() => fromNative(native.callStepError(JSON.stringify(fields), toStr(operationId, 'operationId'), toStr(baseUrl, 'baseUrl'),
    cause === null || cause === undefined ? undefined : toStr(cause, 'cause'))));
}

// ---- functions generated from surface/functions.toml ---------------------------------------------

// generated by scripts/gen_surface.py from surface/functions.toml: begin
/**
 * Unix seconds of a time as the services send one (RFC 3339, the ISO 8601 extended and basic forms,
 * HTTP-dates): the library's one timestamp parser; null for anything else.
 */
function parseTimestamp(text) {
  return native.parseTimestamp(toStr(text, 'text')) ?? null;
}

/**
 * `baseUrl` without its trailing `/` when a client may send its requests to it: `https` (plain
 * `http` only to a loopback host, or anywhere with `allowInsecureHttp`, since the credentials would
 * travel in clear), a host, no user-info, query, fragment or API prefix (`/api/…`, which the client
 * adds); otherwise `InvalidArgumentError` (`invalid_argument`), naming `base_url`, saying what is
 * wrong and what is accepted. The clients call it when they are built.
 */
function checkBaseUrl(baseUrl, allowInsecureHttp = false) {
  return call(() => native.checkBaseUrl(toStr(baseUrl, 'baseUrl'), allowInsecureHttp === true));
}

/**
 * The one message of a failed call (`call_failed`), the same in every language: the operation, the
 * host of `baseUrl`, the machine's `reason`, the `attempts` made and the HTTP library's last error
 * (`cause`) when there was one.
 */
function callFailedMessage(operation, baseUrl, reason, attempts, cause = null) {
  return call(() => native.callFailedMessage(toStr(operation, 'operation'), toStr(baseUrl, 'baseUrl'), toStr(reason, 'reason'), toInteger(attempts, 'attempts'), optStr(cause, 'cause')));
}

/**
 * The one message of an interrupted export job: whether the service named the export (`exportId`)
 * and what resuming from the checkpoint does.
 */
function exportInterruptedMessage(exportId = null) {
  return native.exportInterruptedMessage(optStr(exportId, 'exportId'));
}

/**
 * The namespaced dedup key of a delivery (its `Service-Webhook-Id`, `deliveryId`): what receivers
 * claim; `InvalidArgumentError` (`invalid_argument`) for an empty or over-long namespace or id.
 */
function deliveryKey(namespace, deliveryId) {
  return call(() => native.deliveryKey(toStr(namespace, 'namespace'), toStr(deliveryId, 'deliveryId')));
}

/**
 * The content key of signed content under a secret: the timestamp as sent (`timestamp`) and the raw
 * `body`, the key a verification under `secret` as its first secret carries. It depends only on
 * what the signature covers, so a delivery resent under a new delivery id keeps it.
 * `invalid_secret` for an unusable secret.
 */
function contentKey(secret, timestamp, body) {
  return call(() => native.contentKey(toStr(secret, 'secret'), toStr(String(timestamp), 'timestamp'), toBytes(body)));
}

/**
 * The deterministic idempotency key of one logical request (a retry computes the same one), from
 * the id the caller gave it (`requestId`); `InvalidArgumentError` (`invalid_argument`) for an empty
 * or over-long namespace, operation id or request id.
 */
function idempotencyKey(namespace, operationId, requestId) {
  return call(() => native.idempotencyKey(toStr(namespace, 'namespace'), toStr(operationId, 'operationId'), toStr(requestId, 'requestId')));
}

/**
 * The `lastError` every inbox keeps for a failed handler run, the same in every language: `Kind:
 * message` (`kind`: the error's class name), the kind alone when the message is empty, the message
 * alone when the kind is; cut to 1024 bytes.
 */
function handlerErrorText(kind, message) {
  return native.handlerErrorText(toStr(kind, 'kind'), toStr(message, 'message'));
}

/**
 * The service's delays between webhook delivery attempts, in seconds.
 */
function webhookRetrySchedule() {
  return Array.from(native.webhookRetrySchedule());
}

/**
 * When the service makes a delivery's next attempt (Unix seconds), from its first attempt
 * (`firstAttemptAt`) and the attempts made so far, the first included (`attemptsMade`), each
 * attempt made when it was due: the first attempt's time for 0, null once all eight are made;
 * `InvalidArgumentError` (`invalid_argument`) for a negative count.
 */
function webhookNextAttemptAt(firstAttemptAt, attemptsMade) {
  return call(() => native.webhookNextAttemptAt(toNumber(firstAttemptAt, 'firstAttemptAt'), toInteger(attemptsMade, 'attemptsMade'))) ?? null;
}

/**
 * The latest time (Unix seconds) the service gives a delivery up, from its first attempt
 * (`firstAttemptAt`): the final attempt's due time plus its 10 s limit.
 */
function webhookGivesUpAt(firstAttemptAt) {
  return call(() => native.webhookGivesUpAt(toNumber(firstAttemptAt, 'firstAttemptAt')));
}

/**
 * The scopes the operation `operationId` needs that `granted` lacks, in the catalog's order (empty
 * when it may be called); `InvalidArgumentError` (`invalid_argument`) for an operation the catalog
 * does not know.
 */
function missingScopes(granted, operationId) {
  return call(() => native.missingScopes(strings(granted, 'granted'), toStr(operationId, 'operationId')));
}

/**
 * What an export's state as the server sent it (`value`) means: its canonical name (an unknown
 * value kept as sent, up to 200 characters), whether the spec shows it, whether it is an end state,
 * and the commands it allows. Never refuses: an unknown state allows only `get`.
 */
function exportState(value) {
  return JSON.parse(native.exportState(toStr(value, 'value')));
}

/**
 * The state expected after `command` on an export in `state` (`cancel` gives cancelled, `revoke`
 * revoked, `get` and `download` leave it); `ExportStateError` (`invalid_export_transition`) naming
 * the state, the command and the commands allowed, and only `get` allowed in a state the spec does
 * not show. `InvalidArgumentError` (`invalid_argument`) for a command that is none of `get`,
 * `cancel`, `revoke` and `download`.
 */
function validateExportCommand(state, command) {
  return call(() => native.validateExportCommand(toStr(state, 'state'), toStr(command, 'command')));
}

/**
 * The next step of a create, poll and download loop after the `attempt`-th read of an export in
 * `state` (1 after the first): `download` once ready, `stop` when cancelled or revoked, and
 * `keep_polling` with the delay of the default backoff (2, 5, 15, then 30 to 60 s, where `random`
 * in [0, 1) places it, the host's randomness when left out) in queued and every state the spec does
 * not show, until `maxPolls` reads (100 when left out), where it is `stop` with a reason naming the
 * state and the budget. `InvalidArgumentError` (`invalid_argument`) for an attempt below 1, a
 * random value outside [0, 1) or a bound below 1.
 */
function exportPollDecision(state, attempt, opts) {
  const o = options(opts);
  return JSON.parse(call(() => native.exportPollDecision(toStr(state, 'state'), toInteger(attempt, 'attempt'), randomArg(o.random), toInteger(o.maxPolls, 'maxPolls'))));
}

/**
 * Checks a download response before its body is used (`status`, `headers`, `body`; `now` the time
 * of the check, the host's clock when left out): a 2xx other than 206, without `Content-Range`,
 * whose body is as long as its `Content-Length` says, is the whole artifact. `ExportDownloadError`
 * (`partial_content_unsupported`) for a 206, any `Content-Range`, or a body shorter or longer than
 * its `Content-Length`; `ApiError` (`api_error`) for any other status (409 not ready, 422, …),
 * parsed; `InvalidArgumentError` (`invalid_argument`) for a status outside 100 to 599.
 */
function checkExportDownload(status, headers = null, body = null, opts) {
  const o = options(opts);
  return (call(() => native.checkExportDownload(toInteger(status, 'status'), flattenHeaders(headers ?? [], RESPONSE_HEADERS), body == null ? new Uint8Array(0) : toBytes(body), nowSeconds(o.now))), true);
}

/**
 * Whether a step-up of `kind` made at `at` satisfies a route's `requirement` at `now` (the host's
 * clock when left out), a step-up counting as recent for `maxAgeSeconds` (the spec does not give
 * it, so the caller says). A recovery-code step-up never satisfies `recent_mfa` or
 * `recent_non_recovery`; one from the future or older than the age satisfies only `none`.
 * `InvalidArgumentError` (`invalid_argument`) for a negative age or an unknown requirement or kind.
 */
function stepUpSatisfies(requirement, kind, at, opts) {
  const o = options(opts);
  return call(() => native.stepUpSatisfies(toStr(requirement, 'requirement'), toStr(kind, 'kind'), toNumber(at, 'at'), toInteger(o.maxAgeSeconds, 'maxAgeSeconds'), nowSeconds(o.now)));
}

/**
 * The wait a `Retry-After` value (`value`, as the response sent it) asks for, relative to `now`
 * (the host's clock when left out): its seconds and its form (delta seconds, or a date: an
 * HTTP-date, ISO 8601 accepted too), the whole wait, never shortened (0 for a date in the past);
 * null when it is absent or garbage (empty, negative, fractional, an unreadable date).
 */
function parseRetryAfter(value, now = null) {
  return JSON.parse(call(() => native.parseRetryAfter(optStr(value, 'value'), nowSeconds(now))));
}

/**
 * The SQL dialect of a database from what its driver reports: its `product` name (`PostgreSQL`,
 * `SQLite`) and `version` (Python's `sqlite3.sqlite_version`, JDBC's `databaseProductVersion`);
 * `InvalidArgumentError` (`invalid_argument`) for an SQLite older than 3.35 (no `RETURNING`) or
 * another database.
 */
function detectSqlDialect(product, version) {
  return call(() => native.detectSqlDialect(toStr(product, 'product'), toStr(version, 'version')));
}

/**
 * What the `states` of a delivery's claims mean: the states of the keys claimed so far, in the
 * order of `planReceipt`'s keys, up to and including the first that is not `new`. `process` with
 * 200 when every state is `new` (or there are none); otherwise `retry_later` with 503 when any is
 * `in_progress`, else `acknowledge` with 200, and in both the positions of the `new` ones to
 * release. `InvalidArgumentError` (`invalid_argument`) for a state the core does not know.
 */
function decideClaims(states) {
  return JSON.parse(call(() => native.decideClaims(strings(states, 'states'))));
}
// generated: end

// ---- dedup ---------------------------------------------------------------------------------------

/** The event key from a verified event (`result.event`) or an object with the same members. */
function eventKey(namespace, event) {
  if (event === null || typeof event !== 'object') throw new TypeError('event must be an object');
  return call(() =>
    native.eventKey(
      toStr(namespace, 'namespace'),
      toStr(event.name, 'event.name'),
      toStr(event.resourceType, 'event.resourceType'),
      toStr(event.resourceReference, 'event.resourceReference'),
      toStr(event.occurredAtText, 'event.occurredAtText'),
    ),
  );
}

/** Bounded in-memory dedup window: `claim` → `commit` / `release` (two-phase), or the one-phase
 * `checkAndInsert`. Absent TTL and lease are the core's defaults. */
class DedupWindow {
  constructor(capacity, ttlSeconds, opts) {
    const o = options(opts);
    const seed = webCrypto.getRandomValues(new Uint8Array(16));
    const args = [toNumber(capacity, 'capacity'), toNumber(ttlSeconds, 'ttlSeconds', undefined), toNumber(o.leaseSeconds, 'leaseSeconds', undefined), seed];
    this._inner = call(() => new native.DedupWindow(...args));
  }
  claim(key, now) {
    return call(() => this._inner.claim(toStr(key, 'key'), nowSeconds(now)));
  }
  commit(key, now) {
    call(() => this._inner.commit(toStr(key, 'key'), nowSeconds(now)));
  }
  release(key, now) {
    return call(() => this._inner.release(toStr(key, 'key'), nowSeconds(now)));
  }
  checkAndInsert(key, now) {
    return call(() => this._inner.checkAndInsert(toStr(key, 'key'), nowSeconds(now)));
  }
  has(key, now) {
    return call(() => this._inner.contains(toStr(key, 'key'), nowSeconds(now)));
  }
  /** The state of `key` at `now` (default: the clock), read without claiming it: `'new'` (never
   * claimed, or its lease or time-to-live ran out), `'in_progress'` (claimed, not committed) or
   * `'done'` (committed). What `recoverDeliveries` asks each delivery's key. */
  state(key, now) {
    return call(() => this._inner.state(toStr(key, 'key'), nowSeconds(now)));
  }
  get size() {
    return this._inner.size;
  }
  get capacity() {
    return this._inner.capacity;
  }
  free() {
    if (this._inner) this._inner.free();
    this._inner = undefined;
  }
}

// ---- retry ---------------------------------------------------------------------------------------

function randomArg(value) {
  return value === undefined || value === null ? Math.random() : toNumber(value, 'random');
}

function numbers(list, what) {
  if (!Array.isArray(list) || !list.every((n) => typeof n === 'number')) throw new TypeError(`${what} must be an array of numbers`);
  return Float64Array.from(list);
}

/** Seconds to wait before retry `attempt` (1 = first retry); `{ random, policy }` optional. */
function backoffDelay(attempt, opts) {
  const o = options(opts);
  const a = toNumber(attempt, 'attempt');
  const r = randomArg(o.random);
  if (o.policy === undefined || o.policy === null) return call(() => native.backoffDelay(a, r));
  const p = options(o.policy);
  const steps = numbers(p.steps ?? [], 'policy.steps');
  let lo;
  let hi;
  if (p.band !== undefined && p.band !== null) [lo, hi] = numbers(p.band, 'policy.band');
  const jitter = optStr(p.jitter, 'policy.jitter');
  const cap = toNumber(p.capSeconds, 'policy.capSeconds', undefined);
  return call(() => native.backoffDelay(a, r, steps, lo, hi, jitter, cap));
}


/**
 * What to do after a failed attempt: `{ action, delaySeconds, rule, reason, reconcile }`, action
 * one of retry, stop, reconcile, refresh_token. Input: `{ retryClass, status, headers } ` for a
 * response or `{ retryClass, transport }` for a transport failure, plus `attempt` and optional
 * `elapsedSeconds`, `tokenRefreshed`, `random`, `now`, `maxAttempts`, `maxElapsedSeconds`.
 */
function decideRetry(input) {
  if (input === null || typeof input !== 'object') throw new TypeError('decideRetry takes an object');
  const cls = toStr(input.retryClass, 'retryClass');
  const status = toNumber(input.status, 'status', undefined);
  const flat = input.headers === undefined || input.headers === null ? [] : flattenHeaders(input.headers, RESPONSE_HEADERS);
  const transport = input.transport === undefined || input.transport === null ? undefined : toStr(input.transport, 'transport');
  const attempt = toNumber(input.attempt, 'attempt', NaN);
  const elapsed = toNumber(input.elapsedSeconds, 'elapsedSeconds', 0);
  const refreshed = input.tokenRefreshed === undefined ? false : input.tokenRefreshed;
  if (typeof refreshed !== 'boolean') throw new TypeError('tokenRefreshed must be a boolean');
  const keySent = input.idempotencyKeySent === undefined ? false : input.idempotencyKeySent;
  if (typeof keySent !== 'boolean') throw new TypeError('idempotencyKeySent must be a boolean');
  const r = randomArg(input.random);
  const maxAttempts = toNumber(input.maxAttempts, 'maxAttempts', undefined);
  const maxElapsed = toNumber(input.maxElapsedSeconds, 'maxElapsedSeconds', undefined);
  return JSON.parse(call(() => native.decideRetry(cls, status, flat, transport, attempt, elapsed, refreshed, keySent, r, nowSeconds(input.now), maxAttempts, maxElapsed)));
}

/**
 * Rolling-window request budgets: `new RateBudget('enterprise')` (a preset) or
 * `new RateBudget([{ name, limit, windowSeconds }])`. `tryAcquire(now?)` →
 * `{ allowed, waitUntil, limit }`.
 */
class RateBudget {
  constructor(windows) {
    if (typeof windows === 'string') {
      this._inner = call(() => native.RateBudget.preset(windows));
      return;
    }
    if (!Array.isArray(windows) || !windows.every((w) => w !== null && typeof w === 'object')) {
      throw new TypeError('windows must be a preset name or an array of { name, limit, windowSeconds }');
    }
    const names = windows.map((w) => toStr(w.name, 'window name'));
    const limits = Float64Array.from(windows.map((w) => toNumber(w.limit, 'limit')));
    const seconds = Float64Array.from(windows.map((w) => toNumber(w.windowSeconds, 'windowSeconds', NaN)));
    this._inner = call(() => new native.RateBudget(names, limits, seconds));
  }
  tryAcquire(now) {
    return JSON.parse(call(() => this._inner.tryAcquire(nowSeconds(now))));
  }
  free() {
    if (this._inner) this._inner.free();
    this._inner = undefined;
  }
}

// ---- catalog, requests, error bodies, tokens -------------------------------------------------------

let OPERATIONS;
/** Every operation of both APIs (read-only data from the core's catalog). */
function operations() {
  OPERATIONS ??= Object.freeze(JSON.parse(native.operationsJson()).map((o) => Object.freeze(o)));
  return OPERATIONS;
}
/** One operation by id; throws InvalidArgumentError when unknown. */
function operation(id) {
  return Object.freeze(JSON.parse(call(() => native.operationJson(toStr(id, 'id')))));
}

const redactHeaders = (headers) => headers.map(([n, v]) => [n, CREDENTIAL_HEADERS.includes(n.toLowerCase()) ? '[redacted]' : v]);

/** A request to send with your own HTTP client. Printing it hides credentials. */
class RequestDescriptor {
  constructor([json, body]) {
    Object.assign(this, JSON.parse(json));
    this.body = body ?? null;
  }
  /** The URL for a base such as https://reports.example (no trailing slash needed). */
  url(base) {
    return native.requestUrl(toStr(base, 'base'), this.pathAndQuery);
  }
  toJSON() {
    return { ...this, headers: redactHeaders(this.headers), body: this.body && `[${this.body.length} bytes]` };
  }
  [INSPECT]() {
    return `RequestDescriptor ${JSON.stringify(this.toJSON())}`;
  }
}

function pairsOf(value, what) {
  if (value === undefined || value === null) return [];
  const entries = Array.isArray(value) ? value : Object.entries(options(value));
  const flat = [];
  for (const pair of entries) {
    if (!Array.isArray(pair) || pair.length !== 2) throw new TypeError(`${what} must be an object or [name, value] pairs`);
    const [k, v] = pair;
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new TypeError(`${what}.${k} must be a string or a number`);
    flat.push(toStr(k, `${what} name`), String(v));
  }
  return flat;
}

function bodyArg(body) {
  if (body === undefined || body === null) return undefined;
  if (body instanceof Uint8Array || body instanceof ArrayBuffer || typeof body === 'string') return toBytes(body);
  if (typeof body === 'object') return encoder.encode(JSON.stringify(body));
  throw new TypeError('body must be an object (sent as JSON), a string or bytes');
}

const optStr = (v, what) => (v === undefined || v === null ? undefined : toStr(v, what));

/**
 * Builds the request for an operation: `{ path, query, body, token, tenantId, userId,
 * idempotencyKey, idempotencyHeader }`. Throws RequestBuildError with a code.
 */
function buildRequest(operationId, params) {
  const p = options(params);
  const args = [
    toStr(operationId, 'operationId'), pairsOf(p.path, 'path'), pairsOf(p.query, 'query'), bodyArg(p.body),
    ...tokenArg(p.token), optStr(p.tenantId, 'tenantId'), optStr(p.userId, 'userId'),
    optStr(p.idempotencyKey, 'idempotencyKey'), optStr(p.idempotencyHeader, 'idempotencyHeader'),
    optStr(p.requestId, 'requestId'), optStr(p.keyNamespace, 'keyNamespace'),
    p.keyRandom === undefined || p.keyRandom === null ? webCrypto.getRandomValues(new Uint8Array(16)) : toBytes(p.keyRandom, 'keyRandom'),
  ];
  return new RequestDescriptor(call(() => native.buildRequest(...args)));
}

/** Parses an error response into an ApiError (returned, not thrown). */
function parseApiError(api, status, headers, body, opts) {
  const o = options(opts);
  const flat = headers === undefined || headers === null ? [] : flattenHeaders(headers, RESPONSE_HEADERS);
  const bytes = body === undefined || body === null ? new Uint8Array(0) : toBytes(body);
  return fromNative(call(() => native.parseApiError(toStr(api, 'api'), toNumber(status, 'status'), flat, bytes, optStr(o.operationId, 'operationId'), nowSeconds(o.now))));
}

/** A class whose instances hold a credential in a private field `secret`, readable through
 * its getter but left out of JSON and util.inspect output. */
function secretHolder(name, secret) {
  const Cls = class {
    #secret;
    constructor(fields) {
      const { [secret]: value, ...rest } = fields;
      this.#secret = value;
      Object.assign(this, rest);
    }
    get [secret]() {
      return this.#secret;
    }
    [INSPECT]() {
      return `${name} ${JSON.stringify(this)}`;
    }
  };
  Object.defineProperty(Cls, 'name', { value: name });
  return Cls;
}
/** A reporting access token (`accessToken`); printing it hides the token. */
const Token = secretHolder('Token', 'accessToken');
/** An enterprise token (`token`); printing it hides the token. */
const EnterpriseToken = secretHolder('EnterpriseToken', 'token');

/** A bearer token and the API that issued it, for a token restored from a cache:
 * `BearerToken.reports(value, tenantId)` (the tenant it was obtained for, required: requests
 * send that tenant's X-Tenant-ID and refuse another) or `BearerToken.enterprise(value)`;
 * printing it hides `value`. */
class BearerToken extends secretHolder('BearerToken', 'value') {
  static reports(value, tenantId) {
    // Required; an explicit null makes a token without its tenant, which every machine route refuses.
    if (typeof tenantId !== 'string' && tenantId !== null) {
      throw new TypeError('BearerToken.reports(value, tenantId): tenantId, the tenant the token was obtained for, is required (a reporting token is sent only with its own X-Tenant-ID)');
    }
    return new BearerToken({ api: 'reports', value: toStr(value, 'value'), tenantId: tenantId ?? undefined });
  }
  static enterprise(value) {
    return new BearerToken({ api: 'enterprise', value: toStr(value, 'value') });
  }
}

// A Token, EnterpriseToken or BearerToken as [value, api]: a plain string does not say which API
// issued it, so it could be sent to the other one.
function tokenArg(t) {
  if (t === undefined || t === null) return [undefined, undefined, undefined];
  if (t instanceof Token) return [t.accessToken, 'reports', t.tenantId];
  if (t instanceof EnterpriseToken) return [t.token, 'enterprise', undefined];
  if (t instanceof BearerToken) return [t.value, t.api, t.tenantId ?? undefined];
  throw new TypeError('token must be a Token (parseTokenResponse), an EnterpriseToken (parseEnterpriseTokenResponse) or a BearerToken (BearerToken.reports/enterprise for a cached value)');
}

function strings(list, what) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) throw new TypeError(`${what} must be an array of strings`);
  return list;
}

/** The reporting client-credential exchange request. */
function buildTokenRequest(params) {
  const p = options(params);
  const args = [toStr(p.clientId, 'clientId'), toStr(p.clientSecret, 'clientSecret'), toStr(p.tenantId, 'tenantId'), strings(p.scopes, 'scopes')];
  return new RequestDescriptor(call(() => native.buildTokenRequest(...args)));
}

/** Checks a token response: a Token, or throws ApiError (error status) / TokenResponseError. */
function parseTokenResponse(status, headers, body, opts) {
  const o = options(opts);
  const flat = flattenHeaders(headers ?? [], RESPONSE_HEADERS);
  const json = call(() => native.parseTokenResponse(toNumber(status, 'status'), flat, toBytes(body ?? ''), strings(o.requestedScopes, 'requestedScopes'), toStr(o.tenantId, 'tenantId'), nowSeconds(o.now)));
  return new Token(JSON.parse(json));
}

/** Checks an API session response: `{ scopes, expiresAt, refreshAt }`, or throws ApiError /
 * TokenResponseError. */
function parseApiSession(status, headers, body, opts) {
  const o = options(opts);
  const flat = flattenHeaders(headers ?? [], RESPONSE_HEADERS);
  return JSON.parse(call(() => native.parseApiSession(toNumber(status, 'status'), flat, toBytes(body ?? ''), nowSeconds(o.now))));
}

/** The enterprise key-and-secret exchange request. */
function buildEnterpriseTokenRequest(params) {
  const p = options(params);
  const args = [toStr(p.apiKey, 'apiKey'), toStr(p.apiSecret, 'apiSecret')];
  return new RequestDescriptor(call(() => native.buildEnterpriseTokenRequest(...args)));
}

/** Checks an enterprise token response (`expiresAt` null: no expiry). */
function parseEnterpriseTokenResponse(status, headers, body, opts) {
  const o = options(opts);
  const flat = flattenHeaders(headers ?? [], RESPONSE_HEADERS);
  return new EnterpriseToken(JSON.parse(call(() => native.parseEnterpriseTokenResponse(toNumber(status, 'status'), flat, toBytes(body ?? ''), nowSeconds(o.now)))));
}

/** `Deprecation`, `Sunset` and `Link` of a response. */
function responseNotices(headers) {
  return JSON.parse(native.responseNotices(flattenHeaders(headers ?? [], RESPONSE_HEADERS)));
}

// ---- exports -------------------------------------------------------------------------------------

const LIST_NAMES = { exportClass: 'export_class' }; // JS spelling -> wire name

/** Validates `{ limit, cursor, exportClass, status, format }`; returns the query string. */
function validateExportListQuery(query) {
  const flat = [];
  for (const [k, v] of Object.entries(options(query))) {
    if (v === undefined || v === null) continue;
    flat.push(LIST_NAMES[k] ?? k, typeof v === 'number' ? String(v) : toStr(v, k));
  }
  return call(() => native.validateExportListQuery(flat));
}

// ---- protocol machines ---------------------------------------------------------------------------
// The core's machines (WebhookReceipt, Call, ExportJob): a host asks `next()` and reports what
// happened; each report returns the step that follows. Steps are plain objects `{ step, ... }`.

/** One webhook delivery as a machine (`WebhookVerifier.receipt`). */
class WebhookReceipt {
  #inner;
  #step;
  #outcome = null;
  #delivery = null;
  #deliveryText = null;
  constructor(inner) {
    this.#inner = inner;
    // One crossing: the step, a reply's outcome after U+0001, the delivery after U+0002 (read
    // into an object when first asked for).
    const text = inner.opening();
    const at = text.indexOf('\u0002');
    if (at >= 0) this.#deliveryText = text.slice(at + 1);
    this.#read(at >= 0 ? text.slice(0, at) : text);
  }
  /** The step pending: `{ step: 'claim' | 'release' | 'run_handler' | 'commit' | 'begin' |
   * 'commit_transaction' | 'rollback' | 'enqueue' | 'wait' | 'reply', ... }`. */
  next() {
    return this.#step;
  }
  /** The verified delivery, or null when verification failed: the same object at every read
   * (still readable after `free()`). */
  get delivery() {
    if (this.#delivery === null && this.#deliveryText !== null) {
      this.#delivery = verifiedFrom(this.#deliveryText);
      this.#deliveryText = null;
    }
    return this.#delivery;
  }
  /** Whether the receipt has reached its reply. */
  get finished() {
    return this.#step.step === 'reply';
  }
  /** Once replied, what happened (`processed`, `duplicate`, `in_progress`, `rejected`,
   * `acknowledged`, `queued`, `handler_failed`, `store_unavailable`, `cancelled`, `claim_lost`); null before. */
  get outcome() {
    return this.#outcome;
  }
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the receipt is unusable after. */
  free() {
    this.#inner?.free();
    this.#inner = undefined;
  }
  #read(text) {
    const at = text.indexOf('\u0001');
    if (at >= 0) this.#outcome = text.slice(at + 1);
    this.#step = JSON.parse(at >= 0 ? text.slice(0, at) : text);
    return this.#step;
  }
  #then(f) {
    return this.#read(call(f));
  }
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
  report(outcome) {
    return this.#then(() => this.#inner.report(outcomeJson(outcome, 'outcome')));
  }
  /**
   * The state the store gave the key of the pending claim: `new`, `in_progress` or `done`. Returns
   * the next step. `InvalidArgumentError` (`invalid_argument`) for another state.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  claimed(state) {
    deprecatedInput('WebhookReceipt.claimed', 'report(outcome)');
    return this.#then(() => this.#inner.claimed(toStr(state, 'state')));
  }
  /**
   * The store could not be reached for the pending claim, commit, begin, transaction commit or
   * enqueue. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  storeFailed() {
    deprecatedInput('WebhookReceipt.storeFailed', 'report(outcome)');
    return this.#then(() => this.#inner.storeFailed());
  }
  /**
   * The pending release is done (or failed: the claim's lease runs out). Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  released() {
    deprecatedInput('WebhookReceipt.released', 'report(outcome)');
    return this.#then(() => this.#inner.released());
  }
  /**
   * The handler stored its effect. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  handlerSucceeded() {
    deprecatedInput('WebhookReceipt.handlerSucceeded', 'report(outcome)');
    return this.#then(() => this.#inner.handlerSucceeded());
  }
  /**
   * The handler threw. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  handlerFailed() {
    deprecatedInput('WebhookReceipt.handlerFailed', 'report(outcome)');
    return this.#then(() => this.#inner.handlerFailed());
  }
  /**
   * The pending commit is done. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  committed() {
    deprecatedInput('WebhookReceipt.committed', 'report(outcome)');
    return this.#then(() => this.#inner.committed());
  }
  /**
   * The pending wait is over. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  waited() {
    deprecatedInput('WebhookReceipt.waited', 'report(outcome)');
    return this.#then(() => this.#inner.waited());
  }
  /**
   * (Transactional.) The pending commit (the mark inside the transaction) changed no row: the
   * claim's lease ran out and another worker took the key. Returns the next step, a rollback.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  claimLost() {
    deprecatedInput('WebhookReceipt.claimLost', 'report(outcome)');
    return this.#then(() => this.#inner.claimLost());
  }
  /**
   * (Transactional.) The transaction is open. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  began() {
    deprecatedInput('WebhookReceipt.began', 'report(outcome)');
    return this.#then(() => this.#inner.began());
  }
  /**
   * (Transactional.) The transaction committed. Returns the next step, the reply.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  transactionCommitted() {
    deprecatedInput('WebhookReceipt.transactionCommitted', 'report(outcome)');
    return this.#then(() => this.#inner.transactionCommitted());
  }
  /**
   * (Transactional.) The pending rollback is done (or failed). Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  rolledBack() {
    deprecatedInput('WebhookReceipt.rolledBack', 'report(outcome)');
    return this.#then(() => this.#inner.rolledBack());
  }
  /**
   * The host was cancelled while the pending step was in flight (an aborted request): report this
   * instead of its outcome. Returns the next step: only rollbacks and releases follow, then the 503
   * reply (outcome `cancelled`). During a pending rollback or release it counts as that step done
   * (a cancelled one is a failed one) and the reply stays what it was; once replied, nothing
   * changes.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  cancelled() {
    deprecatedInput('WebhookReceipt.cancelled', 'report(outcome)');
    return this.#then(() => this.#inner.cancelled());
  }
  /**
   * (Inbox.) The pending enqueue is done: `isNew` true when the delivery was added, false when it
   * was in the inbox already. Returns the next step, the reply: 200 `{"result":"queued"}` or
   * `{"result":"duplicate"}` (outcome `queued` or `duplicate`).
   * @deprecated kept for one release: use `report(outcome)`.
   */
  enqueued(isNew) {
    deprecatedInput('WebhookReceipt.enqueued', 'report(outcome)');
    return this.#then(() => this.#inner.enqueued(toFlag(isNew, 'isNew')));
  }
  // generated: end (WebhookReceipt)
}

/** A step of a Call or an ExportJob from the native `[kind, json, request, bytes]`. */
function machineStep([kind, text, request, bytes]) {
  const s = { step: kind, ...JSON.parse(text) };
  if (request !== undefined) s.request = new RequestDescriptor(request);
  if (bytes !== undefined) s.body = bytes;
  if (s.error) s.error = fromNative(JSON.stringify(s.error));
  return s;
}

// The platform's RNG is asked for 128 seeds at a time: one `getRandomValues` per call was 5 % of
// a client request's own time (bench/clients/PROFILE.md). A seed is cleared once taken.
const seedPool = new Uint32Array(256);
let seedNext = seedPool.length;

/** A 53-bit seed from the platform's RNG (jitter, idempotency keys). */
function randomSeed() {
  if (seedNext >= seedPool.length) {
    webCrypto.getRandomValues(seedPool);
    seedNext = 0;
  }
  const hi = seedPool[seedNext], lo = seedPool[seedNext + 1];
  seedPool.fill(0, seedNext, seedNext + 2);
  seedNext += 2;
  return (hi & 0x1fffff) * 2 ** 32 + lo;
}

/** The core's `CallOptions` record from `{ maxAttempts, maxElapsedSeconds, seed }`. */
function callOptions(o) {
  return {
    max_attempts: toNumber(o.maxAttempts, 'maxAttempts', null),
    max_elapsed_seconds: toNumber(o.maxElapsedSeconds, 'maxElapsedSeconds', null),
    seed: toNumber(o.seed, 'seed', undefined) ?? randomSeed(),
  };
}

const pairsFrom = (flat) => Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]);

// Keys of this module only: the Fleet a Session is made for, and a Session's wake-up of its
// waiting calls (a FleetToken stored a token or a failure in it).
const OF_FLEET = Symbol('fleet');
const WAKE = Symbol('wake');

/**
 * What the machines of one API client share: the token, when to refresh it, the one token exchange
 * in flight, and the rate budget (`new Session(budget?)`: a RateBudget, whose windows and counts
 * the session copies, a preset name or windows, as `new RateBudget` takes them). Pass it to
 * `next(now, session)` of every Call and ExportJob of that client: one call is told
 * `refresh_token` (obtain a token, then `storeToken`, or `exchangeFailed` / `abandonExchange`),
 * the others `await_token` (wait with `waitForChange`). Share one per API client (per API key, or
 * per client id and tenant), never between the two APIs.
 */
class Session {
  #waiters = new Set();
  #fleet = null;
  constructor(budget, internal) {
    // `fleet.session(budget)` passes its Fleet under a key of this module only.
    const fleet = internal?.[OF_FLEET] ?? null;
    this.#fleet = fleet;
    if (budget === undefined || budget === null) {
      this._inner = fleet === null ? new native.Session() : fleet._inner.session();
      return;
    }
    const b = budget instanceof RateBudget ? budget : new RateBudget(budget);
    this._inner = fleet === null ? native.Session.withBudget(b._inner) : fleet._inner.sessionWithBudget(b._inner);
    if (b !== budget) b.free();
  }
  /** The Fleet (or RedisFleet) whose token and rate budget the session shares with the fleet's
   * other processes (`fleet.session(budget)`); null for a session of this process alone. */
  get fleet() {
    return this.#fleet;
  }
  /** Changes whenever a call waiting on the session has something new to look at (a token
   * stored, an exchange failed or abandoned): read it before `next`, wait for it to change. */
  get version() {
    return this._inner.version;
  }
  /** How many token exchanges the session's calls have started. */
  get exchanges() {
    return this._inner.exchanges;
  }
  /** Whether a token exchange is in flight. */
  get exchanging() {
    return this._inner.exchanging;
  }
  /** Whether the session holds a token. */
  get hasToken() {
    return this._inner.hasToken;
  }
  /** Stores a token for every call of the session (the one a `refresh_token` step obtained, or
   * one restored from a cache), refreshed at its `refreshAt` unless `refreshAt` is given; wakes
   * the calls waiting. */
  storeToken(token, refreshAt) {
    const [value, api, tenant] = tokenArg(token);
    if (value === undefined) throw new TypeError('token must be a Token, an EnterpriseToken or a BearerToken');
    const at = toNumber(refreshAt, 'refreshAt', undefined) ?? token.refreshAt ?? NaN;
    call(() => this._inner.storeToken(value, api, tenant, at));
    this.#wake();
  }
  /** The exchange in flight failed (`reason`: never a credential): the calls that waited for it
   * fail (rule `token_exchange_failed`); wakes them. */
  exchangeFailed(reason) {
    this._inner.exchangeFailed(toStr(reason, 'reason'));
    this.#wake();
  }
  /** The exchange in flight ended without an outcome (its call was cancelled): the next call
   * that asks starts a new one; wakes the calls waiting. */
  abandonExchange() {
    this._inner.abandonExchange();
    this.#wake();
  }
  /**
   * Resolves once `version` differs from `since` (true), or after `seconds` (false), whichever
   * comes first; rejects with the signal's reason when `signal` aborts. What a host does for
   * `await_token`: `const v = session.version; const s = call.next(now, session);` then
   * `await session.waitForChange(v, s.seconds, signal)`.
   */
  waitForChange(since, seconds, signal) {
    const ms = Math.min(Math.max(0, toNumber(seconds, 'seconds')) * 1000, 2 ** 31 - 1);
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      if (this.version !== since) return resolve(true);
      let timer;
      const end = (ok, value) => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        signal?.removeEventListener('abort', abort);
        (ok ? resolve : reject)(value);
      };
      const wake = () => end(true, true);
      const abort = () => end(false, signal.reason);
      this.#waiters.add(wake);
      timer = setTimeout(() => end(true, false), ms);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }
  #wake() {
    for (const w of [...this.#waiters]) w();
  }
  /** (FleetToken, within this module.) Wakes the calls waiting: the refresh stored a token or
   * recorded a failure in the session. */
  [WAKE]() {
    this.#wake();
  }
  free() {
    if (this._inner) this._inner.free();
    this._inner = undefined;
  }
}

// ---- fleets: the processes of one API client sharing one token and one rate budget in Redis ----

// The core's fleet scripts and defaults (`machine::fleet`).
const FLEET_CONSTANTS = JSON.parse(native.fleetConstants());
/** The Lua script of a `reserve` step's EVAL (one request reserved in every window of the budget). */
const RESERVE_SCRIPT = FLEET_CONSTANTS.reserveScript;
/** The Lua script that publishes the exchanged token and releases the exchange lock. */
const PUBLISH_SCRIPT = FLEET_CONSTANTS.publishScript;
/** The Lua script that releases the exchange lock when this process still holds it. */
const UNLOCK_SCRIPT = FLEET_CONSTANTS.unlockScript;
/** The key prefix of a Fleet made without one (`royaltykit:fleet:`). */
const DEFAULT_FLEET_PREFIX = FLEET_CONSTANTS.defaultFleetPrefix;
/** Seconds a process waits before looking again while another holds the exchange lock. */
const FLEET_POLL_SECONDS = FLEET_CONSTANTS.fleetPollSeconds;

/**
 * Where the processes of one API client keep their shared token and rate budget in Redis (the
 * core's `Fleet`): `new Fleet({ prefix })` (default DEFAULT_FLEET_PREFIX; give each API client
 * its own). Sans I/O: `fleet.session(budget)` is a Session whose calls ask `reserve` before each
 * send and whose token refresh is a FleetToken; you send the commands. RedisFleet sends them
 * with your Redis client, and the clients take it (`createEnterpriseClient({ fleet })`). Throws
 * InvalidArgumentError for an empty prefix, one over 128 bytes, or one with spaces or control
 * characters.
 */
class Fleet {
  constructor(opts) {
    const o = options(opts);
    this._inner = call(() => new native.Fleet(optStr(o.prefix, 'prefix')));
  }
  /** The key prefix. */
  get prefix() {
    return this._inner.prefix;
  }
  /** A Session of this fleet: its token is the fleet's (a `refresh_token` step is a FleetToken),
   * and with `budget` (as `new Session(budget)` takes it) each request is reserved in the fleet's
   * Redis before it is sent (a `reserve` step). Its `fleet` is this Fleet. */
  session(budget) {
    return new Session(budget, { [OF_FLEET]: this });
  }
  /** Frees the wasm memory now; the fleet's sessions keep working. */
  free() {
    if (this._inner) this._inner.free();
    this._inner = undefined;
  }
}

/** A Redis client as `send(args)`: an ioredis client (`call`) or a node-redis v4+ client
 * (`sendCommand`), as RedisDedupStore takes them. */
function redisSender(client, what) {
  // ioredis has both, and its sendCommand takes a Command object: call() first.
  if (typeof client?.call === 'function') return (args) => client.call(...args);
  if (typeof client?.sendCommand === 'function') return (args) => client.sendCommand(args);
  throw new TypeError(`${what}: client must be an ioredis client (call) or a node-redis client (sendCommand)`);
}

/**
 * A Fleet whose commands go to Redis through your client: `new RedisFleet(client, { prefix })`
 * with an ioredis (`call`) or node-redis v4+ (`sendCommand`) client, as RedisDedupStore takes
 * them. Give it to a client (`createEnterpriseClient({ ..., fleet })`): the client's session is
 * `fleet.session(budget)`, so every process with the same prefix shares one token (one exchange
 * for the fleet) and one rate budget (counted in Redis). Configure the client to fail fast while
 * Redis is away (node-redis `disableOfflineQueue`, ioredis `enableOfflineQueue: false`): a
 * reservation that fails waits a second and asks again (never sent uncounted), and a token
 * refresh that cannot reach Redis exchanges on its own. The token is stored in Redis: protect
 * that Redis as you protect the API secret.
 */
class RedisFleet extends Fleet {
  #send;
  constructor(client, opts) {
    const send = redisSender(client, 'RedisFleet');
    super(opts);
    this.#send = send;
  }
  /** Sends one command (a step's `command`, as it is) and resolves to its reply as text (a
   * number as its digits), or null for nil; rejects when Redis cannot be reached or answers an
   * error. Never log a command: a publish carries the token. */
  async command(args) {
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new TypeError('command must be an array of strings');
    const reply = await this.#send(args);
    return reply === undefined || reply === null ? null : String(reply);
  }
}

/** A step of a fleet token refresh from the JSON of the core's FleetTokenStep. Printed
 * (util.inspect), a command shows its name and first key only, as the core's Debug does: a
 * publish carries the token. */
function fleetTokenStep(text) {
  const s = JSON.parse(text);
  if (s.step === 'command') {
    Object.defineProperty(s, INSPECT, { value: () => `FleetTokenStep ${JSON.stringify({ step: 'command', command: s.command[0], key: /^eval$/i.test(s.command[0] ?? '') ? s.command[3] : s.command[1] })}` });
  }
  return s;
}

/**
 * One token refresh of a fleet session (the core's `FleetToken`), what a host runs instead of the
 * exchange when a call of a fleet session says `refresh_token`: `new FleetToken(session, api, {
 * tenantId, seed, now })` (`api` `'enterprise'` or `'reports'`, `tenantId` for a reporting
 * token). Ask `next()`; `{ step: 'command', command }`: send it to Redis, report
 * `replied(reply, session, now)` (the reply as text, null for nil) or `redisFailed(session)`;
 * `{ step: 'exchange' }`: run the token exchange, report `exchanged(token, refreshAt, now)` or
 * `exchangeFailed(reason)`; `{ step: 'wait', seconds }`: wait, then `waited()`; `{ step: 'done' }`:
 * the session holds the fleet's token; `{ step: 'failed', reason }`: the exchange failed (the
 * session recorded it). Every input returns the next step; the calls waiting on the session are
 * woken when it holds a token or the failure. Never log a command: a publish carries the token.
 */
class FleetToken {
  #inner;
  #step;
  constructor(session, api, opts) {
    if (!(session instanceof Session)) throw new TypeError('session must be a Session of a Fleet (fleet.session(budget))');
    const o = options(opts);
    const seed = toNumber(o.seed, 'seed', undefined) ?? randomSeed();
    this.#inner = call(() => new native.FleetToken(session._inner, toStr(api, 'api'), optStr(o.tenantId, 'tenantId'), seed, nowSeconds(o.now)));
    this.#step = fleetTokenStep(this.#inner.next());
  }
  /** The step pending (the same until its outcome is reported). */
  next() {
    return this.#step;
  }
  #then(input, session) {
    const version = session?.version;
    try {
      this.#step = fleetTokenStep(call(input));
    } finally {
      if (session !== undefined && session.version !== version) session[WAKE]();
    }
    return this.#step;
  }
  /** The reply of the pending `command` (its text; null or undefined for nil), at `now` (default:
   * the clock); a token adopted or published is stored in `session`. */
  replied(reply, session, now) {
    const s = fleetSession(session);
    return this.#then(() => this.#inner.replied(reply === undefined || reply === null ? undefined : String(reply), s._inner, nowSeconds(now)), s);
  }
  /** Redis could not be reached for the pending `command`: this process goes on without it. */
  redisFailed(session) {
    const s = fleetSession(session);
    return this.#then(() => this.#inner.redisFailed(s._inner), s);
  }
  /** The wait is over: look for the token again. */
  waited() {
    return this.#then(() => this.#inner.waited());
  }
  /** The exchange this process ran succeeded with `token` (Token, EnterpriseToken or
   * BearerToken), due at `refreshAt` (default: the token's own) at `now`: it is published for the
   * fleet at the next step. */
  exchanged(token, refreshAt, now) {
    const [value, api, tenant] = tokenArg(token);
    if (value === undefined) throw new TypeError('token must be a Token, an EnterpriseToken or a BearerToken');
    const at = toNumber(refreshAt, 'refreshAt', undefined) ?? token.refreshAt ?? NaN;
    return this.#then(() => this.#inner.exchanged(value, api, tenant, at, nowSeconds(now)));
  }
  /** The exchange this process ran failed (`reason`: never a credential): the lock is released at
   * the next step, then the refresh fails. */
  exchangeFailed(reason) {
    const r = toStr(reason, 'reason');
    return this.#then(() => this.#inner.exchangeFailed(r));
  }
  /** The command releasing the fleet's exchange lock while this refresh holds it (its exchange
   * is running), else null. For a call cancelled mid-exchange: take it, call
   * `session.abandonExchange()` (the process's waiting calls go on at once), then send it to
   * Redis (best effort: ignore its failure), so the fleet's other processes need not wait out
   * the lock's lease. It changes nothing here: the refresh is over once cancelled. */
  abandonCommand() {
    return this.#inner.abandonCommand() ?? null;
  }
  /** Seconds since this refresh started, at `now` (default: the clock). */
  elapsed(now) {
    return this.#inner.elapsed(nowSeconds(now));
  }
  /** Frees the wasm memory now; the refresh is unusable after. */
  free() {
    this.#inner?.free();
    this.#inner = undefined;
  }
}

function fleetSession(session) {
  if (!(session instanceof Session)) throw new TypeError('session must be the Session the FleetToken was made for');
  return session;
}

const warnedInputs = new Set();
/** A deprecation warning, once per process, for one of the inputs `report` replaces (kept for one
 * release): type `DeprecationWarning`, code `ROYALTYKIT_REPORT`. */
function deprecatedInput(name, use) {
  if (warnedInputs.has(name) || typeof globalThis.process?.emitWarning !== 'function') return;
  warnedInputs.add(name);
  globalThis.process.emitWarning(`${name}() is deprecated (kept for one release): use ${use}`, { type: 'DeprecationWarning', code: 'ROYALTYKIT_REPORT' });
}

/** Shared by Call and ExportJob: the inputs a host reports. */
class Machine {
  constructor(inner) {
    this._inner = inner;
  }
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the machine is unusable after. */
  free() {
    if (this._inner) this._inner.free();
    this._inner = undefined;
  }
  /** The step at `now` (default: the clock) on a Session (its token and budget, shared with the
   * session's other machines), or standing alone taking one request from `budget` (a RateBudget)
   * before a send. */
  next(now, on) {
    const t = nowSeconds(now);
    if (on instanceof Session) return machineStep(call(() => this._inner.nextIn(t, on._inner)));
    if (on !== undefined && on !== null && !(on instanceof RateBudget)) throw new TypeError('the second argument must be a RateBudget or a Session');
    return machineStep(call(() => (on ? this._inner.nextWithBudget(t, on._inner) : this._inner.next(t))));
  }
  /**
   * What became of the step performed, at `now` (default: the clock): the one input after `send`
   * and `reserve`. `{ status, headers, body }` a response read whole; `{ status, headers, length }`
   * one whose body went to your sink (see `streams`); `{ failure }` no response (`timeout`,
   * `connect_failed`, `connection_lost`; after a `reserve`: Redis could not be reached);
   * `{ reply }` the fleet's reply to a `reserve` (null for nil). Throws `invalid_argument` for an
   * outcome the pending step cannot have.
   */
  report(outcome, now) {
    if (outcome === null || typeof outcome !== 'object') {
      throw new TypeError('outcome must be { status, headers, body }, { status, headers, length }, { failure } or { reply }');
    }
    const t = nowSeconds(now);
    const none = new Uint8Array(0);
    if ('failure' in outcome) return call(() => this._inner.report('no_response', NaN, [], none, NaN, toStr(outcome.failure, 'failure'), t));
    if ('reply' in outcome) {
      const reply = outcome.reply === undefined || outcome.reply === null ? undefined : String(outcome.reply);
      return call(() => this._inner.report('reply', NaN, [], none, NaN, reply, t));
    }
    const status = toNumber(outcome.status, 'status');
    const flat = outcome.headers === undefined || outcome.headers === null ? [] : flattenHeaders(outcome.headers, RESPONSE_HEADERS);
    if (outcome.length !== undefined) return call(() => this._inner.report('streamed', status, flat, none, toNumber(outcome.length, 'length'), undefined, t));
    const body = outcome.body === undefined || outcome.body === null ? none : toBytes(outcome.body);
    return call(() => this._inner.report('response', status, flat, body, NaN, undefined, t));
  }
  /** The response to the request sent: its status, headers and body. */
  response(status, headers, body, now) {
    deprecatedInput('response', 'report({ status, headers, body }, now)');
    this.report({ status, headers, body }, now);
  }
  /** Whether a response with `status` is streamed to your own sink (a file) and reported by `streamedResponse`: only a 2xx to a download. */
  streams(status) {
    return this._inner.streams(toNumber(status, 'status'));
  }
  /** The download's body is arriving: `received` bytes so far, of `total` (its Content-Length; null: unknown). A `progress` event at each tenth of it and when it is whole, never more. */
  progress(received, total = null) {
    this._inner.progress(toNumber(received, 'received'), toNumber(total, 'total', NaN));
  }
  /** A download body you streamed to your sink, by its length: a partial one is read again (start the sink afresh); `done` then has no body. */
  streamedResponse(status, headers, length, now) {
    deprecatedInput('streamedResponse', 'report({ status, headers, length }, now)');
    if (typeof length !== 'number') throw new TypeError('length must be a number: the bytes of the body written to your sink');
    this.report({ status, headers, length }, now);
  }
  /** No response: `timeout`, `connect_failed` (nothing was sent) or `connection_lost`. */
  transportFailure(failure, now) {
    deprecatedInput('transportFailure', 'report({ failure }, now)');
    this.report({ failure }, now);
  }
  /** (A fleet's session.) The reply of the pending `reserve` step (its text; null for nil) at
   * `now`: `ok` sends at the next step, in the same second; `wait <second> <window>` waits until
   * that second (a `rate_limited` event). */
  reserved(reply, now) {
    deprecatedInput('reserved', 'report({ reply }, now)');
    this.report({ reply }, now);
  }
  /** (A fleet's session.) Redis could not be reached for the pending `reserve` step: the machine
   * waits a second and asks again (never sends uncounted). */
  reserveFailed(now) {
    deprecatedInput('reserveFailed', "report({ failure: 'connect_failed' }, now)");
    this.report({ failure: 'connect_failed' }, now);
  }
  /** A token (Token, EnterpriseToken or BearerToken), refreshed at its `refreshAt` unless `refreshAt` is given. */
  token(token, refreshAt) {
    const [value, api, tenant] = tokenArg(token);
    const at = toNumber(refreshAt, 'refreshAt', undefined) ?? token.refreshAt ?? NaN;
    call(() => this._inner.token(value, api, tenant, at));
  }
  /** The state as JSON text, to resume after a crash (never the token). */
  save() {
    return this._inner.save();
  }
  /**
   * What the machine did since the events were last taken, oldest first: the core's
   * `MachineEvent` (`kind`, `operation`, `attempt`, `method`, `path`, `status`, `transport`,
   * `rule`, `reason`, `waitSeconds`, `state`). Never a token, a header or a body. With
   * `minLevel` ('debug', 'info' or 'warning'), only those at that level or above: the others
   * are dropped without being built.
   */
  takeEvents(minLevel) {
    return JSON.parse(call(() => this._inner.takeEvents(minLevel === undefined || minLevel === null ? undefined : toStr(minLevel, 'minLevel'))));
  }
  /** A machine saved by `save()`; give it a token again. */
  static resume(saved) {
    const m = Object.create(this.prototype);
    m._inner = call(() => this.Native.resume(toStr(saved, 'saved')));
    return m;
  }
}

/** One API operation with retries, Retry-After, token refresh, idempotency key and rate budget. */
class Call extends Machine {
  static Native = native.Call;
  constructor(operationId, params) {
    const p = options(params);
    const record = {
      path: pairsFrom(pairsOf(p.path, 'path')), query: pairsFrom(pairsOf(p.query, 'query')),
      tenant_id: optStr(p.tenantId, 'tenantId'), user_id: optStr(p.userId, 'userId'),
      idempotency_key: optStr(p.idempotencyKey, 'idempotencyKey'), idempotency_header: optStr(p.idempotencyHeader, 'idempotencyHeader'),
      request_id: optStr(p.requestId, 'requestId'), key_namespace: optStr(p.keyNamespace, 'keyNamespace'),
    };
    const id = toStr(operationId, 'operationId');
    super(call(() => new native.Call(id, JSON.stringify(record), bodyArg(p.body), JSON.stringify(callOptions(p)))));
    if (p.token !== undefined && p.token !== null) this.token(p.token);
  }
  /** A token exchange (from `buildTokenRequest` or `buildEnterpriseTokenRequest`) as a call, sent again by the exchange's retry rules; parse its `done` response with `parseTokenResponse`. Its credentials are never saved. */
  static exchange(request, params) {
    if (!(request instanceof RequestDescriptor)) throw new TypeError('request must be a RequestDescriptor from buildTokenRequest or buildEnterpriseTokenRequest');
    const { operationId, method, path, query, headers } = request;
    const o = JSON.stringify(callOptions(options(params)));
    const m = Object.create(Call.prototype);
    m._inner = call(() => native.Call.exchange(JSON.stringify({ operationId, method, path, query, headers }), request.body ?? undefined, o));
    return m;
  }
  /** The idempotency key of the logical request, once the first request is built. */
  get idempotencyKey() {
    return this._inner.idempotencyKey() ?? null;
  }
}

/** A reporting export — create, poll, download — as a machine; a create that may have been applied is looked up, never sent blindly again. */
class ExportJob extends Machine {
  static Native = native.ExportJob;
  constructor(params) {
    const p = options(params);
    const record = {
      tenant_id: toStr(p.tenantId, 'tenantId'), idempotency_header: optStr(p.idempotencyHeader, 'idempotencyHeader'),
      request_id: optStr(p.requestId, 'requestId'), max_polls: toNumber(p.maxPolls, 'maxPolls', null),
      max_poll_seconds: toNumber(p.maxPollSeconds, 'maxPollSeconds', null),
      reconcile_grace_seconds: toNumber(p.reconcileGraceSeconds, 'reconcileGraceSeconds', null),
      min_poll_interval_seconds: toNumber(p.minPollIntervalSeconds, 'minPollIntervalSeconds', null),
      max_poll_interval_seconds: toNumber(p.maxPollIntervalSeconds, 'maxPollIntervalSeconds', null),
      call: callOptions(p), id_field: optStr(p.idField, 'idField'), state_field: optStr(p.stateField, 'stateField'),
    };
    const body = bodyArg(p.body);
    if (body === undefined) throw new TypeError('body must be the CreateExportRequest (an object)');
    super(call(() => new native.ExportJob(JSON.stringify(record), body)));
    if (p.token !== undefined && p.token !== null) this.token(p.token);
  }
  /** The export's id, once known. */
  get exportId() {
    return this._inner.exportId() ?? null;
  }
  /**
   * The checkpoint to keep before performing the step just given, or null: the saved state when
   * that step is a send or a wait and it changed since the last one given (or resumed from),
   * once per step.
   */
  checkpoint() {
    return this._inner.checkpoint() ?? null;
  }
}

/**
 * Every page of a list operation, one request at a time, bounded by pages or items (the core's
 * `Pages`): ask `next()`; for `{ step: 'fetch', query }` request the operation with that query
 * (the caller's own parameters with the page's: `[[name, value], …]`) and report the 2xx body to
 * `page(body)`, which says where the page's items are (`{ member, take }`: the first `take` of
 * the parsed page itself when `member` is null, else of `page[member]`; null when the page has
 * no items array); ask again until `{ step: 'done', end, pages, items }` (`end`: `last`,
 * `max_pages` or `max_items`) or `{ step: 'fail', error }` (a PaginationError; the items given
 * before it stand). It never loops and never gives an item twice.
 */
class Pages {
  /**
   * A walk over `operationId`'s pages from `query` (an object or `[name, value]` pairs; its
   * `cursor`, `page`, `limit` or `size` say where to start and the page size), with `{ maxPages,
   * maxItems, pageSize, idField }` (each optional: no bound; the operation's page size; `id`).
   * Throws InvalidArgumentError for an unknown operation, one that is not a GET, a bound below 1,
   * a page size out of the operation's range, or a query `limit`/`size` that differs from `pageSize`.
   */
  constructor(operationId, query, opts) {
    const o = options(opts);
    const id = toStr(operationId, 'operationId');
    const flat = pairsOf(query, 'query');
    const args = [toNumber(o.maxPages, 'maxPages', undefined), toNumber(o.maxItems, 'maxItems', undefined),
      toNumber(o.pageSize, 'pageSize', undefined), optStr(o.idField, 'idField')];
    this._inner = call(() => new native.Pages(id, flat, ...args));
  }
  /** The step pending (the same until a page is reported): `{ step: 'fetch', query }`,
   * `{ step: 'done', end, pages, items }` or `{ step: 'fail', error }`. */
  next() {
    const [kind, text] = this._inner.next();
    const s = { step: kind, ...JSON.parse(text) };
    if (s.error) s.error = fromNative(JSON.stringify(s.error));
    return s;
  }
  /** The 2xx body of the page fetched (bytes or a string): `{ member, take }`, or null when the
   * page has no items array (the next step is then `fail`). Throws InvalidArgumentError when no
   * fetch is pending. */
  page(body) {
    const bytes = toBytes(body);
    const items = call(() => this._inner.page(bytes));
    return items === undefined ? null : JSON.parse(items);
  }
  /** Pages read so far. */
  get pages() {
    return this._inner.pages;
  }
  /** Items given so far. */
  get items() {
    return this._inner.items;
  }
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the walk is unusable after. */
  free() {
    if (this._inner) this._inner.free();
    this._inner = undefined;
  }
}

/**
 * One recovery run over a webhook subscription's delivery log (the core's `Recovery`): it reads
 * the log, asks which deliveries the receiver's store knows, and replays those never processed.
 * Ask `next()`; for `{ step: 'fetch', operationId, query }` request `operationId`
 * (`listEnterpriseWebhookDeliveries`) with path `{ reference: subscription }` and that query, and
 * report the 2xx body to `page(body)`; for `{ step: 'check', keys }` look each key up in the
 * store without claiming it and report the states, in order, to `checked(states)`; for
 * `{ step: 'replay', operationId, delivery }` request `operationId`
 * (`replayEnterpriseWebhookDelivery`) with path `{ reference: subscription, deliveryReference:
 * delivery }` and report its 2xx body to `replayed(body)`, or the code of the library error it
 * ended in to `replayFailed(code)`; ask again until `{ step: 'done', report }` (a
 * RecoveryReport) or `{ step: 'fail', error }` (a PaginationError: the log cannot be read on,
 * nothing was replayed). Every decision is the machine's. (`EnterpriseClient.recoverDeliveries`
 * drives it for you.)
 */
class Recovery {
  #inner;
  /**
   * A run over `subscription`'s delivery log checking keys of `namespace` (the receiver's) for
   * deliveries from `since` on (Unix seconds or a Date), at `now` (Unix seconds or a Date;
   * default: the clock), with `{ maxReplays, maxReplaysPerDelivery, maxEntries }` (each optional:
   * the core's defaults, 100, 3 and 10000). Throws InvalidArgumentError for an empty
   * subscription, an empty or over-long namespace, a time that is not finite Unix seconds, or a
   * bound below 1.
   */
  constructor(subscription, namespace, since, now, opts) {
    const o = options(opts);
    const sub = toStr(subscription, 'subscription');
    const ns = toStr(namespace, 'namespace');
    const from = toNumber(since, 'since', undefined);
    if (from === undefined) throw new TypeError('since must be Unix seconds or a Date');
    const args = [toNumber(o.maxReplays, 'maxReplays', undefined), toNumber(o.maxReplaysPerDelivery, 'maxReplaysPerDelivery', undefined),
      toNumber(o.maxEntries, 'maxEntries', undefined)];
    this.#inner = call(() => new native.Recovery(sub, ns, from, nowSeconds(now), ...args));
  }
  /** The step pending (the same until its outcome is reported): `{ step: 'fetch', operationId,
   * query }`, `{ step: 'check', keys }`, `{ step: 'replay', operationId, delivery }`,
   * `{ step: 'done', report }` or `{ step: 'fail', error }`. */
  next() {
    const [kind, text] = this.#inner.next();
    const s = { step: kind, ...JSON.parse(text) };
    if (s.error) s.error = fromNative(JSON.stringify(s.error));
    return s;
  }
  #then(f) {
    call(f);
    return this.next();
  }
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (Recovery)
  /**
   * The 2xx body of the log page fetched. Returns the next step; a page that cannot be read makes
   * it the failure. `InvalidArgumentError` (`invalid_argument`) when no fetch is pending.
   */
  page(body) {
    return this.#then(() => this.#inner.page(toBytes(body)));
  }
  /**
   * The store's state of each key the pending check named, in order: `new`, `in_progress` or
   * `done`. Returns the next step. `InvalidArgumentError` (`invalid_argument`) when no check is
   * pending or the count differs from the keys', or for a state that is none of those.
   */
  checked(states) {
    return this.#then(() => this.#inner.checked(strings(states, 'states')));
  }
  /**
   * The 2xx body of the pending replay's request: the service accepted the replay. Returns the next
   * step. `InvalidArgumentError` (`invalid_argument`) when no replay is pending.
   */
  replayed(body) {
    return this.#then(() => this.#inner.replayed(toBytes(body)));
  }
  /**
   * The pending replay's request ended in the library's error of `code` (`call_failed`,
   * `reconcile_required`, an API error's code, …): the delivery is `replay_failed`, the run goes on
   * and the next run looks at it again. Returns the next step. `InvalidArgumentError`
   * (`invalid_argument`) when no replay is pending.
   */
  replayFailed(code) {
    return this.#then(() => this.#inner.replayFailed(toStr(code, 'code')));
  }
  // generated: end (Recovery)
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the run is unusable after. */
  free() {
    if (this.#inner) this.#inner.free();
    this.#inner = undefined;
  }
}

/** A step of the core's InboxWorker, from its JSON (tagged by `step`, camelCase fields). */
function inboxStep(text) {
  return JSON.parse(text);
}

/**
 * The worker of an inbox as a machine (the core's `InboxWorker`): claim a due entry, run the
 * handler, mark the entry done in the handler's transaction; the backoff between failed attempts
 * and poison after the last are the core's. Ask `next()`; for `{ step: 'claim' }` run the inbox's
 * claim now and report `claimed(entry | null, now)`; `{ step: 'idle', seconds }`: wait (or stop),
 * then `waited()`; `{ step: 'drained' }` (drain mode): stop; `{ step: 'begin' }`: open the
 * transaction, `began()`; `{ step: 'run_handler', entry }`: run the handler in it,
 * `handlerSucceeded()` or `handlerFailed(error, now)`; `{ step: 'mark_done', key, attempts }`:
 * the guarded mark in the transaction, `marked(changed)`; `{ step: 'commit' }`: `committed()`;
 * `{ step: 'rollback' }`: `rolledBack()` (a failed rollback too); `{ step: 'settle', key,
 * attempts, poison, retryAt, error }`: record the failed attempt (autocommit), `settled()`. A
 * store step that fails is reported with `storeFailed()`. Every input returns the next step.
 * (`PostgresInbox.runWorker`, `SqliteInbox.drain`, … drive it for you.)
 */
class InboxWorker {
  #inner;
  #step;
  /**
   * A worker with `{ maxAttempts, pollSeconds, transactional, drain, seed }` (each optional: the
   * core's defaults, 5 attempts, 1 s, transactional, not draining; `seed` from the platform's
   * RNG). Throws InvalidArgumentError for `maxAttempts` outside 1 to 100 or a poll interval that
   * is not more than 0 and at most 3600 seconds.
   */
  constructor(opts) {
    const o = options(opts);
    const flag = (v, what) => (v === undefined || v === null ? undefined : toBool(v, what));
    const args = [toNumber(o.maxAttempts, 'maxAttempts', undefined), toNumber(o.pollSeconds, 'pollSeconds', undefined),
      flag(o.transactional, 'transactional'), flag(o.drain, 'drain'), toNumber(o.seed, 'seed', undefined) ?? randomSeed()];
    this.#inner = call(() => new native.InboxWorker(...args));
    this.#step = inboxStep(this.#inner.next());
  }
  /** The step pending (the same until its outcome is reported). */
  next() {
    return this.#step;
  }
  #then(f) {
    this.#step = inboxStep(call(f));
    return this.#step;
  }
  /** What the claim returned at `now` (Unix seconds): the entry (`{ key, deliveryId, event,
   * body, attempts }`, the claim's five columns) or null when nothing is due.
   * @deprecated kept for one release: use `report({ claimed: entry }, now)`. */
  claimed(entry, now) {
    deprecatedInput('InboxWorker.claimed', 'report({ claimed: entry }, now)');
    const t = toNumber(now, 'now', undefined);
    if (t === undefined) throw new TypeError('now must be Unix seconds or a Date');
    if (entry === null || entry === undefined) return this.#then(() => this.#inner.claimedNone(t));
    if (typeof entry !== 'object') throw new TypeError('entry must be the claimed entry ({ key, deliveryId, event, body, attempts }) or null');
    const args = [toStr(entry.key, 'entry.key'), toStr(entry.deliveryId, 'entry.deliveryId'), toStr(entry.event, 'entry.event'),
      toStr(entry.body, 'entry.body'), toNumber(entry.attempts, 'entry.attempts')];
    if (args[4] === undefined) throw new TypeError('entry.attempts must be a number');
    return this.#then(() => this.#inner.claimed(...args, t));
  }
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
  report(outcome, now = null) {
    return this.#then(() => this.#inner.report(outcomeJson(outcome, 'outcome'), nowSeconds(now)));
  }
  /**
   * The idle wait is over. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  waited() {
    deprecatedInput('InboxWorker.waited', 'report(outcome)');
    return this.#then(() => this.#inner.waited());
  }
  /**
   * The transaction is open. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  began() {
    deprecatedInput('InboxWorker.began', 'report(outcome)');
    return this.#then(() => this.#inner.began());
  }
  /**
   * The handler finished. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  handlerSucceeded() {
    deprecatedInput('InboxWorker.handlerSucceeded', 'report(outcome)');
    return this.#then(() => this.#inner.handlerSucceeded());
  }
  /**
   * The handler failed with `error` at `now` (null or left out: the host's clock): a message for
   * operators, kept as the entry's `last_error` (never include a secret). Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  handlerFailed(error, now = null) {
    deprecatedInput('InboxWorker.handlerFailed', 'report(outcome)');
    return this.#then(() => this.#inner.handlerFailed(toStr(error, 'error'), nowSeconds(now)));
  }
  /**
   * Whether the mark changed a row (`changed` false: another worker claimed the entry since).
   * Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  marked(changed) {
    deprecatedInput('InboxWorker.marked', 'report(outcome)');
    return this.#then(() => this.#inner.marked(toFlag(changed, 'changed')));
  }
  /**
   * The transaction committed: the entry is done. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  committed() {
    deprecatedInput('InboxWorker.committed', 'report(outcome)');
    return this.#then(() => this.#inner.committed());
  }
  /**
   * The transaction was rolled back (or its connection is gone). Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  rolledBack() {
    deprecatedInput('InboxWorker.rolledBack', 'report(outcome)');
    return this.#then(() => this.#inner.rolledBack());
  }
  /**
   * The failed attempt is recorded. Returns the next step.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  settled() {
    deprecatedInput('InboxWorker.settled', 'report(outcome)');
    return this.#then(() => this.#inner.settled());
  }
  /**
   * The store could not be reached at the pending store step. Returns the next step: a rollback
   * when a transaction is open, then a wait.
   * @deprecated kept for one release: use `report(outcome)`.
   */
  storeFailed() {
    deprecatedInput('InboxWorker.storeFailed', 'report(outcome)');
    return this.#then(() => this.#inner.storeFailed());
  }
  // generated: end (InboxWorker)
  /** Entries processed (committed) so far. */
  get processed() {
    return this.#inner.processed;
  }
  /** Failed attempts settled to be retried so far. */
  get retried() {
    return this.#inner.retried;
  }
  /** Entries set aside as poison so far. */
  get poisoned() {
    return this.#inner.poisoned;
  }
  /** Frees the wasm memory now (otherwise freed when garbage-collected); the worker is unusable after. */
  free() {
    this.#inner?.free();
    this.#inner = undefined;
  }
}

// ---- WHATWG Request handlers (royaltykit/fetch) --------------------------------------------------

/** Reads a WHATWG body stream, stopping one byte past `limit` (the core then refuses it). */
async function readCapped(request, limit) {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      break;
    }
  }
  const out = new Uint8Array(Math.min(size, limit + 1));
  let at = 0;
  for (const c of chunks) {
    const part = c.subarray(0, out.length - at);
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Verifies the webhook delivery in a WHATWG `Request` (Next.js and Remix route handlers, Hono,
 * Bun.serve, Deno.serve, Cloudflare Workers). Reads the raw body once, never more than
 * `maxBodyBytes` + 1 bytes, and resolves to `{ webhook, body }`: the verified delivery and the
 * exact bytes. Rejects with WebhookVerificationError (answer its `httpStatus`) otherwise.
 */
async function verifyRequest(request, secrets, opts) {
  if (request === null || typeof request !== 'object' || typeof request.headers !== 'object' || !('body' in request)) {
    throw new TypeError('request must be a WHATWG Request (with headers and a body stream)');
  }
  const o = options(opts);
  const limit = toNumber(o.maxBodyBytes, 'maxBodyBytes', native.defaultMaxBodyBytes());
  const body = await readCapped(request, limit);
  return { webhook: verifyWebhook(request.headers, body, secrets, o), body };
}

// ---- receivers: the flow every integration shares (royaltykit/express, royaltykit/fastify,
// webhookHandler below) is the core's WebhookReceipt machine; this only performs its steps. A
// store's calls and the handler may be synchronous or return promises.

/** What to do with a verified delivery: `{ step, status, keys, release, reason }`: the delivery
 * key, and the content key too with `{ claimContentKey: true }` (see WebhookReceiver). */
function planReceipt(namespace, delivery, opts) {
  if (delivery === null || typeof delivery !== 'object') throw new TypeError('delivery must be a verified delivery');
  const claimContent = toBool(options(opts).claimContentKey, 'claimContentKey');
  return JSON.parse(call(() => native.planReceipt(toStr(namespace, 'namespace'), JSON.stringify(delivery), claimContent)));
}



function storeArg(store) {
  const methods = store?.transactional === true
    ? ['claim', 'release', 'begin', 'markDone', 'commitTransaction', 'rollback']
    : ['claim', 'commit', 'release'];
  for (const m of methods) {
    if (typeof store?.[m] !== 'function') {
      throw new TypeError(store?.transactional === true
        ? `a transactional store must have ${methods.join(', ')} (PostgresDedupStore, SqliteDedupStore)`
        : 'store must have claim, commit and release (a DedupWindow, a RedisDedupStore or your own)');
    }
  }
  return store;
}

/** Calls the user's hook `f` (`onError`, `onStoreError`): what it throws, or the promise it
 * returns rejects with, is printed and never changes what the receiver or worker does (the
 * transaction is still rolled back, the claims released, the attempt settled). */
function hook(f, name) {
  const failed = (e) => console.error(`royaltykit: ${name} threw:`, e);
  try {
    const r = f();
    if (r !== null && typeof r === 'object' && typeof r.then === 'function') r.then(undefined, failed);
  } catch (e) {
    failed(e);
  }
}

/** `[true, value]` when `f` (sync or async) succeeded, `[false, error]` when it threw. */
async function attempt(f) {
  try {
    return [true, await f()];
  } catch (e) {
    return [false, e];
  }
}


/** The event names the spec lists, as the service sends them (the core's list; a new array
 * each call). A delivery may carry a name not in it: its `event.name` is kept as sent. */
function knownEventNames() {
  return native.knownEventNames();
}

/** A handler argument: a function, sync or async. */
function handlerArg(handler, what) {
  if (typeof handler !== 'function') throw new TypeError(`${what} must be a function (delivery) => void | Promise<void>`);
  return handler;
}

/**
 * Runs the handlers of a delivery by its event name: `new EventRouter().on('ddex.delivery.failed',
 * handler).onAny(audit).otherwise(other)`, then give the router (or `router.handler`) wherever a
 * handler goes: `WebhookReceiver`, `webhookHandler`, `webhookMiddleware`, `royaltykitWebhooks`.
 * Where a delivery goes is the core's `EventRouter`, the same in every language; this class only
 * keeps the handlers by the indices the core gives them and runs the ones its route names. For a
 * delivery: the `on` handlers registered for its name, in registration order; then every `onAny`
 * handler; then, only when no `on` handler names the event (a name nobody registered, or one the
 * spec does not list yet, passed on as sent), the `otherwise` handler. A delivery no handler takes
 * is acknowledged: the service does not send it again. Each handler is awaited before the next;
 * one that throws (or rejects) stops the rest and fails the delivery as a plain handler's throw
 * does (500, the claims released, the service redelivers it, so the handlers before it run
 * again: keep them idempotent). With a transactional store every handler gets the connection too.
 */
class EventRouter {
  #inner = new native.EventRouter();
  #named = [];
  #any = [];
  #fallback = null;
  #handler = (delivery, ...connection) => this.#run(delivery, connection);

  /** Registers `handler` for deliveries of the event `name`, as the service sends it (a name the
   * spec does not list is accepted). Throws InvalidArgumentError (argument `event`) at once for an
   * empty name, one longer than 256 bytes or one with a space or control character. Returns the
   * router. */
  on(name, handler) {
    handlerArg(handler, 'handler');
    const index = call(() => this.#inner.on(toStr(name, 'name')));
    this.#named[index] = handler;
    return this;
  }

  /** Registers `handler` for every delivery, after the handlers named for its event. Returns the router. */
  onAny(handler) {
    handlerArg(handler, 'handler');
    this.#inner.onAny();
    this.#any.push(handler);
    return this;
  }

  /** Registers the fallback: the handler of a delivery no `on` handler names (a later call
   * replaces it). Returns the router. */
  otherwise(handler) {
    handlerArg(handler, 'handler');
    this.#inner.otherwise();
    this.#fallback = handler;
    return this;
  }

  /** Where a delivery of the event `name` goes (the core's `Route`): the indices of the `on`
   * registrations that run, in order (counted from 0 over `on` calls), whether the `onAny`
   * handlers run, and whether the fallback does. */
  route(name) {
    return JSON.parse(this.#inner.route(toStr(name, 'name')));
  }

  /** The router as a handler: `(delivery, connection?) => Promise<void>`, running the delivery's
   * route (the same function each time). */
  get handler() {
    return this.#handler;
  }

  async #run(delivery, connection) {
    const name = delivery?.event?.name;
    if (typeof name !== 'string') throw new TypeError('delivery must be a verified delivery (with event.name)');
    const route = this.route(name);
    // The handlers as registered when the delivery arrived, in the order the route gives.
    const run = route.named.map((i) => this.#named[i]);
    if (route.any) run.push(...this.#any);
    if (route.fallback) run.push(this.#fallback);
    for (const handler of run) await handler(delivery, ...connection);
  }
}

/**
 * A webhook receiver built once: `new WebhookReceiver({ secrets, namespace, store, handler })`.
 * `receive(headers, body, now?)` resolves to `{ status, body, delivery }`: answer `status` with
 * the JSON `body`. The handler runs only for a new delivery; its effect is committed when it
 * returns, and its claims released (answer 500, the service redelivers) when it throws. With a
 * store in your database (`PostgresDedupStore`, `SqliteDedupStore`) the handler is called as
 * `handler(delivery, connection)` inside the transaction that marks the delivery done: exactly once.
 * `handler` may be an EventRouter: each delivery then runs the handlers its event name routes to.
 * Deliveries are deduplicated by `Service-Webhook-Id`; `claimContentKey: true` also claims the
 * signed content's key (see ReceiverOptions for the trade-off).
 *
 * Inbox mode: `new WebhookReceiver({ secrets, namespace, inbox })` with a `PostgresInbox`, a
 * `SqliteInbox` or a `RedisInbox` (instead of `store` and `handler`): each verified delivery is inserted in the inbox
 * (the row is its dedup record) and answered at once, 200 `{"result":"queued"}` (or
 * `"duplicate"` for one already there; 503 when the insert fails), however long the handler
 * takes; the handler runs in `inbox.runWorker(handler)`.
 *
 * A secret rotation: `receiver.useSecrets(rotated.secrets(current))` swaps the secrets of the
 * receiver the framework already serves (see useSecrets).
 */
class WebhookReceiver {
  #verifyOptions;

  constructor(o) {
    const opts = options(o);
    const inbox = opts.inbox ?? null;
    let handler = null;
    if (inbox !== null) {
      if (opts.store !== undefined && opts.store !== null) throw new TypeError('store and inbox exclude each other: the inbox is the delivery\'s dedup record');
      if (opts.handler !== undefined && opts.handler !== null) {
        throw new TypeError('with an inbox the handler runs in the worker, never in the request: give it to inbox.runWorker(handler), not to the receiver');
      }
      if (typeof inbox.enqueue !== 'function') throw new TypeError('inbox must have enqueue(key, deliveryId, event, body) (a PostgresInbox, a SqliteInbox, a RedisInbox or your own)');
    } else {
      // An EventRouter is taken as its handler.
      handler = opts.handler instanceof EventRouter ? opts.handler.handler : opts.handler;
      if (typeof handler !== 'function') throw new TypeError('handler must be a function (delivery) => void | Promise<void>, or an EventRouter');
    }
    this.verifier = new WebhookVerifier(opts.secrets, opts);
    // The verifier's options, kept for useSecrets (a rotation changes the secrets only).
    this.#verifyOptions = { toleranceSeconds: opts.toleranceSeconds, maxBodyBytes: opts.maxBodyBytes, hostMacThreshold: opts.hostMacThreshold };
    this.namespace = toStr(opts.namespace, 'namespace');
    this.inbox = inbox;
    this.store = inbox !== null ? null : storeArg(opts.store ?? new DedupWindow(native.defaultStoreCapacity()));
    this.transactional = this.store?.transactional === true;
    this.handler = handler;
    this.claimContentKey = toBool(opts.claimContentKey, 'claimContentKey');
    this.onError = opts.onError ?? ((e) => console.error('royaltykit: webhook handler failed:', e));
    // A store that fails answers 503 (the sender retries the delivery); the outage is reported
    // with its cause, never silently.
    if (opts.onEvent !== undefined && typeof opts.onEvent !== 'function') throw new TypeError('onEvent must be a function (event) => void');
    // One event per delivery: { kind: 'receipt', outcome, status, deliveryId, event }.
    this.onEvent = opts.onEvent ?? null;
    const telemetry = opts.telemetry ?? null;
    if (telemetry !== null && (typeof telemetry !== 'object' || typeof telemetry.receipt !== 'function')) {
      throw new TypeError('telemetry must be an object with receipt({ route }) (royaltykit/otel makes one)');
    }
    // One scope per delivery, ended with its outcome (royaltykit/otel: a SERVER span).
    this.telemetry = telemetry;
    this.onStoreError = opts.onStoreError ?? ((e, what) => console.error(
      `royaltykit: webhook store ${(this.inbox ?? this.store)?.constructor?.name ?? 'store'} failed on ${what}: answering 503 so that the delivery is sent again:`, e));
    this.maxBodyBytes = toNumber(opts.maxBodyBytes, 'maxBodyBytes', native.defaultMaxBodyBytes());
  }

  /**
   * Replaces the secrets (a rotation on a live receiver, no new receiver to swap into the web
   * framework): the deliveries that arrive after this call are verified with `secrets` (as the
   * constructor takes them, current first), with the receiver's options. A delivery already being
   * received keeps the verifier it started with (verification is synchronous: the swap is one
   * assignment, never half done). Refused as the constructor refuses them (TypeError,
   * InvalidArgumentError `invalid_secret`, …), and then the secrets in use stay. After
   * `org.rotateSecret(reference)`, pass `rotated.secrets(current)` (`current`: the secret held
   * until now): deliveries signed with it still verify until the rotation's
   * `previousValidUntil`, never after.
   */
  useSecrets(secrets) {
    const next = new WebhookVerifier(secrets, this.#verifyOptions);
    const old = this.verifier;
    this.verifier = next;
    old.free(); // a receipt copies what it needs when it is made: nothing holds the old one
  }

  /**
   * Performs the steps of the core's `WebhookReceipt` machine; every rule and step is the core's.
   * `info.route` (the framework's route, e.g. `/webhooks`) names the delivery's telemetry scope.
   * `info.signal` (an AbortSignal, e.g. the fetch `Request`'s) cancels the delivery: checked
   * before each step, no new work is started once it aborts (no claim, handler, commit or
   * enqueue; a commit's pause ends), the open transaction is rolled back and every claim
   * released, then `receive` rejects with the signal's reason (the core's `cancelled` input).
   */
  async receive(headers, body, now, info) {
    const signal = info?.signal ?? null;
    if (signal !== null && typeof signal.aborted !== 'boolean') throw new TypeError('info.signal must be an AbortSignal');
    const scope = telemetryScope(this.telemetry, 'receipt', { route: info?.route ?? null });
    const seen = { error: null };
    let out;
    try {
      out = await this.#receive(headers, body, now, seen, signal);
    } catch (e) {
      scope?.end({ outcome: null, status: 500, deliveryId: null, error: e });
      throw e;
    }
    scope?.end({ outcome: out.outcome, status: out.status, deliveryId: out.delivery?.deliveryId ?? null, error: seen.error });
    return { status: out.status, body: out.body, delivery: out.delivery };
  }

  async #receive(headers, body, now, seen, signal) {
    const { store } = this;
    // On a DedupWindow the receipt claims and commits inside the core: it asks only for the handler.
    const window = store instanceof DedupWindow ? store : undefined;
    const r = this.verifier.receipt(headers, body, { namespace: this.namespace, now, window, transactional: this.transactional,
      claimContentKey: this.claimContentKey, inbox: this.inbox !== null });
    try {
      return await this.#steps(r, store, seen, body, signal);
    } finally {
      r.free(); // now, not at garbage collection: a busy receiver would otherwise grow (bench/PROFILES.md)
    }
  }

  async #steps(r, store, seen, body, signal) {
    let tx, cancelled = false;
    for (let s = r.next(), ok, v; ; ) {
      if (s.step === 'reply') return this.#replied(r, s, cancelled, signal);
      if (signal?.aborted && !cancelled && s.step !== 'release' && s.step !== 'rollback') {
        cancelled = true; // the core asks only for rollbacks and releases from here on
        s = r.report('cancelled');
        continue;
      }
      if (s.step === 'wait') { // ends early when the signal aborts
        ok = await idle(s.seconds, signal);
        cancelled ||= !ok;
        s = r.report(ok ? 'done' : 'cancelled');
        continue;
      }
      [ok, v] = await attempt(this.#action(s, r, store, tx, body));
      if (ok && s.step === 'begin') tx = v;
      s = r.report(this.#outcome(s, ok, v, seen, r));
    }
  }

  /** What performs the receipt's step `s`: the store's, the inbox's or the handler's call. */
  #action(s, r, store, tx, body) {
    switch (s.step) {
      case 'claim': return () => store.claim(s.key);
      case 'release': return () => store.release(s.key);
      case 'begin': return () => store.begin();
      case 'commit_transaction': return () => store.commitTransaction(tx);
      case 'rollback': return () => store.rollback(tx);
      case 'commit': return this.transactional ? () => store.markDone(tx, s.key) : () => store.commit(s.key);
      case 'run_handler': {
        const d = r.delivery;
        return this.transactional ? () => this.handler(d, tx) : () => this.handler(d);
      }
      case 'enqueue': { // (inbox) the verified delivery, its body as received (UTF-8: the core parsed it)
        const d = r.delivery;
        const text = typeof body === 'string' ? body : utf8.decode(toBytes(body));
        return () => this.inbox.enqueue(s.key, d.deliveryId, d.event.name, text);
      }
      default: throw new Error(`royaltykit: a receipt step this receiver does not know: ${s.step}`);
    }
  }

  /**
   * The outcome of the performed step `s` as the receipt takes it (the core decides what a
   * failure means). A handler's failure goes to `onError`; a store's to `onStoreError`, never
   * silently (the delivery is answered 503 and sent again); a failed release or rollback is fine.
   */
  #outcome(s, ok, v, seen, r) {
    if (ok && s.step === 'enqueue' && typeof v !== 'boolean') {
      [ok, v] = [false, new TypeError('inbox.enqueue must resolve to a boolean (true: a new entry, false: a duplicate)')];
    }
    const what = s.step === 'commit' && this.transactional ? 'markDone' : STORE_STEPS[s.step];
    if (!ok && (s.step === 'run_handler' || what !== undefined)) {
      seen.error = v;
      if (what === undefined) hook(() => this.onError(v, r.delivery), 'onError');
      else hook(() => this.onStoreError(v, what), 'onStoreError');
    }
    if (!ok) return 'failed';
    if (s.step === 'claim') return { claimed: v };
    if (s.step === 'enqueue') return { enqueued: v };
    return s.step === 'commit' && this.transactional ? { marked: Boolean(v) } : 'done';
  }

  /** The delivery's answer: its event, when one is wanted; a cancelled delivery rejects instead. */
  #replied(r, s, cancelled, signal) {
    if (cancelled) throw signal.reason;
    const d = r.delivery ?? undefined;
    const channel = diagnostics?.receiver.hasSubscribers ? diagnostics.receiver : null;
    if (this.onEvent !== null || channel !== null) {
      const event = { kind: 'receipt', outcome: r.outcome, status: s.status, deliveryId: d?.deliveryId ?? null, event: d?.event?.name ?? null };
      channel?.publish(event);
      this.onEvent?.(event);
    }
    return { status: s.status, body: s.body, delivery: d, outcome: r.outcome };
  }
}

/** The receipt's steps whose failure is the store's, by the name `onStoreError` is given. */
const STORE_STEPS = { claim: 'claim', begin: 'begin', commit_transaction: 'commitTransaction', commit: 'commit', enqueue: 'enqueue' };

const receiverArg = (o) => (o instanceof WebhookReceiver ? o : new WebhookReceiver(o));

/**
 * A handler for WHATWG `Request`s (Next.js and Remix route handlers, Hono, Bun.serve,
 * Deno.serve, Cloudflare Workers): `webhookHandler({ secrets, namespace, store, handler })`
 * returns `async (request) => Response`.
 */
function webhookHandler(o) {
  const receiver = receiverArg(o);
  return async (request) => {
    if (request === null || typeof request !== 'object' || typeof request.headers !== 'object') {
      throw new TypeError('request must be a WHATWG Request');
    }
    const body = await readCapped(request, receiver.maxBodyBytes);
    const r = await receiver.receive(request.headers, body);
    return new Response(r.body, { status: r.status, headers: { 'content-type': 'application/json' } });
  };
}

/** The dedup contract on Redis as commands (argument lists) and the meaning of their replies:
 * `new RedisDedupProtocol({ prefix, ttlSeconds, leaseSeconds })` (absent: the core's defaults). */
class RedisDedupProtocol {
  constructor(o) {
    const opts = options(o);
    const ttl = toNumber(opts.ttlSeconds, 'ttlSeconds', undefined);
    const lease = toNumber(opts.leaseSeconds, 'leaseSeconds', undefined);
    this._inner = call(() => new native.RedisDedupProtocol(optStr(opts.prefix, 'prefix'), ttl, lease));
  }
  /** A claim token: 32 hex characters from the platform's random source. */
  static newToken() {
    return native.RedisDedupProtocol.claimToken(webCrypto.getRandomValues(new Uint8Array(16)));
  }
  /** `'new'` for `OK`; null for nil (then send `stateCommand`). */
  static claimReply(reply) {
    return native.RedisDedupProtocol.claimReply(optStr(reply, 'reply')) ?? null;
  }
  /** `'done'` or `'in_progress'`. */
  static stateReply(reply) {
    return native.RedisDedupProtocol.stateReply(optStr(reply, 'reply'));
  }
  /** What a lookup's reply means: `'new'` for nil (never seen, or its claim or time-to-live ran
   * out), `'done'` once committed, `'in_progress'` for a live claim. */
  static lookupReply(reply) {
    return native.RedisDedupProtocol.lookupReply(optStr(reply, 'reply'));
  }
  /** The guarded commit's or release's reply (a number or its text): true for 1 (done,
   * released), false otherwise (the key no longer holds this claim). */
  static guardedReply(reply) {
    return native.RedisDedupProtocol.guardedReply(reply === undefined || reply === null ? undefined : String(reply));
  }
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (RedisDedupProtocol)
  /**
   * The claim of `key` with `token`: `SET <prefix><key> claim:<token> NX PX <lease ms>`. Its reply
   * goes to `claimReply`. `InvalidArgumentError` (`invalid_argument`) for a key or token the store
   * cannot hold.
   */
  claimCommand(key, token) {
    return call(() => this._inner.claimCommand(toStr(key, 'key'), toStr(token, 'token')));
  }
  /**
   * Reads a taken key's state: `GET <prefix><key>`. Its reply goes to `stateReply`.
   * `InvalidArgumentError` (`invalid_argument`) for a key the store cannot hold.
   */
  stateCommand(key) {
    return call(() => this._inner.stateCommand(toStr(key, 'key')));
  }
  /**
   * The read-only lookup of `key`'s state (delivery recovery; never a claim): `GET <prefix><key>`.
   * Its reply goes to `lookupReply`. `InvalidArgumentError` (`invalid_argument`) for a key the
   * store cannot hold.
   */
  lookupCommand(key) {
    return call(() => this._inner.lookupCommand(toStr(key, 'key')));
  }
  /**
   * The guarded commit of `key` by the claim holding `token` (`EVAL`): its reply is 1 when done.
   * Read it with `guardedReply`. `InvalidArgumentError` (`invalid_argument`) for a key or token the
   * store cannot hold.
   */
  commitCommand(key, token) {
    return call(() => this._inner.commitCommand(toStr(key, 'key'), toStr(token, 'token')));
  }
  /**
   * The guarded release of `key` by the claim holding `token` (`EVAL`): its reply is 1 when
   * released. Read it with `guardedReply`. `InvalidArgumentError` (`invalid_argument`) for a key or
   * token the store cannot hold.
   */
  releaseCommand(key, token) {
    return call(() => this._inner.releaseCommand(toStr(key, 'key'), toStr(token, 'token')));
  }
  // generated: end (RedisDedupProtocol)
}

/** The dedup contract in your SQL database as statements (`{ sql, args }`) and the meaning of
 * their results: `new SqlDedupProtocol('postgres' | 'sqlite', { paramStyle, table, ttlSeconds,
 * leaseSeconds })`, `paramStyle` `'qmark'` (`?`), `'dollar'` (`$1`, pg) or `'format'` (`%s`). */
class SqlDedupProtocol {
  constructor(dialect, o) {
    const opts = options(o);
    const ttl = toNumber(opts.ttlSeconds, 'ttlSeconds', undefined);
    const lease = toNumber(opts.leaseSeconds, 'leaseSeconds', undefined);
    this._inner = call(() => new native.SqlDedupProtocol(toStr(dialect, 'dialect'), toStr(opts.paramStyle, 'paramStyle'),
      optStr(opts.table, 'table'), ttl, lease));
  }
  /** A claim token: 32 hex characters from the platform's random source. */
  static newToken() {
    return native.RedisDedupProtocol.claimToken(webCrypto.getRandomValues(new Uint8Array(16)));
  }
  get table() {
    return this._inner.table;
  }
  /** `'new'` for a returned row; null for none (then run `state`). */
  static claimReply(rows) {
    return native.SqlDedupProtocol.claimReply(rows) ?? null;
  }
  /** `'done'` or `'in_progress'` (the `state` column; null for no row). */
  static stateReply(state) {
    return native.SqlDedupProtocol.stateReply(optStr(state, 'state'));
  }
  /** What a lookup returned (the `state` column; null for no row): `'new'` for no row (never
   * seen, or expired), `'done'`, else `'in_progress'`. */
  static lookupReply(state) {
    return native.SqlDedupProtocol.lookupReply(optStr(state, 'state'));
  }
  /** True for one changed row (this claim), false for none (the claim was lost). */
  static guardedReply(rows) {
    return native.SqlDedupProtocol.guardedReply(rows);
  }
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (SqlDedupProtocol)
  /** The statements creating the table and its index when missing (idempotent). */
  schema() {
    return this._inner.schema();
  }
  /**
   * The claim of `key` with `token` (autocommit) at `now` (Unix seconds); count the rows it
   * returns. `InvalidArgumentError` (`invalid_argument`) for a key or token the store cannot hold.
   */
  claim(key, token, now) {
    return JSON.parse(call(() => this._inner.claim(toStr(key, 'key'), toStr(token, 'token'), toNumber(now, 'now'))));
  }
  /**
   * Reads a taken key's state (one column, one row or none). `InvalidArgumentError`
   * (`invalid_argument`) for a key the store cannot hold.
   */
  state(key) {
    return JSON.parse(call(() => this._inner.state(toStr(key, 'key'))));
  }
  /**
   * The read-only lookup of `key`'s state at `now` (Unix seconds; delivery recovery, autocommit,
   * never a claim): a row only while the key is live. Read it with `lookupReply`.
   * `InvalidArgumentError` (`invalid_argument`) for a key the store cannot hold.
   */
  lookup(key, now) {
    return JSON.parse(call(() => this._inner.lookup(toStr(key, 'key'), toNumber(now, 'now'))));
  }
  /** The statement opening the handler's transaction (`BEGIN`; `BEGIN IMMEDIATE` on SQLite). */
  begin() {
    return this._inner.begin();
  }
  /** The statement committing the handler's transaction (`COMMIT`). */
  commit() {
    return this._inner.commit();
  }
  /** The statement rolling the handler's transaction back (`ROLLBACK`). */
  rollback() {
    return this._inner.rollback();
  }
  /**
   * Marks `key` done with its claim's `token` at `now` inside the handler's transaction; count the
   * changed rows. `InvalidArgumentError` (`invalid_argument`) for a key or token the store cannot
   * hold.
   */
  markDone(key, token, now) {
    return JSON.parse(call(() => this._inner.markDone(toStr(key, 'key'), toStr(token, 'token'), toNumber(now, 'now'))));
  }
  /**
   * Gives up this worker's claim of `key` with `token` (autocommit, after a rollback).
   * `InvalidArgumentError` (`invalid_argument`) for a key or token the store cannot hold.
   */
  release(key, token) {
    return JSON.parse(call(() => this._inner.release(toStr(key, 'key'), toStr(token, 'token'))));
  }
  /** Deletes the rows expired at `now`; count the changed rows. */
  purge(now) {
    return JSON.parse(call(() => this._inner.purge(toNumber(now, 'now'))));
  }
  // generated: end (SqlDedupProtocol)
}

/** The inbox table in your SQL database as statements (`{ sql, args }`) and the meaning of their
 * results: `new SqlInboxProtocol('postgres' | 'sqlite', { paramStyle, table, ttlSeconds,
 * leaseSeconds })` (absent: the core's defaults, table `royaltykit_inbox`). Rows are read by
 * position, in the column order each statement's documentation gives. */
class SqlInboxProtocol {
  /** The core's inbox constants: `{ defaultTable, defaultMaxAttempts, maxAttempts,
   * defaultPollSeconds, maxBodyBytes, maxErrorBytes, maxPoisonListed }`. */
  static limits = Object.freeze(JSON.parse(native.inboxLimits()));
  constructor(dialect, o) {
    const opts = options(o);
    const ttl = toNumber(opts.ttlSeconds, 'ttlSeconds', undefined);
    const lease = toNumber(opts.leaseSeconds, 'leaseSeconds', undefined);
    this._inner = call(() => new native.SqlInboxProtocol(toStr(dialect, 'dialect'), toStr(opts.paramStyle, 'paramStyle'),
      optStr(opts.table, 'table'), ttl, lease));
  }
  /** The table name. */
  get table() {
    return this._inner.table;
  }
  /** How long a claim holds an entry, in seconds. */
  get leaseSeconds() {
    return this._inner.leaseSeconds;
  }
  /** True for a new entry (1 row), false for a delivery already in the inbox. */
  static enqueueReply(rows) {
    return native.SqlInboxProtocol.enqueueReply(rows);
  }
  /** The mark of `key` done by the claim that counted `attempts`, inside the transaction, at
   * `now`: read its count of changed rows with `guardedReply`. */
  markDone(key, attempts, now) {
    return JSON.parse(call(() => this._inner.markDone(toStr(key, 'key'), toNumber(attempts, 'attempts'), toNumber(now, 'now'))));
  }
  /** True for one changed row (this claim), false for none (another worker claimed it since). */
  static guardedReply(rows) {
    return native.SqlInboxProtocol.guardedReply(rows);
  }
  /** The settling of a failed attempt (autocommit, after the rollback). */
  settle(key, attempts, poison, retryAt, error) {
    const args = [toStr(key, 'key'), toNumber(attempts, 'attempts'), toBool(poison, 'poison'), toNumber(retryAt, 'retryAt'), toStr(error, 'error')];
    return JSON.parse(call(() => this._inner.settle(...args)));
  }
  /** The listing of poison entries, oldest first, at most `limit` (1 to 1000): six columns (key,
   * delivery id, event, attempts, last error, received at). */
  poisoned(limit) {
    return JSON.parse(call(() => this._inner.poisoned(toNumber(limit, 'limit'))));
  }
  /** What a lookup means: `'new'` for no row, `'done'`, else `'in_progress'` (received, pending
   * or poison). */
  static lookupReply(state) {
    return native.SqlInboxProtocol.lookupReply(optStr(state, 'state'));
  }
  // generated by scripts/gen_surface.py from surface/functions.toml: begin (SqlInboxProtocol)
  /** The statements creating the table and its index when missing (idempotent). */
  schema() {
    return this._inner.schema();
  }
  /**
   * The insert of a verified delivery at `now` (Unix seconds; autocommit): `key` its delivery key,
   * `deliveryId` its `Service-Webhook-Id`, `event` its event name, `body` its raw JSON body as
   * text. Read its count of inserted rows with `enqueueReply`. `InvalidArgumentError`
   * (`invalid_argument`) for a bad key, an empty delivery id or a body over 256 KiB (the spec's
   * payload limit).
   */
  enqueue(key, deliveryId, event, body, now) {
    return JSON.parse(call(() => this._inner.enqueue(toStr(key, 'key'), toStr(deliveryId, 'deliveryId'), toStr(event, 'event'), toStr(body, 'body'), toNumber(now, 'now'))));
  }
  /**
   * The claim of the oldest due entry at `now` (autocommit): it counts an attempt and holds the
   * entry for the lease; one row of five columns (`inbox_key`, `delivery_id`, `event`, `body`,
   * `attempts`: report it to the worker's `claimed`) or none.
   */
  claim(now) {
    return JSON.parse(call(() => this._inner.claim(toNumber(now, 'now'))));
  }
  /** The statement opening the handler's transaction (`BEGIN`; `BEGIN IMMEDIATE` on SQLite). */
  begin() {
    return this._inner.begin();
  }
  /** The statement committing the handler's transaction (`COMMIT`). */
  commit() {
    return this._inner.commit();
  }
  /** The statement rolling the handler's transaction back (`ROLLBACK`). */
  rollback() {
    return this._inner.rollback();
  }
  /**
   * The statement putting a poison entry back to pending at `now` with no attempts counted: one row
   * changed means retried, none means `key` is not a poison entry. `InvalidArgumentError`
   * (`invalid_argument`) for a key the store cannot hold.
   */
  retry(key, now) {
    return JSON.parse(call(() => this._inner.retry(toStr(key, 'key'), toNumber(now, 'now'))));
  }
  /**
   * The read-only lookup of `key` (delivery recovery): one column, `state`, or no row. Read it with
   * `lookupReply`. `InvalidArgumentError` (`invalid_argument`) for a key the store cannot hold.
   */
  lookup(key) {
    return JSON.parse(call(() => this._inner.lookup(toStr(key, 'key'))));
  }
  /** The count of entries by state: rows of two columns, `state` and its count. */
  counts() {
    return JSON.parse(this._inner.counts());
  }
  /** The statement deleting done entries past their TTL at `now`. */
  purge(now) {
    return JSON.parse(call(() => this._inner.purge(toNumber(now, 'now'))));
  }
  // generated: end (SqlInboxProtocol)
}

/** A Redis reply as the core reads it: one string (a number as its digits), or undefined for nil. */
const replyText = (reply) => (reply === undefined || reply === null ? undefined : String(reply));

/** The inbox on a Redis stream as commands (argument lists to send as they are: `EVAL script
 * numkeys keys… args…`, or `HGET`) and the meaning of their replies (each reply one string, a
 * number or its text, or null for nil: arrays come as JSON text encoded by the script):
 * `new RedisInboxProtocol({ prefix, ttlSeconds, leaseSeconds })` (absent: the core's defaults,
 * prefix `{royaltykit:inbox}:`, a Redis Cluster hash tag). */
class RedisInboxProtocol {
  constructor(o) {
    const opts = options(o);
    const ttl = toNumber(opts.ttlSeconds, 'ttlSeconds', undefined);
    const lease = toNumber(opts.leaseSeconds, 'leaseSeconds', undefined);
    this._inner = call(() => new native.RedisInboxProtocol(optStr(opts.prefix, 'prefix'), ttl, lease));
  }
  /** The key prefix. */
  get prefix() {
    return this._inner.prefix;
  }
  /** How long a claim holds an entry, in seconds. */
  get leaseSeconds() {
    return this._inner.leaseSeconds;
  }
  /** Adds a verified delivery at `now` unless its entry exists: read the reply with `addedReply`.
   * Throws InvalidArgumentError for a bad key, an empty delivery id or a body over 256 KiB. */
  enqueueCommand(key, deliveryId, event, body, now) {
    const args = [toStr(key, 'key'), toStr(deliveryId, 'deliveryId'), toStr(event, 'event'), toStr(body, 'body'), toNumber(now, 'now')];
    return call(() => this._inner.enqueueCommand(...args));
  }
  /** The integer reply of enqueue, mark, settle or retry: true for 1 (added, marked, settled, put
   * back), false otherwise (a duplicate; no longer this claim; not poison). */
  static addedReply(reply) {
    return native.RedisInboxProtocol.addedReply(replyText(reply));
  }
  /** The claim of one due entry at `now` (the attempt is counted): read it with `claimReply`. */
  claimCommand(now) {
    return call(() => this._inner.claimCommand(toNumber(now, 'now')));
  }
  /** The claimed entry (`{ key, deliveryId, event, body, attempts }`), or null when nothing is
   * due; InvalidArgumentError for a reply of another shape. */
  static claimReply(reply) {
    return JSON.parse(call(() => native.RedisInboxProtocol.claimReply(replyText(reply))));
  }
  /** The mark of `key` done by the claim that counted `attempts`, at `now` (`addedReply`). */
  markDoneCommand(key, attempts, now) {
    return call(() => this._inner.markDoneCommand(toStr(key, 'key'), toNumber(attempts, 'attempts'), toNumber(now, 'now')));
  }
  /** The settling of a failed attempt: due again at `retryAt`, or poison (`addedReply`). */
  settleCommand(key, attempts, poison, retryAt, error) {
    const args = [toStr(key, 'key'), toNumber(attempts, 'attempts'), toBool(poison, 'poison'), toNumber(retryAt, 'retryAt'), toStr(error, 'error')];
    return call(() => this._inner.settleCommand(...args));
  }
  /** The listing of poison entries, oldest first, at most `limit` (1 to 1000). */
  poisonedCommand(limit) {
    return call(() => this._inner.poisonedCommand(toNumber(limit, 'limit')));
  }
  /** The poison entries of a listing's reply: `{ key, deliveryId, event, attempts, lastError,
   * receivedAt }`. */
  static poisonedReply(reply) {
    return JSON.parse(call(() => native.RedisInboxProtocol.poisonedReply(replyText(reply))));
  }
  /** Puts a poison entry back to pending with no attempts counted (`addedReply`). */
  retryCommand(key) {
    return call(() => this._inner.retryCommand(toStr(key, 'key')));
  }
  /** The read-only lookup of `key` (delivery recovery): read it with `lookupReply`. */
  lookupCommand(key) {
    return call(() => this._inner.lookupCommand(toStr(key, 'key')));
  }
  /** `'new'` for nil (never received, or done and past its TTL), `'done'`, else `'in_progress'`
   * (pending or poison: received). */
  static lookupReply(reply) {
    return native.RedisInboxProtocol.lookupReply(replyText(reply));
  }
  /** The count of entries by state at `now`: read it with `countsReply`. */
  countsCommand(now) {
    return call(() => this._inner.countsCommand(toNumber(now, 'now')));
  }
  /** `{ pending, done, poison }`. */
  static countsReply(reply) {
    return JSON.parse(call(() => native.RedisInboxProtocol.countsReply(replyText(reply))));
  }
  /** Forgets the done entries past their TTL at `now`; the integer reply is how many. */
  purgeCommand(now) {
    return call(() => this._inner.purgeCommand(toNumber(now, 'now')));
  }
}


/** Poison entries `poisoned()` lists when given no limit (the core's). */
const DEFAULT_POISON_LISTED = SqlInboxProtocol.limits.defaultPoisonListed;

const ignore = () => {};

/** The transactions of one shared connection, one after the other: a statement outside a
 * transaction waits for the open one (on the same connection it would join it). */
class Turns {
  #queue = Promise.resolve();
  /** Resolves once no transaction is open (nor waiting before this call). */
  wait() {
    return this.#queue;
  }
  /** Resolves, when the transactions before it have ended, to the function ending this one. */
  async take() {
    const previous = this.#queue;
    let free;
    this.#queue = new Promise((resolve) => { free = resolve; });
    await previous;
    return free;
  }
}

/** What the two SQL stores share: the protocol, this process's claim tokens and the clock. */
class SqlStoreBase {
  constructor(protocol, clock) {
    this.protocol = protocol;
    this.transactional = true;
    this.tokens = new Map();
    this.marked = new Map(); // keys marked in each open transaction
    this.clock = clock ?? (() => Date.now() / 1000);
  }
  now() {
    return Math.floor(this.clock());
  }
  token(key) {
    return this.tokens.get(key) ?? SqlDedupProtocol.newToken();
  }
  /** `'new'`, `'in_progress'` or `'done'` (its own statement, outside any transaction). */
  async claim(key) {
    const token = SqlDedupProtocol.newToken();
    const rows = await this.rows(this.protocol.claim(key, token, this.now()));
    if (SqlDedupProtocol.claimReply(rows.length) === 'new') {
      this.tokens.set(key, token);
      return 'new';
    }
    const [state] = await this.rows(this.protocol.state(key));
    return SqlDedupProtocol.stateReply(state ? state.state : null);
  }
  /**
   * The state of `key` read without claiming it (its own statement, autocommit, as `claim`):
   * `'done'` for a processed key within its time-to-live, `'in_progress'` for a claim within its
   * lease, `'new'` otherwise (no row, or a claim whose lease ran out).
   */
  async state(key) {
    const [row] = await this.rows(this.protocol.lookup(key, this.now()));
    return SqlDedupProtocol.lookupReply(row ? row.state : null);
  }
  /** Marks `key` done inside the transaction `tx`; false when the claim was lost. */
  async markDone(tx, key) {
    const mine = SqlDedupProtocol.guardedReply(await this.changes(this.protocol.markDone(key, this.token(key), this.now()), tx));
    (this.marked.get(tx) ?? this.marked.set(tx, []).get(tx)).push(key);
    return mine;
  }
  /** The keys marked in `tx`, forgotten: after a commit their tokens go too. */
  markedIn(tx, committed) {
    const keys = this.marked.get(tx) ?? [];
    this.marked.delete(tx);
    if (committed) for (const key of keys) this.tokens.delete(key);
  }
  /** Gives up this worker's claim (never another's, never a committed row). */
  async release(key) {
    try {
      return SqlDedupProtocol.guardedReply(await this.changes(this.protocol.release(key, this.token(key))));
    } finally {
      this.tokens.delete(key);
    }
  }
  /** Deletes the rows expired now; resolves to how many. Correctness never depends on it. */
  async purge() {
    return this.changes(this.protocol.purge(this.now()));
  }
}

/**
 * The transactional dedup store on PostgreSQL with node-postgres: `new PostgresDedupStore(pool,
 * { table, ttlSeconds, leaseSeconds })` over a `pg.Pool` (each transaction on a client of its
 * own) or a connected `pg.Client` (one connection: deliveries run their transactions one after
 * the other). The handler gets the transaction's client (`handler(delivery, client)`): write the
 * effect with it, never commit. The table and its index are created when missing (idempotent DDL)
 * before the first claim, unless `createTable: false` (then call `await store.createTable()`).
 */
class PostgresDedupStore extends SqlStoreBase {
  #free = null;
  #ready = null;
  constructor(pool, o) {
    if (typeof pool?.query !== 'function' || typeof pool?.connect !== 'function') throw new TypeError('pool must be a pg.Pool or a pg.Client');
    const { createTable, ...opts } = options(o);
    if (createTable !== undefined && typeof createTable !== 'boolean') throw new TypeError('createTable must be a boolean');
    super(new SqlDedupProtocol('postgres', { ...opts, paramStyle: 'dollar' }), opts.clock);
    this.pool = pool;
    // A pg.Pool counts its clients; a pg.Client is one connection, shared by every delivery.
    this.turns = typeof pool.totalCount === 'number' ? null : new Turns();
    this.#ready = createTable === false ? Promise.resolve() : null;
  }
  /** The first claim creates the table when missing; a failure is tried again on the next one. */
  async claim(key) {
    await this.#table();
    return super.claim(key);
  }
  /** The state of `key`, read without claiming it (see SqlStoreBase#state); the table is created
   * first when missing, as for a claim. */
  async state(key) {
    await this.#table();
    return super.state(key);
  }
  #table() {
    if (this.#ready === null) this.#ready = this.createTable().catch((e) => { this.#ready = null; throw e; });
    return this.#ready;
  }
  async #query(st, client) {
    if (client === undefined && this.turns) await this.turns.wait();
    return (client ?? this.pool).query(st.sql, st.args);
  }
  async rows(st, client) {
    return (await this.#query(st, client)).rows;
  }
  async changes(st, client) {
    return (await this.#query(st, client)).rowCount ?? 0;
  }
  async createTable() {
    for (const sql of this.protocol.schema()) await this.pool.query(sql);
  }
  /** Opens the handler's transaction on a client of the pool. While the store holds the client,
   * a connection the server drops is reported by the failing query (the client's own `error`
   * event, which would end the process unheard, is listened to). */
  async begin() {
    if (this.turns) {
      const free = await this.turns.take();
      try {
        await this.pool.query(this.protocol.begin());
      } catch (e) {
        free();
        throw e;
      }
      this.#free = free;
      return this.pool;
    }
    const client = await this.pool.connect();
    client.on('error', ignore);
    try {
      await client.query(this.protocol.begin());
    } catch (e) {
      this.#giveBack(client, e);
      throw e;
    }
    return client;
  }
  #giveBack(client, error) {
    if (this.turns) { // the shared client stays the caller's; the next transaction may start
      const free = this.#free;
      this.#free = null;
      free?.();
      return;
    }
    client.removeListener('error', ignore);
    client.release(error);
  }
  /** Commits the mark and the effect together; the client goes back to the pool (or is dropped). */
  async commitTransaction(client) {
    try {
      await client.query(this.protocol.commit());
    } catch (e) {
      this.markedIn(client, false);
      this.#giveBack(client, e);
      throw e;
    }
    this.markedIn(client, true);
    this.#giveBack(client);
  }
  async rollback(client) {
    this.markedIn(client, false);
    try {
      await client.query(this.protocol.rollback());
    } catch (e) {
      this.#giveBack(client, e);
      throw e;
    }
    this.#giveBack(client);
  }
}

/**
 * The transactional dedup store on SQLite with better-sqlite3: `new SqliteDedupStore(db, {
 * table, ttlSeconds, leaseSeconds })` over a `Database` (SQLite 3.35 or later). One connection
 * serves the process, so deliveries run their transactions one after the other; the handler gets
 * `db` (`handler(delivery, db)`) inside `BEGIN IMMEDIATE`. Creates the table when missing.
 */
class SqliteDedupStore extends SqlStoreBase {
  #turns = new Turns();
  #free = null;
  constructor(db, o) {
    if (typeof db?.prepare !== 'function' || typeof db?.exec !== 'function') throw new TypeError('db must be a better-sqlite3 Database');
    const opts = options(o);
    super(new SqlDedupProtocol('sqlite', { ...opts, paramStyle: 'qmark' }), opts.clock);
    this.db = db;
    for (const sql of this.protocol.schema()) db.exec(sql);
  }
  async rows(st) {
    await this.#turns.wait();
    return this.db.prepare(st.sql).all(...st.args);
  }
  async changes(st, tx) {
    if (tx === undefined) await this.#turns.wait();
    return this.db.prepare(st.sql).run(...st.args).changes;
  }
  /** Opens the transaction; the next one waits until this one commits or rolls back. */
  async begin() {
    const free = await this.#turns.take();
    try {
      this.db.exec(this.protocol.begin());
    } catch (e) {
      free();
      throw e;
    }
    this.#free = free;
    return this.db;
  }
  #end(sql) {
    const free = this.#free;
    this.#free = null;
    try {
      this.db.exec(sql);
    } finally {
      if (this.db.inTransaction) {
        try { this.db.exec(this.protocol.rollback()); } catch { /* the transaction is gone */ }
      }
      free?.();
    }
  }
  async commitTransaction(db) {
    try {
      this.#end(this.protocol.commit());
    } catch (e) {
      this.markedIn(db, false);
      throw e;
    }
    this.markedIn(db, true);
  }
  async rollback(db) {
    this.markedIn(db, false);
    this.#end(this.protocol.rollback());
  }
}

/**
 * The dedup contract on Redis, shared by every process: `new RedisDedupStore(client, { prefix,
 * ttlSeconds, leaseSeconds })` with an ioredis (`call`) or node-redis v4+ (`sendCommand`)
 * client. Claims are guarded by a random token, so a worker whose lease ran out cannot commit
 * or release another worker's claim. Configure the client to fail fast while Redis is away
 * (node-redis `disableOfflineQueue`, ioredis `enableOfflineQueue: false`): the receiver then
 * answers 503 and the service redelivers, instead of a request waiting for the reconnect.
 */
class RedisDedupStore {
  constructor(client, o) {
    // ioredis has both, and its sendCommand takes a Command object: call() first.
    if (typeof client?.call === 'function') this.send = (args) => client.call(...args);
    else if (typeof client?.sendCommand === 'function') this.send = (args) => client.sendCommand(args);
    else throw new TypeError('client must be an ioredis client (call) or a node-redis client (sendCommand)');
    this.protocol = new RedisDedupProtocol(o);
    this.tokens = new Map();
  }

  /** `'new'`, `'in_progress'` or `'done'`. */
  async claim(key) {
    const token = RedisDedupProtocol.newToken();
    const reply = await this.send(this.protocol.claimCommand(key, token));
    if (RedisDedupProtocol.claimReply(reply) === 'new') {
      this.tokens.set(key, token);
      return 'new';
    }
    return RedisDedupProtocol.stateReply(await this.send(this.protocol.stateCommand(key)));
  }

  /** The state of `key` read without claiming it (one `GET`): `'done'` once committed,
   * `'in_progress'` while a worker's claim holds it, `'new'` when Redis has no such key (never
   * claimed, or its lease or time-to-live ran out: Redis expires it). */
  async state(key) {
    return RedisDedupProtocol.lookupReply(await this.send(this.protocol.lookupCommand(key)));
  }

  #token(key) {
    return this.tokens.get(key) ?? RedisDedupProtocol.newToken();
  }

  /** Marks `key` processed; true when done (false: another worker claimed it after this claim's
   * lease ran out). When Redis cannot be reached it throws and keeps the claim's token, so the
   * receiver's retry commits the same claim. */
  async commit(key) {
    const reply = await this.send(this.protocol.commitCommand(key, this.#token(key)));
    this.tokens.delete(key);
    return RedisDedupProtocol.guardedReply(reply);
  }

  /** Gives up this worker's claim on `key`; true when released. */
  async release(key) {
    const reply = await this.send(this.protocol.releaseCommand(key, this.#token(key)));
    this.tokens.delete(key);
    return RedisDedupProtocol.guardedReply(reply);
  }
}

// ---- the inbox: a receiver persists a verified delivery and answers at once; a worker runs the
// handler later, marking each entry done in the transaction that holds the handler's effect. The
// statements and every decision (backoff, poison, guards) are the core's; this runs them.

/** node-postgres under an inbox: autocommit statements on the pool, each transaction on a client
 * of its own (a connected pg.Client: one connection, transactions one after the other). Rows
 * come as arrays, read by position as the core's statements give their columns. */
class PgDriver {
  #free = null;
  #open = new Set(); // transactions begun and not yet ended
  constructor(pool) {
    this.pool = pool;
    this.turns = typeof pool.totalCount === 'number' ? null : new Turns();
  }
  async #query(st, tx) {
    if (tx === undefined && this.turns) await this.turns.wait();
    return (tx ?? this.pool).query({ text: st.sql, values: st.args, rowMode: 'array' });
  }
  async rows(st, tx) {
    return (await this.#query(st, tx)).rows;
  }
  async changes(st, tx) {
    return (await this.#query(st, tx)).rowCount ?? 0;
  }
  async exec(sql) {
    if (this.turns) await this.turns.wait();
    await this.pool.query(sql);
  }
  /** Opens a transaction with `sql`; resolves to its connection. */
  async begin(sql) {
    if (this.turns) {
      const free = await this.turns.take();
      try {
        await this.pool.query(sql);
      } catch (e) {
        free();
        throw e;
      }
      this.#free = free;
      this.#open.add(this.pool);
      return this.pool;
    }
    const client = await this.pool.connect();
    client.on('error', ignore); // a dropped connection is reported by the failing query
    try {
      await client.query(sql);
    } catch (e) {
      this.#giveBack(client, e);
      throw e;
    }
    this.#open.add(client);
    return client;
  }
  /** Ends the transaction `tx` with `sql` (COMMIT or ROLLBACK) and gives its connection back (a
   * connection whose end failed is dropped). A transaction already ended is left alone. */
  async end(tx, sql) {
    if (!this.#open.delete(tx)) return;
    try {
      await tx.query(sql);
    } catch (e) {
      this.#giveBack(tx, e);
      throw e;
    }
    this.#giveBack(tx);
  }
  #giveBack(client, error) {
    if (this.turns) {
      const free = this.#free;
      this.#free = null;
      free?.();
      return;
    }
    client.removeListener('error', ignore);
    client.release(error);
  }
}

/** better-sqlite3 under an inbox: one connection; a statement outside the open transaction waits
 * for it to end (on the same connection it would join it). Rows as arrays. */
class SqliteDriver {
  #turns = new Turns();
  #free = null;
  #open = false;
  constructor(db) {
    this.db = db;
  }
  async rows(st, tx) {
    if (tx === undefined) await this.#turns.wait();
    return this.db.prepare(st.sql).raw(true).all(...st.args);
  }
  async changes(st, tx) {
    if (tx === undefined) await this.#turns.wait();
    return this.db.prepare(st.sql).run(...st.args).changes;
  }
  async exec(sql) {
    await this.#turns.wait();
    this.db.exec(sql);
  }
  async begin(sql) {
    const free = await this.#turns.take();
    try {
      this.db.exec(sql);
    } catch (e) {
      free();
      throw e;
    }
    this.#free = free;
    this.#open = true;
    return this.db;
  }
  /** Ends the transaction with `sql` (the protocol's commit or rollback); one still open after
   * a failed commit is rolled back with `rollbackSql`. */
  async end(_tx, sql, rollbackSql) {
    if (!this.#open) return;
    this.#open = false;
    const free = this.#free;
    this.#free = null;
    try {
      this.db.exec(sql);
    } finally {
      if (this.db.inTransaction) {
        try { this.db.exec(rollbackSql); } catch { /* the transaction is gone */ }
      }
      free?.();
    }
  }
}

/** What an inbox's worker hands the handler: the entry, and its event parsed by the core from
 * the body as received (`event` as a receiver's delivery has it). */
function inboxDelivery(entry) {
  const event = JSON.parse(call(() => native.parseWebhookEvent(encoder.encode(entry.body))));
  return { key: entry.key, deliveryId: entry.deliveryId, attempts: entry.attempts, body: entry.body, event };
}

/** What a handler threw, as the entry's `last_error`: the core's `handlerErrorText(name,
 * message)` for an Error (its `name`, e.g. `TypeError: message`), the value as text otherwise. */
function describeError(e) {
  try {
    return e instanceof Error ? native.handlerErrorText(String(e.name ?? ''), String(e.message ?? '')) : native.handlerErrorText('', String(e));
  } catch {
    return 'the handler threw a value that cannot be printed';
  }
}

/** Waits `seconds`; resolves true, or false at once when `signal` aborts (before or during). */
function idle(seconds, signal) {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    let timer;
    const done = (waited) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      resolve(waited);
    };
    const stop = () => done(false);
    timer = setTimeout(() => done(true), seconds * 1000);
    signal?.addEventListener('abort', stop, { once: true });
  });
}

const WORKER_OPTIONS = ['signal', 'maxAttempts', 'pollSeconds', 'seed', 'onError', 'onStoreError'];

/**
 * Drives the core's InboxWorker over `inbox` (`claim`, `begin`, `markDone`, `commitTransaction`,
 * `rollback`, `settle` and `clock`; without `begin`, `commitTransaction` and `rollback` when
 * `inbox.transactional` is false) with `handler`, until `signal` aborts (checked before each
 * claim and during each wait) or, with `drain`, until nothing is due. Resolves to the worker's
 * counters. A handler that throws while `signal` is aborted is a cancellation: its transaction
 * rolls back, nothing is settled (the entry's lease runs out and it is claimed again), and the
 * throw propagates.
 */
async function runInbox(inbox, handler, opts, drain) {
  const run = handler instanceof EventRouter ? handler.handler : handler;
  handlerArg(run, 'handler');
  const o = options(opts);
  const what = drain ? 'drain' : 'runWorker';
  for (const k of Object.keys(o)) {
    if (!WORKER_OPTIONS.includes(k)) throw new TypeError(`unknown option \`${k}\` for ${what} (${WORKER_OPTIONS.join(', ')})`);
  }
  const { signal } = o;
  if (signal !== undefined && signal !== null && typeof signal.aborted !== 'boolean') throw new TypeError('signal must be an AbortSignal');
  for (const k of ['onError', 'onStoreError']) {
    if (o[k] !== undefined && typeof o[k] !== 'function') throw new TypeError(`${k} must be a function`);
  }
  const onError = o.onError ?? ((e, d) => console.error(`royaltykit: inbox handler failed on ${d?.deliveryId} (attempt ${d?.attempts}):`, e));
  const onStoreError = o.onStoreError ?? ((e, step) => console.error(
    `royaltykit: inbox ${inbox?.constructor?.name ?? 'store'} failed on ${step}: waiting, then claiming again:`, e));
  // A Redis inbox has no transaction shared with the handler: Claim → RunHandler → MarkDone (at
  // least once); its handler gets the inbox's client where a SQL handler gets the transaction.
  const transactional = inbox.transactional !== false;
  const worker = new InboxWorker({ maxAttempts: o.maxAttempts, pollSeconds: o.pollSeconds, transactional, drain, seed: o.seed });
  const held = { tx: undefined }; // the open transaction, rolled back when the run ends inside it
  try {
    await inboxSteps(worker, inbox, run, held, { transactional, signal, onError, onStoreError });
    return { processed: worker.processed, retried: worker.retried, poisoned: worker.poisoned };
  } finally {
    if (held.tx !== undefined) await attempt(() => inbox.rollback(held.tx));
    worker.free();
  }
}

/**
 * The worker's loop: performs each step and reports what became of it (the core decides what a
 * failure means), until `o.signal` aborts (before a claim, during a wait) or nothing is due with
 * `drain`. A handler that throws while the signal is aborted is a cancellation: the throw goes on.
 */
async function inboxSteps(worker, inbox, run, held, o) {
  for (let s = worker.next(), ok, v; ;) {
    if (s.step === 'drained' || ((s.step === 'claim' || s.step === 'idle') && o.signal?.aborted)) return;
    const now = s.step === 'claim' ? inbox.clock() : undefined; // one reading: the claim's lease and the backoff
    if (s.step === 'idle') {
      if (!(await idle(s.seconds, o.signal))) return;
      [ok, v] = [true, undefined];
    } else {
      [ok, v] = await attempt(inboxAction(s, inbox, run, held.tx, o.transactional, now));
    }
    if (!ok && s.step === 'run_handler' && o.signal?.aborted) throw v; // cancelled: rolled back, never settled
    if (s.step === 'rollback' || (ok && s.step === 'commit')) held.tx = undefined;
    if (ok && s.step === 'begin') held.tx = v;
    s = worker.report(inboxOutcome(s, ok, v, o), !ok && s.step === 'run_handler' ? inbox.clock() : now);
  }
}

/** What performs the worker's step `s`: the inbox's call (`tx`: the open transaction) or the handler's. */
function inboxAction(s, inbox, run, tx, transactional, now) {
  switch (s.step) {
    case 'claim': return () => inbox.claim(now);
    case 'begin': return () => inbox.begin();
    case 'run_handler': return () => run(inboxDelivery(s.entry), transactional ? tx : inbox.client);
    case 'mark_done': return () => inbox.markDone(tx, s.key, s.attempts);
    case 'commit': return () => inbox.commitTransaction(tx);
    case 'rollback': return () => inbox.rollback(tx);
    case 'settle': return () => inbox.settle(s.key, s.attempts, s.poison, s.retryAt, s.error);
    default: throw new Error(`unknown inbox step ${s.step}`);
  }
}

/** The worker's steps whose failure is the store's, by the name `onStoreError` is given. */
const INBOX_STORE_STEPS = { claim: 'claim', begin: 'begin', mark_done: 'markDone', commit: 'commitTransaction', settle: 'settle' };

/**
 * The outcome of the performed step `s` as the worker takes it. A handler's failure goes to
 * `onError` (with the delivery, or the entry when its body no longer parses); a store's to
 * `onStoreError`, never silently; a failed rollback is fine (the database rolls back).
 */
function inboxOutcome(s, ok, v, o) {
  if (ok) return s.step === 'claim' ? { claimed: v ?? null } : s.step === 'mark_done' ? { marked: v === true } : 'done';
  if (s.step === 'run_handler') {
    let d = s.entry;
    try {
      d = inboxDelivery(s.entry);
    } catch { /* the body no longer parses: the entry */ }
    hook(() => o.onError(v, d), 'onError');
  } else if (INBOX_STORE_STEPS[s.step] !== undefined) {
    hook(() => o.onStoreError(v, INBOX_STORE_STEPS[s.step]), 'onStoreError');
  }
  return { failed: describeError(v) };
}

/** What the two SQL inboxes share: the protocol, the driver, the clock and the worker. */
class SqlInboxBase {
  constructor(protocol, driver, clock) {
    if (clock !== undefined && typeof clock !== 'function') throw new TypeError('clock must be a function returning Unix seconds');
    this.protocol = protocol;
    this.driver = driver;
    this.clock = clock ?? (() => Date.now() / 1000);
  }
  /** Resolves once the table exists (the PostgreSQL inbox creates it when missing). */
  ready() {
    return Promise.resolve();
  }
  /** Creates the table and its index when missing (idempotent). */
  async createTable() {
    for (const sql of this.protocol.schema()) await this.driver.exec(sql);
  }
  /** Persists a verified delivery (autocommit): `key` its delivery key, `deliveryId` its
   * `Service-Webhook-Id`, `event` its event name, `body` its raw body as text. Resolves true for
   * a new entry, false for one already in the inbox (a redelivery). */
  async enqueue(key, deliveryId, event, body) {
    await this.ready();
    const st = this.protocol.enqueue(key, deliveryId, event, body, this.clock());
    return SqlInboxProtocol.enqueueReply(await this.driver.changes(st));
  }
  /** The state of `key` read without changing it (delivery recovery): `'new'` when the inbox
   * never received it, `'done'` once processed, `'in_progress'` while pending or poison. */
  async state(key) {
    await this.ready();
    const [row] = await this.driver.rows(this.protocol.lookup(key));
    return SqlInboxProtocol.lookupReply(row ? row[0] : null);
  }
  /** The poison entries (set aside after their last attempt), oldest first, at most `limit` (1 to
   * 1000, default DEFAULT_POISON_LISTED, the core's 100): `{ key, deliveryId, event, attempts,
   * lastError, receivedAt }`. */
  async poisoned(limit = DEFAULT_POISON_LISTED) {
    await this.ready();
    const rows = await this.driver.rows(this.protocol.poisoned(limit));
    return rows.map(([key, deliveryId, event, attempts, lastError, receivedAt]) => (
      { key, deliveryId, event, attempts: Number(attempts), lastError: lastError ?? null, receivedAt: Number(receivedAt) }));
  }
  /** Puts the poison entry `key` back to pending, due now, with no attempts counted (the cause is
   * fixed). Resolves true when it did, false when `key` is not a poison entry. */
  async retry(key) {
    await this.ready();
    return SqlInboxProtocol.guardedReply(await this.driver.changes(this.protocol.retry(key, this.clock())));
  }
  /** The number of entries in each state (`pending`, `done`, `poison`; a state with none is absent). */
  async counts() {
    await this.ready();
    const rows = await this.driver.rows(this.protocol.counts());
    return Object.fromEntries(rows.map(([state, n]) => [state, Number(n)]));
  }
  /** Deletes the done entries past their time-to-live; resolves to how many. */
  async purge() {
    await this.ready();
    return this.driver.changes(this.protocol.purge(this.clock()));
  }
  /** (Worker step.) Claims the oldest entry due at `now` (default: the inbox's clock; give the
   * worker's `claimed` the same `now`) (autocommit; the attempt is counted): `{ key, deliveryId,
   * event, body, attempts }`, or null when nothing is due. */
  async claim(now) {
    await this.ready();
    const [row] = await this.driver.rows(this.protocol.claim(now ?? this.clock()));
    return row ? { key: row[0], deliveryId: row[1], event: row[2], body: row[3], attempts: Number(row[4]) } : null;
  }
  /** (Worker step.) Opens the handler's transaction; resolves to its connection. */
  async begin() {
    await this.ready();
    return this.driver.begin(this.protocol.begin());
  }
  /** (Worker step.) Marks `key` done in `tx` for the claim that counted `attempts`; false when
   * another worker claimed the entry since. */
  async markDone(tx, key, attempts) {
    const st = this.protocol.markDone(key, attempts, this.clock());
    return SqlInboxProtocol.guardedReply(await this.driver.changes(st, tx));
  }
  /** (Worker step.) Commits the handler's effect and the mark together. */
  async commitTransaction(tx) {
    await this.driver.end(tx, this.protocol.commit(), this.protocol.rollback());
  }
  /** (Worker step.) Rolls the transaction back (an ended one is left alone). */
  async rollback(tx) {
    await this.driver.end(tx, this.protocol.rollback(), this.protocol.rollback());
  }
  /** (Worker step.) Records a failed attempt (autocommit): pending again at `retryAt`, or poison. */
  async settle(key, attempts, poison, retryAt, error) {
    await this.driver.changes(this.protocol.settle(key, attempts, poison, retryAt, error));
  }
  /**
   * Runs the inbox's worker until `signal` aborts: claims each due entry, calls
   * `handler(delivery, connection)` inside a transaction (`delivery`: `{ key, deliveryId,
   * attempts, body, event }`, `event` parsed by the core from the body; `connection`: the
   * transaction's — write the effect with it, never commit), and marks the entry done in that
   * transaction, so the effect commits exactly once. A handler that throws rolls back; the entry
   * is tried again after the core's backoff, and set aside as poison after `maxAttempts`
   * (default 5). When nothing is due it waits `pollSeconds` (default 1). `handler` may be async,
   * or an EventRouter. Resolves to `{ processed, retried, poisoned }` once stopped; a handler
   * throwing after `signal` aborted rolls back and rejects with what it threw (never settled as a
   * failure). `onError(error, delivery)` and `onStoreError(error, step)` (default console.error)
   * hear failures; a store failure waits the backoff and claims again. `seed`: the jitter's
   * (default: the platform's RNG).
   */
  runWorker(handler, opts) {
    return runInbox(this, handler, opts, false);
  }
  /** As `runWorker`, returning once nothing is due (entries waiting for a retry stay pending). */
  drain(handler, opts) {
    return runInbox(this, handler, opts, true);
  }
}

/**
 * An inbox on PostgreSQL with node-postgres: `new PostgresInbox(pool, { table, ttlSeconds,
 * leaseSeconds, clock, createTable })` over a `pg.Pool` (each worker transaction on a client of
 * its own, the receiver's inserts on others) or a connected `pg.Client` (one connection:
 * statements wait for the open transaction). Give it to a receiver (`{ inbox }`): each verified
 * delivery is inserted and answered at once; run `runWorker(handler)` (or `drain`) in any number
 * of processes: claims skip the entries other workers hold. The table (default
 * `royaltykit_inbox`) is created when missing before the first statement, unless `createTable:
 * false` (then call `await inbox.createTable()`).
 */
class PostgresInbox extends SqlInboxBase {
  #ready = null;
  constructor(pool, o) {
    if (typeof pool?.query !== 'function' || typeof pool?.connect !== 'function') throw new TypeError('pool must be a pg.Pool or a pg.Client');
    const { createTable, ...opts } = options(o);
    if (createTable !== undefined && typeof createTable !== 'boolean') throw new TypeError('createTable must be a boolean');
    super(new SqlInboxProtocol('postgres', { ...opts, paramStyle: 'dollar' }), new PgDriver(pool), opts.clock);
    this.pool = pool;
    this.#ready = createTable === false ? Promise.resolve() : null;
  }
  /** The first statement creates the table when missing; a failure is tried again on the next. */
  ready() {
    if (this.#ready === null) this.#ready = this.createTable().catch((e) => { this.#ready = null; throw e; });
    return this.#ready;
  }
}

/**
 * An inbox on SQLite with better-sqlite3: `new SqliteInbox(db, { table, ttlSeconds,
 * leaseSeconds, clock })` over a `Database` (SQLite 3.35 or later); creates the table when
 * missing. One connection serves the process: a receiver's insert waits while the worker's
 * transaction is open (SQLite has one writer at a time, across processes too), so keep handlers
 * short or give the worker a connection of its own.
 */
class SqliteInbox extends SqlInboxBase {
  constructor(db, o) {
    if (typeof db?.prepare !== 'function' || typeof db?.exec !== 'function') throw new TypeError('db must be a better-sqlite3 Database');
    const opts = options(o);
    super(new SqlInboxProtocol('sqlite', { ...opts, paramStyle: 'qmark' }), new SqliteDriver(db), opts.clock);
    this.db = db;
    for (const sql of this.protocol.schema()) db.exec(sql);
  }
}

/**
 * An inbox on a Redis stream (Redis 6.2 or later, with persistence: AOF or RDB): `new
 * RedisInbox(client, { prefix, ttlSeconds, leaseSeconds, clock })` with an ioredis (`call`) or
 * node-redis v4+ (`sendCommand`) client, as RedisDedupStore takes them. Each step is one atomic
 * script of the core's. Give it to a receiver (`{ inbox }`): each verified delivery is added and
 * answered at once; run `runWorker(handler)` (or `drain`) in any number of processes: the stream's
 * consumer group hands each entry to one worker, and a claim whose worker died is taken again once
 * its lease runs out. Redis shares no transaction with the handler's effects, so **effects are at
 * least once** (a worker killed after its effect and before its mark runs the handler again after
 * the lease): make the handler idempotent, or use PostgresInbox for exactly once. Configure the
 * client to fail fast while Redis is away (node-redis `disableOfflineQueue`, ioredis
 * `enableOfflineQueue: false`): the receiver then answers 503 and the service redelivers.
 */
class RedisInbox {
  #send;
  constructor(client, o) {
    const send = redisSender(client, 'RedisInbox');
    const { clock, ...opts } = options(o);
    if (clock !== undefined && typeof clock !== 'function') throw new TypeError('clock must be a function returning Unix seconds');
    this.protocol = new RedisInboxProtocol(opts);
    this.client = client;
    this.clock = clock ?? (() => Date.now() / 1000);
    this.#send = send;
  }
  /** No transaction with the handler: its worker runs Claim → RunHandler → MarkDone. */
  get transactional() {
    return false;
  }
  async #command(args) {
    const reply = await this.#send(args);
    return reply === undefined || reply === null ? null : String(reply);
  }
  /** Persists a verified delivery: `key` its delivery key, `deliveryId` its `Service-Webhook-Id`,
   * `event` its event name, `body` its raw body as text. Resolves true for a new entry, false
   * for one already in the inbox (a redelivery). */
  async enqueue(key, deliveryId, event, body) {
    return RedisInboxProtocol.addedReply(await this.#command(this.protocol.enqueueCommand(key, deliveryId, event, body, this.clock())));
  }
  /** The state of `key` read without changing it (delivery recovery): `'new'` when the inbox
   * never received it (or it was done and its time-to-live ran out), `'done'` once processed,
   * `'in_progress'` while pending or poison. */
  async state(key) {
    return RedisInboxProtocol.lookupReply(await this.#command(this.protocol.lookupCommand(key)));
  }
  /** The poison entries (set aside after their last attempt), oldest first, at most `limit` (1 to
   * 1000, default DEFAULT_POISON_LISTED): `{ key, deliveryId, event, attempts, lastError,
   * receivedAt }`. */
  async poisoned(limit = DEFAULT_POISON_LISTED) {
    return RedisInboxProtocol.poisonedReply(await this.#command(this.protocol.poisonedCommand(limit)));
  }
  /** Puts the poison entry `key` back to pending with no attempts counted (the cause is fixed).
   * Resolves true when it did, false when `key` is not a poison entry. */
  async retry(key) {
    return RedisInboxProtocol.addedReply(await this.#command(this.protocol.retryCommand(key)));
  }
  /** The number of entries in each state (`pending`, `done`, `poison`; a state with none is
   * absent, as the SQL inboxes count). */
  async counts() {
    const c = RedisInboxProtocol.countsReply(await this.#command(this.protocol.countsCommand(this.clock())));
    return Object.fromEntries(Object.entries(c).filter(([, n]) => n > 0));
  }
  /** Forgets the done entries past their time-to-live (their hashes expire by themselves);
   * resolves to how many. */
  async purge() {
    return Number(await this.#command(this.protocol.purgeCommand(this.clock())));
  }
  /** (Worker step.) Claims one entry due at `now` (default: the inbox's clock; give the worker's
   * `claimed` the same `now`) (the attempt is counted): `{ key, deliveryId, event, body,
   * attempts }`, or null when nothing is due. */
  async claim(now) {
    return RedisInboxProtocol.claimReply(await this.#command(this.protocol.claimCommand(now ?? this.clock())));
  }
  /** (Worker step.) Marks `key` done for the claim that counted `attempts` (`_tx`: unused, none);
   * false when another worker claimed the entry since (its lease ran out). */
  async markDone(_tx, key, attempts) {
    return RedisInboxProtocol.addedReply(await this.#command(this.protocol.markDoneCommand(key, attempts, this.clock())));
  }
  /** (Worker step.) Records a failed attempt: pending again at `retryAt`, or poison. */
  async settle(key, attempts, poison, retryAt, error) {
    await this.#command(this.protocol.settleCommand(key, attempts, poison, retryAt, error));
  }
  /**
   * Runs the inbox's worker until `signal` aborts: claims each due entry, calls
   * `handler(delivery, client)` (`delivery`: `{ key, deliveryId, attempts, body, event }`, `event`
   * parsed by the core from the body; `client`: this inbox's Redis client), then marks the entry
   * done. At least once: a worker killed between the handler's effect and the mark, or a handler
   * outliving the lease, runs it again (the late mark is refused). A handler that throws is
   * retried after the core's backoff, and set aside as poison after `maxAttempts` (default 5).
   * Options and result as PostgresInbox.runWorker.
   */
  runWorker(handler, opts) {
    return runInbox(this, handler, opts, false);
  }
  /** As `runWorker`, returning once nothing is due (entries waiting for a retry stay pending). */
  drain(handler, opts) {
    return runInbox(this, handler, opts, true);
  }
}

module.exports = {
  // webhooks and dedup
  verifyWebhook, WebhookVerifier, WebhookSecret, signWebhook, activeSecrets, RevealedSecret, revealedSecret, resourcePath, checkBaseUrl, clientTimeouts, exportInterruptedMessage, callFailedMessage, callStepError, parseTimestamp, HEADER_NAMES,
  deliveryKey, eventKey, contentKey, idempotencyKey, DedupWindow,
  // receivers and the protocol machines
  verifyRequest, webhookHandler, WebhookReceiver, EventRouter, knownEventNames, RedisDedupStore, RedisDedupProtocol, planReceipt, decideClaims,
  SqlDedupProtocol, PostgresDedupStore, SqliteDedupStore, SqlInboxProtocol, PostgresInbox, SqliteInbox,
  RedisInboxProtocol, RedisInbox, handlerErrorText, detectSqlDialect, DEFAULT_POISON_LISTED,
  WebhookReceipt, Session, Call, ExportJob, Pages, Recovery, InboxWorker,
  // fleets
  Fleet, RedisFleet, FleetToken, RESERVE_SCRIPT, PUBLISH_SCRIPT, UNLOCK_SCRIPT, DEFAULT_FLEET_PREFIX, FLEET_POLL_SECONDS,
  // retries
  webhookRetrySchedule, webhookNextAttemptAt, webhookGivesUpAt, backoffDelay, parseRetryAfter, decideRetry, RateBudget,
  // the catalog, requests, error bodies and tokens
  operations, operation, buildRequest, RequestDescriptor, parseApiError, buildTokenRequest, parseTokenResponse,
  parseApiSession, buildEnterpriseTokenRequest, parseEnterpriseTokenResponse, Token, EnterpriseToken, BearerToken,
  missingScopes, responseNotices,
  // exports
  exportState, validateExportCommand, exportPollDecision, checkExportDownload, validateExportListQuery, stepUpSatisfies,
  // errors
  RoyaltyKitError, WebhookVerificationError, InvalidArgumentError, RequestBuildError, TokenResponseError, ApiError,
  ExportStateError, ExportDownloadError, ReconcileRequired, CallFailedError, PaginationError,
};
