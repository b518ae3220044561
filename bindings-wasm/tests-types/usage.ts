// Type-checked (tsc --strict, no @types/node) against the installed package by
// scripts/test-node.sh: the declarations a TypeScript consumer relies on, derived from the core.
import * as rk from 'royaltykit';
import type { HeadersLike, RetryDecision, VerifiedWebhook } from 'royaltykit';

const body = '{"event":"ddex.import.failed"}';
const signed: rk.SignedHeaders = rk.signWebhook('whsec_a', body, { timestamp: 1000, deliveryId: 'd1' });
const asHeaders: HeadersLike = signed;
const verified: VerifiedWebhook = rk.verifyWebhook(asHeaders, body, ['whsec_a'], { now: 1000, toleranceSeconds: 300 });
const replayOf: string | null = verified.event.replayOf;
const secretIndex: number = verified.secretIndex;

try {
  new rk.WebhookVerifier('whsec_a').verify(new Map([['Service-Webhook-Id', 'x']]), body);
} catch (e) {
  if (e instanceof rk.WebhookVerificationError) {
    const status: number = e.httpStatus;
    const header: string | null = e.header;
    const skew: number | null = e.skewSeconds;
    void [status, header, skew];
  } else if (e instanceof rk.ApiError) {
    const kind: rk.ApiErrorKind = e.kind;
    const bodyCode: string | null = e.bodyCode;
    const fields: Record<string, string[]> = e.fieldErrors;
    void [kind, bodyCode, fields];
  } else if (e instanceof rk.ExportStateError) {
    const allowed: string[] = e.allowed;
    void allowed;
  }
}

const decision: RetryDecision = rk.decideRetry({ retryClass: 'unsafe_create', attempt: 1, transport: 'timeout' });
const action: 'retry' | 'stop' | 'reconcile' | 'refresh_token' = decision.action;
const reconcile: rk.Reconcile | null = decision.reconcile;
const op: rk.Operation = rk.operation('createPlatformExport');
const retryClass: rk.RetryClass = op.retryClass;
const poll: rk.PollAction = rk.exportPollDecision('queued', 1).action;
const state: rk.ExportStateInfo = rk.exportState('processing');
const commands: rk.ExportCommand[] = state.allowedCommands;
const rate: rk.RateDecision = new rk.RateBudget('enterprise').tryAcquire(1000);
const notices: rk.ResponseNotices = rk.responseNotices([['Deprecation', '@1']]);
const apiError: rk.ApiError = rk.parseApiError('reports', 429, [['Retry-After', '7']], '{}');
const retryAfter: number | null = apiError.retryAfterSeconds;
void [replayOf, secretIndex, action, reconcile, retryClass, poll, commands, rate, notices, retryAfter];

// Tokens are typed by the API that issued them: a plain string or a look-alike object is refused.
const cached: rk.BearerToken = rk.BearerToken.enterprise('tok');
const tokenApi: 'reports' | 'enterprise' = cached.api;
rk.buildRequest('listEnterpriseSubscriptions', { token: cached });
// @ts-expect-error a plain string does not say which API issued it
rk.buildRequest('listEnterpriseSubscriptions', { token: 'tok' });
// @ts-expect-error an object shaped like an EnterpriseToken is not one
rk.buildRequest('listEnterpriseSubscriptions', { token: { token: 'tok', expiresAt: null, refreshAt: null } });
void tokenApi;

// Receivers: the options, a store of one's own, the subpath integrations.
import { webhookMiddleware } from 'royaltykit/express';
import { royaltykitWebhooks } from 'royaltykit/fastify';
import { webhookHandler as fetchHandler } from 'royaltykit/fetch';

