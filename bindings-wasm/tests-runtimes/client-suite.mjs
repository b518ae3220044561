// The clients (royaltykit/client) in every runtime with WHATWG fetch: the scripted ETL job against
// the shared fake API (tests/fakeapi/server.py) over loopback HTTP, its clock moved by the
// client's sleep so the server still checks every Retry-After. Expected values come from the fake
// server's own counts and artifact, never from the package.
const TENANT = '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e';
const BODY = { export_class: 'statements', format: 'csv', period: '2026-10' };

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Runs the checks; resolves to the line `ROYALTYKIT-CLIENT <runtime> passed=<n> failed=[...]`.
 * `file` (where the runtime has a file system): `{ path, read }` for an export written to a path.
 */
export async function runClient(runtime, client, base, file) {
  const control = async (what, payload) =>
    (await fetch(`${base}/_fake/${what}`, payload === undefined ? {} : { method: 'POST', body: JSON.stringify(payload) })).json();
  let offset = 0;
  const reports = () => client.createReportsClient({
    baseUrl: base, credentials: { clientId: 'cid', clientSecret: 'csecret' }, tenantId: TENANT, timeoutMs: 2000,
    clock: () => Date.now() / 1000 + offset,
    sleep: async (s) => { offset += s; await control('advance', { seconds: s }); },
  });
  const failed = [];
  let passed = 0;
  const check = (name, ok, got) => (ok ? passed++ : failed.push([name, got]));

  // The ETL run: 503 on the token, 429, a create dropped after it was applied, an expired token,
  // an unknown state, a 206 and a cut body; one export, the whole artifact.
  await control('reset', { scenario: 'etl' });
  const expected = new Uint8Array(await (await fetch(`${base}/_fake/artifact`)).arrayBuffer());
  const r = await reports().runExport(BODY);
  const s = await control('stats');
  check('one export created', s.exports_created === 1, s.exports_created);
  check('the whole artifact', same(r.data, expected), r.data?.length);
  check('every Retry-After honoured', s.retry_after_violations === 0, s.retry_after_violations);
  check('the token refreshed once', s.tokens_issued === 2, s.tokens_issued);

  // Into a WritableStream, written once whole.
  await control('reset', { states: ['ready'], artifact: 'a,b\n1,2\n' });
  const chunks = [];
  await reports().runExport(BODY, { to: new WritableStream({ write: (c) => { chunks.push(...c); } }) });
  check('a WritableStream gets the artifact', new TextDecoder().decode(new Uint8Array(chunks)) === 'a,b\n1,2\n', chunks.length);

  // An error that must stop is an ApiError.
  await control('reset', {});
  const e = await reports().request('getPlatformExport', { path: { export: 'exp_missing' } }).then(() => null, (x) => x);
  check('404 is an ApiError', e?.code === 'api_error' && e.status === 404 && e.kind === 'not_found', `${e?.code} ${e?.status}`);

  // The client's Session: concurrent first calls make one token exchange.
  await control('reset', { token_delay: 0.2 });
  const one = reports();
  await Promise.all([1, 2, 3, 4, 5].map(() => one.request('listPlatformExports')));
  const t = await control('stats');
  check('concurrent first calls make one token exchange', t.tokens_issued === 1 && t.max_concurrent_exchanges === 1, `${t.tokens_issued} ${t.max_concurrent_exchanges}`);

  // A redirect (here on the token exchange, to another origin) is never followed.
  await control('reset', { faults: [{ op: 'exchangePlatformClientCredential', nth: 1, do: 'redirect' }] });
  const red = await reports().request('listPlatformExports').then(() => null, (x) => x);
  const ev = await control('stats');
  check('a redirect is never followed', red?.rule === 'redirect' && ev.evil_requests === 0, `${red?.rule} ${red?.message} ${ev.evil_requests}`);

  // Every item of a list, page after page (an async generator driving the core's Pages).
  await control('reset', { existing: { count: 25 }, list: { page_size: 10 } });
  const ids = (await control('stats')).exports.map((x) => x.id);
  const walked = [];
  for await (const item of reports().paginate('listPlatformExports')) walked.push(item.id);
  const p = await control('stats');
  check('paginate: every item once, in order, 3 pages', same(walked, ids) && p.requests.listPlatformExports === 3,
    `${walked.length} ${p.requests.listPlatformExports}`);

  // A subscription's reveal-once secret: a create dropped after it was applied is sent again under
  // its Idempotency-Key and answered once; a rotation whose answer was lost is never sent again.
  const org = () => client.createEnterpriseClient({
    baseUrl: base, credentials: { apiKey: 'key-1', apiSecret: 'secret-1' }, timeoutMs: 2000,
    clock: () => Date.now() / 1000 + offset,
    sleep: async (s) => { offset += s; await control('advance', { seconds: s }); },
  });
  await control('reset', { faults: [{ op: 'createEnterpriseWebhook', nth: 1, do: 'drop_after_apply' },
    { op: 'rotateEnterpriseWebhookSecret', nth: 1, do: 'drop_after_apply' }] });
  const created = await org().createSubscription({ name: 'ops', endpointUrl: 'https://hooks.example/rk', events: ['release.updated'] });
  const w = await control('stats');
  check('createSubscription: one subscription, its secret, never printed', w.webhooks_created === 1 && w.idempotent_replays === 1
    && created.secret.secret === w.webhooks[created.reference]?.secret && !JSON.stringify(created).includes(created.secret.secret),
  `${w.webhooks_created} ${w.idempotent_replays}`);
  const lost = await org().rotateSecret(created.reference).then(() => null, (x) => x);
  const rw = await control('stats');
  check('rotateSecret: a lost rotation is rotate_again, sent once', lost?.reconcile === 'rotate_again' && rw.rotations === 1
    && rw.requests.rotateEnterpriseWebhookSecret === 1, `${lost?.reconcile} ${rw.rotations}`);

  if (file) {
    await control('reset', { states: ['ready'], faults: [{ op: 'downloadPlatformExport', nth: 1, do: 'truncate' }] });
    const whole = new Uint8Array(await (await fetch(`${base}/_fake/artifact`)).arrayBuffer());
    const done = await reports().runExport(BODY, { to: file.path });
    check('streamed to a file path, a cut attempt read again', done.path === file.path && same(await file.read(file.path), whole), done.size);
  }
  return `ROYALTYKIT-CLIENT ${runtime} passed=${passed} failed=${JSON.stringify(failed)}`;
}
