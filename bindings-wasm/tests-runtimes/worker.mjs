// A Cloudflare Worker (run by workerd on 127.0.0.1): the suite, plus the delivery POSTed to it
// verified with royaltykit/fetch; at /client, the clients against the fake API (its URL in `base`).
import * as rk from 'royaltykit';
import * as fetchApi from 'royaltykit/fetch';
import * as client from 'royaltykit/client';
import { run, line } from './suite.mjs';
import { runClient } from './client-suite.mjs';

export default {
  async fetch(request) {
    const u = new URL(request.url);
    if (u.pathname === '/client') {
      const out = await runClient('workerd', client, u.searchParams.get('base'))
        .catch((e) => `ROYALTYKIT-CLIENT workerd threw ${e.code} ${e.operationId} ${e.transport}: ${e.message}`);
      return new Response(`${out}\n`);
    }
    const r = await run(rk, fetchApi);
    let posted;
    try {
      const { webhook } = await fetchApi.verifyRequest(request, 'whsec_runtime_suite', { now: 1795320000 });
      posted = `accepted ${webhook.deliveryId}`;
    } catch (e) {
      posted = `${e.code}/${e.httpStatus}`;
    }
    return new Response(`${line('workerd', r)}\nposted: ${posted}\n`);
  },
};