const ownStore: rk.DedupStore = {
  claim: async (key: string): Promise<rk.ClaimState> => (key ? 'new' : 'done'),
  commit: () => undefined,
  release: () => undefined,
};
const receiver = new rk.WebhookReceiver({
  secrets: ['whsec_a'], namespace: 'org-1', store: ownStore,
  handler: async (d: VerifiedWebhook) => { void d.event.resourceUrl; },
});
void receiver.receive(signed, body, 1000).then((r: rk.Receipt) => [r.status, r.body] as const);
const plan: rk.ReceiverDecision = rk.planReceipt('org-1', verified);
const step: rk.ReceiverStep = rk.decideClaims(['new', 'done']).step;
const command: string[] = new rk.RedisDedupProtocol({ leaseSeconds: 30 }).claimCommand('k', rk.RedisDedupProtocol.newToken());
const middleware = webhookMiddleware(receiver);
const handler = fetchHandler({ secrets: 'whsec_a', namespace: 'org-1', handler: () => undefined });
void [plan.keys, step, command, middleware, handler, royaltykitWebhooks, new rk.RedisDedupStore({ call: async () => 'OK' })];

// Protocol machines: steps narrow on `step`.
const job = new rk.ExportJob({ tenantId: '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e', body: { format: 'csv' }, seed: 1 });
const jobStep = job.next(0);
if (jobStep.step === 'send') {
  const method: string = jobStep.request.method;
  job.report({ status: 200, headers: {}, body: '[]' }, 0);
  const outcomes: rk.StepOutcome[] = [{ status: 200, headers: [['Content-Length', '3']], length: 3 }, { failure: 'timeout' }, { reply: null }];
  void outcomes;
  void method;
} else if (jobStep.step === 'fail' || jobStep.step === 'reconcile') {
  const error: rk.RoyaltyKitError = rk.callStepError(jobStep, 'createPlatformExport', 'https://reports.example');
  void error;
}
const typedReceipt = new rk.WebhookVerifier('whsec_x').receipt({}, '{}', { namespace: 'ns', now: 0 });
const receiptStep = typedReceipt.next();
if (receiptStep.step === 'claim') {
  const key: string = receiptStep.key;
  void key;
  const outcomes: rk.ReceiptOutcome[] = ['done', 'failed', 'cancelled', { claimed: 'in_progress' }, { marked: false }, { enqueued: true }];
  const next: rk.ReceiptStep = typedReceipt.report(outcomes[3]);
  void next;
}

// royaltykit/client: operation ids and their parameter names come from the core's catalog.
import { createReportsClient, CallFailedError } from 'royaltykit/client';
import type { ExportResult, OperationId } from 'royaltykit/client';

const reportsClient = createReportsClient({ baseUrl: 'https://reports.example', credentials: { clientId: 'a', clientSecret: 'b' }, tenantId: 't' });
void reportsClient.request('getPlatformExport', { path: { export: 'exp_1' } });
void reportsClient.request('listPlatformExports', { query: { limit: 10, cursor: null } });
// @ts-expect-error an operation id the catalog does not have
void reportsClient.request('getPlatformExpor');
// @ts-expect-error a path parameter the operation does not take
void reportsClient.request('getPlatformExport', { path: { exportId: 'exp_1' } });
// @ts-expect-error the export list takes only the query parameters the spec lists
void reportsClient.request('listPlatformExports', { query: { owner: 'me' } });
const exported: Promise<ExportResult> = reportsClient.runExport({ format: 'csv' }, { onProgress: (got: number, total: number | null) => void [got, total] });
const anOperation: OperationId = 'createPlatformExport';
void [exported, anOperation, CallFailedError];

