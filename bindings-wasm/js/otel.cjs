'use strict';
// royaltykit/otel: the clients' and receivers' telemetry as OpenTelemetry spans, over
// @opentelemetry/api (an optional peer dependency, required only when openTelemetry() is called;
// the rest of the package never loads this file). The same spans in every language:
// - an INTERNAL span per logical operation (`listPlatformExports`, `runExport`, …) with
//   `royaltykit.operation` and `royaltykit.attempts`; on failure status ERROR and `error.type`
//   (the error's code, an ApiError's kind); its retry, rate_limited, refresh_token, poll,
//   progress (`royaltykit.received_bytes`, `royaltykit.total_bytes`), notice and reconcile events
//   as span events;
// - a CLIENT span per send (named by the HTTP method) under it, with the HTTP client attributes
//   and `http.request.resend_count`;
// - a SERVER span per webhook delivery, with `royaltykit.outcome`.
// Never a header, a token, a credential, a query or a body.

const SPAN_EVENTS = new Set(['retry', 'rate_limited', 'refresh_token', 'poll', 'progress', 'notice', 'reconcile']);

let api = null;
function otelApi() {
  if (api === null) {
    try {
      api = require('@opentelemetry/api');
    } catch (e) {
      throw new Error('royaltykit/otel needs @opentelemetry/api: npm install @opentelemetry/api', { cause: e });
    }
  }
  return api;
}

/** The `error.type` of what an operation threw: an ApiError's kind, else the error's code, else its name. */
function errorType(error) {
  if (error && typeof error === 'object') {
    if (error.code === 'api_error' && typeof error.kind === 'string') return error.kind;
    if (typeof error.code === 'string' && error.code) return error.code;
    if (typeof error.name === 'string' && error.name) return error.name;
  }
  return 'error';
}

/** `server.address` and `server.port` of a client's base URL (the port the scheme implies when none is written). */
function server(baseUrl) {
  try {
    const u = new URL(baseUrl);
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    return { base: `${u.protocol}//${u.host}`, address: u.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return { base: '', address: undefined, port: undefined };
  }
}

/**
 * A `telemetry` for the clients (`createReportsClient({ ..., telemetry })`) and the receivers
 * (`new WebhookReceiver({ ..., telemetry })`, webhookMiddleware, the Fastify plugin,
 * webhookHandler) that records OpenTelemetry spans. `tracerProvider`: where the spans go (default:
 * the global one, `trace.getTracerProvider()`); or a `tracer` of your own. Spans start under the
 * context active when the operation or delivery begins.
 */
function openTelemetry(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('openTelemetry takes an object ({ tracerProvider, tracer })');
  const { trace, context, SpanKind, SpanStatusCode } = otelApi();
  const tracer = options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer('royaltykit', VERSION);

  function operation(name, info) {
    const parent = context.active();
    const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: { 'royaltykit.operation': name } }, parent);
    const inside = trace.setSpan(parent, span);
    const where = server(info?.baseUrl ?? '');
    const sends = new Map(); // the send in flight of each machine (the operation's, its token exchange's)
    let attempts = 0;
    return {
      event(e) {
        if (e.kind === 'send') {
          attempts += 1;
          const attributes = { 'http.request.method': e.method, 'url.full': where.base + (e.path ?? '') };
          if (where.address !== undefined) Object.assign(attributes, { 'server.address': where.address, 'server.port': where.port });
          if (e.attempt > 1) attributes['http.request.resend_count'] = e.attempt - 1;
          sends.get(e.operation)?.end();
          sends.set(e.operation, tracer.startSpan(e.method ?? 'HTTP', { kind: SpanKind.CLIENT, attributes }, inside));
        } else if (e.kind === 'response' || e.kind === 'transport_failure') {
          const child = sends.get(e.operation);
          if (!child) return;
          sends.delete(e.operation);
          if (e.kind === 'response') {
            child.setAttribute('http.response.status_code', e.status);
            if (e.status >= 400) child.setAttribute('error.type', String(e.status));
            if (e.status >= 500) child.setStatus({ code: SpanStatusCode.ERROR });
          } else {
            child.setAttribute('error.type', e.transport ?? 'transport_failure');
            child.setStatus({ code: SpanStatusCode.ERROR });
          }
          child.end();
        } else if (SPAN_EVENTS.has(e.kind)) {
          const attributes = {};
          if (e.rule !== null && e.rule !== undefined) attributes['royaltykit.rule'] = e.rule;
          if (e.reason !== null && e.reason !== undefined) attributes['royaltykit.reason'] = e.reason;
          if (e.waitSeconds !== null && e.waitSeconds !== undefined) attributes['royaltykit.wait_seconds'] = e.waitSeconds;
          if (e.state !== null && e.state !== undefined) attributes['royaltykit.state'] = e.state;
          if (e.receivedBytes !== null && e.receivedBytes !== undefined) attributes['royaltykit.received_bytes'] = e.receivedBytes;
          if (e.totalBytes !== null && e.totalBytes !== undefined) attributes['royaltykit.total_bytes'] = e.totalBytes;
          span.addEvent(e.kind, attributes);
        }
      },
      end(error) {
        const failed = error !== null && error !== undefined;
        // A send still in flight was cut off by what ended the operation (an abort).
        for (const child of sends.values()) {
          if (failed) {
            child.setAttribute('error.type', errorType(error));
            child.setStatus({ code: SpanStatusCode.ERROR });
          }
          child.end();
        }
        sends.clear();
        span.setAttribute('royaltykit.attempts', attempts);
        if (failed) {
          span.setAttribute('error.type', errorType(error));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      },
    };
  }

  function receipt(info) {
    const route = info?.route ?? null;
    const attributes = { 'http.request.method': 'POST' };
    if (route !== null) attributes['http.route'] = route;
    const span = tracer.startSpan(route !== null ? `POST ${route}` : 'POST', { kind: SpanKind.SERVER, attributes }, context.active());
    return {
      end({ outcome, status, deliveryId, error }) {
        span.setAttribute('http.response.status_code', status);
        if (outcome !== null && outcome !== undefined) span.setAttribute('royaltykit.outcome', outcome);
        if (deliveryId !== null && deliveryId !== undefined) span.setAttribute('royaltykit.delivery_id', deliveryId);
        if (outcome === 'handler_failed' || outcome === 'store_unavailable' || outcome === null || outcome === undefined) {
          span.setAttribute('error.type', outcome ?? errorType(error));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      },
    };
  }

  return { operation, receipt };
}

const VERSION = (() => {
  try {
    return require('./package.json').version;
  } catch {
    return undefined;
  }
})();

module.exports = { openTelemetry };
