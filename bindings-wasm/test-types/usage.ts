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
  job.response(200, {}, '[]', 0);
  void method;
} else if (jobStep.step === 'fail') {
  const rule: string = jobStep.rule;
  void rule;
}
const receiptStep = new rk.WebhookVerifier('whsec_x').receipt({}, '{}', { namespace: 'ns', now: 0 }).next();
if (receiptStep.step === 'claim') {
  const key: string = receiptStep.key;
  void key;
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