// Issue 39: sessions, the await_token and reconcile steps, secrets that carry their expiry, the
// checked resource path, the content key opt-in, tenant-bound reporting tokens.
const session = new rk.Session('enterprise');
const onSession = new rk.Call('listEnterpriseCountries', { seed: 1 });
const sessionVersion: number = session.version;
const sessionStep = onSession.next(0, session);
if (sessionStep.step === 'await_token') {
  void session.waitForChange(sessionVersion, sessionStep.seconds).then((changed: boolean) => changed);
} else if (sessionStep.step === 'refresh_token') {
  session.storeToken(rk.BearerToken.enterprise('tok'));
  session.exchangeFailed('why');
  session.abandonExchange();
} else if (sessionStep.step === 'reconcile') {
  const candidates: string[] = sessionStep.candidates;
  const stage: 'reconcile' | null = sessionStep.stage;
  void [candidates, stage];
}
void [session.exchanges, session.exchanging, session.hasToken, new rk.Session(), new rk.Session(new rk.RateBudget('enterprise'))];
new rk.ExportJob({ tenantId: 't', body: {}, maxPollSeconds: 600, reconcileGraceSeconds: 0 });
try {
  void 0;
} catch (e) {
  if (e instanceof rk.ReconcileRequired) {
    const ids: string[] = e.candidates;
    void ids;
  }
}
const active: rk.WebhookSecret[] = rk.activeSecrets('whsec_new', 'whsec_old', '2026-11-22T03:05:06Z', 0);
const expiry: number | null = active[0].validUntil;
const rotating = new rk.WebhookVerifier([...active, new rk.WebhookSecret('whsec_x', new Date()), { secret: 'whsec_y', validUntil: '2026-11-22T03:05:06Z' }]);
const path: string = rk.resourcePath(verified.event);
const parsed: number | null = rk.parseTimestamp('20261127T030000Z');
void [expiry, rotating, path, rk.resourcePath('/api/v1/releases/1'), parsed];
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', handler: () => undefined, claimContentKey: true });
void rk.planReceipt('org-1', verified, { claimContentKey: true });
void new rk.WebhookVerifier('whsec_a').receipt({}, '', { namespace: 'ns', claimContentKey: true });
rk.BearerToken.reports('tok', '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e');
// @ts-expect-error a reporting token restored from a cache names its tenant
rk.BearerToken.reports('tok');

import { Session as ClientSession } from 'royaltykit/client';
const shared = createReportsClient({ baseUrl: 'https://reports.example', credentials: { clientId: 'a', clientSecret: 'b' }, tenantId: 't' });
const second = createReportsClient({ baseUrl: 'https://reports.example', credentials: { clientId: 'a', clientSecret: 'b' }, tenantId: 't', session: shared.session });
const sameSession: ClientSession = second.session;
void [sameSession, shared.runExport({}, { maxPollSeconds: 600 })];

// Issue 42: timeouts, poll bounds, checkpoints and resume, interruption, telemetry (royaltykit/otel).
import { ExportInterruptedError } from 'royaltykit/client';
import type { Telemetry, CallOptions, AbortSignalLike } from 'royaltykit/client';
import { openTelemetry } from 'royaltykit/otel';
const telemetry: Telemetry = openTelemetry();
const configured = createReportsClient({
  baseUrl: 'https://reports.example', credentials: { clientId: 'a', clientSecret: 'b' }, tenantId: 't',
  connectTimeoutMs: 5000, readTimeoutMs: 20_000, minPollIntervalSeconds: 2, maxPollIntervalSeconds: 30, telemetry,
});
const perCall: CallOptions = { readTimeoutMs: 60_000, connectTimeoutMs: null, maxPollIntervalSeconds: 10 };
declare const abortSignal: AbortSignalLike;
void configured.withOptions(perCall).runExport({ format: 'csv' }, {
  to: 'out.csv', signal: abortSignal, onCheckpoint: async (text: string) => void text, minPollIntervalSeconds: 5,
}).catch((e: unknown) => {
  if (e instanceof ExportInterruptedError) {
    const id: string | null = e.exportId;
    const code: 'export_interrupted' = e.code;
    return configured.runExport(null, { resume: e.checkpoint, to: 'out.csv' }).then(() => [id, code]);
  }
  throw e;
});
// @ts-expect-error a resumed job takes its bounds from the checkpoint
void configured.runExport(null, { resume: '{}', requestId: 'r' });
// @ts-expect-error a new job needs a body
void configured.runExport(null, { to: 'out.csv' });
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', handler: () => undefined, telemetry: openTelemetry({ tracerProvider: { getTracer: () => ({}) } }) });
const scope = telemetry.operation?.('listPlatformExports', { baseUrl: 'https://reports.example' });
scope?.end(null);

