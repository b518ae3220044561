// royaltykit/otel as ESM: the CommonJS module's names.
import m from './otel.cjs';

export const { openTelemetry } = m;
