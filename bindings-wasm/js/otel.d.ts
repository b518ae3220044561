// royaltykit/otel: the clients' and receivers' telemetry as OpenTelemetry spans (needs the
// optional peer dependency @opentelemetry/api).
import type { Telemetry } from './index.js';

/** The parts of an OpenTelemetry TracerProvider used (structurally, so these types need no @opentelemetry/api). */
export interface TracerProviderLike {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  getTracer(name: string, version?: string): any;
}

/**
 * A `telemetry` for the clients and receivers that records OpenTelemetry spans: an INTERNAL span
 * per operation (`royaltykit.operation`, `royaltykit.attempts`, `error.type` on failure; its
 * retry, rate_limited, refresh_token, poll, progress (`royaltykit.received_bytes`,
 * `royaltykit.total_bytes`), notice and reconcile events as span events), a
 * CLIENT span per send (`http.request.method`, `url.full`, `server.address`, `server.port`,
 * `http.response.status_code`, `http.request.resend_count`), a SERVER span per delivery
 * (`royaltykit.outcome`, `royaltykit.delivery_id`). `tracerProvider` default: the global one;
 * or give a `tracer`. Never a header, token, credential, query or body.
 */
export function openTelemetry(options?: {
  tracerProvider?: TracerProviderLike;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tracer?: any;
}): Required<Telemetry>;
export type { Telemetry };