// Issue 43: every item of a list (paginate), the Pages machine, PaginationError.
import { PaginationError } from 'royaltykit/client';
import type { PaginateOptions } from 'royaltykit/client';
async function everyExport(): Promise<unknown[]> {
  const bounds: PaginateOptions = { maxItems: 500, pageSize: 50, signal: abortSignal };
  const items: unknown[] = [];
  try {
    for await (const item of configured.paginate('listPlatformExports', { query: { format: 'csv' } }, bounds)) items.push(item);
  } catch (e) {
    if (e instanceof PaginationError) {
      const code: 'page_unreadable' | 'next_page_unknown' | 'list_cursor_repeated' = e.code;
      void code;
    }
  }
  // @ts-expect-error the operation's query names come from the catalog
  void configured.paginate('listPlatformExports', { query: { owner: 'me' } });
  // @ts-expect-error paginate's options are named
  void configured.paginate('listPlatformExports', {}, { limit: 5 });
  return items;
}
void everyExport;
const walk = new rk.Pages('listEnterpriseSubscriptions', { size: 10 }, { maxPages: 3 });
const pageStep: rk.PagesStep = walk.next();
if (pageStep.step === 'fetch') {
  const query: Array<[string, string]> = pageStep.query;
  const at: rk.PageItems | null = walk.page('{"data": []}');
  const member: string | null | undefined = at?.member;
  void [query, member, at?.take];
} else if (pageStep.step === 'done') {
  const end: rk.PagesEnd = pageStep.end;
  void [end, pageStep.pages, pageStep.items];
} else {
  const error: rk.PaginationError = pageStep.error;
  void error;
}
const counts: number[] = [walk.pages, walk.items];
void counts;
walk.free();

// Issue 43: the canonical fetch of the resource an event names.
import { createEnterpriseClient } from 'royaltykit/client';
import type { EnterpriseClient } from 'royaltykit/client';
const org: EnterpriseClient = createEnterpriseClient({ baseUrl: 'https://org.example', credentials: { apiKey: 'k', apiSecret: 's' } });
declare const delivered: rk.VerifiedWebhook;
void org.fetchResource(delivered, { userId: '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e' });
void org.fetchResource(delivered.event);
void org.fetchResource('/api/v1/releases/1', { signal: abortSignal });
// @ts-expect-error: a number is not a resource
void org.fetchResource(42);

// Issue 43: subscriptions and their reveal-once secrets.
async function subscribe(): Promise<rk.WebhookVerifier> {
  const created: rk.RevealedSecret = await org.createSubscription(
    { name: 'ops', endpointUrl: 'https://hooks.example/rk', events: ['ddex.delivery.failed'] },
    { requestId: 'subscribe-ops', signal: abortSignal },
  );
  const store: string = created.secret.secret;
  const reference: string | null = created.reference;
  const record: string = created.record;
  const rotated = await org.rotateSecret(reference ?? 'wh_1');
  const until: number | null = rotated.previousValidUntil;
  const both: rk.WebhookSecret[] = rotated.secrets(store);
  void [record, until, rotated.secrets(), rotated.secrets(null)];
  // A rotation on a live receiver: the new secrets for the deliveries from now on.
  const live = new rk.WebhookReceiver({ secrets: created.secrets(), namespace: 'org-1', inbox: pgInbox });
  const swapped: void = live.useSecrets(both);
  live.useSecrets('whsec_b');
  void swapped;
  // @ts-expect-error secrets, not a RevealedSecret
  live.useSecrets(rotated);
  // @ts-expect-error the subscription's members are camelCase
  void org.createSubscription({ name: 'ops', endpoint_url: 'https://hooks.example/rk', events: [] });
  // @ts-expect-error a RevealedSecret comes from revealedSecret or the client, not its constructor
  void new rk.RevealedSecret();
  return new rk.WebhookVerifier(both);
}
void subscribe;
const revealed: rk.RevealedSecret = rk.revealedSecret(new Uint8Array(0));
void revealed;
try {
  void 0;
} catch (e) {
  if (e instanceof rk.ReconcileRequired && e.reconcile === 'rotate_again') void e.reason;
}
const rotationClass: rk.RetryClass = 'secret_rotation';
void rotationClass;

