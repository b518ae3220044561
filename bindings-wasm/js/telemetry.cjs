'use strict';
// The telemetry scopes of clients and receivers (royaltykit/otel makes the telemetry objects).
/**
 * `telemetry[open](...args)` as a scope whose `event` and `end` never throw: telemetry never changes
 * what a call or a delivery does (as in Python and Kotlin). A failure is reported on
 * `console.error`, once per telemetry object. Null without telemetry.
 */
function telemetryScope(telemetry, open, ...args) {
  if (!telemetry) return null;
  const failed = (what, e) => {
    if (telemetryFailed.has(telemetry)) return;
    telemetryFailed.add(telemetry);
    console.error(`royaltykit: telemetry failed (${what}); spans may be missing:`, e);
  };
  let scope;
  try {
    scope = telemetry[open](...args);
  } catch (e) {
    failed(open, e);
    return null;
  }
  if (!scope) return null;
  return {
    event(e) {
      try { scope.event?.(e); } catch (err) { failed('event', err); }
    },
    end(r) {
      try { scope.end(r); } catch (err) { failed('end', err); }
    },
  };
}

const telemetryFailed = new WeakSet();

module.exports = { telemetryScope };
