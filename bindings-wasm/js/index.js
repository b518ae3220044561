'use strict';
// royaltykit for Node: a thin layer over the wasm core. It only converts host values
// (header shapes, body types), supplies the default clock and RNG, and maps errors to classes.
// Every rule (header names, limits, check order, key encodings) lives in the Rust core.

const native = require('./native/royaltykit_wasm.js');

/** Base class of every error this package throws; `code` is stable across languages. */
class RoyaltyKitError extends Error {
  constructor(code, message, details) {
    super(message);
    this.name = 'RoyaltyKitError';
    this.code = code;
    if (details) Object.assign(this, details);
  }
}
/** A webhook delivery was not accepted (or could not be signed). */
class WebhookVerificationError extends RoyaltyKitError {
  constructor(code, message, details) {
    super(code, message, details);
    this.name = 'WebhookVerificationError';
  }
}
/** An argument or option is out of range (code `invalid_argument`). */
class InvalidArgumentError extends RoyaltyKitError {
  constructor(code, message, details) {
    super(code, message, details);
    this.name = 'InvalidArgumentError';
  }
}

function fromNative(e) {
  if (e && typeof e === 'object' && typeof e.code === 'string' && typeof e.kind === 'string') {
    const { kind, code, message, ...details } = e;
    const Cls = kind === 'webhook' ? WebhookVerificationError : InvalidArgumentError;
    return new Cls(code, message, details);
  }
  return e;
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
// Matches the core's header names ASCII-case-insensitively. A regex without the `u` flag folds
// case only within ASCII for ASCII targets (no Kelvin-sign or long-s surprises), like the core.
const RELEVANT = new RegExp(
  '^(?:' + HEADER_NAMES.map((n) => n.replace(/[-]/g, '\\-')).join('|') + ')$',
  'i',
);
const [DEFAULT_TOLERANCE, DEFAULT_MAX_BODY] = native.verifyDefaults();
const encoder = new TextEncoder();

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

function addPair(flat, name, value) {
  if (typeof name !== 'string') throw new TypeError('header names must be strings');
  if (RELEVANT.test(name)) pushValue(flat, name, value);
}

/** Headers in any common shape -> flat [name, value, ...] of the delivery headers only. */
function flattenHeaders(headers) {
  const flat = [];
  if (headers === null || typeof headers !== 'object') {
    throw new TypeError('headers must be an object, a Headers, a Map or an array of [name, value] pairs');
  }
  if (Array.isArray(headers)) {
    for (const pair of headers) {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw new TypeError('header pairs must be [name, value] arrays');
      }
      addPair(flat, pair[0], pair[1]);
    }
  } else if (headers instanceof Map || (typeof headers.entries === 'function' && typeof headers.get === 'function')) {
    // Map, WHATWG Headers (fetch, undici), or anything with entries()
    for (const [name, value] of headers.entries()) addPair(flat, name, value);
  } else {
    for (const name of Object.keys(headers)) addPair(flat, name, headers[name]);
  }
  return flat;
}

function toBytes(body, what = 'body') {
  if (body instanceof Uint8Array) return body; // includes Buffer
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError(`${what} must be a Buffer, a Uint8Array, an ArrayBuffer or a string`);
}

function toSecrets(secrets) {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) {
    throw new TypeError('secrets must be a string or an array of strings');
  }
  return list;
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
  const flat = flattenHeaders(headers);
  const bytes = toBytes(body);
  const list = toSecrets(secrets);
  const tolerance = toNumber(o.toleranceSeconds, 'toleranceSeconds', DEFAULT_TOLERANCE);
  const maxBody = toNumber(o.maxBodyBytes, 'maxBodyBytes', DEFAULT_MAX_BODY);
  const now = nowSeconds(o.now);
  return call(() => native.verifyWebhook(flat, bytes, list, now, tolerance, maxBody));
}

/** A verifier built once with its secrets and options; `verify(headers, body, now?)`. */
class WebhookVerifier {
  constructor(secrets, opts) {
    const o = options(opts);
    const list = toSecrets(secrets);
    const tolerance = toNumber(o.toleranceSeconds, 'toleranceSeconds', DEFAULT_TOLERANCE);
    const maxBody = toNumber(o.maxBodyBytes, 'maxBodyBytes', DEFAULT_MAX_BODY);
    this._inner = call(() => new native.WebhookVerifier(list, tolerance, maxBody));
  }
  verify(headers, body, now) {
    const flat = flattenHeaders(headers);
    const bytes = toBytes(body);
    const t = nowSeconds(now);
    return call(() => this._inner.verify(flat, bytes, t));
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
  const list = toSecrets(secret);
  const bytes = toBytes(body);
  const ts = Math.floor(nowSeconds(o.timestamp));
  const id = o.deliveryId === undefined ? globalThis.crypto.randomUUID() : toStr(o.deliveryId, 'deliveryId');
  const values = call(() => native.signWebhook(list, bytes, ts, id));
  const out = {};
  HEADER_NAMES.forEach((name, i) => {
    out[name] = values[i];
  });
  return out;
}

/** The secrets to verify with at `now` during a rotation (current first). */
function activeSecrets(current, previous, previousValidUntil, now) {
  toStr(current, 'current');
  if (previous !== undefined && previous !== null) toStr(previous, 'previous');
  const until = toNumber(previousValidUntil, 'previousValidUntil', undefined);
  return call(() => native.activeSecrets(current, previous ?? undefined, until, nowSeconds(now)));
}

// ---- dedup ---------------------------------------------------------------------------------------

function deliveryKey(namespace, deliveryId) {
  return call(() => native.deliveryKey(toStr(namespace, 'namespace'), toStr(deliveryId, 'deliveryId')));
}

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

function contentKey(secret, timestamp, body) {
  return call(() => native.contentKey(toStr(secret, 'secret'), toStr(String(timestamp), 'timestamp'), toBytes(body)));
}

function idempotencyKey(tenant, operationId, body) {
  const bytes = body === undefined || body === null ? new Uint8Array(0) : toBytes(body);
  return call(() => native.idempotencyKey(toStr(tenant, 'tenant'), toStr(operationId, 'operationId'), bytes));
}

/** Bounded in-memory dedup window; `checkAndInsert(key, now?)` is true when first seen. */
class DedupWindow {
  constructor(capacity, ttlSeconds) {
    const seed = globalThis.crypto.getRandomValues(new Uint8Array(16));
    this._inner = call(() => new native.DedupWindow(toNumber(capacity, 'capacity'), toNumber(ttlSeconds, 'ttlSeconds'), seed));
  }
  checkAndInsert(key, now) {
    return call(() => this._inner.checkAndInsert(toStr(key, 'key'), nowSeconds(now)));
  }
  has(key, now) {
    return call(() => this._inner.contains(toStr(key, 'key'), nowSeconds(now)));
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

module.exports = {
  verifyWebhook,
  WebhookVerifier,
  signWebhook,
  activeSecrets,
  deliveryKey,
  eventKey,
  contentKey,
  idempotencyKey,
  DedupWindow,
  RoyaltyKitError,
  WebhookVerificationError,
  InvalidArgumentError,
  HEADER_NAMES,
};