// Issue 43 point 6: typed event names, and routing a delivery by its event name.
import { EventRouter as FetchEventRouter, type EventNameLike, type KnownEventName } from 'royaltykit/fetch';
import type { RoyaltyKitWebhooksOptions } from 'royaltykit/fastify';

const knownNames: KnownEventName[] = rk.knownEventNames();
const asStrings: string[] = rk.knownEventNames();
const failedName: rk.KnownEventName = 'ddex.delivery.failed';
// @ts-expect-error a name the spec does not list is not a KnownEventName
const notListed: rk.KnownEventName = 'ddex.delivery.retried';
const anyName: EventNameLike = 'ddex.delivery.retried';
const listedToo: rk.EventNameLike = failedName;
const eventRouter: rk.EventRouter = new rk.EventRouter()
  .on('ddex.delivery.failed', async (d: VerifiedWebhook) => { const name: string = d.event.name; void name; })
  .on(anyName, (d, connection) => { void [d.deliveryId, connection]; })
  .onAny((d) => d.event.isKnown)
  .otherwise(() => undefined);
const eventRoute: rk.Route = eventRouter.route('ddex.import.completed');
const routeParts: [number[], boolean, boolean] = [eventRoute.named, eventRoute.any, eventRoute.fallback];
const asHandler: rk.WebhookHandler = eventRouter.handler;
const ran: Promise<void> = eventRouter.handler(verified);
void [knownNames, asStrings, notListed, listedToo, routeParts, asHandler, ran];
// The router, or its handler, wherever a handler goes.
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', handler: eventRouter });
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', handler: eventRouter.handler });
void webhookMiddleware({ secrets: 'whsec_a', namespace: 'org-1', handler: eventRouter });
void fetchHandler({ secrets: 'whsec_a', namespace: 'org-1', handler: new FetchEventRouter().onAny(() => undefined) });
const fastifyRouted: RoyaltyKitWebhooksOptions = { path: '/webhooks', secrets: 'whsec_a', namespace: 'org-1', handler: eventRouter };
void fastifyRouted;
// @ts-expect-error a handler is a function
eventRouter.on('ddex.delivery.failed', 'not a handler');
// @ts-expect-error an event name is a string
eventRouter.on(42, () => undefined);
// @ts-expect-error a router is built empty
void new rk.EventRouter('ddex.delivery.failed');
// @ts-expect-error an object with a handler member is not a router
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', handler: { handler: () => undefined } });

