// royaltykit/client as ESM: the CommonJS module's names (one instance whichever way it is loaded).
import client from './client.cjs';

export const { createReportsClient, createEnterpriseClient, Session, RedisFleet, ReconcileRequired, CallFailedError, PaginationError, ExportInterruptedError } = client;
