// royaltykit/client on Workers: the wasm imported as a compiled module (Workers may not compile
// it from bytes), then the clients.
import './native/init.workerd.mjs';
import client from './client.lib.cjs';

export const { createReportsClient, createEnterpriseClient, Session, RedisFleet, ReconcileRequired, CallFailedError, PaginationError, ExportInterruptedError } = client;