// Issue 43 point 3: delivery recovery, the Recovery machine and a store's read-only state.
import type { RecoverDeliveriesOptions, DeliveryStates } from 'royaltykit/client';
const recoveryWindow = new rk.DedupWindow(1000);
const windowState: rk.ClaimState = recoveryWindow.state('dlv_key');
const recoveryStore: rk.DeliveryStates = { state: async (key: string) => (key ? 'done' : 'new') };
const redisStates: DeliveryStates = new rk.RedisDedupStore({ sendCommand: async (args: string[]) => args[0] });
const sqliteStates: rk.DeliveryStates = new rk.SqliteDedupStore({});
const recoverOptions: RecoverDeliveriesOptions = {
  store: recoveryWindow, namespace: 'org-1', since: new Date(Date.now() - 3600_000), maxReplays: 10, maxReplaysPerDelivery: 2,
  maxEntries: 5000, signal: abortSignal,
};
async function recoverOnce(): Promise<number> {
  const report: rk.RecoveryReport = await org.recoverDeliveries('wh_001', recoverOptions);
  const byUnixSeconds = await org.recoverDeliveries('wh_001', { store: recoveryStore, namespace: 'org-1', since: 1_800_000_000 });
  const first: rk.RecoveredDelivery | undefined = report.deliveries[0];
  const action: rk.RecoveryAction | undefined = first?.action;
  const counts: number[] = [report.entries, report.considered, report.beforeSince, report.skipped, report.replayed];
  const end: rk.PagesEnd = report.end;
  const when: number | null | undefined = first?.createdAt;
  void [byUnixSeconds, action, counts, end, when, first?.replay, first?.error, first?.replays];
  // @ts-expect-error a store without state() cannot be checked
  await org.recoverDeliveries('wh_001', { store: { claim: () => 'new' }, namespace: 'org-1', since: 0 });
  // @ts-expect-error since is a Date or Unix seconds
  await org.recoverDeliveries('wh_001', { store: recoveryStore, namespace: 'org-1', since: '2026-11-27' });
  // @ts-expect-error the options are named
  await org.recoverDeliveries('wh_001', { store: recoveryStore, namespace: 'org-1', since: 0, max_replays: 1 });
  return report.replayed;
}
void [recoverOnce, windowState, redisStates, sqliteStates];
const run = new rk.Recovery('wh_001', 'org-1', new Date(), null, { maxReplays: 5 });
const recoveryStep: rk.RecoveryStep = run.next();
switch (recoveryStep.step) {
  case 'fetch': {
    const query: Array<[string, string]> = recoveryStep.query;
    const op: OperationId = recoveryStep.operationId;
    void [query, op];
    run.page('{"data": []}');
    break;
  }
  case 'check':
    run.checked(recoveryStep.keys.map((k) => recoveryWindow.state(k)));
    break;
  case 'replay': {
    const delivery: string = recoveryStep.delivery;
    void delivery;
    run.replayed(new Uint8Array(0));
    run.replayFailed('call_failed');
    break;
  }
  case 'done': {
    const done: rk.RecoveryReport = recoveryStep.report;
    void done;
    break;
  }
  default: {
    const failed: rk.PaginationError = recoveryStep.error;
    void failed;
  }
}
// @ts-expect-error a state is one of the ClaimState names
run.checked(['maybe']);
const bounds: rk.RecoveryOptions = { maxEntries: 100 };
void bounds;
run.free();

// Issue 43 point 1: the inbox — a receiver in inbox mode, the worker, the InboxWorker machine.
interface PgClientLike { query(sql: unknown, args?: unknown[]): Promise<{ rows: unknown[] }> }
const pgPool = { query: async (_sql: unknown) => ({ rows: [] as unknown[] }), connect: async (): Promise<PgClientLike> => ({ query: async () => ({ rows: [] }) }) };
const pgInbox = new rk.PostgresInbox(pgPool, { table: 'app_inbox', leaseSeconds: 60, createTable: false });
const liteInbox = new rk.SqliteInbox({}, { ttlSeconds: 86400, clock: () => 1_800_000_000 });
const asStates: rk.DeliveryStates = liteInbox;
const asInbox: rk.Inbox = pgInbox;
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', inbox: pgInbox });
void webhookMiddleware({ secrets: 'whsec_a', namespace: 'org-1', inbox: liteInbox, onEvent: (e) => e.outcome === 'queued' });
void fetchHandler({ secrets: 'whsec_a', namespace: 'org-1', inbox: pgInbox });
const fastifyInbox: RoyaltyKitWebhooksOptions = { path: '/webhooks', secrets: 'whsec_a', namespace: 'org-1', inbox: liteInbox };
// @ts-expect-error with an inbox the handler runs in the worker
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', inbox: pgInbox, handler: () => undefined });
// @ts-expect-error an inbox is not a dedup store
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', inbox: pgInbox, store: recoveryWindow });
async function work(): Promise<number> {
  const report: rk.InboxReport = await pgInbox.runWorker(async (d: rk.InboxDelivery, client: PgClientLike) => {
    await client.query('INSERT INTO effects (resource) VALUES ($1)', [d.event.resourceReference]);
  }, { signal: abortSignal, maxAttempts: 10, pollSeconds: 0.5, onError: (e, d) => void [e, d.attempts] });
  const drained = await liteInbox.drain(eventRouter, { seed: 7, onStoreError: (e, step) => void [e, step] });
  const poison: rk.PoisonEntry[] = await pgInbox.poisoned(10);
  const retried: boolean = await pgInbox.retry(poison[0]?.key ?? '');
  const counts = await liteInbox.counts();
  const pending: number | undefined = counts.pending;
  const state: rk.ClaimState = await liteInbox.state('dlv_key');
  const purged: number = await pgInbox.purge();
  const isNew: boolean = await liteInbox.enqueue('dlv_key', 'dlv_1', 'ddex.delivery.failed', '{}');
  // @ts-expect-error the options are named
  await liteInbox.drain(() => undefined, { max_attempts: 2 });
  void [drained, retried, pending, state, purged, isNew];
  return report.processed + report.retried + report.poisoned;
}
const inboxWorker = new rk.InboxWorker({ maxAttempts: 3, drain: true, seed: 1 });
const inboxStep: rk.InboxStep = inboxWorker.next();
if (inboxStep.step === 'run_handler') {
  const entry: rk.InboxEntry = inboxStep.entry;
  void inboxWorker.report({ failed: `failed ${entry.key}` }, 1_800_000_000);
} else if (inboxStep.step === 'settle') {
  const retryAt: number = inboxStep.retryAt;
  void retryAt;
}
void inboxWorker.claimed({ key: 'k', deliveryId: 'd', event: 'e', body: '{}', attempts: 1 }, 1_800_000_000);
void inboxWorker.claimed(null, 1_800_000_000);
const inboxOutcomes: rk.InboxOutcome[] = ['done', { claimed: null }, { marked: true }, { failed: 'E: boom' },
  { claimed: { key: 'k', deliveryId: 'd', event: 'e', body: '{}', attempts: 1 } }];
const afterReport: rk.InboxStep = inboxWorker.report(inboxOutcomes[1], 1_800_000_000);
void afterReport;
const inboxSql: rk.SqlStatement = new rk.SqlInboxProtocol('postgres', { paramStyle: 'dollar' }).claim(1_800_000_000);
const lookedUp: rk.ClaimState = rk.SqlDedupProtocol.lookupReply(null);
const redisLookup: string[] = new rk.RedisDedupProtocol().lookupCommand('k');
const receiptOutcome: rk.WebhookReceipt['outcome'] = 'queued';
void [asStates, asInbox, fastifyInbox, work, inboxSql, lookedUp, redisLookup, receiptOutcome, rk.RedisDedupProtocol.lookupReply(undefined)];
inboxWorker.free();

// The inbox on a Redis stream (at least once): ioredis or node-redis; the handler gets the client.
declare const nodeRedis: { sendCommand(args: string[]): Promise<unknown>; get(key: string): Promise<string | null> };
const redisInbox = new rk.RedisInbox(nodeRedis, { prefix: '{app:inbox}:', leaseSeconds: 30, ttlSeconds: 86400, clock: () => 1_800_000_000 });
const redisAsInbox: rk.Inbox = redisInbox;
const redisAsStates: rk.DeliveryStates = redisInbox;
void new rk.WebhookReceiver({ secrets: 'whsec_a', namespace: 'org-1', inbox: redisInbox });
void webhookMiddleware({ secrets: 'whsec_a', namespace: 'org-1', inbox: redisInbox });
void new rk.RedisInbox({ call: async (..._args: string[]) => 1 });
async function redisWork(): Promise<number> {
  const report: rk.InboxReport = await redisInbox.runWorker(async (d: rk.InboxDelivery, client) => {
    await client.get(`seen:${d.deliveryId}`);
  }, { signal: abortSignal, maxAttempts: 10 });
  const poison: rk.PoisonEntry[] = await redisInbox.poisoned();
  const counts: number | undefined = (await redisInbox.counts()).done;
  const text: string = rk.handlerErrorText('TypeError', 'bad');
  const limit: number = rk.DEFAULT_POISON_LISTED + rk.SqlInboxProtocol.limits.defaultPoisonListed;
  const transactional: false = redisInbox.transactional;
  void [poison, counts, text, limit, transactional, await redisInbox.retry('k'), await redisInbox.purge(), await redisInbox.state('k')];
  return report.processed;
}
const redisProtocol = new rk.RedisInboxProtocol({ prefix: '{t}:' });
const claimCommand: string[] = redisProtocol.claimCommand(1_800_000_000);
const claimedEntry: rk.InboxEntry | null = rk.RedisInboxProtocol.claimReply(null);
const redisCounts: rk.InboxCounts = rk.RedisInboxProtocol.countsReply('[0,1,2]');
const redisPoison: rk.InboxPoisonEntry[] = rk.RedisInboxProtocol.poisonedReply('[]');
const added: boolean = rk.RedisInboxProtocol.addedReply(1);
// @ts-expect-error a Redis client has sendCommand or call
void new rk.RedisInbox({ query: async () => null });
void [redisAsInbox, redisAsStates, redisWork, claimCommand, claimedEntry, redisCounts, redisPoison, added];

// Issue 43 point 7: fleets — the processes of one API client sharing one token and one rate
// budget through Redis.
import { RedisFleet as ClientRedisFleet } from 'royaltykit/client';
declare const redisClient: { sendCommand(args: string[]): Promise<unknown> };
const redisFleet: rk.RedisFleet = new ClientRedisFleet(redisClient, { prefix: 'royaltykit:fleet:org-1:' });
const fleetClient: EnterpriseClient = createEnterpriseClient({ baseUrl: 'https://org.example', credentials: { apiKey: 'k', apiSecret: 's' }, fleet: redisFleet });
const fleetOfClient: rk.Fleet | null = fleetClient.session.fleet;
const bareFleet = new rk.Fleet();
const fleetSession: rk.Session = bareFleet.session('enterprise');
const onFleet = new rk.Call('listEnterpriseCountries', { seed: 1 });
const fleetStep: rk.CallStep = onFleet.next(1_800_000_000, fleetSession);
if (fleetStep.step === 'reserve') {
  const command: string[] = fleetStep.command;
  void redisFleet.command(command).then((reply: string | null) => onFleet.report({ reply }, 1_800_000_000), () => onFleet.report({ failure: 'connect_failed' }));
}
const fleetToken = new rk.FleetToken(fleetSession, 'enterprise', { seed: 7, now: 1_800_000_000 });
const tokenStep: rk.FleetTokenStep = fleetToken.next();
if (tokenStep.step === 'command') {
  void fleetToken.replied(null, fleetSession).step;
} else if (tokenStep.step === 'exchange') {
  // Cancelled mid-exchange: release the fleet's lock (best effort), then abandon the exchange.
  const unlock: string[] | null = fleetToken.abandonCommand();
  if (unlock !== null) void redisFleet.command(unlock).catch(() => null).then(() => fleetSession.abandonExchange());
  void fleetToken.exchanged(rk.BearerToken.enterprise('tok'), null);
} else if (tokenStep.step === 'wait') {
  const pollSeconds: number = tokenStep.seconds;
  void [pollSeconds, fleetToken.waited()];
} else if (tokenStep.step === 'failed') {
  const why: string = tokenStep.reason;
  void why;
}
const scripts: string[] = [rk.RESERVE_SCRIPT, rk.PUBLISH_SCRIPT, rk.UNLOCK_SCRIPT, rk.DEFAULT_FLEET_PREFIX];
const fleetPoll: number = rk.FLEET_POLL_SECONDS + fleetToken.elapsed();
// @ts-expect-error: a client's fleet is a RedisFleet (its Redis client sends the commands)
createEnterpriseClient({ baseUrl: 'https://org.example', credentials: { apiKey: 'k', apiSecret: 's' }, fleet: bareFleet });
void [fleetOfClient, scripts, fleetPoll, redisFleet.prefix];
fleetToken.free();
